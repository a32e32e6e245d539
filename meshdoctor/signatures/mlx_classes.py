"""Failure classes of MLX's own messages that no signature of their own reads: each a
:class:`~meshdoctor.signatures.model.FailureClass` (its meaning, cause and what helps) of
the component's generic reading, found by the message's text (the rows of
``sites/mlx.tsv``, MLX v0.32.1 sources and 0.32.4 wheels). Three readings hold them:
mlx.error (``RuntimeError: [component] ...``, :data:`MLX_ERROR`), python.exception (a
message without a component, :data:`UNTAGGED`) and launch.message (mlx.launch's and
mlx.distributed_config's ``[WARN]``/``[ERROR]`` and usage-error lines, :data:`LAUNCH`)."""

from __future__ import annotations

from meshdoctor.signatures.model import failure_class as fc

# the operations whose own argument check throws "[op] ..." (std::invalid_argument, a
# ValueError in Python): the bracketed names of MLX v0.32.1's mlx/ops.cpp, fast.cpp,
# linalg.cpp, random.cpp, fft.cpp, einsum.cpp (commit 846d176); broadcast_shapes and eval
# have signatures of their own (MD804, MD816)
MLX_OPS = (
    "addmm arange arctan2 argmax argmin argpartition argsort as_strided astype bernoulli "
    "bitwise_invert block_masked_mm broadcast_arrays broadcast_to categorical concatenate conv "
    "cummax cummin cumprod cumsum dequantize diag diagonal diff divmod expand_dims eye fftn "
    "flatten flip from_fp8 full gather gather_axis gather_mm gather_qmm hadamard_transform "
    "inner kron layer_norm linspace logcumsumexp logsumexp masked_scatter matmul mean median "
    "meshgrid moveaxis multivariate_normal normal pad partition qqmm quantize quantized_matmul "
    "randint repeat reshape rms_norm roll rope scaled_dot_product_attention scatter "
    "scatter_axis searchsorted segmented_mm slice slice_update softmax sort split squeeze "
    "stack swapaxes take take_along_axis tensordot to_fp8 topk trace transpose tril triu "
    "unflatten uniform unstack vecdot view"
).split()
# the mlx.core functions whose nanobind binding rejects arguments of another type: those
# operations and the constructors beside them
_BOUND = tuple(MLX_OPS) + ("array", "where", "zeros", "ones")

_V = "MLX v0.32.1 "
_W = "MLX 0.32.4 wheel "

# "[component] message" errors (mlx.error)
MLX_ERROR = (
    fc(
        "jaccl.post-failed",
        r"\[jaccl\] (?:Send|Recv) failed with error code (?!-12\b)-?\d+",
        "posting a work request to a JACCL queue pair failed (ibv_post_send/ibv_post_recv "
        "returned this error code; -12, a full queue, has its own reading)",
        "the queue pair left the ready-to-send state after a peer or link went away (22: "
        "EINVAL), or the driver refused the request",
        "look for the first failure on the other ranks; if none, run `meshdoctor check` on "
        "this host (RDMA ports, GIDs) and restart the job",
        _W + "mlx/include/jaccl/rdma.h (post_send/post_recv)",
    ),
    fc(
        "autograd.not-implemented",
        r"\[Primitive::(?:vjp|jvp|vmap)\] Not implemented for \w+",
        "a transformation (a gradient, its vjp or jvp, or vmap) reached an operation that "
        "does not implement it: a custom Metal kernel (CustomKernel, mx.fast.metal_kernel) "
        "in a model's forward pass, which has no gradient, or one of MLX's own operations "
        "(the name after 'for') that this MLX release has no such rule for",
        "training (mx.grad, value_and_grad: LoRA or full fine-tuning) through a model whose "
        "library uses a custom kernel meant for inference (a fused RoPE or attention "
        "kernel); or vmap, jvp or a gradient of an MLX operation whose rule is missing (a "
        "missing feature of that MLX release, such as vmap of a convolution, or the vjp of "
        "a quantized or gathered matmul)",
        "for a custom kernel: upgrade the model library (a release may use differentiable "
        "ops while training), or give your own kernel a gradient with mx.custom_function and "
        "its .vjp; for an MLX operation: upgrade mlx (later releases add rules), or avoid "
        "the transform for it (loop instead of vmap, stop_gradient through it)",
        _V + "mlx/primitives.cpp (Primitive::vjp, jvp, vmap)",
    ),
    fc(
        "op.dtype-unsupported",
        r"\[\w+\] Not supported for (?:bool|u?int\d+|float\d+|bfloat16|complex64)\b",
        "an MLX operation was given an array of a dtype it does not take (a boolean where a "
        "number is expected, an integer where a float is)",
        "the caller's dtype (cast it first), or, when the program did not make that array "
        "itself, an MLX defect that produced it: a transformation (jvp, vjp, vmap) whose rule "
        "returns the wrong dtype (boolean tangents of a comparison)",
        "cast the input to the dtype the op takes (the message may name the op to use "
        "instead); if the array comes from mx.jvp, mx.vjp or mx.grad, upgrade mlx and "
        "report it with the function",
        _V + "mlx/ops.cpp (dtype checks of each operation)",
    ),
    fc(
        "jaccl.buffer-registered-twice",
        r"\[jaccl\] Buffer can be registered once per protection domain",
        "JACCL was asked to register one buffer twice in one protection domain",
        "an MLX defect (the group's buffers are registered once at setup), not the mesh",
        "upgrade mlx; report it to ml-explore/mlx with the version and the program",
        _V + "mlx/distributed/jaccl/lib/jaccl/rdma.cpp",
    ),
    fc(
        "jaccl.pool-stopped",
        r"\[ThreadPool::enqueue\] Not allowed on stopped ThreadPool",
        "a JACCL collective was started after its group's worker pool stopped",
        "the program used the group while the process was exiting (a collective in an "
        "atexit hook or a daemon thread) or after an earlier JACCL error tore the group down",
        "read the earlier error of this rank; finish collectives before the process exits",
        _W + "mlx/include/jaccl/threadpool.h",
    ),
    fc(
        "distributed.factory-backend",
        r"An all gather factory is only supported with the 'jaccl' backend",
        "an all-gather factory was asked of a backend other than jaccl",
        "the program passes a factory with backend ring, mpi or nccl",
        "use backend jaccl for it, or drop the factory argument",
        _V + "mlx/distributed/distributed.cpp",
    ),
    fc(
        "nccl.windows",
        r"\[nccl\] Distributed NCCL is not yet supported on Windows",
        "MLX's nccl backend does not run on Windows",
        "the job runs on a Windows host",
        "run the nccl ranks on Linux hosts",
        _V + "mlx/distributed/nccl/nccl.cpp",
    ),
    fc(
        "metal.no-device",
        r"\[metal::load_device\] No Metal device available",
        "this process sees no Metal GPU",
        "a headless, sandboxed or virtualized macOS session (a launchd job without a GUI "
        "session, a VM, an ssh session under some sandboxes)",
        "run the rank in a session that has the GPU (log in on the Mac, or a LaunchAgent in "
        "the user's session), or use the cpu device",
        _V + "mlx/backend/metal/device.cpp",
    ),
    fc(
        "metal.cpu-build",
        r"\[metal::(?:device_info|get_metallib_path)\] Cannot get .* without metal backend",
        "a Metal function was called on an MLX build without the Metal backend",
        "the mlx-cpu build on Linux, or mlx installed without mlx-metal on a Mac",
        "on a Mac `pip install -U mlx mlx-metal` of the same version; on Linux do not ask for "
        "Metal (mx.metal.*)",
        _W + "libmlx.so (mlx-cpu 0.32.4)",
    ),
    fc(
        "metal.wired-limit",
        r"\[metal::set_wired_limit\] Setting a wired limit larger than the maximum working",
        "the wired-memory limit asked for is above the GPU's maximum working set",
        "mx.set_wired_limit (or a server's setting) above what macOS lets the GPU wire",
        "ask for less, or raise the system's limit first (`sudo sysctl "
        "iogpu.wired_limit_mb=N`) on every host",
        _V + "mlx/backend/metal/allocator.cpp",
    ),
    fc(
        "metal.command-queue",
        r"\[metal::CommandEncoder\] Failed to make new command queue",
        "Metal refused a new command queue",
        "too many streams in this process, or the GPU was reset under it",
        "use fewer streams; if the GPU restarted (a GPU restart report), reboot the host",
        _V + "mlx/backend/metal/device.cpp",
    ),
    fc(
        "metal.math-mode",
        r"\[metal::Device\] (?:Invalid math mode|Metal math mode `relaxed` requires)",
        "the Metal math mode set is unknown or needs a newer macOS",
        "MLX_METAL_MATH_MODE (or the program) asks for relaxed math on macOS 14 or older, "
        "or for a mode that does not exist",
        "unset it, or upgrade macOS to 15 or later on every host",
        _V + "mlx/backend/metal/device.cpp",
    ),
    fc(
        "metal.jit-failed",
        r"\[metal::Device\] Unable to build metal library from source",
        "MLX could not compile a Metal kernel at run time",
        "a kernel source this Metal compiler rejects (an MLX and macOS mismatch), or a "
        "custom kernel with an error",
        "upgrade mlx and macOS together; for a custom kernel read the compiler message",
        _V + "mlx/backend/metal/device.cpp",
    ),
    fc(
        "metal.shared-event",
        r"\[Event::Event\] Failed to create Metal shared event",
        "Metal refused a shared event (what MLX's streams wait on)",
        "the GPU driver is out of resources or was reset",
        "restart the job; if it repeats, reboot the host",
        _V + "mlx/backend/metal/event.cpp",
    ),
    fc(
        "metal.capture",
        r"\[metal::start_capture\] Failed to start",
        "a Metal GPU capture could not start",
        "MTL_CAPTURE_ENABLED=1 is not set, or the capture path exists already",
        "set MTL_CAPTURE_ENABLED=1 and pass a new .gputrace path",
        _W + "libmlx.dylib (mlx-metal 0.32.4)",
    ),
)

# messages raised without a component in brackets (python.exception)
UNTAGGED = (
    fc(
        "group.size-one",
        r"Cannot (?:send to|recv from) a singleton group",
        "send or recv on a group of one process",
        "the ranks never formed a group: each process initialised alone (started without "
        "mlx.launch, a backend this MLX lacks, or a non-strict init that fell back to a "
        "group of size 1)",
        "start the ranks with mlx.launch and init with strict=True to see why the backend "
        "did not start",
        _V + "mlx/distributed/ops.cpp",
    ),
    fc(
        "group.bad-peer",
        r"Invalid (?:destination|source)=-?\d+ for a group of size \d+",
        "send or recv to a rank outside the group",
        "a rank number at or above the world size (more ranks assumed than were launched)",
        "compute peers from group.size(); launch as many ranks as the program expects",
        _V + "mlx/distributed/ops.cpp",
    ),
    fc(
        "group.sum-scatter-shape",
        r"\[sum_scatter\] Invalid shape",
        "sum_scatter's first axis is not divisible by the group size",
        "the array's axis 0 does not split evenly across the ranks",
        "pad axis 0 to a multiple of the world size",
        _V + "mlx/distributed/ops.cpp",
    ),
    fc(
        "group.reduce-op",
        r"Only all reduce sum, max and min are supported",
        "an all-reduce with an operation the backends lack",
        "the program asked for a reduction other than sum, max or min",
        "express it with all_sum, all_max or all_min",
        _V + "mlx/distributed/primitives.cpp",
    ),
    fc(
        "mpi.failure",
        r"(?:\bInvalid type$|MPI could not split this group|Cannot initialize MPI\b)",
        "the mpi backend failed: it could not start (no Open MPI library found), split the "
        "group, or reduce this dtype",
        "libmpi not found at run time (Open MPI not installed, or not on the library path), "
        "or a dtype MPI has no type for",
        "install Open MPI on every host (or use backend ring/jaccl); cast to a supported dtype",
        _V + "mlx/distributed/mpi/mpi.cpp",
    ),
    fc(
        "stream.other-thread",
        r"There is no Stream\((?:gpu|cpu), \d+\) in current thread",
        "a stream made on another thread was used here",
        "MLX's streams belong to the thread that made them (an array or stream handed to a "
        "worker thread)",
        "make the stream in the thread that uses it, or evaluate before handing arrays over",
        _V + "mlx/backend/metal/device.cpp, mlx/backend/cuda/device.cpp",
    ),
    fc(
        "cuda.event-misuse",
        r"(?:Should not wait on a CudaEvent before recording|CudaEvent can not wait on CPU)",
        "an MLX CUDA event was waited on in a way it does not allow",
        "an MLX defect in stream synchronisation",
        "upgrade mlx; report it to ml-explore/mlx with the program",
        _V + "mlx/backend/cuda/event.cu",
    ),
    # the model loaders a sharded or single-node job runs first: MLX's Module.load_weights
    # (strict) and mlx-lm's load_model/sharded_load, their own texts
    # a custom Metal kernel launched with more threads than its pipeline allows: the message
    # has no component (mlx/backend/metal/custom_kernel.cpp, CustomKernel::eval_gpu)
    fc(
        "metal.threadgroup-too-large",
        r"Thread group size \(\d+\) is greater than\s+the maximum allowed",
        "a custom Metal kernel (mx.fast.metal_kernel) was launched with a threadgroup larger "
        "than its compiled pipeline allows (maxTotalThreadsPerThreadgroup: the pipeline's "
        "own limit, below 1024 when the kernel needs many registers, and different between "
        "GPU generations)",
        "a library's or the program's kernel with a fixed threadgroup (1024) that fits one "
        "Mac or shape and not another (a large head dimension, an older GPU)",
        "upgrade the library whose kernel it is (mlx-vlm, mlx-lm, the engine: a release may "
        "size the threadgroup by the pipeline's limit or fall back to "
        "mx.fast.scaled_dot_product_attention); in your own kernel, take the threadgroup from "
        "the limit the message gives",
        _V + "mlx/backend/metal/custom_kernel.cpp; Apple Metal "
        "MTLComputePipelineState.maxTotalThreadsPerThreadgroup",
    ),
    fc(
        "metal.no-metal-backend",
        r"\[metal_kernel\] No Metal back-end",
        "a custom Metal kernel (mx.fast.metal_kernel) was built or called where MLX has no "
        "Metal backend (MLX's CUDA or CPU build, on Linux)",
        "a model library's Metal-only kernel used without a backend check (a model's custom "
        "attention or RoPE kernel run on MLX's CUDA backend)",
        "upgrade the model library (a release may guard the kernel or fall back to MLX's "
        "portable ops off Metal), or run that model on Apple silicon",
        _V + "mlx/backend/common/metal_kernel.cpp",
    ),
    fc(
        "model.weights-mismatch",
        # "for parameter NAME" follows the shapes, on the same line or wrapped onto the next
        r"(?:Received \d+ parameters not in model|Missing \d+ parameters\b|Expected shape "
        r"\([\d, ]*\) but received shape \([\d, ]*\)(?:\s*for parameter|\s*$))",
        "the model's weight files do not fit the model class built from its config.json: "
        "MLX's load_weights found parameters the class lacks, lacks ones it needs, or a "
        "parameter of another shape",
        "weights converted or quantized by another release or with other settings (names "
        "ending in .scales/.biases: quantized weights against a config without the same "
        "'quantization', or its bits/group_size); an architecture variant that the "
        "installed release of the model library (mlx-lm, mlx-vlm: the package in the "
        "traceback) builds differently, a model-support bug fixed in a later release or on "
        "its main branch (a newer model or version of a family, a vision tower loaded as "
        "text, a layer the class always builds that the checkpoint leaves out: an lm_head "
        "the model ties to its embeddings); files missing from an interrupted download; a shard loaded against the whole "
        "model",
        "compare config.json's model_type and quantization with the files; upgrade the "
        "model library the traceback names (mlx-lm or mlx-vlm: a newer model needs a newer "
        "release, or its main branch until one is out); download the model again (`hf "
        "download REPO`); reconvert with the release that loads it (`mlx_lm.convert`); a "
        "vision model loads with mlx-vlm, not mlx-lm",
        _W + "python/mlx/nn/layers/base.py (Module.load_weights)",
    ),
    # mlx-swift's Module.update(parameters:verify:) refusing a checkpoint (UpdateError's
    # cases and their descriptions, Source/MLXNN/Module.swift)
    fc(
        "model.swift-weights-mismatch",
        r"\b(?:keyNotFound\((?:base|path):|unhandledKeys\(|mismatchedSize\(|Unhandled keys "
        r"\[|Key [\w.]+ not found in \w|Mismatched parameter \S+ in \S+ shape\. Actual)",
        "mlx-swift's Module.update(parameters:verify:) found that the weights do not fit the "
        "Swift model class: a parameter the class declares that the checkpoint lacks "
        "(keyNotFound), weights the class does not declare (unhandledKeys), or a parameter "
        "of another shape (mismatchedSize)",
        "the model code of this mlx-swift-lm (or mlx-swift-examples) release builds the "
        "model differently from the checkpoint: a newer variant of the family, a layer it "
        "always creates that this checkpoint leaves out (a tied lm_head, a KV-shared or "
        "optional layer), a submodule the checkpoint ships that its sanitize does not drop "
        "(a vision tower or embedder in a text model class), or a constant validated as a "
        "parameter (a computed array such as RoPE frequencies or normalisation statistics "
        "held in an ordinary MLXArray property: mlx-swift counts it as a parameter unless "
        "its name starts with an underscore); quantized layers built in another mode than "
        "the checkpoint's (an mxfp4 checkpoint, which has no .biases, loaded as affine); "
        "less often weights converted or quantized with other settings",
        "update mlx-swift and mlx-swift-lm to their newest releases (model support is fixed "
        "model by model), load a vision checkpoint through the VLM factory "
        "(VLMModelFactory) rather than the LLM one, or use a conversion made for this "
        "release; compare config.json with the keys the message names",
        "ml-explore/mlx-swift Source/MLXNN/Module.swift (UpdateError: keyNotFound, "
        "unhandledKeys, mismatchedSize; update(parameters:verify:))",
    ),
    fc(
        "model.swift-module-info",
        r"needModuleInfo\(|Unable to get @ModuleInfo for \S+",
        "a Swift model's child module is a plain property, not one declared with "
        "@ModuleInfo, so Module.update (loading weights, quantizing, LoRA) cannot replace it",
        "that model's Swift code (or an mlx-swift layer that holds its children in a plain "
        "`let`, such as Sequential before it was fixed) declares a submodule without "
        "@ModuleInfo; quantizing or applying adapters replaces children, which needs it",
        "update mlx-swift and the model library (a release may wrap the property); in your "
        "own model, declare the child `@ModuleInfo var name: Type`",
        "ml-explore/mlx-swift Source/MLXNN/Module.swift (UpdateError.needModuleInfo)",
    ),
    fc(
        "array.axis-past-rank",
        r"SmallVector out of range",
        "code asked an array for an axis it does not have (MLX's shape(dim) past its number "
        "of dimensions, through mlx-c's mlx_array_dim in mlx-swift)",
        "an input of lower rank than the model's code expects: a 1-D [N] token array where "
        "a [1, N] (batch, sequence) one is required, for example a text-only prompt built by "
        "hand and passed to a vision model's path",
        "give the model a 2-D input (the model's processor's prepare builds it; else expand "
        "it: expandedDimensions(axis: 0)), or update the model library (a release may accept "
        "1-D input); the frame or call before the error names the code that read the axis",
        "ml-explore/mlx-c mlx/c/array.cpp (mlx_array_dim); MLX mlx/small_vector.h "
        "('SmallVector out of range')",
    ),
    # the KV caches of mlx-lm (mlx_lm/models/cache.py: KVCache, RotatingKVCache,
    # QuantizedKVCache, BatchKVCache, ArraysCache; their is_trimmable, trim, extend) and of
    # mlx-swift-lm (Libraries/MLXLMCommon/KVCache.swift), handed to code written for another
    fc(
        "model.kv-cache-kind",
        r"'\w*Cache\w*' object has no attribute '\w+'|\b\w*KVCache\.\w+\(\) only supports|"
        r"called on `?\w*KVCache`?|sliding KV length \d+ exceeds|\b\w*KVCache\b.{0,80}\bnot "
        r"(?:trimmable|supported)",
        "a KV cache of one kind reached code written for another: a batch operation "
        "(extend, merge, filter) on a single-sequence cache, a trim or rewind of a rotating "
        "(sliding-window) cache that cannot be rewound, a plain update on a quantized cache, "
        "or a model's own cache class that the engine does not convert",
        "a bug of the engine's or the model library's cache handling for this model's cache "
        "type: continuous batching joining a second request, a prefix or prompt cache "
        "trimmed or rebuilt as a plain KVCache, speculative decoding past a sliding window, "
        "KV quantization (kv-bits) with a model whose attention calls the plain update, a "
        "hybrid model's state cache (ArraysCache) where attention caches were expected",
        "upgrade the engine and the model library (mlx-lm, mlx-vlm, mlx-swift-lm; these "
        "paths are fixed model by model and cache type by cache type); until then turn off "
        "the feature that joins, trims or rewinds caches: concurrent requests or continuous "
        "batching (one sequence at a time), prompt or prefix cache reuse, speculative "
        "decoding or the draft model, KV quantization",
        "ml-explore/mlx-lm mlx_lm/models/cache.py (KVCache, RotatingKVCache, BatchKVCache, "
        "QuantizedKVCache: is_trimmable, trim, extend); ml-explore/mlx-swift-lm "
        "Libraries/MLXLMCommon/KVCache.swift",
    ),
    fc(
        "model.image-tokens-mismatch",
        r"Image features and image tokens do not match",
        "mlx-vlm found that the prompt's image placeholder tokens and the vision tower's "
        "image features differ in number",
        "the prompt was cut after its image tokens were inserted (a max sequence length "
        "shorter than the image's tokens, in training or in the engine), a processor or chat "
        "template of another release that inserts another count of image tokens, an image "
        "token id that the model's config and the processor disagree on, or the model code's "
        "merge of its vision features (a model-support bug fixed in a later release)",
        "raise the maximum sequence length so image tokens survive truncation; use the "
        "processor and chat template of the model's own repository with the same mlx-vlm "
        "release; upgrade mlx-vlm (image merges are fixed model by model)",
        "Blaizzy/mlx-vlm mlx_vlm/models/idefics3/idefics3.py and others "
        "(merge_input_ids_with_image_features)",
    ),
    # nanobind's (and pybind11's) own message for a call whose arguments its type casters
    # do not accept; MLX's Python bindings are nanobind (python/src), and an extension built
    # with another nanobind ABI does not know MLX's array type
    fc(
        "python.op-argument-types",
        r"\b(?:" + "|".join(_BOUND) + r")\(\): incompatible function arguments",
        "an MLX operation (mlx.core's nanobind binding) rejected its arguments: a value of "
        "a type it does not take, such as a list of NumPy arrays, Python numbers or images, "
        "or None, where it wants mx.array values (the next line, 'Invoked with types', names "
        "them)",
        "the calling code (a model's preprocessing, a processor's output) handed the op "
        "values of another type than it expects for this input: a bug of that code for this "
        "input, or an input of another form (an image processor that returned NumPy or "
        "PIL objects)",
        "convert the values to mx.array before the call (mx.array(x)); upgrade the library "
        "whose code makes the call (the frame above the error) when it is not yours",
        "MLX python/src (nanobind bindings of mlx.core's operations)",
    ),
    fc(
        "python.extension-abi",
        r"\b\w+\(\): incompatible function arguments",
        "a native extension's function rejected its arguments: when they are MLX arrays "
        "(the next line: 'Invoked with types: mlx.core.array, ...'), the extension does not "
        "recognise this MLX's array type: it was built against another MLX or with another "
        "nanobind ABI than the MLX installed",
        "an extension built from source (an engine's custom kernels, a package's native "
        "module) with a newer or older nanobind than the MLX wheel was built with, or "
        "against another MLX release; else a call with arguments of the wrong types",
        "rebuild the extension against the installed MLX with the nanobind version that "
        "MLX release was built with (pin it: pip install 'nanobind==X' in the build), or "
        "install MLX and the extension from builds made together; `pip show mlx` and the "
        "extension's build log give both versions",
        "nanobind documentation (type casters, ABI versions: extensions of different "
        "nanobind ABIs do not share types); MLX's Python bindings (python/src, nanobind)",
    ),
    # MD816's message printed bare (mlx-swift's error handler prints MLX's text alone)
    fc(
        "compile.eval-without-primitive",
        r"^\s*\[eval\] Attempting to eval an array without a primitive",
        "MLX was asked to evaluate an array without a primitive, which a compiled function "
        "hands out when its inputs or outputs are not captured",
        "a compiled function that reads arrays it does not take as inputs (a global "
        "random state, a model attribute), called from several threads at once (concurrent "
        "requests sharing MLX's global random state or tracing state), or after an earlier "
        "exception inside its trace",
        "run compiled functions on one thread or under a lock; pass every array as an input "
        "(a random key rather than the global state); look for an earlier error; upgrade "
        "the library whose compiled sampler or model it is",
        _W + "libmlx ('[eval] Attempting to eval an array without a primitive')",
    ),
    fc(
        "compile.shapeless-unsupported",
        r"\[Primitive::output_shapes\] \w+ cannot infer output shapes",
        "mx.compile(shapeless=True) met an operation that cannot say its output shape for "
        "new input shapes (its primitive has no output_shapes): a shapeless compile of "
        "that operation is not supported by this MLX",
        "a function compiled with shapeless=True that uses such an op (a quantized or "
        "gathered matmul of an MoE layer, a custom kernel)",
        "compile that function without shapeless=True (it retraces per shape), or upgrade "
        "MLX (a release may implement output_shapes for the op)",
        _V + "mlx/primitives.cpp (Primitive::output_shapes)",
    ),
    fc(
        "compile.too-many-arguments",
        r"exhausted the available argument buffers for",
        "MLX's mx.compile fused so many arrays into one Metal kernel that its inputs and "
        "outputs exceed the buffers a Metal kernel can take: a defect of MLX's kernel "
        "fusion for this function (MLX asks for an issue with the function)",
        "a long chain of elementwise operations over many different arrays in one compiled "
        "function",
        "upgrade MLX (fusion splits such graphs in later releases); until then compile a "
        "smaller function, or call it uncompiled",
        _V + "mlx/backend/metal/compiled.cpp",
    ),
    fc(
        "metal.float64",
        r"float64 is not supported on the GPU",
        "an operation on float64 arrays ran on the GPU: MLX's Metal backend has no float64",
        "float64 arrays (NumPy's default float, Double in Swift) used on the default (GPU) stream",
        "cast to float32 (or bfloat16/float16) before the GPU work, or run the float64 "
        "operations on the CPU stream (stream=mx.cpu, or Device.cpu in mlx-swift)",
        _V + "mlx/array.cpp",
    ),
    fc(
        "array.too-many-indices",
        r"Too many indices for array with \d+ dimensions",
        "code indexed an array with more indices than it has axes",
        "an array of lower rank than the code assumes: a KV cache's keys of 3 axes (heads, "
        "length, head size) where the code slices 4 (batch, heads, length, head size), or "
        "a cache layer that holds no keys at all (a hybrid model's state cache); a bug of "
        "the code that slices, for this model's cache layout",
        "upgrade the engine or library whose code indexes (its prefix or prompt cache "
        "handles more cache layouts in later releases); until then turn off that cache for "
        "this model",
        _V + "python/src/indexing.cpp",
    ),
    fc(
        "array.broadcast-into",
        r"Cannot broadcast array of shape \([\d,]+\) into shape \([\d,]+\)",
        "an array of one shape was broadcast or written into another that cannot hold it",
        "an assignment a[index] = value whose value does not fit the indexed part (the "
        "program's, or MLX's own set-item indexing at an index form a release handles "
        "wrongly); in an engine's batched generation, a cache or state of another batch "
        "size than the batch it joins (a request added or removed mid-generation whose "
        "caches were not extended or filtered with it): a bug of the engine's batching",
        "read the traceback: in the program's own assignment, reshape the value to the "
        "indexed part; in a plain indexing expression that should work, upgrade mlx (and "
        "report it); in an engine, upgrade it and serve one request at a time (no "
        "continuous batching) until then",
        _V + "mlx/ops.cpp (broadcast_to)",
    ),
    fc(
        "metal.no-device-list",
        r"objectAtIndex:\]: index 0 beyond bounds for empty array",
        "an empty Objective-C array was indexed; when the backtrace names MLX's "
        "mlx::core::metal::Device, it is MLX's start-up finding no Metal device at all (the "
        "list of GPUs is empty)",
        "a process that sees no GPU: a macOS virtual machine without GPU access, the iOS "
        "Simulator, a headless or sandboxed session (a launchd job, a CI runner)",
        "run it where the process sees the GPU (`system_profiler SPDisplaysDataType` lists "
        "one), or use MLX's CPU build off Apple silicon",
        _V + "mlx/backend/metal/device.cpp (Device::Device); Apple Metal MTLCopyAllDevices",
    ),
    fc(
        "quantize.bits-unsupported",
        r"\[quantize\] The requested number of bits \d+ is not supported",
        "MLX's quantize was asked for a bit width it has no kernels for (MLX's affine "
        "quantization supports 2, 3, 4, 5, 6 and 8 bits)",
        "a model quantized at another width (1-bit or ternary models) by a tool, fork or "
        "newer MLX that supports it, loaded by an MLX or app without it",
        "use a model quantized at a supported width, or the MLX release (or app) that model "
        "was made for",
        _V + "mlx/ops.cpp (quantize: 'The supported bits are 2, 3, 4, 5, 6 and 8')",
    ),
    fc(
        "quantize.module-not-quantizable",
        r"Unable to quantize model of type",
        "MLX's nn.quantize was asked to quantize a layer that has no quantized form (no "
        "to_quantized): loading a quantized checkpoint, whose config lists the layer as "
        "quantized, the library quantized a custom layer class of the model's code",
        "the model code defines its own layer class (a scaled or gated Linear subclass) that "
        "the release's quantization predicate selects but cannot convert: a bug of that "
        "model code in the library's release",
        "upgrade the model library (mlx-lm, mlx-vlm: a release may give the layer a "
        "quantized form or skip it), or use an unquantized conversion of the model",
        _W + "python/mlx/nn/layers/quantized.py (quantize: 'Unable to quantize model of type')",
    ),
    fc(
        "model.rope-scaling-format",
        r"rope_scaling must contain keys",
        "the model's config.json gives rope_scaling in a form this release of the model "
        "code does not read (it requires keys such as 'factor' and 'type', a newer config "
        "has 'rope_type' and others: Llama 3.1's 'llama3' scaling)",
        "a model newer than the loader (mlx-examples' or an old mlx-lm's model code)",
        "upgrade mlx-lm (or the example) to a release that reads the model's rope_scaling, "
        "or load the model with the current mlx-lm",
        "ml-explore/mlx-examples llms/gguf_llm/models.py, llava/language.py (rope_scaling "
        "check); ml-explore/mlx-lm mlx_lm/models/llama.py",
    ),
    fc(
        "cuda.jit-headers",
        r"Can not find locations of CUDA headers",
        "MLX's CUDA backend compiles kernels at run time (NVRTC) and found no CUDA headers to "
        "compile them with",
        "no CUDA toolkit where MLX looks, or CUDA installed from pip (the nvidia-cuda-* "
        "wheels) in a layout that this MLX release does not search",
        "set CUDA_HOME (or CUDA_PATH) to a CUDA toolkit whose include/ holds cuda_runtime.h "
        "(or to the pip wheels' nvidia/cu13 or nvidia/cuda_runtime folder), or upgrade "
        "mlx[cuda] (a release may find the pip layout itself)",
        _V + "mlx/backend/cuda/jit_module.cpp",
    ),
    fc(
        "swift.eval-not-array",
        r"Unable to extract MLXArray from",
        "mlx-swift's eval() was handed a value that is not an MLXArray or a structure of them",
        "the code passes eval a value of another type (a model's output struct, an "
        "optional, a Swift number) that mlx-swift cannot walk for arrays",
        "pass eval the arrays themselves (or a collection of them); upgrade the library "
        "whose code calls it when the frame is not yours",
        "ml-explore/mlx-swift Source/MLX/Transforms+Eval.swift (eval)",
    ),
    fc(
        "swift.module-mutated",
        r"please use Model\.update\(modules:\)",
        "a Swift model's submodule was assigned directly: mlx-swift requires "
        "Module.update(modules:) so that its module tree stays consistent",
        "model or adapter code (LoRA, quantization, a model's own setup) that sets a "
        "@ModuleInfo property by assignment: a bug of that code",
        "use update(modules:) for the replacement; update the library whose code assigns "
        "it (mlx-swift-lm, mlx-swift-examples) when the frame is not yours",
        "ml-explore/mlx-swift Source/MLXNN/Module.swift (ModuleInfo's setter)",
    ),
    fc(
        "swift.config-key-missing",
        r"keyNotFound\(CodingKeys\(stringValue: \\?\"\w+",
        "Swift's JSON decoding of a model's configuration (config.json, "
        "preprocessor_config.json, tokenizer files) found no value for a key that the "
        "Swift configuration type requires",
        "the model's files on the Hub changed their schema (a field renamed, nested or "
        "removed) or come from a newer model variant than this release of the Swift "
        "library decodes",
        "update mlx-swift-lm or mlx-swift-examples (a release may make the key optional or "
        "read its new place), or pin the model's revision that this release reads",
        "Swift Foundation DecodingError.keyNotFound (JSONDecoder); ml-explore/mlx-swift-lm "
        "configuration types",
    ),
    fc(
        "model.type-unsupported",
        r"Model type \S+ not supported|unsupportedModelType\(",
        "the installed model library (mlx-lm, or mlx-vlm for a vision model; an app's own "
        "bundled copy of one) has no module for the model's architecture (config.json's "
        "model_type)",
        "a model newer than that release of the library (an app that bundles MLX's "
        "libraries, LM Studio's MLX runtime, oMLX, exo, pins an older one until its next "
        "update), a model of another library (a vision or audio model: mlx-vlm, mlx-audio), "
        "or a config.json edited or mistyped",
        "upgrade the library on every host (`pip install -U mlx-lm` or `mlx-vlm`; in an app, "
        "update its MLX runtime or engine to a release that lists the architecture), or load "
        "it with the library that has its architecture",
        "ml-explore/mlx-lm mlx_lm/utils.py (_get_classes); Blaizzy/mlx-vlm mlx_vlm/utils.py "
        "(get_model_and_args)",
    ),
    fc(
        "model.no-weights",
        r"No safetensors (?:files )?found in \S",
        "the model folder (or one component folder of it: an image model's vae/, "
        "text_encoder/ or transformer/) has no *.safetensors files",
        "a model not converted to MLX (PyTorch .bin or GGUF files only), a download cut "
        "short that the engine took for complete (one folder of the model never fetched, "
        "often after a download was cancelled and started again), or, in a distributed job, "
        "a host on which the model's path does not exist (each rank loads from its own disk)",
        "list the folder the message names (`ls -la PATH`); delete the partial model and "
        "download it again (the engine's cache, or `hf download REPO`); convert it "
        "(`mlx_lm.convert --hf-path REPO`) or use an mlx-community conversion; put the model "
        "at the same path on every host",
        "ml-explore/mlx-lm mlx_lm/utils.py (load_model: 'No safetensors found in'; engines "
        "built on it print 'No safetensors files found in')",
    ),
    fc(
        "model.pipeline-index",
        r"Pipeline loading is only supported for MLX converted models",
        "mlx-lm's pipeline loader found a parameter its model.safetensors.index.json does not "
        "map to a file",
        "a model not converted by mlx-lm (its index names the original checkpoint's tensors), "
        "or an index missing or out of date",
        "convert the model with `mlx_lm.convert` (or use an mlx-community conversion) and "
        "load that on every rank",
        "ml-explore/mlx-lm mlx_lm/utils.py (sharded_load)",
    ),
    fc(
        "model.remote-code",
        r"requires importing and running a custom module",
        "the model defines its architecture in a Python file of its own, which mlx-lm runs "
        "only when asked",
        "a model whose config.json names a model_file, loaded without trust_remote_code",
        "pass --trust-remote-code (or trust_remote_code=True) if you trust the model's code",
        "ml-explore/mlx-lm mlx_lm/utils.py (load_model)",
    ),
    fc(
        "hostfile.unreadable",
        r"(?:Hostfile \S+ doesn't exist|Failed to parse hostfile|Hostname cannot be empty)",
        "mlx.launch could not read its hosts: the hostfile, or the --hosts list",
        "an empty host name ('Hostname cannot be empty': --hosts given an empty or unset "
        "shell variable, or a list with an empty item such as 'a,,b'), a hostfile path that "
        "does not exist, JSON that does not parse, or an entry without its ssh name",
        "pass the hosts again (`--hosts h1,h2` with no empty item; echo the variable that "
        "builds it) or the hostfile's real path; `meshdoctor check --hostfile FILE` names what "
        "is wrong in a hostfile",
        _W + "mlx/_distributed_utils/common.py",
    ),
    fc(
        "launch.bad-number",
        r"Number should be positive",
        "an mlx.launch option that takes a count got zero or less",
        "-n / --repeat-hostnames given 0 or a negative number",
        "pass a positive number",
        _W + "mlx/_distributed_utils/common.py",
    ),
    fc(
        "config.no-local-ip",
        r"Ran out of available local IPs",
        "mlx.distributed_config ran out of addresses for the Thunderbolt links",
        "more links than the address range it assigns from",
        "assign the links' addresses by hand, or use fewer links",
        _W + "mlx/_distributed_utils/config.py",
    ),
)

# mlx.launch's and mlx.distributed_config's own lines (launch.message)
LAUNCH = UNTAGGED[-3:] + (
    fc(
        "config.no-sudo",
        r"Automatic setup requested but the following hosts do not have",
        "mlx.distributed_config --auto-setup needs passwordless sudo on every host",
        "the hosts listed after it ask for a sudo password",
        "allow the network setup commands in sudoers on those hosts, or run the printed "
        "commands by hand",
        _W + "mlx/_distributed_utils/config.py",
    ),
    fc(
        "config.no-topology",
        r"(?:Neither thunderbolt mesh nor ring found|RDMA is not available and ring is not)",
        "mlx.distributed_config found no Thunderbolt mesh or ring between the hosts",
        "cables missing or in the wrong ports, Thunderbolt Bridge holding the ports, or RDMA "
        "off (rdma_ctl)",
        "run with --dot to see the links found; `meshdoctor check --hostfile` on the hosts",
        _W + "mlx/_distributed_utils/config.py",
    ),
    fc(
        "config.no-ip",
        r"Could not extract ip for",
        "mlx.distributed_config could not read a host's IP",
        "the host's interface has no IPv4 address, or ssh to it printed something else",
        "give the host an IPv4 address on the interface it uses; check `ssh HOST ipconfig "
        "getifaddr en0`",
        _W + "mlx/_distributed_utils/config.py",
    ),
    fc(
        "config.some-no-rdma",
        r"Some of the hosts don't have RDMA enabled",
        "some hosts have RDMA off, so the jaccl backend cannot use them",
        "`rdma_ctl enable` not run (from recovery) on those hosts, or macOS older than 26.2",
        "enable RDMA on them (the warnings before it name the hosts), or use backend ring",
        _W + "mlx/_distributed_utils/config.py",
    ),
    fc(
        "launch.bad-env",
        r"is an invalid environment variable so it is ignored",
        "an --env value of mlx.launch is not NAME=VALUE, so it was dropped",
        "a value without '=' (or a shell that split it)",
        "pass --env NAME=VALUE, quoted",
        _W + "mlx/_distributed_utils/launch.py",
    ),
    fc(
        "launch.ring-needs-ips",
        r"The ring backend requires IPs to be provided instead of hostnames",
        "the ring hostfile lists host names where the backend needs IP addresses",
        "'ips' entries hold names",
        "write each host's IPv4 address in its 'ips'",
        _W + "mlx/_distributed_utils/launch.py",
    ),
    fc(
        "launch.no-script",
        r"No script is provided",
        "mlx.launch was given no program to run",
        "the script argument is missing (or swallowed by an option)",
        "pass the script after the options: mlx.launch ... script.py",
        _W + "mlx/_distributed_utils/launch.py",
    ),
    fc(
        "launch.bad-backend",
        r"The backend should be one of",
        "mlx.launch does not know this backend name",
        "a backend this mlx.launch lacks (jaccl-ring before MLX 0.30.1) or a typo",
        "use one of the names printed; upgrade mlx on every host for jaccl",
        _W + "mlx/_distributed_utils/launch.py",
    ),
    fc(
        "jaccl.connect-retry",
        r"\[jaccl\] Connection attempt \d+ waiting",
        "a JACCL rank is retrying its connection to the coordinator (rank 0)",
        "rank 0 is not listening yet, or MLX_JACCL_COORDINATOR names an address it does not "
        "hold; after the last attempt the rank fails with Couldn't connect",
        "if it goes on, check rank 0 started and the coordinator address is rank 0's",
        _V + "mlx/distributed/jaccl/lib/jaccl/rdma.cpp",
    ),
)


def logged(text: str):
    """The class of MLX's, mlx-lm's or a model loader's own message in ``text`` when a program
    logged it rather than raised it ("Failed to preload model X: Received 333 parameters not
    in model"): the first of :data:`UNTAGGED`, then :data:`MLX_ERROR`, whose regex finds it;
    None otherwise."""
    return next((c for c in UNTAGGED + MLX_ERROR if c.regex.search(text)), None)
