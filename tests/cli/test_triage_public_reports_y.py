"""Public failure reports of blind sample 13's half A (MLX, mlx-lm, mlx-examples, mlx-vlm, mlx-swift and MLX engines' issues and fix pull requests), the half its kinds were built from, each rebuilt from the report's own posted output and run through the public CLI."""

from __future__ import annotations

import pytest

from tests.helpers import assert_read_for


REPORTS = [
    # https://github.com/Blaizzy/mlx-vlm/issues/1079: per-layer mixed quantization overrides not applied (shape mismatch in load_weights)
    (
        "Blaizzy-mlx-vlm-1079",
        {
            "log.txt": "ValueError: Expected shape (10240, 640) but received shape (10240, 960)\nfor parameter language_model.model.layers.0.linear_attn.in_proj_qkv.weight\n",
        },
        "MD663",
        ["4 bits while the file holds it at 6 bits", "per-layer quantization"],
    ),
    # https://github.com/Blaizzy/mlx-vlm/pull/1301: model declares parameters absent from checkpoint (KV-shared layers, missing parameters)
    (
        "Blaizzy-mlx-vlm-1301",
        {
            "log.txt": "ValueError: Missing 60 parameters\n",
        },
        "MD663",
        ["weight files do not fit the model class"],
    ),
    # https://github.com/Blaizzy/mlx-vlm/issues/1558: empty tensor reshape in batched chunked prefill (padding-only row)
    (
        "Blaizzy-mlx-vlm-1558",
        {
            "log.txt": "ValueError: [reshape] Cannot infer the shape of an empty array\n",
        },
        "MD817",
        ["empty input", "all padding"],
    ),
    # https://github.com/Blaizzy/mlx-vlm/issues/1654: exception inside mx.compile trace corrupts compile state
    (
        "Blaizzy-mlx-vlm-1654",
        {
            "log.txt": "RuntimeError: [eval] Attempting to eval an array without a primitive\n",
        },
        "MD816",
        ["raised an exception while mx.compile traced it"],
    ),
    # https://github.com/Blaizzy/mlx-vlm/issues/1715: KV cache trim invalid for rotating/sliding-window cache (broadcast_shapes)
    (
        "Blaizzy-mlx-vlm-1715",
        {
            "log.txt": "ValueError: [broadcast_shapes] Shapes (1,8,4,256) and (1,8,1029,256) cannot be broadcast\n  BufferedRotatingKVCache._ensure_capacity (mlx_vlm/models/cache.py)\n",
        },
        "MD804",
        ["differ only in length", "rotating (sliding-window) cache"],
    ),
    # https://github.com/Blaizzy/mlx-vlm/issues/1830: image token / feature count mismatch in VLM training
    (
        "Blaizzy-mlx-vlm-1830",
        {
            "log.txt": "ValueError: Image features and image tokens do not match: tokens: 1377, features 17\nValueError: Image features and image tokens do not match: tokens: 447, features 1053\n",
        },
        "MD663",
        ["image placeholder tokens", "maximum sequence length"],
    ),
    # https://github.com/Blaizzy/nativ/issues/69: per-layer mixed quantization config not applied (extra params on strict load)
    (
        "Blaizzy-nativ-69",
        {
            "log.txt": 'Started mlx-vlm-server.\nINFO:     Started server process [32941]\nINFO:     Waiting for application startup.\n2026-07-23 19:24:41,533 - INFO - Pre-loading language model: mlx-community/gpt-oss-20b-MXFP4-Q8\n2026-07-23 19:24:41,536 - INFO - Loading model: mlx-community/gpt-oss-20b-MXFP4-Q8\n2026-07-23 19:24:41,628 - INFO - HTTP Request: GET https://huggingface.co/api/models/mlx-community/gpt-oss-20b-MXFP4-Q8/revision/main "HTTP/1.1 200 OK"\n\nFetching 10 files:   0%|          | 0/10 [00:00<?, ?it/s]\nFetching 10 files: 100%|██████████| 10/10 [00:00<00:00, 163840.00it/s]\n2026-07-23 19:24:41,654 - ERROR - Error loading model mlx-community/gpt-oss-20b-MXFP4-Q8: Received 122 parameters not in model: \nlanguage_model.lm_head.biases,\nlanguage_model.model.embed_tokens.biases,\nlanguage_model.model.layers.0.mlp.router.biases,\nlanguage_model.model.layers.0.self_attn.k_proj.biases,\nlanguage_model.model.layers.0.self_attn.o_proj.biases,\nlanguage_model.model.layers.0.self_attn.q_proj.biases,\nlanguage_model.model.layers.14.self_attn.v_proj.biases,\nlanguage_model.model.layers.15.mlp.router.biases,\nlanguage_model.model.layers.15.self_attn.k_proj.biases,\nlanguage_model.model.layers.15.self_attn.o_proj.biases,\nlanguage_model.model.layers.15.self_attn.q_proj.biases,\nlanguage_model.model.layers.15.self_attn.v_proj.biases,\nlanguage_model.model.layers.16.mlp.router.biases,\nlanguage_model.model.layers.16.self_attn.k_proj.biases,\nlanguage_model.model.layers.16.self_attn.o_proj.biases,\nlanguage_model.model.layers.16.self_attn.q_proj.biases,\nlanguage_model.model.layers.16.self_attn.v_proj.biases,\nlanguage_model.model.layers.17.mlp.router.biases,\nlanguage_model.model.layers.17.self_attn.k_proj.biases,\nlanguage_model.model.layers.17.self_attn.o_proj.biases,\nlanguage_model.model.layers.17.self_attn.q_proj.biases,\nlanguage_model.model.layers.17.self_attn.v_proj.biases,\nlanguage_model.model.layers.18.mlp.router.biases,\nlanguage_model.model.layers.18.self_attn.k_proj.biases,\nlanguage_model.model.layers.18.self_attn.o_proj.biases,\nlanguage_model.model.layers.18.self_attn.q_proj.biases,\nlanguage_model.model.layers.18.self_attn.v_proj.biases,\nlanguage_model.model.layers.19.mlp.router.biases,\nlanguage_model.model.layers.19.self_attn.k_proj.biases,\nlanguage_model.model.layers.19.self_attn.o_proj.biases,\nlanguage_model.model.layers.19.self_attn.q_proj.biases,\nlanguage_model.model.layers.19.self_attn.v_proj.biases,\nlanguage_model.model.layers.2.mlp.router.biases,\nlanguage_model.model.layers.2.self_attn.k_proj.biases,\nlanguage_model.model.layers.2.self_attn.o_proj.biases,\nlanguage_model.model.layers.2.self_attn.q_proj.biases,\nlanguage_model.model.layers.2.self_attn.v_proj.biases,\n',
        },
        "MD883",
        ["weight files do not fit the model class"],
    ),
    # https://github.com/Pushkinist/rMLX/issues/208: quantization bit-width unsupported by the MLX build (missing Metal kernel)
    (
        "Pushkinist-rMLX-208",
        {
            "log.txt": "rmlx serve --model <Bonsai-27B-mlx-1bit>\nWARN prefill: exit_prefill quantization failed\n     error=mlx: Array::eval: [metal::Device] Unable to load kernel affine_dequantize_bfloat16_t_gs_128_b_1\n",
        },
        "MD698",
        ["1-bit weights", "2, 3, 4, 5, 6 and 8 bits only"],
    ),
    # https://github.com/SharpAI/SwiftLM/issues/71: quantized KV cache used through non-quantized update path
    (
        "SharpAI-SwiftLM-71",
        {
            "log.txt": "MLXLMCommon/KVCache.swift:1063: Fatal error: `update` was called on `QuantizedKVCache`. Use `updateQuantized` instead.\n",
        },
        "MD883",
        ["a plain update on a quantized cache"],
    ),
    # https://github.com/jjang-ai/vmlx/issues/225: continuous-batching join fails: non-batch KV cache kept by patched merge
    (
        "jjang-ai-vmlx-225",
        {
            "log.txt": "13:53:19.378  POST /v1/responses          (vMLX Chat)\n13:53:19.409  Request resp_966e91831ddc: cache hit, 1390 tokens cached, 1230 remaining to process\n13:53:19.410  WARNING:vmlx_engine.scheduler: Deferred abort remove failed for chatcmpl-44c7720d:\n              KVCache.filter() only supports the single-sequence fast path. Multi-sequence batching must use BatchKVCache.\n13:53:20.368  POST /v1/chat/completions   (LiteLLM Playground)\n13:53:20.386  Request chatcmpl-8336a9e2: cache hit, 735 tokens cached, 933 remaining to process\n13:53:20.465  ERROR:vmlx_engine.scheduler: Error in batch generation step: 'KVCache' object has no attribute 'extend'\n13:53:20.466  ERROR:vmlx_engine.engine_core: Engine loop error: 'KVCache' object has no attribute 'extend'\n13:53:20.467  WARNING:vmlx_engine.engine_core: Aborted 2 running + 0 waiting requests after engine error\n",
            "traceback.txt": 'File ".../vmlx_engine/engine_core.py", line 170, in _engine_loop\nFile ".../vmlx_engine/scheduler.py", line 8050, in step\n    responses = self.batch_generator.next()\nFile ".../mlx_lm/generate.py", line 1855, in next\n    return self._next()\nFile ".../mlx_lm/generate.py", line 1819, in _next\n    self._generation_batch.extend(gen_batch)\nFile ".../mlx_lm/generate.py", line 1296, in extend\n',
        },
        "MD883",
        ["a batch operation (extend, merge, filter) on a single-sequence cache"],
    ),
    # https://github.com/jjang-ai/vmlx/issues/87: checkpoint has extra quantized weight keys the model does not define (loader/model mismatch)
    (
        "jjang-ai-vmlx-87",
        {
            "log.txt": "[02:20:30.958]     raise ValueError(\n[02:20:30.958] ValueError: Received 2 parameters not in model: \n[02:20:30.958] language_model.model.per_layer_model_projection.biases,\n[02:20:30.958] language_model.model.per_layer_model_projection.scales.\n[02:20:30.961] ERROR:    Application startup failed. Exiting.\n",
        },
        "MD883",
        ["weight files do not fit the model class"],
    ),
    # https://github.com/jundot/omlx/pull/2035: native extension built against a different nanobind ABI than MLX
    (
        "jundot-omlx-2035",
        {
            "log.txt": "TypeError: dsa_indexer_scores(): incompatible function arguments.\nInvoked with types: mlx.core.array, mlx.core.array, mlx.core.array, bool, int, bool, int\n",
        },
        "MD663",
        ["nanobind ABI"],
    ),
    # https://github.com/jundot/omlx/issues/3245: continuous-batching join fails: cache type without batch conversion
    (
        "jundot-omlx-3245",
        {
            "log.txt": "Cache corruption not recoverable after retries: 'QSAKVCache' object has no attribute 'extend'\n",
        },
        "MD883",
        ["a model's own cache class that the engine does not convert"],
    ),
    # https://github.com/lmstudio-ai/lmstudio-bug-tracker/issues/206: MLX binary requires newer macOS (missing Accelerate symbol at import)
    (
        "lmstudio-ai-lmstudio-bug-tracker-206",
        {
            "log.txt": "🥲 Failed to load the model\n\nFailed to load model\n\nError when loading model: ImportError: dlopen(/Applications/LM Studio.app/Contents/Resources/app/.webpack/main/build/Release/mlx-amphibian-metal-mac/_amphibian/framework-mlx-lm-mac-arm64@8/lib/python3.11/site-packages/mlx/core.cpython-311-darwin.so, 0x0002): Symbol not found: (_cblas_sgemm$NEWLAPACK)\n  Referenced from: '/Applications/LM Studio.app/Contents/Resources/app/.webpack/main/build/Release/mlx-amphibian-metal-mac/_amphibian/framework-mlx-lm-mac-arm64@8/lib/python3.11/site-packages/mlx/lib/libmlx.dylib'\n  Expected in: '/System/Library/Frameworks/Accelerate.framework/Versions/A/Accelerate'\n",
        },
        "MD876",
        ["newer macOS"],
    ),
    # https://github.com/lmstudio-ai/mlx-engine/issues/301: model architecture not supported by the bundled mlx-vlm version
    (
        "lmstudio-ai-mlx-engine-301",
        {
            "log.txt": "🥲 Failed to load the model\n\nFailed to load model.\n\nError when loading model: ValueError: Model type gemma4 not supported. Error: No module named 'mlx_vlm.models.gemma4'\n",
        },
        "MD663",
        ["has no module for the model's architecture"],
    ),
    # https://github.com/ml-explore/mlx/issues/1083: mx.compile: eval inside compiled function (array without primitive)
    (
        "ml-explore-mlx-1083",
        {
            "log.txt": "ValueError: [eval] Attempting to eval an array without a primitive\n",
        },
        "MD816",
        [".item()"],
    ),
    # https://github.com/ml-explore/mlx/issues/2628: CUDA launch out of resources (block size too large for compiled kernel)
    (
        "ml-explore-mlx-2628",
        {
            "log.txt": "RuntimeError: cudaGraphInstantiate(&handle_, graph, nullptr, nullptr, 0) failed: too many resources requested for launch\nterminate called after throwing an instance of 'std::runtime_error'\n  what():  cudaGraphInstantiate(&handle_, graph, nullptr, nullptr, 0) failed: too many resources requested for launch\nAborted (core dumped)\n",
        },
        "MD830",
        ["kernel launch asked for more than the GPU allows", "mx.compile"],
    ),
    # https://github.com/ml-explore/mlx/pull/4040: mlx.launch hostfile missing rank-0 IP (nccl backend)
    (
        "ml-explore-mlx-4040",
        {
            "log.txt": 'Traceback (most recent call last):\n  ...\n  File "python/mlx/_distributed_utils/launch.py", line 335, in launch_nccl\n    raise ValueError("Rank 0 should have an IP reachable from all other ranks")\nValueError: Rank 0 should have an IP reachable from all other ranks\n',
        },
        "MD670",
        ["rank 0's entry has no IP", "nccl"],
    ),
    # https://github.com/ml-explore/mlx-examples/issues/671: model code bug: invalid argpartition kth in MoE routing
    (
        "ml-explore-mlx-examples-671",
        {
            "log.txt": 'mlx-examples/llms/mlx_lm/models/mixtral.py", line 137, in call\nmx.argpartition(-gates, kth=ne, axis=-1)[:, :ne]\nValueError: [argpartition] Received invalid kth 2 along axis -1 for array with shape: (1,2)\n',
        },
        "MD817",
        ["as many experts as experts per token"],
    ),
    # https://github.com/ml-explore/mlx-examples/issues/850: code bug: undefined name in LoRA resume path
    (
        "ml-explore-mlx-examples-850",
        {
            "log.txt": 'mlx_lm.lora \\\n    --model Qwen/Qwen1.5-32B-Chat \\\n    --train \\\n    --data ./dataset/ \\\n    --iters 600 \\\n    --resume-adapter-file ./adapters/0000600_adapters.safetensors\nTraceback (most recent call last):\n  File "/Users/rainchong/Library/Python/3.9/bin/mlx_lm.lora", line 8, in <module>\n    sys.exit(main())\n  File "/Users/rainchong/Library/Python/3.9/lib/python/site-packages/mlx_lm/lora.py", line 274, in main\n    run(types.SimpleNamespace(**args))\n  File "/Users/rainchong/Library/Python/3.9/lib/python/site-packages/mlx_lm/lora.py", line 247, in run\n    train_model(args, model, tokenizer, train_set, valid_set, training_callback)\n  File "/Users/rainchong/Library/Python/3.9/lib/python/site-packages/mlx_lm/lora.py", line 173, in train_model\n    print(f"Loading pretrained adapters from {resume_adapter_file}")\nNameError: name \'resume_adapter_file\' is not defined\n',
        },
        "MD663",
        ["NameError", "mlx_lm's own code"],
    ),
    # https://github.com/ml-explore/mlx-examples/issues/964: regression: None metadata dereference in generate CLI
    (
        "ml-explore-mlx-examples-964",
        {
            "log.txt": '~ via 🐍 v3.12.4 (mlx-0-17-2) took 6s\n❯ mlx_lm.generate  --temp 0.7  --model "mlx-community/Meta-Llama-3.1-8B-bf16"  --prompt "Hello I am a Sunny I know Ruby on Rails, this is an example of a model class:\n\n    ```rb"\nFetching 9 files: 100%|████████████████████████████████████████████████████████████████████████████████████████████████████████████████████████████| 9/9 [00:00<00:00, 111353.20it/s]\nTraceback (most recent call last):\n  File "/Users/gaston/.pyenv/versions/mlx-0-17-2/bin/mlx_lm.generate", line 8, in <module>\n    sys.exit(main())\n             ^^^^^^\n  File "/Users/gaston/.pyenv/versions/3.12.4/envs/mlx-0-17-2/lib/python3.12/site-packages/mlx_lm/generate.py", line 175, in main\n    tokenizer.chat_template = metadata["chat_template"]\n                              ~~~~~~~~^^^^^^^^^^^^^^^^^\nTypeError: \'NoneType\' object is not subscriptable\n(mlx-0-17-2)\n\n❯ pip list  | grep mlx\nmlx                     0.17.2\nmlx-lm                  0.18.0\n(mlx-0-17-2)\n',
        },
        "MD663",
        ["mlx_lm's own code"],
    ),
    # https://github.com/ml-explore/mlx-examples/issues/994: dependency version break: import of removed private module
    (
        "ml-explore-mlx-examples-994",
        {
            "log.txt": '% mlx_lm.generate --version        \nTraceback (most recent call last):\n  File "/private/tmp/tt/bin/mlx_lm.generate", line 5, in <module>\n    from mlx_lm.generate import main\n  File "/private/tmp/tt/lib/python3.12/site-packages/mlx_lm/__init__.py", line 3, in <module>\n    from .utils import convert, generate, load, stream_generate\n  File "/private/tmp/tt/lib/python3.12/site-packages/mlx_lm/utils.py", line 17, in <module>\n    from huggingface_hub.utils._errors import RepositoryNotFoundError\nModuleNotFoundError: No module named \'huggingface_hub.utils._errors\'\n',
        },
        "MD870",
        ["private module"],
    ),
    # https://github.com/ml-explore/mlx-lm/pull/1386: unsupported model_type in installed mlx-lm release
    (
        "ml-explore-mlx-lm-1386",
        {
            "log.txt": "  ValueError: Model type gemma4_unified not supported\n",
        },
        "MD883",
        ["has no module for the model's architecture"],
    ),
    # https://github.com/ml-explore/mlx-lm/issues/1449: LoRA backward through integer top-k indices (sparse-attention indexer)
    (
        "ml-explore-mlx-lm-1449",
        {
            "log.txt": "ValueError: [scatter_axis] Cannot calculate VJP with respect to indices.\n",
        },
        "MD817",
        ["integer indices", "mx.stop_gradient"],
    ),
    # https://github.com/ml-explore/mlx-lm/pull/1605: model config/checkpoint layout mismatch on load
    (
        "ml-explore-mlx-lm-1605",
        {
            "log.txt": "TypeError: ModelArgs.__init__() missing 1 required positional argument: 'rope_theta'\nValueError: Received 1 parameters not in model: lm_head.weight\n",
        },
        "MD849",
        ["config lacks 'rope_theta'"],
    ),
    # https://github.com/ml-explore/mlx-lm/issues/1786: LoRA backward through integer MoE routing indices (missing stop_gradient)
    (
        "ml-explore-mlx-lm-1786",
        {
            "log.txt": "ValueError: [gather_axis] Cannot calculate VJP with respect to indices.\n",
        },
        "MD817",
        ["integer indices", "mx.stop_gradient"],
    ),
    # https://github.com/ml-explore/mlx-lm/issues/912: tool-call parser crash on malformed model output
    (
        "ml-explore-mlx-lm-912",
        {
            "log.txt": 'File "mlx_lm/tool_parsers/qwen3_coder.py", line 73, in _convert_param_value\n    return json.loads(param_value)\njson.decoder.JSONDecodeError: Expecting property name enclosed in double quotes: line 1 column 3 (char 2)\n',
        },
        "MD663",
        ["not JSON"],
    ),
    # https://github.com/ml-explore/mlx-swift/issues/317: module not updatable during quantization (missing @ModuleInfo)
    (
        "ml-explore-mlx-swift-317",
        {
            "log.txt": "MLXNN/Module.swift:570: Fatal error: 'try!' expression unexpectedly raised an error: MLXNN.UpdateError.needModuleInfo(\"Unable to get @ModuleInfo for FastVLMMultiModalProjector.layers -- must be wrapped to receive updates\")\n",
        },
        "MD883",
        ["@ModuleInfo"],
    ),
    # https://github.com/ml-explore/mlx-swift-examples/issues/218: model declares parameters absent from checkpoint (keyNotFound on load)
    (
        "ml-explore-mlx-swift-examples-218",
        {
            "log.txt": '- **Phi-3.5-MoE-instruct-4bit**: `keyNotFound(base: "SuScaledRotaryEmbedding", key: "_freqs")`\n- **OpenELM-270M-Instruct**: `keyNotFound(base: "Linear", key: "weight")`\n',
        },
        "MD883",
        ["keyNotFound"],
    ),
    # https://github.com/ml-explore/mlx-swift-lm/issues/148: tensor rank mismatch (1-D token array into VLM) -> SmallVector out of range
    (
        "ml-explore-mlx-swift-lm-148",
        {
            "log.txt": "MLX/ErrorHandler.swift:343: Fatal error: SmallVector out of range.\nat mlx-c/mlx/c/array.cpp:335\n",
        },
        "MD820",
        ["axis it does not have", "[1, N]"],
    ),
    # https://github.com/ml-explore/mlx-swift-lm/pull/366: checkpoint has extra submodule weights not in model (unhandled keys on load)
    (
        "ml-explore-mlx-swift-lm-366",
        {
            "log.txt": 'Unhandled keys ["vision_embedder"] in Gemma4Model\n',
        },
        "MD883",
        ["unhandledKeys", "VLM factory"],
    ),
    # https://github.com/ml-explore/mlx-swift-lm/issues/433: tensor rank mismatch (1-D token array into VLM) -> SmallVector out of range
    (
        "ml-explore-mlx-swift-lm-433",
        {
            "log.txt": "MLX/ErrorHandler.swift:345: Fatal error: SmallVector out of range.\n  at .../mlx-c/mlx/c/array.cpp:335\n",
        },
        "MD820",
        ["axis it does not have", "[1, N]"],
    ),
    # https://github.com/ml-explore/mlx-swift-lm/issues/474: speculative decoding past sliding window (rotating cache not rewindable)
    (
        "ml-explore-mlx-swift-lm-474",
        {
            "log.txt": "MLXVLM/Gemma4Assistant.swift:288: Precondition failed: sliding KV length 515 exceeds slidingWindow 512\n",
        },
        "MD883",
        ["speculative decoding past a sliding window"],
    ),
    # https://github.com/osaurus-ai/osaurus/issues/632: Metal allocation larger than max buffer size (oversized vision input)
    (
        "osaurus-ai-osaurus-632",
        {
            "log.txt": "MLX/ErrorHandler.swift:343: Fatal error: [metal:: malloc]\nAttempting to allocate 73359820800 bytes which is greater than the maximum allowed buffer size of 14302248960 bytes.\n",
        },
        "MD673",
        ["times the largest buffer"],
    ),
    # https://github.com/verl-project/verl/issues/161: NCCL duplicate GPU (two ranks on one device) from Ray GPU assignment
    (
        "verl-project-verl-161",
        {
            "log.txt": "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:275, invalid usage (run with NCCL_DEBUG=WARN for details), NCCL version 2.20.5\nncclInvalidUsage: This usually reflects invalid usage of NCCL library.\nLast error:\nDuplicate GPU detected : rank 1 and rank 0 both on CUDA device 10\n",
        },
        "MD653",
        ["two ranks on one GPU"],
    ),
    # https://github.com/waybarrios/vllm-mlx/pull/354: Metal encoder assertion from concurrent MLX use on two threads (abort during forward pass)
    (
        "waybarrios-vllm-mlx-354",
        {
            "log.txt": "failed assertion `encodeSignalEvent:value: with uncommitted encoder'\nAbort trap: 6\n",
        },
        "MD825",
        ["two threads at once"],
    ),
]


@pytest.mark.parametrize("slug,files,code,says", REPORTS, ids=[r[0] for r in REPORTS])
def test_a_public_report_is_read_for_its_known_cause(tmp_path, slug, files, code, says):
    """The leading finding is the reading of the report's known cause."""
    assert_read_for(tmp_path, files, code, says)
