"""Public failure reports of blind sample 12's half A (MLX's and mlx-vlm's fix commits, MLX
engines, NCCL on EKS), the half its kinds were built from, each rebuilt from the report's own
posted output and run through the public CLI."""

from __future__ import annotations

import pytest

from tests.helpers import assert_read_for


REPORTS = [
    # https://github.com/Blaizzy/mlx-audio/pull/417: MLX Metal kernel not found (misnamed depthwise conv1d large kernel)
    (
        "Blaizzy-mlx-audio-417",
        {
            "log.txt": "RuntimeError: [metal::Device] Unable to load kernel depthwise_conv_1d__largefloat32\n",
        },
        "MD698",
        ["malformed", "PR #3289"],
    ),
    # https://github.com/Blaizzy/mlx-vlm/pull/1279: quantized-weight dtype used as activation dtype (conv rejects integer input)
    (
        "Blaizzy-mlx-vlm-1279",
        {
            "log.txt": "ValueError: [conv] Invalid input array with type uint8.\nConvolution currently only supports floating point types.\n",
        },
        "MD817",
        ["integer array", "quantized"],
    ),
    # https://github.com/Blaizzy/mlx-vlm/issues/1481: mlx-vlm quantized KV cache tuple treated as array (kv-bits crash)
    (
        "Blaizzy-mlx-vlm-1481",
        {
            "log.txt": 'python -m mlx_vlm.server \\\n  --model mlx-community/gemma-3-4b-it-8bit \\\n  --host 127.0.0.1 --port 8002 --kv-bits 8 --max-kv-size 65536\n\n  File ".../mlx_vlm/models/gemma3/language.py", line 232, in __call__\n    h = layer(h, local_mask, c)\n  File ".../mlx_vlm/models/gemma3/language.py", line 158, in __call__\n    r = self.self_attn(self.input_layernorm(x), mask, cache)\n  File ".../mlx_vlm/models/gemma3/language.py", line 84, in __call__\n    if mask.shape[-1] != keys.shape[-2]:\n                         ^^^^^^^^^^\nAttributeError: \'tuple\' object has no attribute \'shape\'\n',
        },
        "MD663",
        ["mlx_vlm's own code"],
    ),
    # https://github.com/Blaizzy/mlx-vlm/pull/1799: custom Metal kernel threadgroup size exceeds the pipeline's limit
    (
        "Blaizzy-mlx-vlm-1799",
        {
            "log.txt": "ValueError: Thread group size (1024) is greater than  the maximum allowed\nthreads per threadgroup (896).\n",
        },
        "MD663",
        ["maxTotalThreadsPerThreadgroup"],
    ),
    # https://github.com/aws-samples/aws-do-eks/pull/54: NCCL socket fallback picks non-routable link-local interface (connection refused cross-node)
    (
        "aws-samples-aws-do-eks-54",
        {
            "log.txt": "NET/OFI Using transport protocol RDMA (platform set)\nNET/OFI No eligible providers were found\nNET/OFI aws-ofi-nccl initialization failed\nNET/IB : No device found → Failed to initialize NET plugin IB\nInitialized NET plugin Socket        ← falls back to TCP\nNET/Socket : Using [0]enp73s0:10.1.216.156<0> [1]pod-id-link0:169.254.170.23<0>\nsocketPollConnect: connect to 169.254.170.23<...> returned Connection refused, retrying (13/34)\n→ RuntimeError: NCCL error: remote process exited or there was a network error\n",
        },
        "MD879",
        ["link-local"],
    ),
    # https://github.com/jjang-ai/vmlx/issues/139: MLX stream used from a worker thread without its own stream (thread-local streams)
    (
        "jjang-ai-vmlx-139",
        {
            "log.txt": 'INFO:vmlx_engine.models.mllm:JANG VL model loaded: ./dealignai/Gemma-4-26B-A4B-JANG_4M-CRACK\nINFO:vmlx_engine.engine.simple:SimpleEngine loaded: ./dealignai/Gemma-4-26B-A4B-JANG_4M-CRACK (MLLM=True)\nINFO:vmlx_engine.server:MLLM model loaded (simple mode): ./dealignai/Gemma-4-26B-A4B-JANG_4M-CRACK\nINFO:vmlx_engine.server:Metal GPU memory after load: 15.06GB active, 15.06GB peak\nINFO:vmlx_engine.server:System memory after load: 9.8GB available (79.5% used)\nINFO:vmlx_engine.server:Native tool format enabled for parser: gemma4\nINFO:vmlx_engine.server:Default max tokens: 32768\nStarting server at http://127.0.0.1:8000\nINFO:     Started server process [51025]\nINFO:     Waiting for application startup.\nINFO:vmlx_engine.server:Started caffeinate system wake lock for PID 51025\nINFO:     Application startup complete.\nINFO:     Uvicorn running on http://127.0.0.1:8000 (Press CTRL+C to quit)\nINFO:     127.0.0.1:51405 - "POST /v1/chat/completions HTTP/1.1" 200 OK\nERROR:vmlx_engine.models.mllm:VLM stream_generate error: RuntimeError: There is no Stream(gpu, 0) in current thread.\n',
        },
        "MD883",
        ["a stream made on another thread"],
    ),
    # https://github.com/kwindla/macos-local-voice-agents/issues/3: Metal command-buffer assertion from MLX used concurrently on several threads
    (
        "kwindla-macos-local-voice-agents-3",
        {
            "log.txt": "-[IOGPUMetalCommandBuffer encodeSignalEvent:value:]:426: failed assertion `encodeSignalEvent:value: with uncommitted encoder'\n\n-[_MTLCommandBuffer addCompletedHandler:]:976: failed assertion `Completed handler provided after commit call'\n",
        },
        "MD825",
        ["two threads at once"],
    ),
    # https://github.com/soniqo/speech-swift/issues/65: MLX Swift metallib missing (SwiftPM CLI build)
    (
        "soniqo-speech-swift-65",
        {
            "log.txt": ".build/release/audio respond --input your_audio.wav --output response.wav --voice NATM0\n\nMLX error: Failed to load the default metallib. library not found library not found library not found library not found  at /Users/robert/src/ai/qwen3-asr-swift/.build/checkouts/mlx-swift/Source/Cmlx/mlx-c/mlx/c/stream.cpp:115\n",
        },
        "MD823",
        ["swift build", "xcodebuild"],
    ),
    # https://github.com/vllm-project/vllm-metal/pull/117: Sliding-window KV cache merge shape mismatch (upstream mlx-lm bug) in batched decode
    (
        "vllm-project-vllm-metal-117",
        {
            "log.txt": "ValueError: [broadcast_shapes] Shapes (1,8,311,64) and (1,8,128,64) cannot be broadcast\n",
        },
        "MD804",
        ["KV cache"],
    ),
    # https://github.com/waybarrios/vllm-mlx/pull/683: Metal buffer-count resource limit exhausted by accumulated prefix-cache entries
    (
        "waybarrios-vllm-mlx-683",
        {
            "log.txt": "RuntimeError: [metal::malloc] Resource limit (499000) exceeded.\n[generation_error_recovery] aborted 1 running requests, batch generator closed\n",
        },
        "MD672",
        ["not of bytes"],
    ),
]


@pytest.mark.parametrize("slug,files,code,says", REPORTS, ids=[r[0] for r in REPORTS])
def test_a_public_report_is_read_for_its_known_cause(tmp_path, slug, files, code, says):
    """The leading finding is the reading of the report's known cause."""
    assert_read_for(tmp_path, files, code, says)
