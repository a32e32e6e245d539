"""The generic signatures that catch a fatal line no specific one names: the uncaught C++
exception (MD696), an MLX error with its component (MD697), a bare Python exception line
(python.exception, MD663) and where each gives way or stays silent."""

from __future__ import annotations

import pytest

from meshdoctor import signatures


def codes(text: str, generic: bool = True):
    return [m.code for m in signatures.classify(text, generic=generic)]


@pytest.mark.parametrize(
    "line,code",
    [
        # the inner message has its own signature: the generic envelope gives way
        (
            "libc++abi: terminating due to uncaught exception of type std::runtime_error: "
            "[Fence::wait] Timed out",
            ["MD678"],
        ),
        (
            "Terminating due to uncaught exception: [metal::malloc] Resource limit (499000) exceeded.",
            ["MD672"],
        ),
        # the jaccl-specific abort and the inner [jaccl] message, no generic one
        (
            "libc++abi: terminating due to uncaught exception of type std::invalid_argument: "
            "[jaccl] Recv failed with error code -12",
            ["MD608", "MD617"],
        ),
        # an MLX component with no specific signature: the MLX error, not the plain C++ one
        (
            "libc++abi: terminating due to uncaught exception of type std::runtime_error: "
            "[cuda] cudaStreamCreate failed",
            ["MD697"],
        ),
        ("RuntimeError: [jaccl] something new went wrong", ["MD697"]),
        ("ValueError: [distributed] something new", ["MD697"]),
        # a bare exception line whose message has a specific signature
        ("OSError: [Errno 48] Address already in use", ["MD679"]),
    ],
)
def test_specific_first_generic_otherwise(line, code):
    assert sorted(codes(line)) == sorted(code), line


def test_mlx_error_names_its_component():
    m = signatures.classify("RuntimeError: [ring] a message MLX has not printed before")[0]
    assert m.code == "MD697" and m.groups["component"] == "ring"
    assert "ring distributed backend" in m.meaning and "MLX version" in m.meaning


@pytest.mark.parametrize(
    "text",
    [
        "[jaccl] all good, errno 160 is not a thing",  # no exception around it
        "2026-01-05 10:00:01 INFO NameError: name 'x' is not defined",  # mid-line, an INFO line
        "[INFO] ValueError: shown as an example",
        "  KeyError: 'x'",  # indented: part of something else
        "MyOwnError: not a builtin class",
        "ValueError:no space",
    ],
)
def test_no_generic_finding_mid_line_or_in_info_lines(text):
    assert codes(text) == [], text


def test_a_bare_exception_line_is_generic_only():
    """The probe reads ranks without the generic records: a bare exception line is not one of
    its findings; triage's reading (generic) says the traceback header is missing."""
    line = "NameError: name 'log_warning' is not defined"
    assert codes(line, generic=False) == []
    (m,) = signatures.classify(line, generic=True)
    assert m.code == "MD663" and "header" in m.meaning


def test_an_exception_line_closing_a_traceback_is_not_read_as_bare():
    text = (
        "Traceback (most recent call last):\n"
        '  File "/srv/train.py", line 3, in <module>\n'
        "    run()\n"
        "KeyError: 'x'"
    )
    (m,) = signatures.classify(text, generic=True)
    assert m.code == "MD663" and m.groups == {
        "type": "KeyError",
        "msg": "'x'",
        "file": "/srv/train.py",
        "lineno": "3",
        "func": "<module>",
        "call": "run()",  # the innermost frame's code line
    }
    assert "header" not in m.meaning and "launcher" not in m.meaning
    assert len(m.context) == 2
    # a KeyError is the code's own mistake: in the job's own file here
    assert "the job's own code (/srv/train.py, line 3, in <module>: `run()`)" in m.meaning


def _tb(path: str, exc: str) -> str:
    return (
        "Traceback (most recent call last):\n"
        '  File "/srv/serve.py", line 9, in <module>\n'
        "    main()\n"
        f'  File "{path}", line 212, in step\n'
        "    return self.cache[request.id]\n"
        f"{exc}"
    )


@pytest.mark.parametrize(
    "path,pkg",
    [
        ("/opt/venv/lib/python3.12/site-packages/mlx_lm/server.py", "mlx_lm"),
        ("/Users/a/Documents/Projects/exo/exo/orchestration/node.py", "exo"),
        ("/home/u/src/exo/src/exo/worker/runner.py", "exo"),
    ],
)
def test_a_programming_error_in_a_package_is_that_release_bug(path, pkg):
    """A NameError, KeyError, AttributeError... raised in a package's frame (under
    site-packages or a project's checkout) is read as that package's bug, with its line and
    what to do: its version, an upgrade, its tracker."""
    (m,) = signatures.classify(_tb(path, "KeyError: 'req-17'"), generic=True)
    assert m.code == "MD663"
    assert f"raised in {pkg}'s own code ({path}, line 212, in step: " in m.meaning
    assert "looked up a key that is absent" in m.meaning
    assert f"pip show {pkg}" in m.meaning and "issue tracker" in m.meaning


@pytest.mark.parametrize(
    "exc",
    [
        "ValueError: bad value 3",  # a value the caller gave: not read as the code's own bug
        "FileNotFoundError: [Errno 2] No such file or directory: 'w.safetensors'",
        "RuntimeError: boom",
    ],
)
def test_an_environment_error_in_a_package_is_not_read_as_its_bug(exc):
    path = "/opt/venv/lib/python3.12/site-packages/mlx_lm/server.py"
    ms = [m for m in signatures.classify(_tb(path, exc), generic=True) if m.code == "MD663"]
    assert ms and all("own code" not in m.meaning for m in ms), exc


@pytest.mark.parametrize(
    "line,words",
    [
        # MLX's Module.load_weights (python/mlx/nn/layers/base.py), strict
        ("ValueError: Missing 4 parameters: ", "do not fit the model class"),
        ("ValueError: Received 2 parameters not in model: ", "do not fit the model class"),
        (
            "ValueError: Expected shape (4096, 512) but received shape (4096, 1024) for "
            "parameter model.layers.0.mlp.gate_proj.weight",
            "do not fit the model class",
        ),
        # mlx-lm's loaders (mlx_lm/utils.py)
        ("ValueError: Model type qwen9_moe not supported.", "no module for the model's"),
        ("FileNotFoundError: No safetensors found in /models/x", "no *.safetensors files"),
        (
            "ValueError: Pipeline loading is only supported for MLX converted models.",
            "mlx_lm.convert",
        ),
    ],
)
def test_a_model_loader_message_names_the_files_and_the_release(line, words):
    (m,) = [m for m in signatures.classify(line, generic=True) if m.code == "MD663"]
    assert words in m.meaning, m.meaning


@pytest.mark.parametrize(
    "line,words",
    [
        # a factor of 8: a 4-bit packed weight, or a world size of 8
        (
            "ValueError: [matmul] Last dimension of first input with shape (1,8,4096) must "
            "match second to last dimension of second input with shape (512,4096).",
            ["a factor of 8 apart", "4-bit quantized weight", "If 8 is the job's world size"],
        ),
        # a factor of 2 is no quantization of MLX's: only the shard
        (
            "ValueError: [quantized_matmul] Last dimension of first input with shape "
            "(1,4,2048) must match second to last dimension of second input with shape "
            "(1024,512).",
            ["a factor of 2 apart", "If 2 is the job's world size"],
        ),
        (
            "libc++abi: terminating due to uncaught exception of type std::invalid_argument: "
            "[reshape] Cannot reshape array of size 4096 into shape (1,8,3,128).",
            ["head count", "num_key_value_heads"],
        ),
        (
            "Error processing prompt: [concatenate] All the input array dimensions must match "
            "exactly except for the concatenation axis.",
            ["kept from another request"],
        ),
    ],
)
def test_an_mlx_op_check_names_what_its_shapes_tell(line, words):
    (m,) = signatures.classify(line, generic=True)
    assert m.code == "MD817"
    for w in words:
        assert w in m.meaning, (w, m.meaning)
    if "factor of 2 " in line:
        assert "quantized weight:" not in m.meaning


def test_broadcast_and_eval_keep_their_own_signatures():
    assert codes("ValueError: [broadcast_shapes] Shapes (2,3) and (4,3) cannot be broadcast.") == [
        "MD804"
    ]
    assert codes("RuntimeError: [eval] Attempting to eval an array without a primitive.") == [
        "MD816"
    ]
