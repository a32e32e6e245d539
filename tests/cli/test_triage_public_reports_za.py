"""Public failure reports of blind sample 14's half A (MLX, mlx-lm, mlx-examples, mlx-vlm, mlx-swift and MLX engines), the half its kinds were built from, each rebuilt from the report's own posted output and run through the public CLI."""

from __future__ import annotations

import pytest

from tests.helpers import assert_read_for


REPORTS = [
    # https://github.com/Blaizzy/mlx-vlm/pull/2143: shape mismatch in chunked prefill (multimodal feature injection)
    (
        "Blaizzy-mlx-vlm-2143",
        {
            "log.txt": "ValueError: [broadcast_shapes] Shapes (1,626,2560) and (627,2560) cannot be broadcast.\n",
        },
        "MD804",
        ["differ by one in one axis", "off-by-one"],
    ),
    # https://github.com/Blaizzy/mlx-vlm/issues/428: mlx-vlm convert bug with mixed quantization predicate
    (
        "Blaizzy-mlx-vlm-428",
        {
            "log.txt": 'Traceback (most recent call last):\n  File "/Users/user/Desktop/mlx-vlm/mlx-vlm/bin/mlx_vlm.convert", line 8, in <module>\n    sys.exit(main())\n             ^^^^^^\n  File "/Users/user/Desktop/mlx-vlm/mlx-vlm/lib/python3.12/site-packages/mlx_vlm/convert.py", line 243, in main\n    convert(**vars(args))\n  File "/Users/user/Desktop/mlx-vlm/mlx-vlm/lib/python3.12/site-packages/mlx_vlm/convert.py", line 134, in convert\n    quant_predicate = mixed_quant_predicate_builder(quant_predicate, model)\n                      ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n  File "/Users/user/Desktop/mlx-vlm/mlx-vlm/lib/python3.12/site-packages/mlx_vlm/convert.py", line 61, in mixed_quant_predicate_builder\n    num_layers = len(model.layers)\n                     ^^^^^^^^^^^^\n  File "/Users/user/Desktop/mlx-vlm/mlx-vlm/lib/python3.12/site-packages/mlx/nn/layers/base.py", line 103, in __getattr__\n    super(Module, self).__getattribute__(key)\nAttributeError: \'Model\' object has no attribute \'layers\'\n',
        },
        "MD663",
        ["mlx_vlm's own code", "raised inside mlx, called from here"],
    ),
    # https://github.com/Blaizzy/mlx-vlm/issues/610: unsupported model architecture variant (tied embeddings) → missing parameter on load
    (
        "Blaizzy-mlx-vlm-610",
        {
            "log.txt": "ValueError: Missing 1 parameters:\nlanguage_model.lm_head.weight.\n",
        },
        "MD663",
        ["weight files do not fit the model class", "ties to its embeddings"],
    ),
    # https://github.com/SharpAI/SwiftLM/issues/52: unsupported model architecture variant: unhandled weight keys at load
    (
        "SharpAI-SwiftLM-52",
        {
            "log.txt": './SwiftLM --port 8998 --ctx-size 262144 --gpu-layers 99 --model ./unsloth-gemma-4-26b-a4b-it-mlx-8bit --temp 1 --top-k 64 --top-p 0.95 --min-p 0.0\n[SwiftLM] Loading model: /Users/luiz/projects/models/unsloth-gemma-4-26b-a4b-it-mlx-8bit\n[SwiftLM] Loading from local directory: /Users/luiz/projects/models/unsloth-gemma-4-26b-a4b-it-mlx-8bit\n[SwiftLM] ⚠️ Memory strategy: SWAP-ASSISTED (1.5× overcommit, cache limited to 2MB)\n[SwiftLM]    Model exceeds RAM by 51%. macOS swap will be used. Expect 2-4× slowdown.\n[SwiftLM] --gpu-layers 99 → 99 layers on GPU\n[SwiftLM] Loading LLM (large language model)...\nError: Unhandled keys ["experts", "post_feedforward_layernorm_1", "post_feedforward_layernorm_2", "pre_feedforward_layernorm_2", "router"] in language_model.model.layers.0 in Gemma4Model.Gemma4TextModel.Gemma4TextModelInner.Gemma4DecoderLayer\n',
        },
        "MD883",
        ["unhandledKeys", "a newer variant of the family"],
    ),
    # https://github.com/jundot/omlx/issues/526: unsupported quantization bit-width (1-bit) in MLX
    (
        "jundot-omlx-526",
        {
            "log.txt": "POST /v1/chat/completions → 500 (unhandled): [quantize] The requested number of bits 1 is not supported. The supported bits are 2, 3, 4, 5, 6 and 8.\n",
        },
        "MD883",
        ["bit width it has no kernels for"],
    ),
    # https://github.com/lmstudio-ai/mlx-engine/issues/146: bundled mlx-lm too old for model architecture
    (
        "lmstudio-ai-mlx-engine-146",
        {
            "log.txt": "2025-04-21 08:49:37 [DEBUG] \nERROR:root:Model type glm4 not supported.\n2025-04-21 08:49:37 [DEBUG] \nValueError: Model type glm4 not supported.\n\nAt:\n  /Users/../.cache/lm-studio/extensions/backends/vendor/_amphibian/app-mlx-generate-mac-arm64@33/lib/python3.11/site-packages/mlx_lm/utils.py(75): _get_classes\n  /Users/../.cache/lm-studio/extensions/backends/vendor/_amphibian/app-mlx-generate-mac-arm64@33/lib/python3.11/site-packages/mlx_lm/utils.py(191): load_model\n  /Users/../.cache/lm-studio/extensions/backends/vendor/_amphibian/app-mlx-generate-mac-arm64@33/lib/python3.11/site-packages/mlx_lm/utils.py(256): load\n  /Users/../.cache/lm-studio/extensions/backends/vendor/_amphibian/app-mlx-generate-mac-arm64@33/lib/python3.11/site-packages/mlx_engine/model_kit.py(75): _full_model_init\n  /Users/../.cache/lm-studio/extensions/backends/vendor/_amphibian/app-mlx-generate-mac-arm64@33/lib/python3.11/site-packages/mlx_engine/model_kit.py(101): __init__\n  /Users/../.cache/lm-studio/extensions/backends/vendor/_amphibian/app-mlx-generate-mac-arm64@33/lib/python3.11/site-packages/mlx_engine/generate.py(89): load_model\n2025-04-21 08:49:37 [DEBUG] \nlmstudio-llama-cpp: failed to load model. Error: Error when loading model: ValueError: Model type glm4 not supported.\n",
        },
        "MD663",
        ["has no module for the model's architecture"],
    ),
    # https://github.com/ml-explore/mlx/issues/1063: mx.compile fused Metal kernel exceeds argument buffer limit (MLX bug)
    (
        "ml-explore-mlx-1063",
        {
            "log.txt": "(libc++abi: terminating due to uncaught exception of type std::runtime_error: \n[compile] Too many inputs/outputs fused in the Metal Compiled primitive which \nexhausted the available argument buffers for the kernel. Please file an issue with \nthe function that results in this error. The name of the kernel is\n'Nf4MultiplyABOf4AddEFPf4AddOGQf4AddPHRf4AddQISf4MultiplyRJTf4AddDSUf4MultiplyCTVf4SquareRWf4MultiplyVLXf4AddKWYf4SqrtXZf4AddYMAAf4DivideUZABf4SubtractNAA_VVVVVVVVVVVVV_f4f4f4f4f4f4f4f4f4f4f4f4f4_11160318154034397263_strided_dynamic')\n",
        },
        "MD883",
        ["exceed the buffers a Metal kernel can take"],
    ),
    # https://github.com/ml-explore/mlx/issues/1238: op not implemented on Metal GPU backend (needs CPU stream)
    (
        "ml-explore-mlx-1238",
        {
            "log.txt": "libc++abi: terminating due to uncaught exception of type std::runtime_error: [Inverse::eval_gpu] Metal inversion NYI.\nzsh: abort      python\n",
        },
        "MD697",
        ["no GPU implementation", "stream=mx.cpu"],
    ),
    # https://github.com/ml-explore/mlx/issues/2085: MLX transform not implemented for primitive (vmap of Convolution)
    (
        "ml-explore-mlx-2085",
        {
            "log.txt": "[Primitive::vmap] Not implemented for Convolution.\n",
        },
        "MD883",
        ["vmap of a convolution"],
    ),
    # https://github.com/ml-explore/mlx/issues/3081: MLX autodiff bug (JVP tangent dtype)
    (
        "ml-explore-mlx-3081",
        {
            "log.txt": "[negative] Not supported for bool, use logical_not instead.\n",
        },
        "MD883",
        ["boolean tangents"],
    ),
    # https://github.com/ml-explore/mlx/issues/3397: Metal device unavailable at MLX init
    (
        "ml-explore-mlx-3397",
        {
            "log.txt": "*** Terminating app due to uncaught exception 'NSRangeException', reason:\n'*** -[__NSArray0 objectAtIndex:]: index 0 beyond bounds for empty array'\n...\nlibmlx.dylib ... mlx::core::metal::Device::Device()\nlibmlx.dylib ... mlx::core::metal::device(...)\n...\nlibc++abi: terminating due to uncaught exception of type NSException\n",
        },
        "MD883",
        ["no Metal device"],
    ),
    # https://github.com/ml-explore/mlx/pull/3485: shapeless compile unsupported for a primitive (missing output_shapes)
    (
        "ml-explore-mlx-3485",
        {
            "log.txt": "[Primitive::output_shapes] GatherQMM cannot infer output shapes\n",
        },
        "MD883",
        ["shapeless=True"],
    ),
    # https://github.com/ml-explore/mlx-examples/issues/785: macOS version below MLX minimum
    (
        "ml-explore-mlx-examples-785",
        {
            "log.txt": "libmlx.dylib (built for macOS 13.5 which is newer than running OS)\n",
        },
        "MD876",
        ["built for macOS 13.5"],
    ),
    # https://github.com/ml-explore/mlx-examples/issues/823: Metal allocation failure from long-prompt prefill on low-memory Mac
    (
        "ml-explore-mlx-examples-823",
        {
            "log.txt": "libc++abi: terminating due to uncaught exception of type std::runtime_error: [malloc_or_wait] Unable to allocate 124367104 bytes.\n",
        },
        "MD697",
        ["malloc_or_wait", "--max-kv-size"],
    ),
    # https://github.com/ml-explore/mlx-lm/issues/1164: mlx-lm missing import bug (NameError) in KV cache code
    (
        "ml-explore-mlx-lm-1164",
        {
            "log.txt": "NameError: name 'tree_reduce' is not defined\n{\"error\":\"Error in iterating prediction stream: NameError: name 'tree_reduce' is not defined\"}\n",
        },
        "MD663",
        ["a bare NameError line"],
    ),
    # https://github.com/ml-explore/mlx-lm/issues/484: mlx-lm regression: quantization predicate signature mismatch
    (
        "ml-explore-mlx-lm-484",
        {
            "log.txt": "TypeError: Model.quant_predicate.<locals>.predicate() takes 2 positional arguments but 3 were given\nat mlx_lm/utils.py in wrapped_predicate where quant_predicate(path, module, config) is invoked.\n",
        },
        "MD849",
        ["When both sides are one project, it is that release's bug"],
    ),
    # https://github.com/ml-explore/mlx-swift/issues/269: unsupported dtype on Metal GPU (float64)
    (
        "ml-explore-mlx-swift-269",
        {
            "log.txt": "MLX error: float64 is not supported on the GPU at /Users/jeffrey/Library/Developer/Xcode/DerivedData/FSRS-swift-hdllzmbelgdqumagmcfkkezkpgrm/SourcePackages/checkouts/mlx-swift/Source/Cmlx/mlx-c/mlx/c/ops.cpp:643\n",
        },
        "MD824",
        ["float64"],
    ),
    # https://github.com/ml-explore/mlx-swift-examples/issues/2: partially quantized checkpoint loaded as fully quantized: quantized_matmul dtype error
    (
        "ml-explore-mlx-swift-examples-2",
        {
            "log.txt": 'llm-tool --model mlx-community/CodeLlama-13b-Instruct-hf-4bit-MLX --prompt "Hello"\n\nStarting generation ...\nhellolibc++abi: terminating due to uncaught exception of type std::invalid_argument: [quantized_matmul] The weight matrix should be uint32 but receivedfloat16\n',
        },
        "MD817",
        ["a dense (float) weight", "unquantized"],
    ),
    # https://github.com/ml-explore/mlx-swift-examples/issues/214: model weight key missing at load (strict parameter verification)
    (
        "ml-explore-mlx-swift-examples-214",
        {
            "log.txt": "Key weight not found in Linear\n",
        },
        "MD883",
        ["a tied lm_head"],
    ),
    # https://github.com/ml-explore/mlx-swift-examples/pull/340: model port declares computed buffer as parameter: missing key at load
    (
        "ml-explore-mlx-swift-examples-340",
        {
            "log.txt": "Error: Key originalInvFreq not found in Gemma3nRotaryEmbedding\n",
        },
        "MD883",
        ["RoPE frequencies"],
    ),
    # https://github.com/ml-explore/mlx-swift-examples/pull/351: thread-unsafe shared random state in concurrent generation: eval error
    (
        "ml-explore-mlx-swift-examples-351",
        {
            "log.txt": "[eval] Attempting to eval an array without a primitive\n",
        },
        "MD883",
        ["several threads at once"],
    ),
    # https://github.com/ml-explore/mlx-swift-examples/issues/431: model weight key remap bug (sanitize): missing key at load
    (
        "ml-explore-mlx-swift-examples-431",
        {
            "log.txt": "Key language_model.lm_head.weight not found in Qwen3VL.LanguageModel.Linear\n",
        },
        "MD883",
        ["keyNotFound"],
    ),
    # https://github.com/ml-explore/mlx-swift-examples/issues/464: model architecture not supported by installed library version (unsupported model type)
    (
        "ml-explore-mlx-swift-examples-464",
        {
            "log.txt": 'Failed: unsupportedModelType("qwen3_5")\n',
        },
        "MD883",
        ["has no module for the model's architecture"],
    ),
    # https://github.com/ml-explore/mlx-swift-lm/issues/261: quantization mode ignored (mxfp4 treated as affine): missing biases key at load
    (
        "ml-explore-mlx-swift-lm-261",
        {
            "log.txt": 'keyNotFound(path: ["language_model", "model", "layers", "0", "per_layer_input_gate", "biases"], modules: ["Gemma4Model", "Gemma4TextModel", "Gemma4TextModelInner", "Gemma4DecoderLayer", "QuantizedLinear"])\nKey language_model.model.layers.0.per_layer_input_gate.biases not found in Gemma4Model.Gemma4TextModel.Gemma4TextModelInner.Gemma4DecoderLayer.QuantizedLinear\n',
        },
        "MD883",
        ["mxfp4"],
    ),
    # https://github.com/mlalma/kokoro-ios/issues/4: wrong/invalid safetensors weights file
    (
        "mlalma-kokoro-ios-4",
        {
            "log.txt": "MLX error: [load_safetensors] Invalid json header length file /private/var/containers/Bundle/Application/992AEDC9-1679-48DD-B390-1C8995917A8D/mlxtest.app/kokoro-v1_0.safetensors at /Users/naiwenxie/Library/Developer/Xcode/DerivedData/mlxtest-fjhqmorxbjslgncaeykvjudwslen/SourcePackages/checkouts/mlx-swift/Source/Cmlx/mlx-c/mlx/c/io.cpp:65\n",
        },
        "MD822",
        ["no safetensors header"],
    ),
    # https://github.com/osaurus-ai/vmlx-swift/pull/248: checkpoint key prefix mismatch: unhandled weight keys at load
    (
        "osaurus-ai-vmlx-swift-248",
        {
            "log.txt": 'unhandledKeys(modules: ["ApertusModel"], keys: ["language_model"])\n',
        },
        "MD883",
        ["a submodule the checkpoint ships"],
    ),
    # https://github.com/raullenchai/Rapid-MLX/issues/1294: KV-cache quantization group size incompatible with head_dim
    (
        "raullenchai-Rapid-MLX-1294",
        {
            "log.txt": '[kv-quant-gate] loading mlx-community/Phi-3-mini-4k-instruct-4bit ...\n...\n  File ".../mlx_lm/models/cache.py", line 387, in to_quantized\n    quant_cache.keys = mx.quantize(self.keys, group_size=group_size, bits=bits)\nValueError: [quantize] The last dimension of the matrix needs to be divisible by\nthe quantization group size 64. However the provided matrix has shape (1,32,256,96)\n',
        },
        "MD817",
        ["not a multiple of the group size", "head size of 96"],
    ),
    # https://github.com/raullenchai/Rapid-MLX/issues/1420: mlx-lm module missing for model-declared chat template
    (
        "raullenchai-Rapid-MLX-1420",
        {
            "log.txt": "ModuleNotFoundError: No module named 'mlx_lm.chat_templates.gemma4'\nERROR:    Application startup failed. Exiting.\n",
        },
        "MD870",
        ["chat templates module 'gemma4'"],
    ),
    # https://github.com/raullenchai/Rapid-MLX/pull/720: MLX thread-local stream used from another thread (abort)
    (
        "raullenchai-Rapid-MLX-720",
        {
            "log.txt": "std::runtime_error: There is no Stream(gpu, 4) in current thread\n",
        },
        "MD883",
        ["a stream made on another thread"],
    ),
    # https://github.com/senstella/parakeet-mlx/issues/18: bogus huge Metal allocation from negative size (empty last chunk)
    (
        "senstella-parakeet-mlx-18",
        {
            "log.txt": '  File "parakeet_mlx/parakeet.py", line 141, in transcribe\n  File "parakeet_mlx/parakeet.py", line 295, in generate\nRuntimeError: [metal::malloc] Attempting to allocate 18446744073709549568 bytes which is greater than the maximum allowed buffer size of 17179869184 bytes.\n',
        },
        "MD673",
        ["wrapped around", "empty input"],
    ),
    # https://github.com/unslothai/unsloth-zoo/pull/879: conv weight double-transposed on load of pre-converted checkpoint
    (
        "unslothai-unsloth-zoo-879",
        {
            "log.txt": "Expected shape (128, 3, 3, 1) but received shape (128, 3, 1, 3)\nfor parameter audio_tower.subsample_conv_projection.layer0.conv.weight\n",
        },
        "MD883",
        ["transposed again when the checkpoint was already converted"],
    ),
    # https://github.com/waybarrios/vllm-mlx/issues/136: MLX indexing error from wrong KV tensor rank assumption
    (
        "waybarrios-vllm-mlx-136",
        {
            "log.txt": "WARNING:vllm_mlx.prefix_cache:Failed to extract block tensor slice: Too many indices for array with 3 dimensions.\nWARNING:vllm_mlx.prefix_cache:Cannot allocate block for <request-id>\n",
        },
        "MD883",
        ["more indices than it has axes"],
    ),
    # https://github.com/waybarrios/vllm-mlx/issues/142: MLX indexing error from wrong KV tensor rank assumption
    (
        "waybarrios-vllm-mlx-142",
        {
            "log.txt": "WARNING:vllm_mlx.prefix_cache:Failed to extract block tensor slice: Too many indices for array with 3 dimensions.\n",
        },
        "MD883",
        ["more indices than it has axes"],
    ),
    # https://github.com/waybarrios/vllm-mlx/issues/145: mlx-lm cache class API mismatch (ArraysCache.trim missing)
    (
        "waybarrios-vllm-mlx-145",
        {
            "log.txt": "Error:\nAttributeError: 'ArraysCache' object has no attribute 'trim'\n\nTrigger:\nPrompt cache hit: X cached / 0 new tokens\n",
        },
        "MD663",
        ["a KV cache of one kind"],
    ),
    # https://github.com/waybarrios/vllm-mlx/issues/39: MLX broadcast shape error from batch KV cache mismatch
    (
        "waybarrios-vllm-mlx-39",
        {
            "log.txt": "ERROR:vllm_mlx.mllm_scheduler:Error in MLLM process loop: Cannot broadcast array of shape (2,8,1,128) into shape (1,8,1,128).\nERROR:vllm_mlx.mllm_scheduler:Error in MLLM process loop: Cannot broadcast array of shape (2,8,1,128) into shape (1,8,1,128).\nERROR:vllm_mlx.mllm_scheduler:Error in MLLM process loop: Cannot broadcast array of shape (2,8,1,128) into shape (1,8,1,128).\nERROR:vllm_mlx.mllm_scheduler:Error in MLLM process loop: Cannot broadcast array of shape (2,8,1,128) into shape (1,8,1,128).\n",
        },
        "MD883",
        ["another batch size"],
    ),
    # https://github.com/waybarrios/vllm-mlx/issues/398: MLX thread-local stream used from another thread
    (
        "waybarrios-vllm-mlx-398",
        {
            "log.txt": "RuntimeError: There is no Stream(gpu, 1) in current thread.\n",
        },
        "MD663",
        ["a stream made on another thread"],
    ),
]


@pytest.mark.parametrize("slug,files,code,says", REPORTS, ids=[r[0] for r in REPORTS])
def test_a_public_report_is_read_for_its_known_cause(tmp_path, slug, files, code, says):
    """The leading finding is the reading of the report's known cause."""
    assert_read_for(tmp_path, files, code, says)
