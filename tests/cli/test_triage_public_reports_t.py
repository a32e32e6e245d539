"""Public failure reports of blind sample 10's half B, added after its blind grade (36 %
correct on the code of the grade; the kinds its misses showed were built after it), each
rebuilt from the report's own posted output and run through the public CLI."""

from __future__ import annotations

import pytest

from tests.helpers import assert_read_for


REPORTS = [
    # https://github.com/Blaizzy/mlx-vlm/issues/1275: Metal max buffer size exceeded by unchunked long-context prefill
    (
        "Blaizzy-mlx-vlm-1275",
        {
            "log.txt": "RuntimeError: [metal::malloc] Attempting to allocate 524492820000 bytes which is greater than the maximum allowed buffer size of 86586540032 bytes.\nError during stream generation: [metal::malloc] Attempting to allocate 524492820000 bytes which is greater than the maximum allowed buffer size of 86586540032 bytes.\n",
        },
        "MD673",
        ["attention scores of a long prompt", "6.1 times the largest buffer"],
    ),
    # https://github.com/Blaizzy/mlx-vlm/issues/679: model architecture / checkpoint mismatch (missing parameters on load)
    (
        "Blaizzy-mlx-vlm-679",
        {
            "log.txt": 'Traceback (most recent call last):\n  File "/Users/hermeschen/Repo/work/taiwan-license-plate-recognition/scripts/recognition/eval.py", line 57, in <module>\n    model, processor = load(config["eval"]["model_id"], lazy=True, trust_remote_code=True, **load_config)\n                       ~~~~^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n  File "/Users/hermeschen/Repo/work/taiwan-license-plate-recognition/.venv/lib/python3.13/site-packages/mlx_vlm/utils.py", line 302, in load\n    model = load_model(model_path, lazy, **kwargs)\n  File "/Users/hermeschen/Repo/work/taiwan-license-plate-recognition/.venv/lib/python3.13/site-packages/mlx_vlm/utils.py", line 231, in load_model\n    model.load_weights(list(weights.items()))\n    ~~~~~~~~~~~~~~~~~~^^^^^^^^^^^^^^^^^^^^^^^\n  File "/Users/hermeschen/Repo/work/taiwan-license-plate-recognition/.venv/lib/python3.13/site-packages/mlx/nn/layers/base.py", line 191, in load_weights\n    raise ValueError(f"Missing {num_missing} parameters: \\n{missing}.")\nValueError: Missing 2 parameters:\nmulti_modal_projector.layer_norm.bias,\nmulti_modal_projector.layer_norm.weight.\n',
        },
        "MD663",
        ["mlx-lm or mlx-vlm", "main branch"],
    ),
    # https://github.com/PowerBeef/Vocello/issues/4: MLX metallib built for newer macOS (Metal 4.0) on older OS
    (
        "PowerBeef-Vocello-4",
        {
            "log.txt": "Failed to load the default metallib: this library is using language version 4.0, which is not supported on this OS. Library not found. Library not found. Library not found.\n",
        },
        "MD823",
        ["Metal language 4.0", "newer macOS than this Mac runs"],
    ),
    # https://github.com/Trans-N-ai/swama/issues/30: missing default.metallib (SwiftPM command-line build)
    (
        "Trans-N-ai-swama-30",
        {
            "log.txt": '$ .build/release/swama run mlx-community/Qwen3-30B-A3B-4bit "how are you today?"\nMLX error: Failed to load the default metallib. library not found library not found library not found \n',
        },
        "MD823",
        ["swift build", "xcodebuild"],
    ),
    # https://baa.ai/research/61-metal-buffer-limits-moe-lora.html: Metal buffer-count resource limit (499000) exceeded during MoE LoRA training
    (
        "baa.ai-research-61-metal-buffer-limits-moe-lora",
        {
            "log.txt": "[metal::malloc] Resource limit (499000) exceeded\n",
        },
        "MD672",
        ["not of bytes", "lower LoRA rank"],
    ),
    # https://github.com/dgrauet/ltx-2-mlx/pull/22: Metal GPU watchdog timeout from one oversized lazy-graph command buffer
    (
        "dgrauet-ltx-2-mlx-22",
        {
            "log.txt": "[METAL] Command buffer execution failed: Internal Error (0000000e:Internal Error)\nMTLCommandBufferErrorInternal (code 14)\n",
        },
        "MD661",
        ["ran too long", "MLX_MAX_OPS_PER_BUFFER"],
    ),
    # https://github.com/exo-explore/exo/pull/1245: download status probes a config.json that image models lack
    (
        "exo-explore-exo-1245",
        {
            "log.txt": "Error downloading shard: File not found: https://huggingface.co/black-forest-labs/FLUX.1-dev/resolve/main/config.json\nError downloading shard: File not found: https://huggingface.co/black-forest-labs/FLUX.1-schnell/resolve/main/config.json\nError downloading shard: File not found: https://huggingface.co/Qwen/Qwen-Image/resolve/main/config.json\nError downloading shard: File not found: https://huggingface.co/Qwen/Qwen-Image-Edit-2509/resolve/main/config.json\n",
        },
        "MD883",
        ["no config.json at its root", "model_index.json"],
    ),
    # https://github.com/exo-explore/exo/pull/1797: bundled helper binary unsupported on new Apple chip (macmon panic)
    (
        "exo-explore-exo-1797",
        {
            "log.txt": "macmon preflight failed with return code -6: thread 'main' panicked at src/sources.rs:394:41\n",
        },
        "MD827",
        ["macmon", "PR #1747"],
    ),
    # https://github.com/exo-explore/exo/pull/1856: unhandled closed-stream exception on client cancel crashes node
    (
        "exo-explore-exo-1856",
        {
            "log.txt": 'File "exo/api/main.py", line 1818, in _apply_state\n    await queue.send(event.chunk)\nFile "anyio/streams/memory.py", line 212, in send_nowait\n    raise ClosedResourceError\nanyio.ClosedResourceError\n',
        },
        "MD663",
        ["exo's own code", "pasted without the"],
    ),
    # https://github.com/exo-explore/exo/pull/997: MLX too old for requested distributed backend (jaccl unknown)
    (
        "exo-explore-exo-997",
        {
            "log.txt": "The only valid values for backend are\n'any', 'mpi' and 'ring' but 'jaccl' was provided.\n",
        },
        "MD667",
        ["before MLX 0.30.1", "mlx>=0.30.1"],
    ),
    # https://github.com/hiyouga/EasyR1/issues/228: NCCL /dev/shm segment creation failure (shm too small)
    (
        "hiyouga-EasyR1-228",
        {
            "log.txt": "(Runner pid=868697) Error while creating shared memory segment /dev/shm/nccl-UmqSM9 (size 7340384)\n",
            "runtime_env.yaml": 'working_dir: ./\nexcludes: ["/.git/"]\nenv_vars:\n  TOKENIZERS_PARALLELISM: "true"\n  NCCL_DEBUG: "WARN"\n  VLLM_LOGGING_LEVEL: "INFO"\n  TORCH_NCCL_AVOID_RECORD_STREAMS: "1"\n  PYTORCH_CUDA_ALLOC_CONF: "expandable_segments:False"\n  NCCL_SHM_DISABLE: 1\n  NCCL_P2P_DISABLE: 1\n',
        },
        "MD653",
        ["/dev/shm", "--shm-size"],
    ),
    # https://github.com/jjang-ai/mlxstudio/issues/104: MLX metallib built for newer macOS (Metal 4.0) on older OS
    (
        "jjang-ai-mlxstudio-104",
        {
            "log.txt": "Process exited before becoming ready: RuntimeError: Failed to load the default metallib. This library is using language version 4.0 which is not supported on this OS. library not found library not found library not found\n",
        },
        "MD823",
        ["Metal language 4.0", "newer macOS than this Mac runs"],
    ),
    # https://github.com/jjang-ai/mlxstudio/issues/83: Metal single-buffer limit exceeded in un-chunked prefill
    (
        "jjang-ai-mlxstudio-83",
        {
            "log.txt": "ERROR:vmlx_engine.mllm_batch_generator:Prefill failed for chatcmpl-b8beec9d: RuntimeError: [metal::malloc] Attempting to allocate 21902407808 bytes which is greater than the maximum allowed buffer size of 9534832640 bytes.\n[22:36:16.288] Traceback (most recent call last):\n",
        },
        "MD673",
        ["prefill in chunks", "2.3 times the largest buffer"],
    ),
    # https://github.com/jjang-ai/vmlx/issues/182: weight layout mismatch on model load (Conv3D not transposed)
    (
        "jjang-ai-vmlx-182",
        {
            "log.txt": "启动会话失败\nProcess exited before becoming ready: ValueError: Expected shape (1152, 2, 16, 16, 3) but received shape (1152, 3, 2, 16, 16) for parameter vision_tower.patch_embed.proj.weight\n",
        },
        "MD663",
        ["in another order", "PyTorch's (out, in, k...) order"],
    ),
    # https://github.com/jjang-ai/vmlx/issues/58: Metal OOM (working set exceeded) during serving
    (
        "jjang-ai-vmlx-58",
        {
            "log.txt": "[error] libc++abi: terminating due to uncaught exception of type std::runtime_error: [METAL] Command buffer execution failed: Insufficient Memory\n",
        },
        "MD661",
        ["the GPU ran out of memory"],
    ),
    # https://github.com/jundot/omlx/issues/1343: base model without chat template used for chat
    (
        "jundot-omlx-1343",
        {
            "log.txt": 'Error: Error: {"error":{"message":"Chat template error: Cannot use chat template functions because tokenizer.chat_template is not set and no template argument was passed! For information about writing templates and setting the tokenizer.chat_template attribute, please see the documentation at https://huggingface.co/docs/transformers/main/en/chat_templating","type":"invalid_request_error","param":null,"code":null}}\n',
        },
        "MD826",
        ["base (pretrained)", "instruct variant"],
    ),
    # https://github.com/jundot/omlx/issues/3179: Metal GPU watchdog timeout from one-shot eval of all weights at load
    (
        "jundot-omlx-3179",
        {
            "log.txt": "[METAL] Command buffer execution failed: Caused GPU Timeout Error\n(00000002:kIOGPUCommandBufferCallbackErrorTimeout).\n",
        },
        "MD616",
        ["in one process, or right after", "in chunks"],
    ),
    # https://github.com/ml-explore/mlx/issues/2428: CUDA call rejected by sandboxed container runtime (gVisor) at MLX import
    (
        "ml-explore-mlx-2428",
        {
            "log.txt": '---------------------------------------------------------------------------\nImportError                               Traceback (most recent call last)\nCell In[2], line 2\n      1 # Test MLX with your L40S\n----> 2 import mlx.core as mx\n      4 # Check MLX CUDA backend\n      5 print(f"\\nMLX Status:")\n\nImportError: cudaMemAdvise(data_, small_pool_size, cudaMemAdviseSetReadMostly, 0) failed: invalid argument\n',
            "maintainer_repro.txt": "    print(mx.arange(0, 4, 0.2))\nRuntimeError: transform: failed inside CUB: cudaErrorInvalidDevice: invalid device ordinal\n",
        },
        "MD830",
        ["gVisor", "managed"],
    ),
    # https://github.com/ml-explore/mlx-examples/issues/481: Metal OOM during LoRA training (long sequences)
    (
        "ml-explore-mlx-examples-481",
        {
            "log.txt": "Special tokens have been added in the vocabulary, make sure the associated word embeddings are fine-tuned or trained.\nTotal parameters 1242.560M\nTrainable parameters 0.213M\nLoading datasets\nTraining\n[WARNING] Some sequences are longer than 2048 tokens. Consider pre-splitting your data to save memory.\n[WARNING] Some sequences are longer than 2048 tokens. Consider pre-splitting your data to save memory.\nlibc++abi: terminating due to uncaught exception of type std::runtime_error: [METAL] Command buffer execution failed: Insufficient Memory (00000008:kIOGPUCommandBufferCallbackErrorOutOfMemory)\n[1]    31148 abort      python lora.py --model  --train --iters 500 --max-tokens 100 --batch-size 2\n",
        },
        "MD661",
        ["longer than 2048 tokens", "--max-seq-length"],
    ),
    # https://github.com/ml-explore/mlx-lm/issues/1572: Metal GPU watchdog timeout from one-shot eval of all weights at load
    (
        "ml-explore-mlx-lm-1572",
        {
            "crash_excerpt.txt": "abort → __cxa_throw → failed_throw\nmlx::core::metal::EventImpl::check_error()\nstd::__1::__function::__func<mlx::core::Event::wait(mlx::core::Stream)::$_0, void ()>::operator()()\nmlx::core::scheduler::StreamThread::thread_fn()\n",
            "log.txt": "(Metal) Execution aborted: Caused GPU Timeout Error (00000002:kIOGPUCommandBufferCallbackErrorTimeout)\nvoid IOGPUCommandQueue::retireCommandBuffer: Deny submissions/ignore app[python3.13] with 2 GPURestarts\nlibc++abi: terminating due to uncaught exception of type std::runtime_error:\n[METAL] Command buffer execution failed: Caused GPU Timeout Error\n(00000002:kIOGPUCommandBufferCallbackErrorTimeout).\n",
        },
        "MD616",
        ["every parameter of a very large model", "mlx-lm #1572"],
    ),
    # https://github.com/vllm-project/vllm/issues/19890: NCCL CUDA illegal memory access from buggy bundled NCCL version (RTX 5090)
    (
        "vllm-project-vllm-19890",
        {
            "env.txt": "INFO 06-20 10:37:01 [__init__.py:243] Automatically detected platform cuda.\nCollecting environment information...\nuv is set\n==============================\n        System Info\n==============================\nOS                           : Ubuntu 24.04.2 LTS (x86_64)\nGCC version                  : (Ubuntu 13.3.0-6ubuntu2~24.04) 13.3.0\nClang version                : Could not collect\nCMake version                : version 4.0.3\nLibc version                 : glibc-2.39\n\n==============================\n       PyTorch Info\n==============================\nPyTorch version              : 2.7.1+cu128\nIs debug build               : False\nCUDA used to build PyTorch   : 12.8\nROCM used to build PyTorch   : N/A\n\n==============================\n      Python Environment\n==============================\nPython version               : 3.11.13 (main, Jun  4 2025, 17:37:17) [Clang 20.1.4 ] (64-bit runtime)\nPython platform              : Linux-6.11.0-26-generic-x86_64-with-glibc2.39\n\n==============================\n       CUDA / GPU Info\n==============================\nIs CUDA available            : True\nCUDA runtime version         : 12.8.61\nCUDA_MODULE_LOADING set to   : LAZY\nGPU models and configuration : \nGPU 0: NVIDIA GeForce RTX 5090\nGPU 1: NVIDIA GeForce RTX 5090\n",
            "log.txt": "enqueue.cc:1556 NCCL WARN Cuda failure 700 'an illegal memory access was encountered'\n",
        },
        "MD830",
        ["NCCL 2.26.2", "nvidia-nccl-cu12"],
    ),
]


@pytest.mark.parametrize("slug,files,code,says", REPORTS, ids=[r[0] for r in REPORTS])
def test_a_public_report_is_read_for_its_known_cause(tmp_path, slug, files, code, says):
    """The leading finding is the reading of the report's known cause."""
    assert_read_for(tmp_path, files, code, says)
