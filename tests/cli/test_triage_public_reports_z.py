"""Public failure reports of blind sample 13's half B (MLX, mlx-lm, mlx-examples, mlx-vlm, mlx-audio, mlx-swift, exo and MLX engines), graded blind before they were read, each rebuilt from the report's own posted output and run through the public CLI: the ones read for their known cause, at the blind grade or after."""

from __future__ import annotations

import pytest

from tests.helpers import assert_read_for


REPORTS = [
    # https://github.com/Blaizzy/mlx-vlm/issues/1485: empty input sequence reaches model (empty-array reshape)
    (
        "Blaizzy-mlx-vlm-1485",
        {
            "log.txt": '  File ".../mlx_vlm/models/qwen3_5/language.py", line 1863, in __call__\n    row_out = self(\n  File ".../mlx_vlm/models/qwen3_5/language.py", line 1904, in __call__\n    h = layer(\n  File ".../mlx_vlm/models/qwen3_5_moe/language.py", line 110, in __call__\n    r = self.self_attn(\n  File ".../mlx_vlm/models/qwen3_5/language.py", line 1410, in __call__\n    q_proj_output.reshape(B, L, self.num_attention_heads, -1), 2, axis=-1\nValueError: [reshape] Cannot infer the shape of an empty array\n',
        },
        "MD817",
        ["empty input"],
    ),
    # https://github.com/Blaizzy/mlx-vlm/issues/1871: weight layout double-transposed on load (shape mismatch in load_weights)
    (
        "Blaizzy-mlx-vlm-1871",
        {
            "log.txt": 'python -m mlx_vlm.models.sam3_1.generate --task track --video pingpong.mp4 --prompt "a person" --model mlx-community/sam3.1-bf16\n\n(skip)\n\nValueError: Expected shape (1024, 14, 14, 3) but received shape (1024, 14, 3, 14) for parameter detector_model.vision_encoder.backbone.embeddings.patch_embeddings.projection.weight\n',
        },
        "MD663",
        ["weight files do not fit the model class"],
    ),
    # https://github.com/exo-explore/exo/issues/1678: exo runner crash: KeyError on double task removal after cancel/finish race
    (
        "exo-explore-exo-1678",
        {
            "log.txt": "File \"src/exo/worker/runner/llm_inference/runner.py\", line 305, in handle_generation_tasks\n    del self.active_tasks[task_id]\n        │    │            └ 'bae2f2c7-d07e-456a-b91e-7b1967df3b12'\n        │    └ {}\n        └ <exo.worker.runner.llm_inference.runner.Runner object at 0x11ca7e510>\n\nKeyError: 'bae2f2c7-d07e-456a-b91e-7b1967df3b12'\nRunner was found to be alive, attempting to join process\nRunner exited with exit code None\nERROR    Runner terminated with exitcode=None\nCRITICAL Runner process didn't respond to SIGTERM, killing\n",
        },
        "MD663",
        ["exo's own code"],
    ),
    # https://github.com/exo-explore/exo/issues/2078: stale compiled extension after source update (ImportError in runner)
    (
        "exo-explore-exo-2078",
        {
            "log.txt": "ImportError: cannot import name 'Pidfile' from 'exo_pyo3_bindings' (/Users/ranger/exo/.venv/lib/python3.13/site-packages/exo_pyo3_bindings/__init__.py)\nERROR: Runner terminated with exitcode=1\nRuntimeError: Runner found to be dead\n",
        },
        "MD849",
        ["disagree on its interface"],
    ),
    # https://github.com/ml-explore/mlx-examples/issues/988: dependency version break: import of removed private module
    (
        "ml-explore-mlx-examples-988",
        {
            "log.txt": 'Python 3.12.6 (main, Sep  9 2024, 21:36:32) [Clang 18.1.8 ] on darwin\nType "help", "copyright", "credits" or "license" for more information.\n>>> from mlx_lm import load, generate\nTraceback (most recent call last):\n  File "<stdin>", line 1, in <module>\n  File "/Users/arogister/Documents/mlx/.venv/lib/python3.12/site-packages/mlx_lm/__init__.py", line 3, in <module>\n    from .utils import convert, generate, load, stream_generate\n  File "/Users/arogister/Documents/mlx/.venv/lib/python3.12/site-packages/mlx_lm/utils.py", line 17, in <module>\n    from huggingface_hub.utils._errors import RepositoryNotFoundError\nModuleNotFoundError: No module named \'huggingface_hub.utils._errors\'\n',
        },
        "MD870",
        ["private module"],
    ),
    # https://github.com/ml-explore/mlx-lm/pull/1795: LoRA backward through integer MoE routing indices (missing stop_gradient)
    (
        "ml-explore-mlx-lm-1795",
        {
            "log.txt": "ValueError: [gather_axis] Cannot calculate VJP with respect to indices. Use stop_gradient on indices to stop gradients from being computed.\n",
        },
        "MD817",
        ["integer indices", "mx.stop_gradient"],
    ),
    # https://github.com/ml-explore/mlx-lm/issues/1814: LoRA backward through integer MoE routing indices (missing stop_gradient)
    (
        "ml-explore-mlx-lm-1814",
        {
            "log.txt": 'ValueError: [gather_axis] Cannot calculate VJP with respect to indices.\n            Use stop_gradient on indices to stop gradients from being computed.\nTrainable parameters: 0.353% (73.806M/20914.756M)\nIter 1: Val loss 2.797, Val took 4.072s          <-- forward is fine\nTraceback (most recent call last):\n  File ".../mlx_lm/tuner/trainer.py", line 250, in step\n    (lvalue, toks), grad = loss_value_and_grad(model, *batch)\n  File ".../mlx/nn/utils.py", line 35, in wrapped_value_grad_fn\n    value, grad = value_grad_fn(model.trainable_parameters(), *args, **kwargs)\nValueError: [gather_axis] Cannot calculate VJP with respect to indices.\n',
        },
        "MD817",
        ["integer indices", "mx.stop_gradient"],
    ),
    # https://github.com/ml-explore/mlx-swift-examples/issues/210: model declares parameters absent from checkpoint (keyNotFound on load)
    (
        "ml-explore-mlx-swift-examples-210",
        {
            "log.txt": 'Failed: keyNotFound(base: "Linear", key: "weight")\n',
        },
        "MD883",
        ["keyNotFound"],
    ),
    # https://github.com/ml-explore/mlx-swift-lm/issues/168: token ring buffer sized from wrong dimension (broadcast_shapes)
    (
        "ml-explore-mlx-swift-lm-168",
        {
            "log.txt": "Fatal error: [broadcast_shapes] Shapes (20) and (32) cannot be broadcast\n",
        },
        "MD804",
        ["one-dimensional"],
    ),
    # https://github.com/ml-explore/mlx-swift-lm/pull/390: model declares parameters absent from checkpoint (KV-shared layers, keyNotFound)
    (
        "ml-explore-mlx-swift-lm-390",
        {
            "log.txt": 'keyNotFound(path: ["language_model","model","layers","24","self_attn","v_proj","weight"],\n            modules: ["Gemma4","Gemma4TextLanguageModel","Gemma4TextBackbone",\n                      "Gemma4TextDecoderLayer","Gemma4TextAttention","Linear"])\n',
        },
        "MD883",
        ["keyNotFound"],
    ),
    # https://github.com/waybarrios/vllm-mlx/issues/386: stale cached position ids across requests cause broadcast_shapes error
    (
        "waybarrios-vllm-mlx-386",
        {
            "log.txt": "INFO:vllm_mlx.server:[REQUEST] POST /v1/chat/completions stream=False model='Qwen3.5-35B-A3B' max_tokens=500 temp=0.7 top_p=None top_k=None min_p=None presence_penalty=None repetition_penalty=None msgs=2 roles=['system', 'user'] total_chars=69 tools=0 response_format=None\nINFO:vllm_mlx.server:[REQUEST] last user message preview: Explain quantum computing in simple terms\nERROR:vllm_mlx.mllm_batch_generator:Failed to process batch of 1 prompts: ValueError: [broadcast_shapes] Shapes (1,16,28,64) and (1,1,11,64) cannot be broadcast.\nTraceback (most recent call last):\n  File \"/Users/tperry/code/llm/vllm-mlx/vllm_mlx/mllm_batch_generator.py\", line 1559, in _next\n    new_batch = self._process_prompts(requests)\n  File \"/Users/tperry/code/llm/vllm-mlx/vllm_mlx/mllm_batch_generator.py\", line 1283, in _process_prompts\n    logits = self._run_chunked_text_prefill(\n        req, cache=request_cache\n    )\n",
        },
        "MD804",
        ["state kept between requests"],
    ),
    # https://github.com/waybarrios/vllm-mlx/issues/407: MLX stream used from a different thread (thread-local stream mismatch)
    (
        "waybarrios-vllm-mlx-407",
        {
            "log.txt": "RuntimeError: There is no Stream(gpu, 0) in current thread.\n",
        },
        "MD663",
        ["a stream made on another thread"],
    ),
    # https://github.com/Blaizzy/mlx-audio/pull/604: quantized checkpoint loaded into unquantized model (shape mismatch in load_weights)
    (
        "Blaizzy-mlx-audio-604",
        {
            "log.txt": "ValueError: Expected shape (151936, 896) but received shape (151936, 224)\nfor parameter language_model.embed_tokens.weight\n",
        },
        "MD663",
        ["unquantized (dense) while the file holds it quantized at 8 bits"],
    ),
    # https://github.com/ml-explore/mlx/issues/3602: CUDA invalid launch from int32 overflow in reduction planning (>INT_MAX elements)
    (
        "ml-explore-mlx-3602",
        {
            "log.txt": "RuntimeError: cudaGraphAddKernelNode(&node, graph_, NULL, 0, &params) failed: invalid argument\n",
        },
        "MD830",
        ["kernel launch was refused", "2^31 elements"],
    ),
    # https://github.com/ml-explore/mlx/issues/3659: CUDA grid dimension overflow (gridDim.y > 65535) on large non-contiguous array
    (
        "ml-explore-mlx-3659",
        {
            "log.txt": "Traceback (most recent call last):\nRuntimeError: cudaGraphAddKernelNode(&node, graph_, NULL, 0, &params) failed: invalid argument\n\n",
        },
        "MD830",
        ["kernel launch was refused", "65535"],
    ),
    # https://github.com/ml-explore/mlx/issues/3858: CUDA grid dimension overflow (batched GEMV batch > 65535)
    (
        "ml-explore-mlx-3858",
        {
            "log.txt": "cudaGraphAddKernelNode(...) failed: invalid argument\ncudaLaunchKernelExC(&config, func, params) failed: invalid argument\n",
        },
        "MD830",
        ["kernel launch was refused", "65535"],
    ),
    # https://github.com/lablup/mlxcel/issues/648: CUDA grid dimension overflow in quantized matmul on long prefill
    (
        "lablup-mlxcel-648",
        {
            "log.txt": "terminate called after throwing an instance of 'std::runtime_error'\n  what():  cuLaunchKernelEx(&config, func, params, nullptr) failed: invalid argument\n",
        },
        "MD830",
        ["kernel launch was refused"],
    ),
    # https://github.com/jjang-ai/mlxstudio/issues/88: MLX op called with non-mx.array inputs (strict nanobind type check)
    (
        "jjang-ai-mlxstudio-88",
        {
            "log.txt": '  File ".../mlx_vlm/models/gemma4/vision.py", line 445, in __call__\n      pixel_values = mx.concatenate(pixel_values, axis=0)\n  TypeError: concatenate(): incompatible function arguments.\n',
        },
        "MD883",
        ["an MLX operation (mlx.core's nanobind binding) rejected its arguments"],
    ),
    # https://github.com/inferencerlabs/inferencer-feedback/issues/230: quantization bit-width unsupported by the MLX build (1-bit model)
    (
        "inferencerlabs-inferencer-feedback-230",
        {
            "log.txt": "The following error occurred while loading the model:\n[quantize] The requested number of bits 1 is not supported. The supported bits are 2, 3, 4, 5, 6, and 8.\nPlease ensure you're on the latest software version.\nFor further assistance, please contact support with this error message.\n",
        },
        "MD883",
        ["bit width it has no kernels for"],
    ),
    # https://github.com/ml-explore/mlx-lm/pull/1112: model code bug: custom module not quantizable when loading quantized checkpoint
    (
        "ml-explore-mlx-lm-1112",
        {
            "log.txt": "ValueError: Unable to quantize model of type <class 'mlx_lm.models.gemma4_text.ScaledLinear'>\n",
        },
        "MD663",
        ["no quantized form"],
    ),
    # https://github.com/ml-explore/mlx-examples/pull/920: unsupported rope_scaling config in model loader
    (
        "ml-explore-mlx-examples-920",
        {
            "log.txt": '(mlx) ➜ lora (main) python lora.py --model /Users/yexiaodong/.cache/huggingface/hub/models--mlx-community--Meta-Llama-3.1-8B-Instruct-4bit/snapshots/efc01dc1fd006f88344400c099cda5b3e8e524ef --train --iters 600\nLoading pretrained model\nTraceback (most recent call last):\n  File "/Users/yexiaodong/go/src/github.com/yeahdongcn/mlx-examples/lora/lora.py", line 336, in <module>\n    model, tokenizer, _ = lora_utils.load(args.model, tokenizer_config)\n                          ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n  File "/Users/yexiaodong/go/src/github.com/yeahdongcn/mlx-examples/lora/utils.py", line 149, in load\n    model_args = models.ModelArgs.from_dict(config)\n                 ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n  File "/Users/yexiaodong/go/src/github.com/yeahdongcn/mlx-examples/lora/models.py", line 40, in from_dict\n    return cls(\n           ^^^^\n  File "<string>", line 14, in __init__\n  File "/Users/yexiaodong/go/src/github.com/yeahdongcn/mlx-examples/lora/models.py", line 33, in __post_init__\n    raise ValueError(f"rope_scaling must contain keys {required_keys}")\n',
        },
        "MD663",
        ["rope_scaling in a form"],
    ),
    # https://github.com/ml-explore/mlx/issues/3859: CUDA JIT headers not found (pip CUDA 13 layout)
    (
        "ml-explore-mlx-3859",
        {
            "log.txt": "RuntimeError: Can not find locations of CUDA headers, please set\nenvironment variable CUDA_HOME or CUDA_PATH.\n",
        },
        "MD663",
        ["no CUDA headers", "CUDA_HOME"],
    ),
    # https://github.com/ml-explore/mlx-swift-examples/issues/102: eval() called on a non-MLXArray value
    (
        "ml-explore-mlx-swift-examples-102",
        {
            "log.txt": "MLX/Transforms+Eval.swift:166: Fatal error: Unable to extract MLXArray from idle\n",
        },
        "MD883",
        ["not an MLXArray"],
    ),
    # https://github.com/ml-explore/mlx-swift-lm/pull/223: module property mutated directly instead of update(modules:)
    (
        "ml-explore-mlx-swift-lm-223",
        {
            "log.txt": "MLXNN/Module.swift:1530: Fatal error: please use Model.update(modules:)\nrather than mutating the Module property directly\n",
        },
        "MD883",
        ["update(modules:)"],
    ),
    # https://github.com/ml-explore/mlx-swift-examples/issues/250: config schema change breaks decoding (keyNotFound)
    (
        "ml-explore-mlx-swift-examples-250",
        {
            "log.txt": 'Failed: keyNotFound(CodingKeys(stringValue: "size", intValue: nil), Swift.DecodingError.Context(codingPath: [], debugDescription: "No value associated with key CodingKeys(stringValue: \\"size\\", intValue: nil) (\\"size\\").", underlyingError: nil))\n',
        },
        "MD883",
        ["schema"],
    ),
    # https://github.com/Blaizzy/mlx-audio/pull/603: wrong parameter type from client (voice as float)
    (
        "Blaizzy-mlx-audio-603",
        {
            "log.txt": "AttributeError: 'float' object has no attribute 'split'\n",
        },
        "MD663",
        ["a request's parameter of another type"],
    ),
    # https://github.com/Blaizzy/mlx-vlm/issues/1441: batch state desync under continuous batching (IndexError)
    (
        "Blaizzy-mlx-vlm-1441",
        {
            "log.txt": "IndexError: list index out of range\n",
        },
        "MD663",
        ["indexed past the end"],
    ),
    # https://github.com/ml-explore/mlx-lm/pull/1460: dependency version break: import-time crash from transformers API change
    (
        "ml-explore-mlx-lm-1460",
        {
            "log.txt": "AttributeError: 'str' object has no attribute '__module__'\n",
        },
        "MD663",
        ["a bare AttributeError line"],
    ),
    # https://github.com/ml-explore/mlx-examples/issues/704: API removed in MLX upgrade: stale mlx-lm calls missing quantize_module
    (
        "ml-explore-mlx-examples-704",
        {
            "log.txt": "nn.QuantizedLinear.quantize_module(\n    ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\nAttributeError: type object 'QuantizedLinear' has no attribute 'quantize_module'\n",
        },
        "MD663",
        ["QuantizedLinear has no attribute quantize_module"],
    ),
]


@pytest.mark.parametrize("slug,files,code,says", REPORTS, ids=[r[0] for r in REPORTS])
def test_a_public_report_is_read_for_its_known_cause(tmp_path, slug, files, code, says):
    """The leading finding is the reading of the report's known cause."""
    assert_read_for(tmp_path, files, code, says)
