"""Every test worker in namespaces of its own: the suite never reads the machine it runs on.

meshdoctor reads processes (MD301's ranks, MD302's live MLX processes), memory and listening
ports. Run beside a user's MLX job, a test of those would judge that job instead of what it
staged; and a rank-looking process a test plants would be seen by the user's own meshdoctor.
So each pytest-xdist worker runs as the child of an init (``dumb-init``, which reaps orphans as
pid 1 must, and forwards signals) in a new PID namespace with its own ``/proc``, a new mount
namespace and a new network namespace with only its loopback and one address of its own up
(:func:`network_up`) (util-linux ``unshare(1)``
``--pid --fork --mount-proc --net --kill-child``; as a user without root, through a user
namespace mapped to that user):

* a test sees only the processes of its own worker (what it and the tests before it in the
  same worker started), never the machine's: a user's job, a notebook holding MLX memory, a
  port another program listens on, or another worker's tests;
* a process a test plants is never an orphan on the machine: when its launcher is gone it is
  re-parented to the namespace's init, a live parent, and when the worker ends (or is killed)
  the kernel kills every process left in its namespace (pid_namespaces(7));
* at the end of each worker, :func:`leftovers` lists the processes still alive in its namespace
  (a test left them behind: each names the test that started it, from the ``PYTEST_CURRENT_TEST``
  it inherited) and :func:`leaked_netns` the network namespaces a test made and never deleted;
  ``tests/conftest.py`` fails the run naming them.

Where no namespace can be made (no ``unshare``, no ``dumb-init``, no user namespaces) or xdist
cannot run (``-p no:xdist``, ``--pdb``, ``-s``) the tests run in the pytest process itself and
the run's header says that they read this machine.
"""

from __future__ import annotations

import fcntl
import functools
import os
import shlex
import shutil
import signal
import socket
import struct
import subprocess
import sys
import time
from pathlib import Path
from typing import List, Optional, Tuple

ISOLATED_ENV = "MESHDOCTOR_TEST_ISOLATED"  # set in each isolated worker
_UNSHARE = ("--pid", "--fork", "--mount-proc", "--net", "--kill-child")


def _init() -> Optional[str]:
    here = Path(sys.executable).with_name("dumb-init")
    return str(here) if os.access(here, os.X_OK) else shutil.which("dumb-init")


@functools.lru_cache(maxsize=1)
def worker_prefix() -> Tuple[Tuple[str, ...], str]:
    """``(prefix, why)``: the command prefix that starts a worker in its own namespaces (module
    doc), tried once with ``true``; ``()`` and the reason where none can be made."""
    unshare, init = shutil.which("unshare"), _init()
    if unshare is None:
        return (), "no unshare(1) (util-linux)"
    if init is None:
        return (), "no dumb-init (pip install dumb-init: the tests' extra has it)"
    tried = []
    for user in ((), ("--user", "--map-current-user")):
        if os.geteuid() == 0 and user:
            break  # root makes the namespaces itself; a user namespace would drop its rights
        prefix = (unshare, *user, *_UNSHARE, init)
        try:
            p = subprocess.run([*prefix, "true"], capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.SubprocessError) as exc:
            tried.append(str(exc))
            continue
        if p.returncode == 0:
            return prefix, ""
        tried.append(p.stderr.strip() or f"exit {p.returncode}")
    return (), "unshare failed: " + "; ".join(tried)


def isolated_spec(spec: str, prefix: Tuple[str, ...]) -> str:
    """The xdist ``--tx`` spec ``spec`` (``popen``, ``popen//...``) with its Python started under
    ``prefix`` and :data:`ISOLATED_ENV` set; other kinds of gateway are left as they are."""
    parts = spec.split("//")
    if "popen" not in parts or any(p.startswith("python=") for p in parts):
        return spec
    python = shlex.join([*prefix, sys.executable])
    return "//".join([*parts, f"python={python}", f"env:{ISOLATED_ENV}=1"])


SELF_IF, SELF_ADDR = "mdself", "10.213.0.1/32"  # the beds use 10.213.<10..249>.0/24


def network_up() -> None:
    """Bring ``lo`` up in this (new) network namespace (SIOCGIFFLAGS then SIOCSIFFLAGS with
    IFF_UP, netdevice(7); a new network namespace starts with it down), and give it one address
    that is not a loopback one, on a veth pair of its own (``ip``, where it is there): glibc's
    getaddrinfo(3) with AI_ADDRCONFIG, as slurmctld calls it, finds no address on a namespace
    that has only ``lo``. Traffic to it never leaves the namespace."""
    siocgifflags, siocsifflags, iff_up = 0x8913, 0x8914, 0x1
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        req = struct.pack("16sH14x", b"lo", 0)
        flags = struct.unpack("16sH14x", fcntl.ioctl(s.fileno(), siocgifflags, req))[1]
        fcntl.ioctl(s.fileno(), siocsifflags, struct.pack("16sH14x", b"lo", flags | iff_up))
    if shutil.which("ip") is None:
        return
    for argv in (
        ["link", "add", SELF_IF, "type", "veth", "peer", "name", SELF_IF + "1"],
        ["addr", "add", SELF_ADDR, "dev", SELF_IF],
        ["link", "set", SELF_IF, "up"],
        ["link", "set", SELF_IF + "1", "up"],
    ):
        subprocess.run(["ip", *argv], capture_output=True, timeout=30)


def private_state() -> Path:
    """Point this worker's meshdoctor runs at state, cache and runtime directories of its own
    (``XDG_STATE_HOME``, ``XDG_CACHE_HOME``, ``XDG_RUNTIME_DIR``: the XDG Base Directory
    Specification, read by platformdirs): never the user's receipts, fix lock or MLX build
    cache, nor another worker's. A test that names its own (``MESHDOCTOR_STATE_DIR``) still
    does. Returns the directory that holds the three, for the worker to remove at its end."""
    import tempfile

    base = Path(tempfile.mkdtemp(prefix="md-worker-"))
    for var, sub in (
        ("XDG_STATE_HOME", "state"),
        ("XDG_CACHE_HOME", "cache"),
        ("XDG_RUNTIME_DIR", "run"),
    ):
        (base / sub).mkdir(mode=0o700)
        os.environ[var] = str(base / sub)
    os.environ.pop("MESHDOCTOR_STATE_DIR", None)
    return base


def _describe(pid: int) -> str:
    try:
        cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode().strip()
    except OSError:
        cmd = "?"
    test = "an unknown test"
    try:
        for item in Path(f"/proc/{pid}/environ").read_bytes().split(b"\0"):
            if item.startswith(b"PYTEST_CURRENT_TEST="):
                test = item.split(b"=", 1)[1].decode(errors="replace")
    except OSError:
        pass
    return f"pid {pid} ({cmd[:200]}), started by {test}"


def _alive_others() -> List[int]:
    me, out = os.getpid(), []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) in (1, me):
            continue
        try:
            state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if state != "Z":  # a zombie is dead; the init reaps it
            out.append(int(entry))
    return out


def leftovers(grace_s: float = 10.0) -> List[str]:
    """Every process alive in this worker's PID namespace but the init and this process, after
    waiting up to ``grace_s`` for those that are dying; each is described and then killed.
    Only meaningful in an isolated worker (its namespace holds nothing else)."""
    deadline = time.monotonic() + grace_s
    pids = _alive_others()
    while pids and time.monotonic() < deadline:
        time.sleep(0.1)
        pids = _alive_others()
    said = [_describe(pid) for pid in pids]
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    return said


def netns_mounts() -> List[str]:
    """The network namespaces (``ip netns add``'s mounts under /run/netns) of this mount
    namespace, from /proc/self/mountinfo (proc(5))."""
    try:
        lines = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return []
    return sorted(
        f.split()[4] for f in lines if len(f.split()) > 4 and f.split()[4].startswith("/run/netns/")
    )


def leaked_netns(at_start: List[str]) -> List[str]:
    """The network namespaces mounted since ``at_start`` (:func:`netns_mounts`) and still there."""
    return sorted(set(netns_mounts()) - set(at_start))
