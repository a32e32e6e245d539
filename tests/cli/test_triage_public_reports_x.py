"""Public failure reports of blind sample 12's half B, added after its blind grade (23 %
correct on the code of the grade; some kinds its misses showed were built after it), each
rebuilt from the report's own posted output and run through the public CLI."""

from __future__ import annotations

import pytest

from tests.helpers import assert_read_for


REPORTS = [
    # https://github.com/Blaizzy/mlx-vlm/pull/1423: Metal-only custom kernel used on the MLX CUDA backend
    (
        "Blaizzy-mlx-vlm-1423",
        {
            "log.txt": "RuntimeError: [metal_kernel] No Metal back-end.\n",
        },
        "MD663",
        ["no Metal backend", "upgrade the model library"],
    ),
    # https://github.com/Blaizzy/mlx-vlm/pull/1475: training backward through a custom Metal kernel without VJP
    (
        "Blaizzy-mlx-vlm-1475",
        {
            "log.txt": "[Primitive::vjp] Not implemented for CustomKernel\n",
        },
        "MD883",
        ["does not implement it", "custom Metal kernel"],
    ),
    # https://github.com/ml-explore/mlx/pull/1537: Metal residency set unavailable in a macOS VM
    (
        "ml-explore-mlx-1537",
        {
            "log.txt": "libc++abi: terminating due to uncaught exception of type std::runtime_error: [metal::Device] Unable to construct residency set.\n",
        },
        "MD675",
        ["virtual machine"],
    ),
    # https://github.com/raullenchai/Rapid-MLX/issues/160: MLX stream used from a thread that does not own it (thread-local streams)
    (
        "raullenchai-Rapid-MLX-160",
        {
            "log.txt": 'Traceback (most recent call last):\n  File "/Users/mlaprise/repos/Rapid-MLX/vllm_mlx/scheduler.py", line 2343, in step\n    raw_next = self.batch_generator.next()\n  File "/Users/mlaprise/repos/Rapid-MLX/.venv/lib/python3.13/site-packages/mlx_lm/generate.py", line 1329, in next\n    return self._next()\n           ~~~~~~~~~~^^\n  File "/Users/mlaprise/repos/Rapid-MLX/vllm_mlx/scheduler.py", line 564, in _chunked_next\n    new_batch = self._process_prompts(batch_prompts)\n  File "/Users/mlaprise/repos/Rapid-MLX/vllm_mlx/scheduler.py", line 236, in _patched_process_prompts\n    batch = _orig_process_prompts(prompts)\n  File "/Users/mlaprise/repos/Rapid-MLX/.venv/lib/python3.13/site-packages/mlx_lm/generate.py", line 1107, in _process_prompts\n    mx.eval([c.state for c in prompt_cache])\n    ~~~~~~~^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\nRuntimeError: There is no Stream(gpu, 0) in current thread.\n',
        },
        "MD663",
        ["a stream made on another thread"],
    ),
    # https://github.com/unslothai/unsloth-zoo/pull/1127: Metal buffer-count resource limit from lazy cache-metadata graph leak in decode
    (
        "unslothai-unsloth-zoo-1127",
        {
            "log.txt": "RuntimeError: [metal::malloc] Resource limit (499000) exceeded.\n",
        },
        "MD672",
        ["not of bytes", "un-evaluated graphs"],
    ),
    # https://github.com/waybarrios/vllm-mlx/pull/353: KV-cache shape mismatch when merging a trimmed sliding-window (rotating) cache
    (
        "waybarrios-vllm-mlx-353",
        {
            "log.txt": "ValueError: [broadcast_shapes] Shapes (1,8,914,256) and (1,8,1024,256) cannot be broadcast\n",
        },
        "MD804",
        ["KV cache"],
    ),
]


@pytest.mark.parametrize("slug,files,code,says", REPORTS, ids=[r[0] for r in REPORTS])
def test_a_public_report_is_read_for_its_known_cause(tmp_path, slug, files, code, says):
    """The leading finding is the reading of the report's known cause."""
    assert_read_for(tmp_path, files, code, says)
