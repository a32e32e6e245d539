"""A real single-node Slurm for the tests: munged, slurmctld and slurmd of this machine's
Debian ``slurm-wlm`` and ``munge`` packages, started by the test as its own processes.

``SlurmBed()`` (a context manager) makes a private directory with its own munge key and socket,
a ``slurm.conf`` (``proctrack/linuxproc``, ``task/none``, no cgroups, ``select/cons_tres``; one
node, this machine's short host name, at 127.0.0.1 with 4 CPUs declared, ports chosen free),
its own StateSaveLocation, SlurmdSpoolDir, pid and log files, starts the three daemons in the
foreground and waits for the node to register (idle, or drained by a health check). ``env`` (``SLURM_CONF``) is what a client command
(srun, scontrol, sinfo) needs to reach it. On exit every job of the bed is cancelled and the
daemons it started are stopped, even after a failure; the directory is removed.

Needs root (SlurmUser=root) and the packages (``apt-get install slurm-wlm munge``):
:func:`unavailable` says why not when it cannot run, for ``pytest.skip``. A bed that cannot
start although both are there raises with the daemons' logs: that is a defect to see, never a
skip.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Dict, List, Optional

DAEMONS = ("munged", "slurmctld", "slurmd")
CLIENTS = ("srun", "scontrol", "sinfo", "scancel")
START_S = 90.0  # generous: a loaded 2-core box registers the node in a few seconds


def _find(tool: str) -> Optional[str]:
    return shutil.which(tool) or next(
        (p for p in (f"/usr/sbin/{tool}", f"/usr/bin/{tool}") if os.access(p, os.X_OK)), None
    )


def unavailable() -> Optional[str]:
    """None when the Slurm bed can run here, else the reason it cannot."""
    if os.geteuid() != 0:
        return "the Slurm test bed needs root (SlurmUser=root, its own munged)"
    for tool in DAEMONS + CLIENTS:
        if _find(tool) is None:
            return f"the Slurm test bed needs {tool} (apt-get install slurm-wlm munge)"
    return None


def node_name() -> str:
    """This machine's short host name: the bed's one node (``hostname -s``)."""
    return socket.gethostname().split(".")[0]


def _free_ports(n: int) -> List[int]:
    socks = []
    try:
        for _ in range(n):
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


class SlurmBed:
    """One Slurm controller and node of this machine (see module doc). Attributes after
    ``__enter__``: ``dir``, ``conf`` (the slurm.conf path), ``node`` (the node name), ``env``
    (``os.environ`` plus ``SLURM_CONF``), ``logs()`` (the daemons' log tails)."""

    __test__ = False

    def __init__(self, extra_conf: str = "") -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="md-slurm-"))
        os.chmod(self.dir, 0o755)  # munged wants its socket's directories searchable
        self.conf = self.dir / "slurm.conf"
        self.node = node_name()
        self.extra_conf = extra_conf
        self.env: Dict[str, str] = dict(os.environ, SLURM_CONF=str(self.conf))
        self.procs: Dict[str, subprocess.Popen] = {}

    def __enter__(self) -> "SlurmBed":
        try:
            self._up()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # --- start --------------------------------------------------------------------------------
    def _write_conf(self) -> None:
        d = self.dir
        for sub in ("state", "spool", "log", "run"):
            (d / sub).mkdir()
        key = d / "munge.key"
        key.write_bytes(os.urandom(1024))
        key.chmod(0o600)
        (d / "plugstack.conf").write_text("")
        ctld_port, d_port = _free_ports(2)
        self.conf.write_text(
            f"""ClusterName=md{os.getpid()}
SlurmctldHost={self.node}(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort={ctld_port}
SlurmdPort={d_port}
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={d}/run/munge.sock
StateSaveLocation={d}/state
SlurmdSpoolDir={d}/spool
SlurmctldPidFile={d}/run/slurmctld.pid
SlurmdPidFile={d}/run/slurmd.pid
SlurmctldLogFile={d}/log/slurmctld.log
SlurmdLogFile={d}/log/slurmd.log
PlugStackConfig={d}/plugstack.conf
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
ReturnToService=2
SchedulerType=sched/builtin
{self.extra_conf}
NodeName={self.node} NodeAddr=127.0.0.1 CPUs=4 State=UNKNOWN
PartitionName=debug Nodes={self.node} Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
"""
        )

    def _start(self, name: str, argv: List[str]) -> None:
        out = open(self.dir / "log" / f"{name}.out", "wb")
        try:
            self.procs[name] = subprocess.Popen(
                argv,
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env=self.env,
                start_new_session=True,
            )
        finally:
            out.close()

    def _up(self) -> None:
        self._write_conf()
        d = self.dir
        self._start(
            "munged",
            [
                _find("munged"),
                "-F",
                "-f",
                f"--key-file={d}/munge.key",
                f"--socket={d}/run/munge.sock",
                f"--pid-file={d}/run/munged.pid",
                f"--seed-file={d}/munge.seed",
                f"--log-file={d}/log/munged.log",
            ],
        )
        self._wait(lambda: (d / "run" / "munge.sock").exists(), "munged's socket")
        self._start("slurmctld", [_find("slurmctld"), "-D", "-f", str(self.conf)])
        self._wait(lambda: self.sh("scontrol", "ping").returncode == 0, "slurmctld to answer")
        self._start("slurmd", [_find("slurmd"), "-D", "-f", str(self.conf), "-N", self.node])
        self._wait(self._registered, f"node {self.node} to register")

    def _registered(self) -> bool:
        """slurmd has registered the node: idle, or drained by a HealthCheckProgram that ran
        before it registered (slurm.conf(5)); sinfo marks a node not responding with ``*``."""
        st = self.state()
        return bool(st) and not st.endswith("*") and not st.startswith(("unk", "down"))

    def _wait(self, cond, what: str) -> None:
        deadline = time.monotonic() + START_S
        while not cond():
            dead = [n for n, p in self.procs.items() if p.poll() is not None]
            if dead or time.monotonic() > deadline:
                why = f"{', '.join(dead)} exited" if dead else f"{START_S:.0f} s passed"
                raise RuntimeError(
                    f"the Slurm bed did not start: waiting for {what}, {why}\n{self.logs()}"
                )
            time.sleep(0.2)

    # --- use ----------------------------------------------------------------------------------
    def sh(
        self, *argv: str, timeout: float = 30, env: Optional[Dict[str, str]] = None
    ) -> subprocess.CompletedProcess:
        """Run a Slurm client command against this bed (text, captured, under ``timeout``;
        ``env``: instead of :attr:`env`, which it must extend with ``SLURM_CONF``)."""
        return subprocess.run(
            list(argv),
            capture_output=True,
            text=True,
            timeout=timeout,
            env=self.env if env is None else env,
            stdin=subprocess.DEVNULL,
        )

    def state(self) -> str:
        """The node's state as ``sinfo`` prints it (``idle``, ``drained``, ``idle*``...)."""
        p = self.sh("sinfo", "-h", "-N", "-n", self.node, "-o", "%T", timeout=15)
        return p.stdout.strip() if p.returncode == 0 else ""

    def node_info(self) -> Dict[str, str]:
        """``State`` and ``Reason`` of the node as ``scontrol show node`` gives them."""
        p = self.sh("scontrol", "show", "node", self.node)
        out: Dict[str, str] = {}
        for line in p.stdout.splitlines():
            line = line.strip()
            if line.startswith("State="):
                out["State"] = line.split()[0][len("State=") :]
            elif line.startswith("Reason="):
                out["Reason"] = line[len("Reason=") :]
        return out

    def drain(self, reason: str) -> None:
        """Drain the node as an operator would."""
        p = self.sh(
            "scontrol", "update", f"NodeName={self.node}", "State=DRAIN", f"Reason={reason}"
        )
        assert p.returncode == 0, p.stderr

    def resume(self) -> None:
        """Resume the node (whoever drained it) and wait until it is idle again."""
        self.sh("scontrol", "update", f"NodeName={self.node}", "State=RESUME")
        self._wait(lambda: self.state() == "idle", f"node {self.node} to be idle again")

    def logs(self) -> str:
        """The last lines of every daemon log of the bed."""
        parts = []
        for f in sorted((self.dir / "log").glob("*")):
            try:
                text = f.read_text(errors="replace").splitlines()[-15:]
            except OSError:
                continue
            parts.append(f"--- {f.name}\n" + "\n".join(text))
        return "\n".join(parts)

    # --- stop ---------------------------------------------------------------------------------
    def close(self) -> None:
        """Cancel the bed's jobs, stop the daemons it started (SIGTERM, then SIGKILL), remove
        its directory."""
        if "slurmctld" in self.procs and self.procs["slurmctld"].poll() is None:
            try:
                self.sh("scancel", "--full", "--quiet", "-u", "root", timeout=15)
            except (OSError, subprocess.TimeoutExpired):
                pass
        for name in reversed(DAEMONS):
            p = self.procs.get(name)
            if p is None or p.poll() is not None:
                continue
            p.terminate()
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait(timeout=10)
        shutil.rmtree(self.dir, ignore_errors=True)
