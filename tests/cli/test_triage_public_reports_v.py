"""Public failure reports of blind sample 11's half B, added after its blind grade (40 %
correct on the code of the grade; the kinds its misses showed were built after it), each
rebuilt from the report's own posted output and run through the public CLI."""

from __future__ import annotations

import pytest

from tests.helpers import assert_read_for


REPORTS = [
    # https://github.com/Mcourtyard/m-courtyard/issues/8: Metal watchdog kill (Impacting Interactivity) during training step
    (
        "Mcourtyard-m-courtyard-8",
        {
            "log.txt": "libc++abi: terminating due to uncaught exception of type std::runtime_error: [METAL] Command buffer execution failed: Impacting Interactivity (0000000e:kIOGPUCommandBufferCallbackErrorImpactingInteractivity)\n\n/opt/homebrew/Cellar/python@3.12/3.12.13/Frameworks/Python.framework/Versions/3.12/lib/python3.12/multiprocessing/resource_tracker.py:279: UserWarning: resource_tracker: There appear to be 1 leaked semaphore objects to clean up at shutdown\n",
        },
        "MD661",
        ["GPU watchdog", "Not memory"],
    ),
    # https://github.com/awslabs/awsome-distributed-ai/issues/292: NCCL net plugin load failure: libfabric symbol version mismatch
    (
        "awslabs-awsome-distributed-ai-292",
        {
            "log.txt": " [0] NCCL INFO NET/Plugin : dlerror=/opt/amazon/efa/lib/libfabric.so.1: version `FABRIC_1.7' not found (required by /fsx/ubuntu/awsome-distributed-training/3.test_cases/10.FSDP/pt_fsdp/lib/python3.10/site-packages/torch/lib/../../../../libnccl-net.so) No plugin found (libnccl-net.so), using internal implementation\n",
        },
        "MD829",
        ["FABRIC_1.7", "older than the plugin's"],
    ),
    # https://github.com/exo-explore/exo/issues/1242: Hugging Face gated repo download 401 (no token)
    (
        "exo-explore-exo-1242",
        {
            "log.txt": '[ 02:09:14.0771PM | ERROR   ] Traceback (most recent call last):\n  File "/Users/toast/exo/src/exo/worker/download/download_utils.py", line 279, in download_file_with_retry\n    return await _download_file(\n           ^^^^^^^^^^^^^^^^^^^^^\n        model_id, revision, path, target_dir, on_progress\n        ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n    )\n    ^\n  File "/Users/toast/exo/src/exo/worker/download/download_utils.py", line 325, in _download_file\n    assert r.status in [200, 206], (\n           ^^^^^^^^^^^^^^^^^^^^^^\nAssertionError: Failed to download config.json from https://huggingface.co/black-forest-labs/FLUX.1-schnell/resolve/main/config.json: 401\n',
        },
        "MD663",
        ["exo's own code"],
    ),
    # https://github.com/exo-explore/exo/issues/142: Python version incompatibility: f-string syntax error at startup
    (
        "exo-explore-exo-142",
        {
            "log.txt": "(.venv) pk@pop-os:~/exo$ python3 main.py\n  File \"/home/pk/exo/main.py\", line 55\n    print(f\"Chat interface started:\\n{'\\n'.join([' - ' + terminal_link(web_chat_url) for web_chat_url in web_chat_urls])}\")\n                                                                                                                          ^\nSyntaxError: f-string expression part cannot include a backslash\n",
        },
        "MD663",
        ["Python 3.12", "PEP 701"],
    ),
    # https://github.com/jjang-ai/mlxstudio/issues/101: duplicate MLX extension loaded in one process (conflicting mlx installs)
    (
        "jjang-ai-mlxstudio-101",
        {
            "log.txt": 'Process exited before becoming ready: Critical nanobind error: refusing to add duplicate key "cpu" to enumeration "mlx.core.DeviceType"!\n',
        },
        "MD876",
        ["registered twice", "two copies of MLX's extension"],
    ),
    # https://github.com/jjang-ai/vmlx/issues/1: MLX metallib built for a newer Metal language/OS than the host macOS
    (
        "jjang-ai-vmlx-1",
        {
            "log.txt": "Failed to load the default metallib. This library is using language version 4.0 which is not supported on this OS.\n",
        },
        "MD823",
        ["Metal language 4.0"],
    ),
    # https://github.com/jjang-ai/vmlx/issues/169: metallib built for newer macOS / Metal language version (packaging regression)
    (
        "jjang-ai-vmlx-169",
        {
            "log.txt": "Process exited before becoming ready: RuntimeError: Failed to load the default metallib.\nThis library is using language version 4.0 which is not supported on this OS.\nlibrary not found\nlibrary not found\nlibrary not found\n",
        },
        "MD823",
        ["Metal language 4.0"],
    ),
    # https://github.com/jundot/omlx/issues/599: missing weights on load from an incomplete model download
    (
        "jundot-omlx-599",
        {
            "log.txt": "Missing 519 parameters: \nlanguage_model.lm_head.weight,\nlanguage_model.model.embed_tokens.weight,\nlanguage_model.model.layers.0.input_layernorm.weight,\nlanguage_model.model.layers.0.linear_attn.A_log,\n...\n",
        },
        "MD883",
        ["the message is MLX's or its model loader's own", "interrupted download"],
    ),
    # https://github.com/lmstudio-ai/lmstudio-bug-tracker/issues/381: unsupported model architecture (model type not supported) at load
    (
        "lmstudio-ai-lmstudio-bug-tracker-381",
        {
            "log.txt": "2025-01-31 19:49:18  [INFO] \nServer started.\n2025-01-31 19:49:18  [INFO] \nJust-in-time model loading active.\n2025-01-31 20:20:25 [DEBUG] \nERROR:root:Model type qwen2_5_vl not supported.\n2025-01-31 20:20:25 [DEBUG] \nlmstudio-llama-cpp: failed to load model. Error: Error when loading model: ValueError: Model type qwen2_5_vl not supported.\n",
        },
        "MD883",
        ["the message is MLX's or its model loader's own", "LM Studio's MLX runtime"],
    ),
    # https://github.com/ml-explore/mlx/issues/3362: Metal missing kernel (NAX gather_mm float32) in MoE LoRA
    (
        "ml-explore-mlx-3362",
        {
            "log.txt": "RuntimeError: [metal::Device] Unable to load function steel_gather_mm_rhs_nax_nt_float32_float32_bm16_bn128_bk128_wm1_wn4\nFunction steel_gather_mm_rhs_nax_nt_float32_float32_bm16_bn128_bk128_wm1_wn4 was not found in the library\n",
        },
        "MD698",
        ["MLX_ENABLE_TF32=0"],
    ),
    # https://github.com/pytorch/torchtitan/issues/1224: NCCL duplicate GPU: ranks share one CUDA device (set_device missing)
    (
        "pytorch-torchtitan-1224",
        {
            "log.txt": '[rank2]:   File "/home/less/.conda/envs/pycutlass/lib/python3.12/site-packages/torch/distributed/distributed_c10d.py", line 3945, in all_gather_into_tensor\n[rank2]:     work = group._allgather_base(output_tensor, input_tensor, opts)\n[rank2]:            ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n[rank2]: torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/NCCLUtils.cpp:77, invalid usage (run with NCCL_DEBUG=WARN for details), NCCL version 2.26.5\n[rank2]: ncclInvalidUsage: This usually reflects invalid usage of NCCL library.\n[rank2]: Last error:\n[rank2]: Duplicate GPU detected : rank 0 and rank 1 both on CUDA device 6000\n',
        },
        "MD653",
        ["two ranks on one GPU"],
    ),
    # https://github.com/waybarrios/vllm-mlx/issues/16: Metal command-buffer assertion from concurrent MLX use across threads
    (
        "waybarrios-vllm-mlx-16",
        {
            "log.txt": "-[_MTLCommandBuffer addCompletedHandler:]:1011: failed assertion `Completed handler provided after commit call'\n",
        },
        "MD825",
        ["two threads at once"],
    ),
]


@pytest.mark.parametrize("slug,files,code,says", REPORTS, ids=[r[0] for r in REPORTS])
def test_a_public_report_is_read_for_its_known_cause(tmp_path, slug, files, code, says):
    """The leading finding is the reading of the report's known cause."""
    assert_read_for(tmp_path, files, code, says)
