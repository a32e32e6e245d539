"""A fake Mac mesh on the network-namespace test bed: every host its own Mac.

:class:`MacMesh` writes, for each host of a :class:`tests.netns.TestBed`, a fixture set generated
from one cabling plan (formats as in tests/fixtures/mac/healthy, served by tests/stubs.py):
``system_profiler`` ports whose peers are the other hosts' port UUIDs, ``networksetup``,
``ifconfig`` with one /30 per cable (as mlx.distributed_config --auto-setup), ``ibv_devices`` and
``ibv_devinfo -v`` with each cabled port PORT_ACTIVE and its IPv4-mapped GID, plus a fake ``mlx``
package (a Mac's MLX cannot run here) whose version and JACCL progress guard vary per host.

Hosts run meshdoctor through one wrapper interpreter (``python`` attribute, for ``--python``)
that reads ``$TESTBED_HOST`` (set by each host's sshd) and sources that host's ``env.sh``: its
stub PATH, MESHDOCTOR_PLATFORM=darwin, its fake mlx, its variables, or an interpreter without
meshdoctor. :meth:`MacMesh.write` rewrites everything, so one bed serves many tests.
"""

from __future__ import annotations

import json
import shlex
import shutil
import sys
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Sequence, Set, Tuple

from tests import stubs

End = Tuple[int, int]  # (host index, receptacle number)
NO_MESHDOCTOR_PY = "/usr/bin/python3"


def port_uuid(i: int, r: int) -> str:
    return f"{i + 1:08X}-AAAA-4BBB-8CCC-{r:012X}"


def iface(r: int) -> str:
    return f"en{r + 1}"  # Thunderbolt r -> en(r+1), as in the healthy fixture


def default_cables(n: int, pair_cables: int = 2) -> List[Tuple[End, End]]:
    """A full mesh: host i reaches peer j on receptacle (index of j among the others) + 1; the
    pair h0-h1 has a second cable on receptacle 6 at both ends."""
    out = []
    for i in range(n):
        for j in range(i + 1, n):
            ri = [x for x in range(n) if x != i].index(j) + 1
            rj = [x for x in range(n) if x != j].index(i) + 1
            out.append(((i, ri), (j, rj)))
    if pair_cables == 2 and n >= 2:
        out.append(((0, 6), (1, 6)))
    return out


def hostfile_rows(n: int, pair_cables: int = 2) -> List[list]:
    rows = []
    for i in range(n):
        row: list = []
        for j in range(n):
            if j == i:
                row.append(None)
                continue
            r = [x for x in range(n) if x != i].index(j) + 1
            dev = f"rdma_{iface(r)}"
            row.append([dev, f"rdma_{iface(6)}"] if pair_cables == 2 and {i, j} == {0, 1} else dev)
        rows.append(row)
    return rows


def _devinfo(dev: str, active: bool, ip: Optional[str], k: int) -> str:
    lines = [
        f"hca_id:\t{dev}",
        "\ttransport:\t\t\tThunderbolt (100)",
        f"\tnode_guid:\t\t\t3a1f:c2ff:fe0{k}:1a0{k}",
        f"\tsys_image_guid:\t\t\t3a1f:c2ff:fe0{k}:1a0{k}",
        "\tvendor_id:\t\t\t0x0000",
        "\tvendor_part_id:\t\t\t0",
        "\thw_ver:\t\t\t\t0x0",
        "\tphys_port_cnt:\t\t\t1",
        "\tmax_qp:\t\t\t\t256",
        "\tmax_qp_wr:\t\t\t1024",
        "\tmax_cq:\t\t\t\t256",
        "\tmax_cqe:\t\t\t4096",
        "\tmax_mr:\t\t\t\t4096",
        "\tmax_pd:\t\t\t\t64",
        "\t\tport:\t1",
        "\t\t\tstate:\t\t\t" + ("PORT_ACTIVE (4)" if active else "PORT_DOWN (1)"),
        "\t\t\tmax_mtu:\t\t4096 (5)",
        "\t\t\tactive_mtu:\t\t1024 (3)",
        "\t\t\tsm_lid:\t\t\t0",
        "\t\t\tport_lid:\t\t0",
        "\t\t\tport_lmc:\t\t0x00",
        "\t\t\tlink_layer:\t\tThunderbolt",
        "\t\t\tgid_tbl_len:\t\t16",
    ]
    if active:
        lines.append(f"\t\t\tGID[  0]:\t\tfe80::32a1:c2ff:fe0{k}:1a0{k}")
        if ip:
            lines.append(f"\t\t\tGID[  1]:\t\t::ffff:{ip}")
    return "\n".join(lines) + "\n"


def route_get(ip: str, iface: str, gateway: Optional[str] = None) -> str:
    """``route -n get IP`` as macOS route(8) prints it (tests/fixtures/mac/route-formats)."""
    lines = [f"   route to: {ip}", f"destination: {ip if gateway is None else 'default'}"]
    if gateway is not None:
        lines += ["       mask: default", f"    gateway: {gateway}"]
    lines += [
        f"  interface: {iface}",
        "      flags: <UP,HOST,DONE,LLINFO,WASCLONED,IFSCOPE,IFREF>"
        if gateway is None
        else "      flags: <UP,GATEWAY,DONE,STATIC,PRCLONING,GLOBAL>",
        " recvpipe  sendpipe  ssthresh  rtt,msec    rttvar  hopcount      mtu     expire",
        "       0         0         0         0         0         0      1500         0",
    ]
    return "\n".join(lines) + "\n"


FAKE_MLX = """__version__ = {version!r}


class _Distributed:
    @staticmethod
    def is_available(backend="any"):
        return backend in ("any", "ring", "jaccl")


distributed = _Distributed()


def device_info():
    return {{"max_recommended_working_set_size": 400 * 2 ** 30}}
"""


SHELL_STUB = """#!/bin/sh
# serves {fix}/<cmd>__<args>.txt or <cmd>.txt like tests/stubcmd.py, without a Python start
k={cmd}; sep=__
for a in "$@"; do
  while [ "${{a#-}}" != "$a" ]; do a=${{a#-}}; done
  case "$a" in */*) a=$(printf %s "$a" | tr / _) ;; esac
  k="$k$sep$a"; sep=_
done
for f in "{fix}/$k.txt" "{fix}/{cmd}.txt"; do
  if [ -f "$f" ]; then cat "$f"; exit 0; fi
done
echo "{cmd}: command not found (no fixture)" >&2
exit 127
"""


def _shell_stubs(bindir: Path, fixdir: Path) -> None:
    for cmd in stubs.MAC_COMMANDS:
        (bindir / cmd).write_text(SHELL_STUB.format(cmd=cmd, fix=fixdir))


class MacMesh:
    """Per-host fake Macs on ``bed`` (a started :class:`tests.netns.TestBed`)."""

    def __init__(self, bed, fast_stubs: bool = False) -> None:
        self.bed = bed
        self.fast_stubs = fast_stubs  # shell stubs (cat a file): cheap, no .hang/.exit files
        self.n = len(bed.hosts)
        self.root = bed.dir / "macs"
        self.root.mkdir(exist_ok=True)
        self._routes: Dict[str, Dict[str, str]] = {}
        self.python = str(bed.dir / "mdpython")
        Path(self.python).write_text(
            "#!/bin/sh\n"
            f'. {shlex.quote(str(self.root))}/"$TESTBED_HOST"/env.sh\n'
            f'exec "${{MD_PY:-{sys.executable}}}" "$@"\n'
        )
        Path(self.python).chmod(0o755)

    def write(
        self,
        *,
        cables: Optional[Sequence[Tuple[End, End]]] = None,
        down: Optional[Dict[str, Iterable[str]]] = None,
        mlx: Optional[Dict[str, Tuple[str, bool]]] = None,
        env: Optional[Dict[str, Dict[str, str]]] = None,
        no_meshdoctor: Iterable[str] = (),
        sets: Optional[Dict[str, Sequence[str]]] = None,
        routes: Optional[Dict[str, Dict[str, str]]] = None,
    ) -> None:
        """Write every host's Mac. ``cables``: the physical plan (default :func:`default_cables`);
        ``down``: host -> devices to show PORT_DOWN; ``mlx``: host -> (version, has guard)
        (default 0.32.1 with the guard); ``env``: host -> exported variables;
        ``no_meshdoctor``: hosts whose interpreter lacks meshdoctor; ``sets``: host -> fixture
        sets of tests/fixtures/mac layered over "healthy" (e.g. ``["wired-leftover"]``);
        ``routes``: host -> {address: interface} its ``route -n get`` answers (default: a
        peer's Thunderbolt address through the local end of that cable, anything else en0)."""
        cables = list(cables if cables is not None else default_cables(self.n))
        self.cable_ips: Dict[End, str] = {}
        down = {h: set(v) for h, v in (down or {}).items()}
        mlx, env, missing = mlx or {}, env or {}, set(no_meshdoctor)
        peer: Dict[End, End] = {}
        ip: Dict[End, str] = {}
        for c, (a, b) in enumerate(cables):
            peer[a], peer[b] = b, a
            ip[a], ip[b] = f"192.168.{100 + c}.1", f"192.168.{100 + c}.2"
        self.cable_ips = dict(ip)
        for i, h in enumerate(self.bed.hosts):
            routes_h = {
                a: iface(peer[(j, r)][1])
                for (j, r), a in ip.items()
                if j != i and peer[(j, r)][0] == i
            }
            for other, a in self.bed.ips.items():
                if other != h:
                    routes_h.setdefault(a, "en0")
            for (j, _r), a in ip.items():
                if j != i:
                    routes_h.setdefault(a, "en0")
            routes_h.update((routes or {}).get(h, {}))
            self._routes[h] = routes_h
            self._host(
                i,
                h,
                peer,
                ip,
                down.get(h, set()),
                mlx.get(h, ("0.32.1", True)),
                env.get(h, {}),
                h in missing,
                list((sets or {}).get(h, ())),
            )

    def _host(
        self,
        i: int,
        h: str,
        peer: Dict[End, End],
        ip: Dict[End, str],
        down: Set[str],
        mlx: Tuple[str, bool],
        env: Dict[str, str],
        missing: bool,
        sets: Sequence[str] = (),
    ) -> None:
        d = self.root / h
        if d.exists():
            shutil.rmtree(d)
        d.mkdir(parents=True)
        buses, hw, ifc, devs, info = (
            [],
            [
                "",
                "Hardware Port: Ethernet",
                "Device: en0",
                "Ethernet Address: 3c:a6:f6:12:34:50",
                "",
                "Hardware Port: Thunderbolt Bridge",
                "Device: bridge0",
                "Ethernet Address: 36:a1:c2:00:1a:00",
                "",
            ],
            [],
            [],
            [],
        )
        ifc.append(
            "lo0: flags=8049<UP,LOOPBACK,RUNNING,MULTICAST> mtu 16384\n"
            "\tinet 127.0.0.1 netmask 0xff000000\n"
        )
        for r in range(1, 7):
            e, dev = iface(r), f"rdma_{iface(r)}"
            bus = {
                "_name": f"thunderboltusb4_bus_{r - 1}",
                "domain_uuid_key": port_uuid(i, r),
                "receptacle_1_tag": {"receptacle_id_key": str(r)},
            }
            other = peer.get((i, r))
            if other is not None:
                bus["receptacle_1_tag"].update(
                    current_speed_key="80 Gb/s", receptacle_status_key="receptacle_connected"
                )
                bus["_items"] = [{"_name": "Mac Studio", "domain_uuid_key": port_uuid(*other)}]
            else:
                bus["receptacle_1_tag"].update(
                    current_speed_key="Up to 120 Gb/s",
                    receptacle_status_key="receptacle_no_devices_connected",
                )
            buses.append(bus)
            hw += [
                f"Hardware Port: Thunderbolt {r}",
                f"Device: {e}",
                f"Ethernet Address: 36:a1:c2:00:1a:0{r + 1}",
                "",
            ]
            my_ip = ip.get((i, r))
            block = (
                f"{e}: flags=8863<UP,BROADCAST,SMART,RUNNING,SIMPLEX,MULTICAST> mtu 1500\n"
                f"\tether 36:a1:c2:00:1a:0{r + 1}\n"
            )
            if my_ip:
                block += f"\tinet {my_ip} netmask 0xfffffffc broadcast 192.168.255.255\n"
            block += f"\tstatus: {'active' if other is not None else 'inactive'}\n"
            ifc.append(block)
            devs.append(f"    {dev:<16}\t3a1fc2fffe0{r + 1}1a0{r + 1}")
            info.append(_devinfo(dev, other is not None and dev not in down, my_ip, r + 1))
        ifc.append(
            "bridge0: flags=8822<BROADCAST,SMART,SIMPLEX,MULTICAST> mtu 1500\n\tstatus: inactive\n"
        )
        hw += ["VLAN Configurations", "==================="]
        extra = {
            "system_profiler__SPThunderboltDataType_json.txt": json.dumps(
                {"SPThunderboltDataType": buses}, indent=1
            ),
            "networksetup__listallhardwareports.txt": "\n".join(hw) + "\n",
            "ifconfig.txt": "".join(ifc),
            "ibv_devices.txt": "    device          \t   node GUID\n    ------          \t"
            "----------------\n" + "\n".join(devs) + "\n",
            "ibv_devinfo__v.txt": "\n".join(info),
        }
        for a, via in self._routes.get(h, {}).items():
            extra[f"route__n_get_{a}.txt"] = route_get(a, via)
        stubs.install(d / "bin", ["healthy", *sets], extra=extra)
        if self.fast_stubs:
            _shell_stubs(d / "bin", d / "bin-fixtures")
        lib = d / "pylib" / "mlx"
        (lib / "core").mkdir(parents=True)
        (lib / "lib").mkdir()
        (lib / "__init__.py").write_text("")
        (lib / "core" / "__init__.py").write_text(FAKE_MLX.format(version=mlx[0]))
        (lib / "lib" / "libmlx.dylib").write_bytes(
            b"\x00libmlx\x00" + (b"JACCL_PROGRESS_TIMEOUT_MS\x00" if mlx[1] else b"")
        )
        lines = [
            f'export PATH={shlex.quote(str(d / "bin"))}:"$PATH"',
            "export MESHDOCTOR_PLATFORM=darwin",
            f"export PYTHONPATH={shlex.quote(str(d / 'pylib'))}",
        ]
        lines += [f"export {k}={shlex.quote(v)}" for k, v in env.items()]
        if missing:
            lines.append(f"MD_PY={NO_MESHDOCTOR_PY}")
        (d / "env.sh").write_text("\n".join(lines) + "\n")

    def hostfile(self, path: Path, backend: str = "jaccl", envs: Sequence[str] = ()) -> Path:
        rows = hostfile_rows(self.n)
        path.write_text(
            json.dumps(
                {
                    "backend": backend,
                    "envs": list(envs),
                    "hosts": [
                        {"ssh": h, "ips": [self.bed.ips[h]], "rdma": rows[i]}
                        for i, h in enumerate(self.bed.hosts)
                    ],
                },
                indent=1,
            )
        )
        return path
