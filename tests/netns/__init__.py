"""A real multi-host test bed: network namespaces on one bridge, each running its own sshd.

``TestBed(n)`` (a context manager) makes a Linux bridge with an address in the root namespace,
``n`` namespaces each joined to it by a veth pair, an sshd per namespace listening on the
namespace's address, a generated client key and an ``ssh_config`` naming the hosts ``h0..h{n-1}``.
Everything is removed on exit (sshd killed, namespaces and bridge deleted), even after a failure.

Needs root, ``ip`` (iproute2), ``sshd`` and ``ssh-keygen`` (openssh-server); :func:`unavailable`
says why not when it cannot run, for ``pytest.skip``. Addresses are in 10.213.<k>.0/24 and only
ever exist inside this machine.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import tempfile
import time
import uuid
from pathlib import Path
from typing import Dict, List, Optional


def unavailable() -> Optional[str]:
    """None when the test bed can run here, else the reason it cannot."""
    if os.geteuid() != 0:
        return "network-namespace test bed needs root"
    for tool in ("ip", "sshd", "ssh", "ssh-keygen"):
        if shutil.which(tool) is None and not os.path.exists(f"/usr/sbin/{tool}"):
            return (
                f"network-namespace test bed needs {tool} (apt-get install iproute2 "
                "openssh-server openssh-client)"
            )
    p = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True)
    if p.returncode != 0:
        return f"ip netns does not work here: {p.stderr.strip()}"
    return None


def _sh(*argv: str, check: bool = True, timeout: float = 20) -> subprocess.CompletedProcess:
    return subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout, check=check)


class TestBed:
    """``n`` ssh-reachable hosts in network namespaces. Attributes after ``__enter__``:
    ``hosts`` (names h0..), ``ips`` (host -> address), ``netns`` (host -> namespace name),
    ``ssh_config`` (path for ``ssh -F``), ``dir`` (scratch directory)."""

    __test__ = False  # not a pytest test class

    def __init__(
        self,
        n: int = 3,
        env_path: Optional[Dict[str, str]] = None,
        host_env: Optional[Dict[str, Dict[str, str]]] = None,
    ) -> None:
        self.n = n
        self.tag = uuid.uuid4().hex[:6]
        self.subnet = 10 + int(self.tag, 16) % 240
        self.bridge = f"mdbr{self.tag}"
        self.hosts = [f"h{i}" for i in range(n)]
        self.netns = {h: f"md-{self.tag}-{h}" for h in self.hosts}
        self.ips = {h: f"10.213.{self.subnet}.{10 + i}" for i, h in enumerate(self.hosts)}
        self.env_path = env_path or {}
        self.host_env = host_env or {}  # host -> extra SetEnv for its sshd (a fake Mac's PATH)
        self.dir = Path(tempfile.mkdtemp(prefix=f"md-testbed-{self.tag}-"))
        self.ssh_config = self.dir / "ssh_config"
        self._sshd: List[subprocess.Popen] = []

    def __enter__(self) -> "TestBed":
        try:
            self._up()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _up(self) -> None:
        d = self.dir
        _sh("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(d / "id"))
        _sh("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(d / "hostkey"))
        shutil.copy(d / "id.pub", d / "authorized_keys")
        os.makedirs("/run/sshd", exist_ok=True)
        _sh("ip", "link", "add", self.bridge, "type", "bridge")
        _sh("ip", "addr", "add", f"10.213.{self.subnet}.1/24", "dev", self.bridge)
        _sh("ip", "link", "set", self.bridge, "up")
        cfg = []
        for i, h in enumerate(self.hosts):
            ns, ip = self.netns[h], self.ips[h]
            va, vb = f"mdv{self.tag}{i}a", f"mdv{self.tag}{i}b"
            _sh("ip", "netns", "add", ns)
            _sh("ip", "link", "add", va, "type", "veth", "peer", "name", vb)
            _sh("ip", "link", "set", va, "master", self.bridge, "up")
            _sh("ip", "link", "set", vb, "netns", ns)
            _sh("ip", "-n", ns, "addr", "add", f"{ip}/24", "dev", vb)
            _sh("ip", "-n", ns, "link", "set", vb, "up")
            _sh("ip", "-n", ns, "link", "set", "lo", "up")
            conf = d / f"sshd_{h}.conf"
            # one SetEnv line (sshd keeps the first of a repeated keyword); TESTBED_HOST tells a
            # per-host wrapper which host it runs on (the namespaces share one file system);
            # each host keeps meshdoctor's state (the fix lock, receipts) in a directory of its
            # own, as separate machines do, never in the user's default one that other runs on
            # this machine share; the same for its cache folder (the meshdoctor sent over ssh)
            # and a home of its own: the login shell of every ssh session reads its rc files
            # from there, never the user's (a user's ~/.bashrc that runs `pyenv init` rewrites
            # the shared shims on each login under one lock; a session killed in it leaves the
            # lock behind and every later login on the machine waits 60 s for it)
            setenv = {
                "TESTBED_HOST": h,
                "HOME": str(self._home(h)),
                "MESHDOCTOR_STATE_DIR": str(d / f"state-{h}"),
                "XDG_CACHE_HOME": str(d / f"cache-{h}"),  # where meshdoctor is cached there
                **self.env_path,
                **self.host_env.get(h, {}),
            }
            env_lines = "SetEnv " + " ".join(f"{k}={v}" for k, v in setenv.items()) + "\n"
            conf.write_text(
                f"ListenAddress {ip}\nPort 22\nHostKey {d / 'hostkey'}\n"
                f"PidFile {d / f'sshd_{h}.pid'}\nAuthorizedKeysFile {d / 'authorized_keys'}\n"
                "PermitRootLogin yes\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n"
                "UsePAM no\nStrictModes no\nPermitUserEnvironment no\nAcceptEnv MESHDOCTOR_*\n"
                "LogLevel ERROR\nMaxStartups 50\n" + env_lines
            )
            sshd = shutil.which("sshd") or "/usr/sbin/sshd"
            # its own PID namespace too, so `ps` on a host sees only that host's processes
            self._sshd.append(
                subprocess.Popen(
                    [
                        "ip",
                        "netns",
                        "exec",
                        ns,
                        "unshare",
                        "--pid",
                        "--fork",
                        "--mount-proc",
                        sshd,
                        "-D",
                        "-e",
                        "-f",
                        str(conf),
                    ],
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    start_new_session=True,
                )
            )
            cfg.append(f"Host {h}\n  HostName {ip}\n")
        cfg.append(
            f"Host *\n  User root\n  IdentityFile {d / 'id'}\n  IdentitiesOnly yes\n"
            "  StrictHostKeyChecking no\n  UserKnownHostsFile /dev/null\n"
            "  LogLevel ERROR\n  ConnectTimeout 5\n"
        )
        self.ssh_config.write_text("".join(cfg))
        # a bound on a hang, not a latency: many sshds start slowly on a loaded box, and a CI
        # box under other tenants' load has taken over 20 s for one `ssh true`
        deadline = time.monotonic() + 120 + 5 * self.n
        for h in self.hosts:
            while True:
                try:
                    p = _sh(
                        "ssh",
                        "-F",
                        str(self.ssh_config),
                        "-o",
                        "BatchMode=yes",
                        h,
                        "true",
                        check=False,
                        timeout=60,
                    )
                except subprocess.TimeoutExpired as exc:
                    p = subprocess.CompletedProcess(exc.cmd, 255, "", "timed out")
                if p.returncode == 0:
                    break
                if time.monotonic() > deadline:
                    raise RuntimeError(
                        f"sshd on {h} ({self.ips[h]}) did not come up: {p.stderr.strip()}"
                    )
                time.sleep(0.2)

    def _home(self, host: str) -> Path:
        """``host``'s home folder: rc files that put the user's own tool folders of this
        process's PATH (those under the user's home: pyenv's shims, cargo) first, as the
        user's rc files would, and run nothing else."""
        home = self.dir / f"home-{host}"
        home.mkdir(exist_ok=True)
        mine = os.path.expanduser("~").rstrip("/") + "/"
        dirs = [p for p in os.environ.get("PATH", "").split(os.pathsep) if p.startswith(mine)]
        rc = f'export PATH={shlex.quote(os.pathsep.join(dirs))}:"$PATH"\n' if dirs else ""
        (home / ".bashrc").write_text(rc)
        (home / ".profile").write_text('. "$HOME/.bashrc"\n')
        return home

    def ssh(self, host: str, command: str, timeout: float = 20) -> subprocess.CompletedProcess:
        """Run ``command`` on ``host`` over the test bed's ssh."""
        return _sh(
            "ssh",
            "-F",
            str(self.ssh_config),
            "-o",
            "BatchMode=yes",
            host,
            command,
            check=False,
            timeout=timeout,
        )

    def sshd_pid(self, host: str) -> int:
        """The pid (in this namespace) of ``host``'s listening sshd, to stop or resume it."""
        import psutil

        wrapper = psutil.Process(self._sshd[self.hosts.index(host)].pid)
        for p in [wrapper] + wrapper.children(recursive=True):
            try:  # a session's sshd that ended between listing and reading is skipped
                if "sshd" in p.name() or any("sshd" in a for a in p.cmdline()[:1]):
                    return p.pid
            except psutil.Error:
                continue
        raise RuntimeError(f"no sshd process under the test bed's {host}")

    def link(self, host: str, up: bool) -> None:
        """Bring ``host``'s link to the bridge up or down (a cable pulled mid-run)."""
        i = self.hosts.index(host)
        _sh(
            "ip",
            "-n",
            self.netns[host],
            "link",
            "set",
            f"mdv{self.tag}{i}b",
            "up" if up else "down",
        )

    def close(self) -> None:
        """Kill every process in the namespaces, delete them and the bridge, remove files."""
        for p in self._sshd:
            try:
                os.killpg(p.pid, 9)
            except (ProcessLookupError, PermissionError):
                pass
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
        for ns in self.netns.values():
            pids = _sh("ip", "netns", "pids", ns, check=False).stdout.split()
            for pid in pids:
                try:
                    os.kill(int(pid), 9)
                except (ProcessLookupError, ValueError):
                    pass
            _sh("ip", "netns", "del", ns, check=False)
        _sh("ip", "link", "del", self.bridge, check=False)
        shutil.rmtree(self.dir, ignore_errors=True)
