"""Test helpers: run the real CLI in a subprocess (:func:`run_cli`), validate every JSON verdict
against the shipped schema, write small files. Imported by tests; fixtures are in conftest.py."""

from __future__ import annotations

import contextlib
import functools
import json
import subprocess
import sys
import time
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Dict, Optional, Tuple

import jsonschema

SCHEMA = json.loads(
    resources.files("meshdoctor").joinpath("verdict.schema.json").read_text(encoding="utf-8")
)
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA, format_checker=jsonschema.FormatChecker())


VERDICT_COMMANDS = ("check", "probe", "fix", "triage", "bundle")
JSON_LISTINGS = ("list-checks",)  # --json documents that are not verdicts (same schema)


@dataclass
class Run:
    """One CLI run: exit code, stdout, stderr, wall seconds, and the parsed JSON (if --json)."""

    rc: int
    out: str
    err: str
    elapsed: float
    doc: Optional[Dict[str, Any]] = None

    def results(self, code: str):
        return [r for r in self.doc["results"] if r["code"] == code]

    def outcome(self) -> str:
        """For a failure message: :func:`outcome` of this run (never the tail of a document)."""
        return outcome(self.doc, self.err, self.out)

    def status(self, code: str) -> str:
        """The worst status of ``code`` (fail > error > warn > ok > skip)."""
        order = ["fail", "error", "warn", "ok", "skip"]
        got = [r["status"] for r in self.results(code)]
        assert got, f"no result for {code}: {self.out}"
        return min(got, key=order.index)


def outcome(doc: Optional[Dict[str, Any]], err: str = "", out: str = "") -> str:
    """What a failure message shows of a verdict: its exit code, every result on one line
    (status, code, host, summary), each host's reachability and the probe's outcome (kind,
    message, teardown actions); with no document (human output), the output and stderr."""
    if not isinstance(doc, dict):
        return f"no JSON verdict; output:\n{out[-3000:]}\nstderr: {err[-1500:]}"
    lines = [f"exit_code {doc.get('exit_code')}, verdict {doc.get('verdict')}"]
    for r in doc.get("results", []):
        lines.append(f"  {r.get('status')} {r.get('code')} {r.get('host')}: {r.get('summary')}")
    hosts = {h.get("host"): h.get("reachable") for h in doc.get("hosts", [])}
    lines.append(f"  reachable: {hosts}")
    probe = doc.get("probe") or {}
    for key in ("outcome", "teardown"):
        if key in probe:
            lines.append(f"  probe {key}: {json.dumps(probe[key])[:3000]}")
    if err.strip():
        lines.append(f"  stderr: {err.strip()[-800:]}")
    return "\n".join(lines)


def validate(doc: Dict[str, Any]) -> None:
    """Assert ``doc`` validates against the shipped verdict schema."""
    VALIDATOR.validate(doc)


_UNSHARE = (
    ["unshare", "--pid", "--fork", "--mount-proc", "--kill-child"],
    ["unshare", "--user", "--map-root-user", "--pid", "--fork", "--mount-proc", "--kill-child"],
)


@functools.lru_cache(maxsize=1)
def private_pids_prefix() -> Tuple[str, ...]:
    """The command prefix that runs a command in a private PID namespace with its own /proc
    (util-linux ``unshare``; as root, else through a user namespace), or () where neither works.
    In there meshdoctor sees only itself and what it starts: no rank of another program on the
    machine can change its verdict."""
    for prefix in _UNSHARE:
        try:
            ok = subprocess.run(prefix + ["true"], capture_output=True, timeout=30).returncode == 0
        except (OSError, subprocess.SubprocessError):
            ok = False
        if ok:
            return tuple(prefix)
    return ()


def run_cli(
    *args: str,
    env: Optional[Dict[str, str]] = None,
    timeout: float = 60,
    cwd: Optional[str] = None,
    input: Optional[str] = None,
    private_pids: Optional[bool] = None,
) -> Run:
    """Run ``python -m meshdoctor ARGS`` (``input``: text on its stdin); parse and
    schema-validate stdout when ``--json``.

    ``private_pids``: run it in a private PID namespace (:func:`private_pids_prefix`), for a
    test whose verdict would otherwise depend on the MLX jobs running on the machine (MD301,
    MD302, MD411); where no namespace can be made it runs as usual. None: only for a probe of
    ranks on this machine alone (no ``--hostfile``/``--hosts``), whose gate refuses to start
    beside another job's ranks here."""
    if private_pids is None:
        private_pids = (
            bool(args)
            and args[0] == "probe"
            and not ({"--hostfile", "--hosts", "--help", "--launcher"} & set(args))
        )
    t0 = time.monotonic()
    prefix = list(private_pids_prefix()) if private_pids else []
    p = subprocess.run(
        prefix + [sys.executable, "-m", "meshdoctor", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
        cwd=cwd,
        input=input,
        stdin=None if input is not None else subprocess.DEVNULL,
    )
    run = Run(p.returncode, p.stdout, p.stderr, time.monotonic() - t0)
    if (
        "--json" in args
        and args[0] in VERDICT_COMMANDS + JSON_LISTINGS
        and p.returncode in (0, 1, 3)
    ):
        run.doc = json.loads(p.stdout)
        validate(run.doc)
        if isinstance(run.doc, dict):  # a verdict (`fix --list` is a listing)
            assert run.doc["exit_code"] == p.returncode, (run.doc, p.stderr)
    return run


def write(path: Path, text: str) -> Path:
    """Write ``text`` to ``path``; returns ``path``."""
    path.write_text(text)
    return path


@functools.lru_cache(maxsize=1)
def mlx_is_cuda_build() -> bool:
    """Whether the MLX of this interpreter is a CUDA build (``mx.cuda.is_available()``, MLX
    0.29+): tests that stage "a CPU build on a GPU host" need the CPU build."""
    code = (
        "import mlx.core as mx; print(bool(getattr(mx, 'cuda', None) and mx.cuda.is_available()))"
    )
    try:
        p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return False
    return p.stdout.strip() == "True"


def require_cpu_mlx() -> None:
    """Skip the calling test where this interpreter's MLX is the CUDA build: it stages "MLX's
    CPU build" with the real MLX (CI has the CPU build; a GPU host has the CUDA one)."""
    import pytest

    if mlx_is_cuda_build():
        pytest.skip("stages MLX's CPU build; this interpreter has the CUDA build")


# the fake ``pynvml`` (tests/fake_nvml/pynvml.py) a GPU test puts first on PYTHONPATH
FAKE_DIR = Path(__file__).with_name("fake_nvml")


@contextlib.contextmanager
def other_user():
    """``with other_user() as as_them:`` a throwaway user (``useradd``, removed with ``userdel``
    at the end) for a test where another user of the machine is the attacker; ``as_them(cmd)``
    runs the shell line ``cmd`` as that user (``runuser``) and returns its CompletedProcess.
    Skips the test where users cannot be made (not root, no useradd)."""
    import os
    import shutil
    import uuid

    import pytest

    if os.geteuid() != 0 or not shutil.which("useradd") or not shutil.which("runuser"):
        pytest.skip("needs root with useradd and runuser")
    name = f"mdatk{uuid.uuid4().hex[:8]}"
    made = subprocess.run(
        ["useradd", "--no-create-home", "--shell", "/bin/sh", name],
        capture_output=True,
        text=True,
        timeout=30,
    )
    if made.returncode != 0:
        pytest.skip(f"useradd failed: {made.stderr.strip()}")

    def as_them(cmd: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            ["runuser", "-u", name, "--", "sh", "-c", cmd],
            capture_output=True,
            text=True,
            timeout=30,
        )

    try:
        yield as_them
    finally:
        subprocess.run(["userdel", name], capture_output=True, timeout=30)


def triage_files(tmp_path: Path, files: Dict[str, str], rc: int = 1) -> Dict[str, Any]:
    """Write ``files`` (name -> text, a report's inputs) under ``tmp_path``, run ``meshdoctor
    triage`` on them with ``--json``, assert its exit code is ``rc`` and return the verdict."""
    paths = []
    for name, text in files.items():
        p = tmp_path / name
        p.write_text(text)
        paths.append(str(p))
    r = run_cli("triage", *paths, "--json")
    assert r.rc == rc, (r.rc, r.out, r.err)
    return r.doc


def first_cause(doc: Dict[str, Any]) -> Dict[str, Any]:
    """The first cause's finding of a triage verdict (``--json``): there is exactly one."""
    (f,) = [f for f in doc["triage"]["findings"] if f["first_cause"]]
    return f


def assert_read_for(tmp_path: Path, files: Dict[str, str], code: str, says) -> None:
    """Triage ``files`` (a public report's inputs) and assert that the leading finding (the
    first cause, or the first seen where its cause is in a log not given) is ``code`` and
    that its meaning and remedy hold every word of ``says``."""
    doc = triage_files(tmp_path, files)
    f = next(f for f in doc["triage"]["findings"] if f["first_cause"])
    text = f["meaning"] + " " + f["remedy"]
    assert f["code"] == code, (f["code"], f["meaning"][:300])
    for word in says:
        assert word in text, (word, text[:600])
