"""Public failure reports of blind sample 10's half A (MLX apps and their Metal library,
MLX through mlx-c, exo, NCCL), the half its kinds were built from, each rebuilt from the
report's own posted output and run through the public CLI."""

from __future__ import annotations

import pytest

from tests.helpers import assert_read_for


REPORTS = [
    # https://github.com/Blaizzy/mlx-vlm/issues/512: mlx-lm / mlx-vlm version incompatibility in convert
    (
        "Blaizzy-mlx-vlm-512",
        {
            "log.txt": "TypeError: convert.<locals>.base_quant_predicate() takes 2 positional arguments but 3 were given\n",
        },
        "MD849",
        ["versions that were not released together"],
    ),
    # https://github.com/InternLM/lmdeploy/issues/1108: NCCL init fails: CUDA driver older than CUDA runtime
    (
        "InternLM-lmdeploy-1108",
        {
            "environment.txt": "torch 2.0.0\nlmdeploy 0.2.2\ntransformers 4.37.2\nDriver Version: 515.86.01    \nCUDA Version: 11.7\n",
            "log.txt": "Failed, NCCL error /lmdeploy/src/turbomind/utils/nccl_utils.cc:296 'unhandled cuda error (run with NCCL_DEBUG=INFO for details)'\nIllegal instruction (core dumped)\n",
            "nccl_debug_info.log": "NCCL INFO NET/Plugin : Plugin load (libnccl-net.so) returned 2 : libnccl-net.so: cannot open shared object file: No such file or directory\nNCCL INFO NET/Plugin : No plugin found, using internal implementation\nNCCL INFO cudaDriverVersion 11070\n\ninit.cc:1582 NCCL WARN Cuda failure 'CUDA driver version is insufficient for CUDA runtime version'\nFailed, NCCL error /lmdeploy/src/turbomind/utils/nccl_utils.cc:296 'unhandled cuda error (run with NCCL_DEBUG=INFO for details)'\nIllegal instruction (core dumped)\n",
        },
        "MD830",
        ["driver older than the CUDA runtime"],
    ),
    # https://github.com/InternLM/lmdeploy/issues/1267: NCCL init fails: CUDA driver older than CUDA runtime
    (
        "InternLM-lmdeploy-1267",
        {
            "log.txt": "Failed, NCCL error /lmdeploy/src/turbomind/utils/nccl_utils.cc:296 'unhandled cuda error (run with NCCL_DEBUG=INFO for details)\n",
            "reporter_details.txt": "详细信息是：CUDA driver version is insufficient for CUDA runtime version\nlmdeploy==0.2.2\ncuda 11.7\n驱动版本：515.43.04\n",
        },
        "MD650",
        ["NCCL built for another CUDA version than the driver"],
    ),
    # https://github.com/NVIDIA/nccl/issues/1488: NVLS multicast failure after Fabric Manager restart without GPU reset
    (
        "NVIDIA-nccl-1488",
        {
            "log.txt": "node23:12098:12141 [2] transport/nvls.cc:244 NCCL WARN Cuda failure 1 'invalid argument'\nnode23:12098:12141 [2] NCCL INFO transport/nvls.cc:394 -> 1\nnode23:12098:12141 [2] NCCL INFO init.cc:1196 -> 1\nnode23:12098:12141 [2] NCCL INFO init.cc:1462 -> 1\nnode23:12098:12141 [2] NCCL INFO group.cc:75 -> 1 [Async thread]\n",
        },
        "MD830",
        ["fabric manager was stopped or restarted", "NCCL_NVLS_ENABLE=0"],
    ),
    # https://discussions.apple.com/thread/256279343: jaccl on a Mac without RDMA-capable Thunderbolt 5 (no RDMA device)
    (
        "discussions.apple.com-thread-256279343",
        {
            "log.txt": "[jaccl] Couldn't allocate protection domain\n[jaccl] Couldn't connect (error: 60)\n",
        },
        "MD604",
        ["Thunderbolt 4"],
    ),
    # https://github.com/exo-explore/exo/pull/1707: mlx-lm stats division by zero on near-instant generation
    (
        "exo-explore-exo-1707",
        {
            "log.txt": 'File "batch_generate.py", line 294, in step\n    mlx_stats = self._exo_gen.stats()\nFile "mlx_lm/generate.py", line 1224, in stats\n    self._stats.generation_tokens / self._stats.generation_time\nZeroDivisionError: division by zero\n',
        },
        "MD663",
        [
            "without the `Traceback (most recent call last):` header",
            "mlx_lm's own code",
            "divided by zero",
        ],
    ),
    # https://github.com/exo-explore/exo/issues/1844: progress update sent to closed stream crashes download coordinator
    (
        "exo-explore-exo-1844",
        {
            "log.txt": '  ERROR | Task exception was never retrieved\n  future: <Task finished name=\'Task-XXXX\' coro=<ResumableShardDownloader.get_shard_download_status..download_with_semaphore()> exception=BrokenResourceError()>\n\n  File "exo/download/impl_shard_downloader.py", line 141, in download_with_semaphore\n  File "exo/download/impl_shard_downloader.py", line 128, in _status_for_model\n  File "exo/download/download_utils.py", line 943, in download_shard\n  File "exo/download/impl_shard_downloader.py", line 98, in on_progress_wrapper\n  File "exo/download/coordinator.py", line 103, in _download_progress_callback\n  File "anyio/streams/memory.py", line 243, in send\n  File "anyio/streams/memory.py", line 214, in send_nowait\n  anyio.BrokenResourceError\n',
        },
        "MD663",
        ["exo's own code", "_download_progress_callback", "other end was already closed"],
    ),
    # https://github.com/exo-explore/exo/pull/1956: incomplete model download treated as complete (missing weight files at load)
    (
        "exo-explore-exo-1956",
        {
            "log.txt": "FileNotFoundError: No safetensors files found in .../vae\n",
        },
        "MD663",
        ["took for complete", "download it again"],
    ),
    # https://github.com/janhq/jan/issues/7804: MLX metallib missing from the app bundle
    (
        "janhq-jan-7804",
        {
            "error.txt": 'MLX error: Failed to load the default metallib. library not found\n{"code":"MLX_PROCESS_ERROR","details":"","message":"The MLX model process encountered an unexpected error."}\n',
            "jan.log": '[2026-03-23][14:28:07][tauri_plugin_mlx::commands][INFO] Attempting to launch MLX server at path: "/Applications/Jan.app/Contents/Resources/resources/bin/mlx-server"\n[2026-03-23][14:28:07][tauri_plugin_mlx::commands][INFO] Using MLX configuration: MlxConfig { ctx_size: 8192 }\n',
        },
        "MD823",
        ["through mlx-c", "packaging defect"],
    ),
    # https://github.com/jjang-ai/mlxstudio/issues/2: MLX metallib built for a newer macOS (Metal 4.0) than the host runs
    (
        "jjang-ai-mlxstudio-2",
        {
            "log.txt": "Process exited before becoming ready:\nRuntimeError: Failed to load the default metallib.\nThis library is using language version 4.0 which is not supported on this OS\nlibrary not found\nlibrary not found library not found\n",
        },
        "MD823",
        ["Metal language 4.0", "newer macOS than this Mac runs"],
    ),
    # https://github.com/llm-d/llm-d/issues/352: NCCL shm segment creation fails: /dev/shm full from stale segments
    (
        "llm-d-llm-d-352",
        {
            "log.txt": '[2025-10-13 09:06:25] vllm-deepseek-ep-decode-0:3663:4044 [0] misc/shmutils.cc:129 NCCL WARN Error while creating shared memory segment /dev/shm/nccl-Ewjreo (size 33030528), error: No space left on device (28)\nvllm-deepseek-ep-decode-0:3663:4044 [0] NCCL INFO proxy.cc:1336 -> 2\nvllm-deepseek-ep-decode-0:3663:4044 [0] NCCL INFO proxy.cc:1402 -> 2\nvllm-deepseek-ep-decode-0:3663:4064 [0] NCCL INFO proxy.cc:1122 -> 2\nvllm-deepseek-ep-decode-0:3663:4064 [0] NCCL INFO transport/net.cc:257 -> 2\nvllm-deepseek-ep-decode-0:3663:4064 [0] NCCL INFO transport.cc:35 -> 2\nvllm-deepseek-ep-decode-0:3663:4064 [0] NCCL INFO transport.cc:148 -> 2\nvllm-deepseek-ep-decode-0:3663:4064 [0] NCCL INFO transport/generic.cc:49 -> 2\nvllm-deepseek-ep-decode-0:3663:4064 [0] NCCL INFO group.cc:150 -> 2\nvllm-deepseek-ep-decode-0:3663:4064 [0] NCCL INFO group.cc:73 -> 2 [Async thread]\nINFO 10-13 09:06:25 [v1/executor/multiproc_executor.py:558] Parent process exited, terminating worker\nvllm-deepseek-ep-decode-0:3663:3663 [0] NCCL INFO group.cc:545 -> 2\nvllm-deepseek-ep-decode-0:3663:3663 [0] NCCL INFO group.cc:694 -> 2\nvllm-deepseek-ep-decode-0:3663:3663 [0] NCCL INFO enqueue.cc:2432 -> 2\nERROR 10-13 09:06:25 [v1/executor/multiproc_executor.py:597] RuntimeError: NCCL error: unhandled system error (run with NCCL_DEBUG=INFO for details)\nERROR 10-13 09:06:25 [v1/executor/multiproc_executor.py:597] WorkerProc failed to start.\nERROR 10-13 09:06:25 [v1/executor/multiproc_executor.py:597] Traceback (most recent call last):\nERROR 10-13 09:06:25 [v1/executor/multiproc_executor.py:597]   File "/app/vllm/vllm/v1/executor/multiproc_executor.py", line 571, in worker_main\nERROR 10-13 09:06:25 [v1/executor/multiproc_executor.py:597]     worker = WorkerProc(*args, **kwargs)\nERROR 10-13 09:06:25 [v1/executor/multiproc_executor.py:597]              ^^^^^^^^^^^^^^^^^^^^^^^^^^^\nERROR 10-13 09:06:25 [v1/executor/multiproc_executor.py:597]   File "/app/vllm/vllm/v1/executor/multiproc_executor.py", line 430, in __init__\nERROR 10-13 09:06:25 [v1/executor/multiproc_executor.py:597]     self.worker.init_device()\nERROR 10-13 09:06:25 [v1/executor/multiproc_executor.py:597]   File "/app/vllm/vllm/worker/worker_base.py", line 259, in init_device\nERROR 10-13 09:06:25 [v1/executor/multiproc_executor.py:597]     self.worker.init_device()  # type: ignore\nERROR 10-13 09:06:25 [v1/executor/multiproc_executor.py:597]     ^^^^^^^^^^^^^^^^^^^^^^^^^\n',
        },
        "MD653",
        ["died before unlinking", "clear /dev/shm"],
    ),
    # https://github.com/lmstudio-ai/lmstudio-bug-tracker/issues/2240: Metal max buffer size exceeded by unchunked multimodal prefill
    (
        "lmstudio-ai-lmstudio-bug-tracker-2240",
        {
            "log.txt": '  File "/Users/user/.lmstudio/extensions/backends/vendor/_amphibian/app-mlx-generate-mac14-arm64@34/lib/python3.11/site-packages/mlx_engine/model_kit/batched_vision/batch_generator.py", line 1176, in _next\n    self._prompt_batch.prompt_step()\n  File "/Users/user/.lmstudio/extensions/backends/vendor/_amphibian/app-mlx-generate-mac14-arm64@34/lib/python3.11/site-packages/mlx_engine/model_kit/batched_vision/batch_generator.py", line 825, in prompt_step\n    mx.eval([c.state for c in self.prompt_cache])\nRuntimeError: [metal::malloc] Attempting to allocate 48736917632 bytes which is greater than the maximum allowed buffer size of 30150672384 bytes.\n\nAt:\n  /Users/user/.lmstudio/extensions/backends/vendor/_amphibian/app-mlx-generate-mac14-arm64@34/lib/python3.11/site-packages/mlx_engine/model_kit/batched_vision/model_kit.py(331): _inner\n',
        },
        "MD673",
        ["attention scores of a long prompt", "prefill in chunks"],
    ),
    # https://github.com/lmstudio-ai/lmstudio-bug-tracker/issues/560: MLX import fails: macOS too old for the MLX build (Accelerate symbols missing)
    (
        "lmstudio-ai-lmstudio-bug-tracker-560",
        {
            "log.txt": "🥲 Failed to load the model\n\nFailed to load model\n\nError when loading model: ImportError: dlopen(/Users/balint/.lmstudio/extensions/backends/vendor/_amphibian/app-mlx-generate-mac-arm64@28/lib/python3.11/site-packages/mlx/core.cpython-311-darwin.so, 0x0002): Symbol not found: _cblas_dgemm$NEWLAPACK\n  Referenced from: /Users/balint/.lmstudio/extensions/backends/vendor/_amphibian/app-mlx-generate-mac-arm64@28/lib/python3.11/site-packages/mlx/lib/libmlx.dylib\n  Expected in: /System/Library/Frameworks/Accelerate.framework/Versions/A/Accelerate\n",
        },
        "MD876",
        ["newer macOS than this Mac runs", "$NEWLAPACK"],
    ),
    # https://github.com/ml-explore/mlx/issues/3082: Metal single-buffer size limit (maxBufferLength) exceeded by conv unfold buffer
    (
        "ml-explore-mlx-3082",
        {
            "log.txt": "mlx 0.30.4\ndevice_info {'device_name': 'Apple M4 Max', 'max_recommended_working_set_size': 115448725504, 'memory_size': 137438953472, 'architecture': 'applegpu_g16s', 'max_buffer_length': 86586540032, 'resource_limit': 499000}\nOK 5150 (1, 5276672, 1)\nOK 5155 (1, 5281792, 1)\nOK 5156 (1, 5282816, 1)\nOK 5157 (1, 5283840, 1)\nFAIL 5158 [metal::malloc] Attempting to allocate 86587211776 bytes which is greater than the maximum allowed buffer size of 86586540032 bytes.\nFAIL 5160 [metal::malloc] Attempting to allocate 86620766208 bytes which is greater than the maximum allowed buffer size of 86586540032 bytes.\n",
        },
        "MD673",
        ["PR #3845"],
    ),
    # https://github.com/ml-explore/mlx/issues/3317: Metal command buffer error thrown in completion handler -> uncatchable SIGABRT
    (
        "ml-explore-mlx-3317",
        {
            "crash_stack.txt": "libc++abi: __cxa_throw -> failed_throw -> std::terminate -> abort\nlibmlx.dylib: check_error(MTL::CommandBuffer*)\nlibmlx.dylib: [completion handler block]\nMetal: -[_MTLCommandBuffer didCompleteWithStartTime:endTime:error:]\nIOGPU: -[IOGPUMetalCommandBuffer fillCommandBufferArgs:]_block_invoke\n[GCD dispatch chain]\n",
        },
        "MD661",
        ["completion handler", "PR #3523"],
    ),
    # https://github.com/ml-explore/mlx/issues/3347: Metal use-after-free of pipeline state from custom-kernel cache eviction
    (
        "ml-explore-mlx-3347",
        {
            "log.txt": "failed assertion `command buffer references deallocated object which previously existed at address 0x...'\n",
        },
        "MD825",
        ["use-after-free", "PR #3662"],
    ),
    # https://github.com/ml-explore/mlx-examples/issues/1111: re-quantizing an already quantized model
    (
        "ml-explore-mlx-examples-1111",
        {
            "log.txt": "ValueError: [dequantize] The matrix should be given as a uint32\n",
        },
        "MD817",
        ["quantized twice", "--dequantize"],
    ),
    # https://github.com/ml-explore/mlx-swift/issues/36: missing default.metallib (SwiftPM command-line build)
    (
        "ml-explore-mlx-swift-36",
        {
            "log.txt": "libc++abi: terminating due to uncaught exception of type std::runtime_error: library not found\nFailed to load device library from <default.metallib>\n",
        },
        "MD823",
        ["swift build", "xcodebuild"],
    ),
    # https://github.com/mzbac/flux.swift.cli/issues/4: missing default.metallib (SwiftPM command-line build)
    (
        "mzbac-flux.swift.cli-4",
        {
            "log.txt": "Downloading flux.1 kontext model...\n1000 of 1000 [------------------------------] ETA: 00:00:00 (at 0.65) it/s)\nMLX error: Failed to load the default metallib. library not found library not found library not found  at /Users/admin/Code/ImageMatesCLI/ImageMatesCLI/FLUX_SWIFT_CLI/flux.swift.cli/dist/SourcePackages/checkouts/mlx-swift/Source/Cmlx/mlx-c/mlx/c/stream.cpp:115\n",
        },
        "MD823",
        ["swift build", "xcodebuild"],
    ),
    # https://github.com/ollama/ollama/issues/15775: MLX stream used from a thread that does not own it (Ollama MLX runner)
    (
        "ollama-ollama-15775",
        {
            "client.txt": "Error: 500 Internal Server Error: mlx runner failed: golang.org/x/sync@v0.17.0/errgroup/errgroup.go:78 +0x90\n",
            "server.log": "panic: mlx: There is no Stream(gpu, 1) in current thread. at /private/tmp/mlx-c-20260422-17910-5s6jxl/mlx-c-0.6.0/mlx/c/transforms.cpp:73\n\tpanic: mlx: There is no Stream(gpu, 1) in current thread. at /private/tmp/mlx-c-20260422-17910-5s6jxl/mlx-c-0.6.0/mlx/c/transforms.cpp:15\n\ngoroutine 50 [running]:\ngithub.com/ollama/ollama/x/mlxrunner/mlx.mlxCheck({0x10156c4c6, 0xb}, 0x148e67a172c8)\n\tgithub.com/ollama/ollama/x/mlxrunner/mlx/mlx.go:68 +0xb8\ngithub.com/ollama/ollama/x/mlxrunner/mlx.doEval({0x148e6717cb08, 0x50, 0x10048c544?}, 0x1)\n\tgithub.com/ollama/ollama/x/mlxrunner/mlx/mlx.go:86 +0x11c\ngithub.com/ollama/ollama/x/mlxrunner/mlx.AsyncEval(...)\n\tgithub.com/ollama/ollama/x/mlxrunner/mlx/mlx.go:95\ngithub.com/ollama/ollama/x/mlxrunner.(*cacheSession).close(0x148e66f4e300)\n\tgithub.com/ollama/ollama/x/mlxrunner/cache.go:446 +0x198\npanic({0x102213940?, 0x148e67978300?})\n\truntime/panic.go:860 +0x12c\n",
        },
        "MD824",
        ["runtime.LockOSThread"],
    ),
    # https://github.com/ollama/ollama/issues/16044: MLX metallib stamped with too-new deployment target, rejected on older macOS
    (
        "ollama-ollama-16044",
        {
            "log.txt": "% ollama run gemma4:26b-nvfp4\nError: 500 Internal Server Error: mlx runner failed: panic: mlx: Failed to load the default metallib. This library is using a deployment target (0x00020008) that is not supported on this OS. library not found library not found library not found  at /Users/runner/work/ollama/ollama/build/metal-v3/_deps/mlx-c-src/mlx/c/transforms.cpp:73 (exit: exit status 2)\n",
        },
        "MD823",
        ["deployment target (0x00020008)", "newer macOS than this Mac runs"],
    ),
    # https://github.com/raullenchai/Rapid-MLX/pull/167: MLX stream used from a thread that does not own it (shutdown path)
    (
        "raullenchai-Rapid-MLX-167",
        {
            "log.txt": 'WARNING: [cache_persist] failed to save entry 114: There is no Stream(gpu, 2) in current thread.\nWARNING: [cache_persist] failed to save entry 115: There is no Stream(gpu, 2) in current thread.\nWARNING: [cache_persist] failed to save entry 117: There is no Stream(gpu, 3) in current thread.\nINFO:    [cache_persist] SAVED 114/119 entries ... in 6.1s\nException ignored in: <function BatchGenerator.__del__ at 0x...>\n  File ".../mlx_lm/generate.py", line 1557, in close\n    mx.synchronize(self._stream)\nRuntimeError: There is no Stream(gpu, 2) in current thread.\nINFO:    Application shutdown complete.\n',
        },
        "MD663",
        ["thread-local"],
    ),
]


@pytest.mark.parametrize("slug,files,code,says", REPORTS, ids=[r[0] for r in REPORTS])
def test_a_public_report_is_read_for_its_known_cause(tmp_path, slug, files, code, says):
    """The leading finding is the reading of the report's known cause."""
    assert_read_for(tmp_path, files, code, says)
