"""Public failure reports of blind sample 14's half B (MLX, mlx-lm, mlx-vlm, mlx-audio, mlx-swift and MLX engines), graded blind before they were read, each rebuilt from the report's own posted output and run through the public CLI: the ones read for their known cause, at the blind grade or after."""

from __future__ import annotations

import pytest

from tests.helpers import assert_read_for


REPORTS = [
    # https://github.com/Blaizzy/mlx-audio/issues/191: dependency version mismatch (removed mlx-lm API)
    (
        "Blaizzy-mlx-audio-191",
        {
            "log.txt": '(.venv) ➜  mlx-audio git:(main) mlx_audio.tts.generate --text "Hello, world" --file_prefix hello\nTraceback (most recent call last):\n  File "/Users/krzynio/projects/outemlx/.venv/bin/mlx_audio.tts.generate", line 5, in <module>\n    from mlx_audio.tts.generate import main\n  File "/Users/krzynio/projects/outemlx/.venv/lib/python3.12/site-packages/mlx_audio/tts/generate.py", line 14, in <module>\n    from .utils import load_model\n  File "/Users/krzynio/projects/outemlx/.venv/lib/python3.12/site-packages/mlx_audio/tts/utils.py", line 15, in <module>\n    from mlx_lm.utils import dequantize_model, quantize_model, save_config, save_weights\nImportError: cannot import name \'save_weights\' from \'mlx_lm.utils\' (/Users/krzynio/projects/outemlx/.venv/lib/python3.12/site-packages/mlx_lm/utils.py)\n',
        },
        "MD849",
        ["disagree on its interface"],
    ),
    # https://github.com/Blaizzy/mlx-vlm/issues/1001: checkpoint/model architecture mismatch on load (extra parameters)
    (
        "Blaizzy-mlx-vlm-1001",
        {
            "log.txt": "ValueError: Received 2 parameters not in model:\nmulti_modal_projector.layer_norm.bias,\nmulti_modal_projector.layer_norm.weight.\n",
        },
        "MD663",
        ["weight files do not fit the model class"],
    ),
    # https://github.com/Blaizzy/mlx-vlm/issues/1049: MLX thread-local stream used from another thread
    (
        "Blaizzy-mlx-vlm-1049",
        {
            "log.txt": 'mineru -p some.pdf -o . -b vlm-mlx-engine\nFile ".../mlx_vlm/generate.py", line 425, in stream_generate\n    with wired_limit(model, [generation_stream]):\nFile ".../contextlib.py", line 153, in __exit__\n    self.gen.throw(typ, value, traceback)\nFile ".../mlx_vlm/generate.py", line 183, in wired_limit\n    mx.synchronize(s)\nRuntimeError: There is no Stream(gpu, 1) in current thread.\n',
        },
        "MD663",
        ["a stream made on another thread"],
    ),
    # https://github.com/Blaizzy/mlx-vlm/issues/1416: library regression: checkpoint/model mismatch on load (extra parameters)
    (
        "Blaizzy-mlx-vlm-1416",
        {
            "log.txt": "ValueError: Received 140 parameters not in model:\nlanguage_model.model.layers.15.self_attn.k_norm.weight,\nlanguage_model.model.layers.15.self_attn.k_proj.biases,\nlanguage_model.model.layers.15.self_attn.k_proj.scales,\nlanguage_model.model.layers.15.self_attn.k_proj.weight,\nlanguage_model.model.layers.15.self_attn.v_proj.biases,\nlanguage_model.model.layers.15.self_attn.v_proj.scales,\nlanguage_model.model.layers.15.self_attn.v_proj.weight,\nlanguage_model.model.layers.16.self_attn.k_norm.weight,\n[...]\n",
        },
        "MD663",
        ["weight files do not fit the model class"],
    ),
    # https://github.com/SharpAI/SwiftLM/issues/53: unsupported model architecture variant: unhandled weight keys at load
    (
        "SharpAI-SwiftLM-53",
        {
            "log.txt": './SwiftLM \\\n  --model mlx-community/gemma-4-26b-a4b-it-4bit \\\n  --stream-experts \\\n  --turbo-kv \\\n  --port 5413\n[SwiftLM] Loading model: mlx-community/gemma-4-26b-a4b-it-4bit\n[SwiftLM] Loading LLM (large language model)...\n[SwiftLM] Download: [===================>] 100% ⠙ (14916.6 MB / 14916.6 MB) | Speed: 16242.3 MB/s\nError: Unhandled keys ["experts", "post_feedforward_layernorm_1", "post_feedforward_layernorm_2", "pre_feedforward_layernorm_2", "router"] in language_model.model.layers.0 in Gemma4Model.Gemma4TextModel.Gemma4TextModelInner.Gemma4DecoderLayer\n',
        },
        "MD883",
        ["unhandledKeys"],
    ),
    # https://github.com/dx-dtran/gpt2-mlx/issues/3: MLX API removed in newer mlx version
    (
        "dx-dtran-gpt2-mlx-3",
        {
            "log.txt": "  File \"./gpt2-mlx/transformer.py\", line 168, in loss\n    mx.simplify(loss)\nAttributeError: module 'mlx.core' has no attribute 'simplify'\n",
        },
        "MD849",
        ["disagree on its interface"],
    ),
    # https://github.com/epheterson/immich-apple-silicon/pull/104: MLX thread-local stream used from another thread (no Stream in current thread)
    (
        "epheterson-immich-apple-silicon-104",
        {
            "log.txt": "std::runtime_error: There is no Stream(cpu, 1) in current thread\n",
        },
        "MD883",
        ["a stream made on another thread"],
    ),
    # https://github.com/ml-explore/mlx/issues/1392: op not implemented on Metal GPU backend (needs CPU stream)
    (
        "ml-explore-mlx-1392",
        {
            "log.txt": "libc++abi: terminating due to uncaught exception of type std::runtime_error: [SVD::eval_gpu] Metal SVD NYI.\n",
        },
        "MD697",
        ["no GPU implementation", "stream=mx.cpu"],
    ),
    # https://github.com/ml-explore/mlx/issues/1771: MLX transform not implemented for primitive (jvp of AddMM)
    (
        "ml-explore-mlx-1771",
        {
            "log.txt": "---------------------------------------------------------------------------\nValueError                                Traceback (most recent call last)\nCell In[12], [line 1](vscode-notebook-cell:?execution_count=12&line=1)\n----> [1](vscode-notebook-cell:?execution_count=12&line=1) mx.jvp(model, [x], [v])\n\nValueError: [Primitive::jvp] Not implemented for AddMM.\n",
        },
        "MD697",
        ["missing feature of that MLX release"],
    ),
    # https://github.com/ml-explore/mlx/issues/1781: op not implemented on Metal GPU backend (needs CPU stream)
    (
        "ml-explore-mlx-1781",
        {
            "log.txt": '$ python3\nPython 3.13.0 (v3.13.0:60403a5409f, Oct  7 2024, 00:37:40) [Clang 15.0.0 (clang-1500.3.9.4)] on darwin\nType "help", "copyright", "credits" or "license" for more information.\n>>> import mlx\n>>> import mlx.core\n>>> import mlx.core.linalg\n>>> a = mlx.core.array( [[1, 3.0], [3.0, 4.0]])\n>>> mlx.core.linalg.cholesky(a)\nTerminating due to uncaught exception: [Cholesky::eval_gpu] Metal Cholesky decomposition NYI.\n[1]    80899 abort      python3\n',
        },
        "MD697",
        ["no GPU implementation", "stream=mx.cpu"],
    ),
    # https://github.com/ml-explore/mlx-lm/pull/426: model definition/checkpoint shape mismatch on load (wrong head_dim)
    (
        "ml-explore-mlx-lm-426",
        {
            "log.txt": "ValueError: Expected shape (4480, 4480) but received shape (5120, 4480) for parameter backbone.layers.14.mixer.q_proj.weight\n",
        },
        "MD663",
        ["weight files do not fit the model class"],
    ),
    # https://github.com/ml-explore/mlx-swift-examples/issues/53: quantized checkpoint layout unsupported by loader: unhandled weight keys
    (
        "ml-explore-mlx-swift-examples-53",
        {
            "log.txt": 'Failed: unhandledKeys(base: "Embedding", keys: ["biases", "scales"])\n',
        },
        "MD883",
        ["unhandledKeys"],
    ),
    # https://github.com/ml-explore/mlx-swift-lm/pull/576: VLM processor uses wrong image token id: image token/feature count mismatch (fatal)
    (
        "ml-explore-mlx-swift-lm-576",
        {
            "log.txt": "MLXVLM/LFM2VL.swift:960: Fatal error: Image features and image tokens do not match: tokens: 1, features 1536\n",
        },
        "MD883",
        ["image token id"],
    ),
    # https://github.com/raullenchai/Rapid-MLX/issues/105: mlx-lm API version mismatch (BatchGenerator)
    (
        "raullenchai-Rapid-MLX-105",
        {
            "log.txt": "TypeError: BatchGenerator.__init__() got an unexpected keyword argument 'prompt_progress_callback'\nImportError: cannot import name 'Batch' from 'mlx_lm.generate'\n",
        },
        "MD849",
        ["disagree on its interface"],
    ),
    # https://github.com/unslothai/unsloth-zoo/pull/750: training backward through custom Metal kernel without VJP
    (
        "unslothai-unsloth-zoo-750",
        {
            "log.txt": "ValueError: [Primitive::vjp] Not implemented for CustomKernel.\n",
        },
        "MD697",
        ["custom Metal kernel"],
    ),
    # https://github.com/waybarrios/vllm-mlx/issues/443: mlx-lm prompt-cache save rejects unsupported cache wrapper
    (
        "waybarrios-vllm-mlx-443",
        {
            "log.txt": "INFO:vllm_mlx.memory_cache:[cache_persist] saved entry 0: 16 tokens, 1.5MB KV, file=...\nWARNING:vllm_mlx.memory_cache:[cache_persist] failed to save entry 1: '_QuantizedCacheWrapper' object has no attribute 'state'\nWARNING:vllm_mlx.memory_cache:[cache_persist] failed to save entry 2: '_QuantizedCacheWrapper' object has no attribute 'state'\n... (every other entry)\n",
        },
        "MD883",
        ["a KV cache of one kind"],
    ),
    # https://github.com/ml-explore/mlx/issues/873: MLX regression in array index assignment
    (
        "ml-explore-mlx-873",
        {
            "log.txt": "ValueError: Cannot broadcast array of shape (2) into shape (2,1).\n",
        },
        "MD663",
        ["set-item"],
    ),
    # https://github.com/ml-explore/mlx/issues/1012: MLX regression in GGUF quantized weight loading
    (
        "ml-explore-mlx-1012",
        {
            "log.txt": "ValueError: [eval] Attempting to eval an array without a primitive.\n",
        },
        "MD816",
        ["GGUF loader"],
    ),
]


@pytest.mark.parametrize("slug,files,code,says", REPORTS, ids=[r[0] for r in REPORTS])
def test_a_public_report_is_read_for_its_known_cause(tmp_path, slug, files, code, says):
    """The leading finding is the reading of the report's known cause."""
    assert_read_for(tmp_path, files, code, says)
