"""Extract the error and warning sites of MLX's distributed code (and NCCL's) into one table.

Usage::

    python3 tools/extract_sites.py mlx --source SRC --tag v0.32.1 --commit SHA \
        --wheel-dir WHEELS > meshdoctor/signatures/sites/mlx.tsv
    python3 tools/extract_sites.py nccl --source SRC --tag v2.30.7-1 --commit SHA \
        --wheel-dir WHEELS [--older v2.26.6-1 SHA SRC2 ...] > meshdoctor/signatures/sites/nccl.tsv

``SRC`` is a source checkout (``git archive TAG | tar x`` of ml-explore/mlx or NVIDIA/nccl);
``WHEELS`` a folder of unpacked wheels (``unzip`` of mlx, mlx-metal, mlx-cpu, mlx-cuda-13
0.32.4 and nvidia-nccl-cu13 2.32.x): their Python files (``mlx/_distributed_utils``) are read
as source, and the string literals of their libraries (``libmlx``, ``libjaccl``,
``libnccl.so.2``, what ``strings`` prints) add the messages that the source checkout does not
have (the releases after its tag). For NCCL, ``--older`` checkouts (newest first) add the texts
of older releases still in the field that differ from the newest's, each with its tag.

Each row: ``component``, ``where`` (``file:line[,line...]`` in the checkout or the wheel, or
``library (wheel version)``), ``how`` (how the text reaches the user: the Python exception a
C++ exception becomes through nanobind, ``stderr``, mlx.launch's ``[WARN]``/``[ERROR]`` or
argparse's usage error, NCCL's ``WARN``), ``pattern`` (the text, each formatted field of the
message, a stream operand, printf conversion, f-string or fmt field, as ``{name}``; a literal
brace doubled). One row per distinct text and file: the lines of one file that print the same
text share the row. Standard library only: the tool reads text and runs nothing but
``strings``.
"""

from __future__ import annotations

import argparse
import ast
import os
import re
import subprocess
import sys
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

Row = Tuple[str, str, str, str]  # component, where, how, pattern

# ---------------------------------------------------------------------------------------------
# C/C++: the message of a throw, a std::cerr stream, a log call, NCCL's WARN macro

_STR = r'"(?:[^"\\\n]|\\.)*"'
_CHAR_ESC = {"n": "\n", "t": "\t", '"': '"', "\\": "\\", "'": "'", "0": ""}


def _unescape(lit: str) -> str:
    """The text of a C string literal (quotes included in ``lit``)."""
    return re.sub(r"\\(.)", lambda m: _CHAR_ESC.get(m.group(1), m.group(1)), lit[1:-1])


def _field(expr: str) -> str:
    """A wildcard named after the expression that fills it (``{errno}``, ``{rank}``)."""
    words = re.findall(r"[A-Za-z_][A-Za-z0-9_]*", expr)
    skip = {
        "std",
        "to_string",
        "c_str",
        "str",
        "strerror",
        "size",
        "get",
        "this",
        "static_cast",
        "int",
        "char",
        "auto",
        "const",
        "data",
        "value",
        "first",
        "second",
    }
    name = next((w for w in reversed(words) if w not in skip), "x")
    if "strerror" in expr:
        name = "strerror"
    return "{" + name.strip("_").lower()[:24] + "}"


def _split_top(expr: str, sep: str) -> List[str]:
    """``expr`` split at ``sep`` outside brackets and string literals."""
    out, depth, i, cur = [], 0, 0, []
    while i < len(expr):
        c = expr[i]
        if c == '"':
            m = re.match(_STR, expr[i:])
            if m:
                cur.append(m.group(0))
                i += len(m.group(0))
                continue
        if c == "'" and re.match(r"'(?:[^'\\]|\\.)'", expr[i:]):
            m = re.match(r"'(?:[^'\\]|\\.)'", expr[i:])
            cur.append(m.group(0))
            i += len(m.group(0))
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        if depth == 0 and expr.startswith(sep, i):
            out.append("".join(cur))
            cur = []
            i += len(sep)
            continue
        cur.append(c)
        i += 1
    out.append("".join(cur))
    return [p.strip() for p in out if p.strip()]


def _printf(fmt: str) -> str:
    """A printf format as a pattern: every conversion a wildcard (``{s}``, ``{d}``)."""
    fmt = fmt.replace("{", "{{").replace("}", "}}")
    fmt = re.sub(
        r"%[-+ #0-9.*]*(?:hh|h|ll|l|z|j|t|L)?([diouxXeEfgGcspn])",
        lambda m: "{" + m.group(1) + "}",
        fmt,
    )
    return fmt.replace("%%", "%")


def _fmt_format(fmt: str, args: Sequence[str]) -> str:
    """A ``fmt::format`` string as a pattern, each ``{}`` named after its argument."""
    it = iter(args)
    out = []
    for part in re.split(r"(\{\{|\}\}|\{[^{}]*\})", fmt):
        if part in ("{{", "}}"):
            out.append(part)
        elif part.startswith("{") and part.endswith("}"):
            out.append(_field(next(it, "x")))
        else:
            out.append(part.replace("{", "{{").replace("}", "}}"))
    return "".join(out)


def _operand(expr: str, consts: Dict[str, str]) -> str:
    """One operand of a stream chain, a ``+`` concatenation or a log call, as pattern text."""
    expr = expr.strip()
    lits = re.findall(_STR, expr)
    if lits and re.fullmatch(r"(?:\s*" + _STR + r"\s*)+", expr):
        return "".join(_unescape(x) for x in lits).replace("{", "{{").replace("}", "}}")
    m = re.fullmatch(
        r"(?:fmt::|std::)format\(\s*(" + _STR + r"(?:\s*" + _STR + r")*)\s*(.*)\)", expr, re.S
    )
    if m:
        fmt = "".join(_unescape(x) for x in re.findall(_STR, m.group(1)))
        rest = m.group(2).lstrip(",")
        return _fmt_format(fmt, _split_top(rest, ","))
    m = re.fullmatch(r"std::string\((" + _STR + r")\)", expr)
    if m:
        return _unescape(m.group(1))
    if expr in consts:
        return consts[expr]
    if re.fullmatch(r"'(?:[^'\\]|\\.)'", expr):
        return _unescape('"' + expr[1:-1] + '"')
    if "+" in expr and '"' in expr:
        return _concat(expr, consts)
    if expr in ("std::endl", "std::flush", '"\\n"'):
        return ""
    return _field(expr)


def _concat(expr: str, consts: Dict[str, str]) -> str:
    return "".join(_operand(p, consts) for p in _split_top(expr, "+"))


def _constants(text: str) -> Dict[str, str]:
    """``#define NAME "text"`` and ``constexpr ... NAME = "text"`` of one source file."""
    out = {}
    for m in re.finditer(r"#define\s+(\w+)\s+(" + _STR + r")", text):
        out[m.group(1)] = _unescape(m.group(2))
    for m in re.finditer(
        r"(?:constexpr|const)\s+[\w:\s*]+?\b(\w+)\s*(?:\[\])?\s*=\s*(" + _STR + r")\s*;", text
    ):
        out[m.group(1)] = _unescape(m.group(2))
    return out


def _statement(text: str, start: int) -> Tuple[str, int]:
    """The statement that begins at ``start`` (up to its ``;`` outside brackets and strings)
    and the offset after it."""
    depth, i = 0, start
    while i < len(text):
        c = text[i]
        if c == '"':
            m = re.match(_STR, text[i:])
            if m:
                i += len(m.group(0))
                continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth < 0:
                return text[start:i], i
        elif c == ";" and depth == 0:
            return text[start:i], i + 1
        i += 1
    return text[start:], len(text)


def _call_args(stmt: str, name_re: str) -> Optional[List[str]]:
    m = re.search(name_re + r"\s*\(", stmt)
    if not m:
        return None
    inner = stmt[m.end() :]
    depth, end = 1, None
    i = 0
    while i < len(inner):
        c = inner[i]
        if c == '"':
            mm = re.match(_STR, inner[i:])
            if mm:
                i += len(mm.group(0))
                continue
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                end = i
                break
        i += 1
    return _split_top(inner[:end] if end is not None else inner, ",")


_HOW = {
    "runtime_error": "RuntimeError",
    "invalid_argument": "ValueError",
    "out_of_range": "IndexError",
    "logic_error": "RuntimeError",
    "length_error": "ValueError",
}


def _stream_text(text: str, throw_at: int, var: str, consts: Dict[str, str]) -> Optional[str]:
    """The text an ostringstream ``var`` holds when it is thrown at ``throw_at``: every
    ``var << ...;`` between its declaration and the throw, in order."""
    decl = None
    for m in re.finditer(r"std::(?:o?stringstream)\s+" + re.escape(var) + r"\b", text[:throw_at]):
        decl = m
    if decl is None:
        return None
    parts = []
    for m in re.finditer(r"\b" + re.escape(var) + r"\s*<<", text[decl.end() : throw_at]):
        stmt, _ = _statement(text, decl.end() + m.start())
        ops = _split_top(stmt, "<<")[1:]
        parts.append("".join(_operand(o, consts) for o in ops))
    return "".join(parts)


def cpp_sites(path: str, rel: str) -> List[Tuple[int, str, str]]:
    """The sites of one C/C++ file: ``(line, how, pattern)`` for every ``throw std::X(...)``
    (its literal, concatenation, ``fmt::format`` or ostringstream), every ``std::cerr <<``
    statement, MLX's ``log_info(true, ...)`` / ``log(std::cerr, ...)`` (arguments joined by
    spaces, as mlx/distributed/ring/ring.cpp's ``log`` prints them) and fprintf(stderr, ...)."""
    text = open(path, encoding="utf-8", errors="replace").read()
    consts = _constants(text)
    out = []

    def line_of(off: int) -> int:
        return text.count("\n", 0, off) + 1

    for m in re.finditer(r"\bthrow\s+(?:std::)?(\w+)\s*\(", text):
        stmt, _ = _statement(text, m.start())
        args = _call_args(stmt, r"throw\s+(?:std::)?\w+")
        if not args:
            continue
        arg = args[0]
        sm = re.fullmatch(r"(\w+)\.str\(\)", arg.strip())
        if sm:
            pat = _stream_text(text, m.start(), sm.group(1), consts)
        elif '"' in arg or "format(" in arg:
            pat = _concat(arg, consts) if "+" in arg else _operand(arg, consts)
        else:
            pat = None
        if pat and re.search(r"[A-Za-z]{3}", pat):
            out.append((line_of(m.start()), _HOW.get(m.group(1), "RuntimeError"), pat))
    for m in re.finditer(r"std::cerr\s*<<", text):
        stmt, _ = _statement(text, m.start())
        pat = "".join(_operand(o, consts) for o in _split_top(stmt, "<<")[1:])
        if re.search(r"[A-Za-z]{3}", pat):
            out.append((line_of(m.start()), "stderr", pat.strip()))
    for m in re.finditer(r"\blog_info\s*\(\s*true\s*,|\blog\s*\(\s*std::cerr\s*,", text):
        stmt, _ = _statement(text, m.start())
        args = _call_args(stmt, r"\blog(?:_info)?")
        if not args:
            continue
        tag = consts.get("RING_TAG", "[ring]") if "log_info" in m.group(0) else ""
        words = [_operand(a, consts) for a in args[1:]]
        if "log_info" in m.group(0):
            words = [tag] + words
        pat = " ".join(w for w in words if w)
        if re.search(r"[A-Za-z]{3}", pat) and not re.fullmatch(r"[{}\w\s]*args[{}\s]*", pat):
            out.append((line_of(m.start()), "stderr", pat))
    for m in re.finditer(r"\bfprintf\s*\(\s*stderr\s*,", text):
        if "debug()" in text[max(0, m.start() - 200) : m.start()]:
            continue  # a debug trace an environment variable turns on, not an error
        stmt, _ = _statement(text, m.start())
        args = _call_args(stmt, r"\bfprintf")
        if args and len(args) > 1 and '"' in args[1]:
            fmt = "".join(_unescape(x) for x in re.findall(_STR, args[1]))
            out.append((line_of(m.start()), "stderr", _printf(fmt).strip()))
    # an error text made apart and thrown later (Metal's command-buffer error, check_error())
    thrown = [o[2] for o in out]
    for m in re.finditer(r"fmt::format\(\s*(" + _STR + r")", text):
        lit = _unescape(m.group(1))
        if not re.match(r"\[[\w:]+\] ", lit) or any(lit[:20] in t for t in thrown):
            continue
        stmt, _ = _statement(text, m.start())
        args = _call_args(stmt, r"fmt::format")
        out.append((line_of(m.start()), "RuntimeError", _fmt_format(lit, (args or [])[1:])))
    return [o for o in out if "{args}" not in o[2]]


# ---------------------------------------------------------------------------------------------
# Python (mlx/_distributed_utils): raise, mlx.launch's log_warning/log_error, parser.error


def _py_text(node: ast.AST) -> Optional[str]:
    """A Python string expression as a pattern (f-string fields, ``%`` conversions and
    ``.format`` fields as wildcards), or None when it is not one."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value.replace("{", "{{").replace("}", "}}")
    if isinstance(node, ast.JoinedStr):
        out = []
        for v in node.values:
            if isinstance(v, ast.Constant):
                out.append(str(v.value).replace("{", "{{").replace("}", "}}"))
            else:
                out.append(_field(ast.unparse(v.value)))  # type: ignore[attr-defined]
        return "".join(out)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        a, b = _py_text(node.left), _py_text(node.right)
        return (a if a is not None else _field(ast.unparse(node.left))) + (
            b if b is not None else _field(ast.unparse(node.right))
        )
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
        a = _py_text(node.left)
        return _printf(a.replace("{{", "{").replace("}}", "}")) if a is not None else None
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "format"
    ):
        a = _py_text(node.func.value)
        if a is not None:
            return re.sub(r"(?<!\{)\{[^{}]*\}(?!\})", "{x}", a)
    return None


_PY_LOGS = {"log_warning": "[WARN]", "log_error": "[ERROR]", "log_f": "[WARN]"}


def _py_call(node: ast.AST) -> Optional[Tuple[str, str]]:
    """``(how, pattern)`` of one statement that prints an error or warning, else None."""
    if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call) and node.exc.args:
        name = ast.unparse(node.exc.func)  # type: ignore[attr-defined]
        text = _py_text(node.exc.args[0])
        if text is not None:
            return name.split(".")[-1], text
        return None
    if not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)):
        return None
    call = node.value
    fname = ast.unparse(call.func)  # type: ignore[attr-defined]
    if fname in _PY_LOGS:
        words = []
        for a in call.args:
            t = _py_text(a)
            words.append(t if t is not None else _field(ast.unparse(a)))
        text = " ".join(words)
        return (_PY_LOGS[fname], text) if text.strip() else None
    if fname.endswith("parser.error") and call.args:
        t = _py_text(call.args[0])
        return ("usage error", t) if t is not None and re.search(r"[A-Za-z]{3}", t) else None
    return None


def py_sites(path: str) -> List[Tuple[int, str, str]]:
    """The sites of one Python file: ``(line, how, pattern)``. Consecutive log calls of one
    block (a message and its hint lines, ``log_error()`` spacers, a loop that lists hosts) are
    one site: its first line with text."""
    tree = ast.parse(open(path, encoding="utf-8").read())
    out: List[Tuple[int, str, str]] = []

    def walk(body: Sequence[ast.stmt]) -> None:
        prev_log = False
        for st in body:
            got = _py_call(st)
            is_log = isinstance(st, ast.Expr) and got is not None and got[0].startswith("[")
            spacer = (
                isinstance(st, ast.Expr)
                and isinstance(st.value, ast.Call)
                and ast.unparse(st.value.func) in _PY_LOGS  # type: ignore[attr-defined]
            )
            listing = isinstance(st, ast.For) and all(
                isinstance(s, (ast.Expr, ast.If)) for s in st.body
            )
            if got and not (prev_log and (is_log or spacer)):
                out.append((st.lineno, got[0], got[1]))
            prev_log = (prev_log and (listing or spacer)) or is_log
            for field in ("body", "orelse", "finalbody", "handlers"):
                sub = getattr(st, field, None)
                if isinstance(sub, list) and not (listing and field == "body"):
                    walk([s for s in sub if isinstance(s, ast.stmt)] or [])
                    for h in sub:
                        if isinstance(h, ast.ExceptHandler):
                            walk(h.body)

    walk(tree.body)
    return out


# ---------------------------------------------------------------------------------------------
# libraries: the string literals that the source checkout does not explain


def lib_strings(path: str) -> List[str]:
    """The printable strings of a binary (``strings -n 8``)."""
    res = subprocess.run(
        ["strings", "-n", "8", path], capture_output=True, text=True, timeout=600, check=True
    )
    return res.stdout.splitlines()


def _literal_parts(pattern: str) -> List[str]:
    return [p.strip() for p in re.split(r"\{[^{}]*\}", pattern) if len(p.strip()) >= 6]


def new_strings(
    strings: Iterable[str],
    keep: "re.Pattern[str]",
    known: Sequence[str],
    drop: Optional["re.Pattern[str]"] = None,
    whole: bool = False,
) -> List[str]:
    """The strings that ``keep`` selects, that ``drop`` does not, and that no literal part of
    ``known`` (the source's patterns) contains or is contained in (``whole``: ``known`` are
    whole literals, and only one that contains the string explains it)."""
    parts = list(known) if whole else [p for k in known for p in _literal_parts(k)]
    out = []
    for s in strings:
        t = s.strip()
        if not keep.search(t) or (drop is not None and drop.search(t)):
            continue
        if any(t in p or (not whole and p in t) for p in parts):
            continue
        if t not in out:
            out.append(t)
    return out


def _from_lib(s: str) -> str:
    """A library string as a pattern: printf conversions as wildcards; a string that ends
    where an operand was streamed (``errno=``, ``(error: ``) gets its wildcard."""
    pat = _printf(s) if "%" in s else s.replace("{", "{{").replace("}", "}}")
    if re.search(r"[=:(]\s*$|\bwith\s*$", s):
        pat = pat.rstrip() + (" " if s.endswith(" ") else "") + "{x}"
    return pat


# ---------------------------------------------------------------------------------------------
# MLX


def _mlx_component(rel: str) -> str:
    for key in ("jaccl", "ring", "nccl", "mpi"):
        if f"/distributed/{key}/" in rel:
            return key
    if "/backend/metal/" in rel:
        return "metal"
    if "/backend/cuda/" in rel:
        return "cuda"
    if rel.endswith("config.py"):
        return "config"
    if "_distributed_utils" in rel:
        return "launch"
    return "distributed"


MLX_CPP = (
    "mlx/distributed",
    "mlx/backend/metal/allocator.cpp",
    "mlx/backend/metal/resident.cpp",
    "mlx/backend/metal/event.cpp",
    "mlx/backend/metal/fence.cpp",
    "mlx/backend/metal/device.cpp",
    "mlx/backend/cuda/allocator.cpp",
    "mlx/backend/cuda/event.cu",
    "mlx/backend/cuda/fence.cpp",
    "mlx/backend/cuda/utils.cpp",
    "mlx/backend/cuda/device.cpp",
)
# the library strings that belong to the components above (their message tags)
MLX_LIB_KEEP = re.compile(
    r"^\[(?:jaccl|ring|nccl|mpi|distributed|metal::\w+|METAL|malloc|Fence::wait|"
    r"CUDA|cuda::\w+)\]"
)


def _files(root: str, prefixes: Sequence[str], exts: Tuple[str, ...]) -> List[str]:
    out = []
    for p in prefixes:
        full = os.path.join(root, p)
        if os.path.isfile(full):
            out.append(p)
            continue
        for d, _, fs in os.walk(full):
            for f in fs:
                rel = os.path.relpath(os.path.join(d, f), root)
                if f.endswith(exts) and "/examples/" not in rel:
                    out.append(rel)
    return sorted(out)


def _group(sites: Iterable[Tuple[str, str, int, str, str]]) -> List[Row]:
    """``(component, file, line, how, pattern)`` -> rows, one per file and text."""
    rows: Dict[Tuple[str, str, str, str], List[int]] = {}
    for comp, f, line, how, pat in sites:
        pat = re.sub(r"\s+", " ", pat).strip()
        rows.setdefault((comp, f, how, pat), []).append(line)
    return [
        (comp, f"{f}:{','.join(map(str, sorted(lines)))}", how, pat)
        for (comp, f, how, pat), lines in rows.items()
    ]


def mlx_rows(src: str, wheels: str) -> Tuple[List[Row], List[str]]:
    """The MLX table and the wheels it read."""
    sites = []
    read: List[str] = []
    for rel in _files(src, MLX_CPP, (".cpp", ".h", ".cu")):
        for line, how, pat in cpp_sites(os.path.join(src, rel), rel):
            sites.append((_mlx_component(rel), rel, line, how, pat))
    # 0.32.4's Python files (the same in every mlx wheel: the macOS one first) and jaccl's
    # headers (mlx-metal's include/jaccl, newer than the checkout's)
    mlx_wheels = sorted(
        (d for d in os.listdir(wheels) if d.startswith("mlx-")), key=lambda d: "macosx" not in d
    )
    py_wheel = mlx_wheels[0] if mlx_wheels else None
    metal = next((d for d in sorted(os.listdir(wheels)) if d.startswith("mlx_metal-")), None)
    if metal:
        inc = os.path.join(wheels, metal, "mlx", "include", "jaccl")
        heads = set(os.listdir(inc)) if os.path.isdir(inc) else set()
        sites = [
            s
            for s in sites
            if not (
                s[1].startswith("mlx/distributed/jaccl/lib/jaccl/")
                and os.path.basename(s[1]) in heads
            )
        ]
        read.append(metal + ".whl:mlx/include/jaccl")
        for h in sorted(heads):
            rel = f"mlx/include/jaccl/{h}"
            for line, how, pat in cpp_sites(os.path.join(inc, h), rel):
                sites.append(("jaccl", f"{metal}.whl:{rel}", line, how, pat))
    if py_wheel:  # 0.32.4's own Python files, with their lines there
        read.append(py_wheel + ".whl")
        for f in ("launch.py", "config.py", "common.py"):
            rel = f"mlx/_distributed_utils/{f}"
            for line, how, pat in py_sites(os.path.join(wheels, py_wheel, rel)):
                sites.append((_mlx_component(rel), f"{py_wheel}.whl:{rel}", line, how, pat))
    rows = _group(sites)
    known = [r[3] for r in rows]
    for d in sorted(os.listdir(wheels)):
        if not d.startswith(("mlx_metal", "mlx_cuda", "mlx_cpu")):
            continue
        for dd, _, fs in os.walk(os.path.join(wheels, d)):
            for f in sorted(fs):
                if not re.match(r"lib(mlx|jaccl)\.(so|dylib)$", f):
                    continue
                read.append(f"{d}.whl:{f}")
                for s in new_strings(lib_strings(os.path.join(dd, f)), MLX_LIB_KEEP, known):
                    comp = (
                        _mlx_component("mlx/distributed/" + s[1:].split("]")[0].split(":")[0] + "/")
                        if s.startswith("[")
                        else "distributed"
                    )
                    if s.startswith(("[metal", "[METAL", "[malloc", "[Fence")):
                        comp = "metal"
                    if s.startswith(("[CUDA", "[cuda")):
                        comp = "cuda"
                    ver = d.split("-")[1]
                    rows.append((comp, f"{f} ({d.split('-')[0]} {ver})", "string", _from_lib(s)))
                    known.append(_from_lib(s))
    return rows, read


# ---------------------------------------------------------------------------------------------
# NCCL

NCCL_DIRS = (
    "src/transport/net_ib",
    "src/transport/net_ib.cc",
    "src/transport/net_socket.cc",
    "src/transport/shm.cc",
    "src/transport/p2p.cc",
    "src/bootstrap.cc",
    "src/proxy.cc",
    "src/init.cc",
    "src/misc/socket.cc",
    "src/misc/shmutils.cc",
    "src/misc/ibvwrap.cc",
    "src/misc/cudawrap.cc",
    "src/os/linux.cc",
    "src/os/linux_ipcsocket.cc",
    # topology detection and graph search, launching work, groups, arguments, NVML, GDRCopy,
    # the net plugin loader, the network, NVLS and CollNet transports, RAS, registration,
    # NCCL's own allocators and multi-node NVLink
    "src/graph",
    "src/enqueue.cc",
    "src/group.cc",
    "src/misc/argcheck.cc",
    "src/misc/nvmlwrap.cc",
    "src/misc/gdrwrap.cc",
    "src/plugin/net.cc",
    "src/transport/net.cc",
    "src/transport/nvls.cc",
    "src/transport/coll_net.cc",
    "src/transport.cc",
    "src/ras",
    "src/register",
    "src/mem_manager.cc",
    "src/allocator.cc",
    "src/mnnvl.cc",
    # the macros every file above fails through: CUDA calls and allocations (CUDACHECK's
    # "Cuda failure '%s'", ncclCudaCalloc's "Failed to CUDA calloc %ld bytes")
    "src/include/alloc.h",
    "src/include/checks.h",
    "src/include/cudawrap.h",
)


def _nccl_component(rel: str) -> str:
    base = os.path.basename(rel).split(".")[0]
    if "/net_ib" in rel:
        return "net_ib"
    for folder in ("graph", "ras", "register"):
        if f"src/{folder}/" in rel:
            return folder
    if rel.endswith("plugin/net.cc"):
        return "net_plugin"
    return base


def nccl_sites(path: str) -> List[Tuple[int, str, str]]:
    """``WARN(...)`` calls of one NCCL file: ``(line, "WARN", pattern)``."""
    text = open(path, encoding="utf-8", errors="replace").read()
    out = []
    for m in re.finditer(r"\bWARN\s*\(", text):
        stmt, _ = _statement(text, m.start())
        args = _call_args(stmt, r"\bWARN")
        if not args or '"' not in args[0]:
            continue
        fmt = "".join(_unescape(x) for x in re.findall(_STR, args[0]))
        if not re.search(r"[A-Za-z]{3}", fmt.replace("%s", "")):
            continue  # a format only (WARN("%s", msg)): its text is made elsewhere
        out.append((text.count("\n", 0, m.start()) + 1, "WARN", _printf(fmt)))
    return out


# the libnccl.so.2 strings of the scoped files' messages (their prefixes) that may be failures;
# the DOCA SDK that 2.32 links in is left out
NCCL_LIB_KEEP = re.compile(
    r"^(?:NET/IB|NET/Socket|Bootstrap|bootstrap\w*: |Proxy|\[Proxy|\[Service|Net :|ncclSocket|"
    r"socketProgress|ncclOsSocket|Message truncated|Error while|Error: |Call to (?:socket|"
    r"connect|accept|bind|listen|recv|send|read|write|ibv_reg|ibv_modify|ibv_create_qp|"
    r"ibv_open|ibv_query_port|ibv_query_gid|getifaddrs|setsockopt|getsockopt|shutdown|close|"
    r"open|mmap|ftruncate|posix_fallocate|unlink)).*(?:failed|error|Error|Failed|cannot|"
    r"Cannot|[Cc]ould not|[Uu]nable|[Ii]nvalid|mismatch|[Tt]runcated|exceeded|not supported|"
    r"refused|closed)"
)
NCCL_LIB_DROP = re.compile(r"DOCA|doca|GIN|umem|UAR|DevX")


def _all_literals(src: str) -> List[str]:
    """Every string literal (adjacent ones joined) of the checkout's ``src`` tree: what a
    library string must not be part of to be new."""
    out = set()
    for d, _, fs in os.walk(os.path.join(src, "src")):
        for f in fs:
            if not f.endswith((".cc", ".h", ".cu", ".cuh", ".c")):
                continue
            text = open(os.path.join(d, f), encoding="utf-8", errors="replace").read()
            for m in re.finditer(r"(?:" + _STR + r"\s*)+", text):
                lit = "".join(_unescape(x) for x in re.findall(_STR, m.group(0))).strip()
                if len(lit) >= 8:
                    out.add(lit)
    return sorted(out)


def _nccl_lib_component(s: str) -> str:
    if s.startswith("NET/IB") or s.startswith("Error: ") or s.startswith("Call to ibv_"):
        return "net_ib" if s.startswith(("NET/IB", "Error: ")) else "ibvwrap"
    if s.startswith("NET/Socket"):
        return "net_socket"
    if s.lower().startswith("bootstrap"):
        return "bootstrap"
    return "socket"


def nccl_rows(src: str, wheels: str) -> Tuple[List[Row], List[str]]:
    """The NCCL table (the WARN sites of :data:`NCCL_DIRS`, then the strings of the wheel's
    libnccl.so.2 that no literal of the checkout holds) and the wheels it read."""
    sites = []
    for rel in _files(src, NCCL_DIRS, (".cc", ".h", ".cu")):
        for line, how, pat in nccl_sites(os.path.join(src, rel)):
            sites.append((_nccl_component(rel), rel, line, how, pat))
    rows = _group(sites)
    read: List[str] = []
    lits = _all_literals(src)
    for d in sorted(os.listdir(wheels)):
        lib = os.path.join(wheels, d, "nvidia", "nccl", "lib", "libnccl.so.2")
        if not (d.startswith("nvidia_nccl") and os.path.isfile(lib)):
            continue
        read.append(f"{d}.whl:nvidia/nccl/lib/libnccl.so.2")
        ver = d.split("-")[1]
        for s in new_strings(lib_strings(lib), NCCL_LIB_KEEP, lits, NCCL_LIB_DROP, True):
            rows.append((_nccl_lib_component(s), f"libnccl.so.2 ({ver})", "WARN", _printf(s)))
    return rows, read


def older_rows(rows: Sequence[Row], older: Sequence[Tuple[str, str]]) -> List[Row]:
    """The rows of older NCCL releases (``(tag, checkout)`` pairs, newest first) whose text no
    row of ``rows`` (the newest release's) has: their ``where`` is the file and lines in the
    newest older release that prints it, then that tag in brackets
    (``src/misc/socket.cc:716 (v2.20.5-1)``). Texts of releases still in the field differ
    from the newest's (NCCL 2.19 and 2.20 print ``Cuda failure '%s'`` and ``ncclSocketInit:
    ... with family %d`` from other files than 2.30 does)."""
    known = {r[3] for r in rows}
    out: List[Row] = []
    for tag, src in older:
        sites = []
        for rel in _files(src, NCCL_DIRS, (".cc", ".h", ".cu", ".c")):
            for line, how, pat in nccl_sites(os.path.join(src, rel)):
                sites.append((_nccl_component(rel), rel, line, how, pat))
        for comp, where, how, pat in _group(sites):
            if pat in known:
                continue
            known.add(pat)
            out.append((comp, f"{where} ({tag})", how, pat))
    return out


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("project", choices=("mlx", "nccl"))
    ap.add_argument("--source", required=True, help="the source checkout")
    ap.add_argument("--repo", default="", help="its repository (owner/name)")
    ap.add_argument("--tag", required=True)
    ap.add_argument("--commit", required=True)
    ap.add_argument("--wheel-dir", required=True, help="a folder of unpacked wheels")
    ap.add_argument(
        "--older",
        nargs=3,
        action="append",
        default=[],
        metavar=("TAG", "COMMIT", "SRC"),
        help="(nccl) an older release's checkout whose differing texts are added, newest first",
    )
    a = ap.parse_args(argv)
    if a.project == "mlx":
        rows, read = mlx_rows(a.source, a.wheel_dir)
        repo = a.repo or "ml-explore/mlx"
    else:
        rows, read = nccl_rows(a.source, a.wheel_dir)
        rows += older_rows(rows, [(t, src) for t, _, src in a.older])
        repo = a.repo or "NVIDIA/nccl"
    w = sys.stdout
    w.write(f"# source\tgithub.com/{repo} {a.tag} (commit {a.commit})\n")
    for tag, commit, _ in a.older:
        w.write(f"# older\tgithub.com/{repo} {tag} (commit {commit})\n")
    for r in read:
        w.write(f"# wheel\t{r}\n")
    w.write("# made by\ttools/extract_sites.py\n")
    w.write("component\twhere\thow\tpattern\n")
    for r in sorted(rows):
        w.write("\t".join(x.replace("\t", " ") for x in r) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
