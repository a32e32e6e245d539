"""Public failure reports of blind sample 11's half A (MLX apps, exo, NCCL's device API),
the half its kinds were built from, each rebuilt from the report's own posted output and
run through the public CLI."""

from __future__ import annotations

import pytest

from tests.helpers import assert_read_for


REPORTS = [
    # https://github.com/Blaizzy/mlx-vlm/issues/139: outdated transformers: processor fell back to plain tokenizer (dependency version mismatch)
    (
        "Blaizzy-mlx-vlm-139",
        {
            "log.txt": "Prompt: <|im_start|><|start_header_id|>user<|end_header_id|>\n\n[{'type': 'image'}, {'type': 'text', 'text': 'What are these?'}]<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n\nTraceback (most recent call last):\n  File \"/.pyenv/versions/3.10.4/lib/python3.10/runpy.py\", line 196, in _run_module_as_main\n    return _run_code(code, main_globals, None,\n  File \"/.pyenv/versions/3.10.4/lib/python3.10/runpy.py\", line 86, in _run_code\n    exec(code, run_globals)\n  File \"/lib/python3.10/site-packages/mlx_vlm/generate.py\", line 111, in <module>\n    main()\n  File \"/lib/python3.10/site-packages/mlx_vlm/generate.py\", line 95, in main\n    output = generate(\n  File \"/lib/python3.10/site-packages/mlx_vlm/utils.py\", line 1181, in generate\n    prompt_tokens = mx.array(processor.tokenizer.encode(prompt))\nAttributeError: 'GPT2TokenizerFast' object has no attribute 'tokenizer'. Did you mean: '_tokenizer'?\n",
        },
        "MD663",
        ["bare GPT2TokenizerFast", "upgrade transformers"],
    ),
    # https://github.com/NVIDIA/nccl/pull/1959: NCCL API misuse: device-comm requirements struct not initialized
    (
        "NVIDIA-nccl-1959",
        {
            "log.txt": "dev_runtime.cc:1071 NCCL WARN Cannot create device communicator: ncclDevCommRequirements_t argument must be initialized via NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER\n",
        },
        "MD653",
        ["NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER", "memset"],
    ),
    # https://github.com/exo-explore/exo/pull/1801: re-election race: GPU teardown vs new worker, node hang
    (
        "exo-explore-exo-1801",
        {
            "log.txt": "[ 11:02:39.0896AM ] Runner supervisor shutting down\n[ 11:02:39.0905AM ] bye from the runner\n[ 11:02:39.1052AM ] Stopping Worker\nIOConnectUnmapMemory failed: kr=0xe00002bc\nIOConnectUnmapMemory failed: kr=0xe00002bc\nIOConnectUnmapMemory failed: kr=0xe00002bc\nIOConnectUnmapMemory failed: kr=0xe00002bc\n^C[ 11:03:45 ] ← hung for over a minute, required manual kill\n",
        },
        "MD828",
        ["kIOReturnError", "PR #1801"],
    ),
    # https://github.com/exo-explore/exo/issues/7: missing Python dependency at startup (ModuleNotFoundError)
    (
        "exo-explore-exo-7",
        {
            "env.txt": "% uname -a\nDarwin studio.local 23.5.0 Darwin Kernel Version 23.5.0: Wed May  1 20:12:58 PDT 2024; root:xnu-10063.121.3~5/RELEASE_ARM64_T6000 arm64\n\n% python --version\nPython 3.10.14\n",
            "log.txt": 'python3 main.py\n\nThe cache for model files in Transformers v4.22.0 has been updated. Migrating your old cache. This is a one-time only operation. You can interrupt this and resume the migration later on by calling `transformers.utils.move_cache()`.\n0it [00:00, ?it/s]\nNone of PyTorch, TensorFlow >= 2.0, or Flax have been found. Models won\'t be available and only tokenizers, configuration and file/data utilities can be used.\nTraceback (most recent call last):\n  File "/Users/tfr/Documents/TestArea/exo/main.py", line 14, in <module>\n    from exo.api import ChatGPTAPI\n  File "/Users/tfr/Documents/TestArea/exo/exo/api/__init__.py", line 1, in <module>\n    from exo.api.chatgpt_api import ChatGPTAPI\n  File "/Users/tfr/Documents/TestArea/exo/exo/api/chatgpt_api.py", line 6, in <module>\n    from aiohttp import web\nModuleNotFoundError: No module named \'aiohttp\'\n',
        },
        "MD870",
        ["aiohttp"],
    ),
    # https://github.com/exo-explore/exo/issues/75: peer discovery crash on foreign binary broadcast packets
    (
        "exo-explore-exo-75",
        {
            "log.txt": "Task exception was never retrieved\nfuture: <Task finished name='Task-9003' coro=<GRPCDiscovery.on_listen_message() done, defined at /projects/exo/exo/networking/grpc/grpc_discovery.py:104> exception=UnicodeDecodeError('utf-8', b'\\xbf\\xa2\\x04\\x00\\x00\\x01\\x00\\x06,\\xc8\\x1b\\x13\\x98\\xe0\\x00\\x05\\x00\\x08MikroTik\\x00\\x07\\x00\\x0f6.49.1 (stable)\\x00\\x08\\x00\\x08MikroTik\\x00\\n\\x00\\x04\\xd7|\\xf3\\x00\\x00\\x0b\\x00\\tX4N0-HRA8\\x00\\x0c\\x00\\x08RB760iGS\\x00\\x0e\\x00\\x01\\x00\\x00\\x10\\x00\\rbridge/ether5\\x00\\x11\\x00\\x04\\xc0\\xa8X\\x01', 0, 1, 'invalid start byte')>\nTraceback (most recent call last):\n  File \"/projects/exo/exo/networking/grpc/grpc_discovery.py\", line 105, in on_listen_message\n    message = json.loads(data.decode('utf-8'))\n                         ^^^^^^^^^^^^^^^^^^^^\nUnicodeDecodeError: 'utf-8' codec can't decode byte 0xbf in position 0: invalid start byte\n",
        },
        "MD663",
        ["exo's own code", "another program's packet"],
    ),
    # https://github.com/jundot/omlx/issues/3226: Metal buffer-handle (resource count) exhaustion from unmaterialized lazy cache graph in decode
    (
        "jundot-omlx-3226",
        {
            "log.txt": "RuntimeError: [metal::malloc] Resource limit (499000) exceeded.\n",
        },
        "MD672",
        ["not of bytes", "un-evaluated graphs"],
    ),
    # https://github.com/jundot/omlx/issues/37: weight/architecture mismatch on load: VLM checkpoint's vision weights not stripped (model support lag)
    (
        "jundot-omlx-37",
        {
            "log.txt": "mlx.engine_pool - ERROR - [-] - Failed to preload pinned model Qwen3.5-122B-A10B-4bit: Received 333 parameters not in model: \nlanguage_model.vision_tower.blocks.0.attn.proj.bias,\nlanguage_model.vision_tower.blocks.0.attn.proj.weight,\nlanguage_model.vision_tower.blocks.0.attn.qkv.bias,\nlanguage_model.vision_tower.blocks.0.attn.qkv.weight,\nlanguage_model.vision_tower.blocks.0.mlp.linear_fc1.bias,\nlanguage_model.vision_tower.blocks.0.mlp.linear_fc1.weight,\nlanguage_model.vision_tower.blocks.0.mlp.linear_fc2.bias,\nlanguage_model.vision_tower.blocks.0.mlp.linear_fc2.weight,\nlanguage_model.vision_tower.blocks.0.norm1.bias,\nlanguage_model.vision_tower.blocks.0.norm1.weight,\nlanguage_model.vision_tower.blocks.0.norm2.bias,\nlanguage_model.vision_tower.blocks.0.norm2.weight,\nlanguage_model.vision_tower.blocks.1.attn.proj.bias,\nlanguage_model.vision_tower.blocks.1.attn.proj.weight,\nlanguage_model.vision_tower.blocks.1.attn.qkv.bias,\nlanguage_model.vision_tower.blocks.1.attn.qkv.weight,\nlanguage_model.vision_tower.blocks.1.mlp.linear_fc1.bias,\nlanguage_model.vision_tower.blocks.1.mlp.linear_fc1.weight,\nlanguage_model.vision_tower.blocks.1.mlp.linear_fc2.bias,\nlanguage_model.vision_tower.blocks.1.mlp.linear_fc2.weight,\nlanguage_model.vision_tower.blocks.1.norm1.bias,\nlanguage_model.vision_tower.blocks.1.norm1.weight,\nlanguage_model.vision_tower.blocks.1.norm2.bias,\nlanguage_model.vision_tower.blocks.9.mlp.linear_fc2.bias,\nlanguage_model.vision_tower.blocks.9.mlp.linear_fc2.weight,\nlanguage_model.vision_tower.blocks.9.norm1.bias,\nlanguage_model.vision_tower.blocks.9.norm1.weight,\nlanguage_model.vision_tower.blocks.9.norm2.bias,\nlanguage_model.vision_tower.blocks.9.norm2.weight,\nlanguage_model.vision_tower.merger.linear_fc1.bias,\nlanguage_model.vision_tower.merger.linear_fc1.weight,\nlanguage_model.vision_tower.merger.linear_fc2.bias,\nlanguage_model.vision_tower.merger.linear_fc2.weight,\nlanguage_model.vision_tower.merger.norm.bias,\nlanguage_model.vision_tower.merger.norm.weight,\nlanguage_model.vision_tower.patch_embed.proj.bias,\nlanguage_model.vision_tower.patch_embed.proj.weight,\nlanguage_model.vision_tower.pos_embed.weight.\n",
        },
        "MD883",
        ["the message is MLX's or its model loader's own", "a vision tower loaded as"],
    ),
    # https://github.com/lmstudio-ai/mlx-engine/issues/129: unsupported model architecture: bundled MLX library version predates the model type
    (
        "lmstudio-ai-mlx-engine-129",
        {
            "log.txt": "Error when loading model: ValueError: Model type mistral3 not supported.\n",
        },
        "MD663",
        ["LM Studio's MLX runtime", "mlx-vlm"],
    ),
    # https://github.com/ml-explore/mlx-examples/issues/288: unsupported macOS version: missing Accelerate symbol on import
    (
        "ml-explore-mlx-examples-288",
        {
            "log.txt": 'Traceback (most recent call last):\n  File "FULL PATH REMOVED/mlx-examples/lora/lora.py", line 9, in <module>\n    import mlx.core as mx\nImportError: dlopen(/FULL PATH REMOVED/.pyenv/versions/3.11.4/lib/python3.11/site-packages/mlx/core.cpython-311-darwin.so, 0x0002): Symbol not found: _cblas_sgemm$NEWLAPACK\n  Referenced from: <8AC9CE5F-E0BC-32A1-A743-E6729024D190> /FULL PATH REMOVED/.pyenv/versions/3.11.4/lib/python3.11/site-packages/mlx/lib/libmlx.dylib (built for macOS 13.3 which is newer than running OS)\n  Expected in:     <0494A450-9778-31EB-84F6-88A045586FBF> /System/Library/Frameworks/Accelerate.framework/Versions/A/Accelerate\n',
        },
        "MD876",
        ["newer macOS than this Mac runs"],
    ),
    # https://github.com/ml-explore/mlx-examples/issues/841: mlx-lm regression bug in lora resume path (NameError)
    (
        "ml-explore-mlx-examples-841",
        {
            "log.txt": 'File "/Users/pro/mambaforge/envs/torch/lib/python3.11/site-packages/mlx_lm/lora.py", line 173, in train_model\n    print(f"Loading pretrained adapters from {resume_adapter_file}")\n                                              ^^^^^^^^^^^^^^^^^^^\nNameError: name \'resume_adapter_file\' is not defined\n',
        },
        "MD663",
        ["mlx_lm's own code", "NameError"],
    ),
    # https://github.com/ml-explore/mlx-swift/issues/460: Metal library (default.metallib) not found at runtime: packaging/bundle layout
    (
        "ml-explore-mlx-swift-460",
        {
            "bundle_probe.txt": "Bundle.main.bundleURL    .../XcodeDefault.xctoolchain/usr/libexec/swift/pm\nBundle.main.executable   .../usr/libexec/swift/pm/swiftpm-testing-helper\nBundle.allBundles        1 entry — that same toolchain path\n",
            "log.txt": "MLX error: Failed to load the default metallib. library not found library not\nfound library not found library not found\n  at .../Cmlx/mlx-c/mlx/c/array.cpp:232\n",
        },
        "MD823",
        ["swift test", "--build-system native"],
    ),
    # https://github.com/pytorch/pytorch/issues/172398: NCCL API misuse after upgrade: device-comm requirements struct not initialized
    (
        "pytorch-pytorch-172398",
        {
            "log.txt": "$ pytest -vs test/distributed/test_nccl.py -k NCCLSymmetricMemoryTest\n...\ntorch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/symm_mem/nccl_devcomm_manager.hpp:73, invalid usage (run with NCCL_DEBUG=WARN for details), NCCL version 2.29.2\nncclDevCommCreate failed\n",
        },
        "MD650",
        ["ncclDevCommCreate", "NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER"],
    ),
    # https://github.com/shaircast/vvrite/issues/2: metallib built for newer macOS / Metal language version (packaging mismatch)
    (
        "shaircast-vvrite-2",
        {
            "log.txt": "ImportError: Failed to load the default metallib. This library is using language version 4.0\nwhich is not supported on this OS. library not found library not found library not found\n",
            "traceback.txt": 'Traceback (most recent call last):\n  File "main.py", line 29, in <module>\n  File "vvrite/onboarding.py", line 32, in <module>\n  File "vvrite/transcriber.py", line 9, in <module>\n  File "mlx_audio/stt/__init__.py", line 1, in <module>\n  File "mlx_audio/stt/utils.py", line 4, in <module>\nImportError: Failed to load the default metallib. This library is using language version 4.0\nwhich is not supported on this OS.\n',
        },
        "MD823",
        ["Metal language 4.0", "newer macOS than this Mac runs"],
    ),
]


@pytest.mark.parametrize("slug,files,code,says", REPORTS, ids=[r[0] for r in REPORTS])
def test_a_public_report_is_read_for_its_known_cause(tmp_path, slug, files, code, says):
    """The leading finding is the reading of the report's known cause."""
    assert_read_for(tmp_path, files, code, says)
