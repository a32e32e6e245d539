"""``--format prometheus``: a verdict document as the Prometheus text exposition format, for
node_exporter's textfile collector (``--collector.textfile.directory``).

Rendered from the verdict's JSON document (:meth:`meshdoctor.model.Verdict.to_dict`), nothing
else. Follows the Prometheus naming and exposition rules (prometheus.io/docs/practices/naming,
prometheus.io/docs/instrumenting/exposition_formats): the ``meshdoctor_`` prefix, base units
(bytes, seconds, bytes per second), every family with ``# HELP`` and ``# TYPE``, label values
escaped (backslash, double quote, newline), no sample timestamps (node_exporter's textfile
collector refuses a file whose samples carry one: its README, "Textfile Collector"), and label
values that are names, never free text (codes, check names, hosts, statuses, ops). Every sample
carries ``command`` (check, probe, triage, fix), so one textfile directory can hold the file of
each command side by side.

The families (:data:`FAMILIES`): ``meshdoctor_info`` (version, MLX version, backend; value 1;
``mlx_version`` and ``backend`` only when the run learnt them),
``meshdoctor_verdict`` and ``meshdoctor_check_status`` (state sets: 1 for the state that holds,
0 for the others), ``meshdoctor_needs_reboot`` per host, ``meshdoctor_rdma_edges_active`` /
``_expected`` (MD404, fleet mode), ``meshdoctor_rdma_devices_active`` / ``_expected`` per
host (MD202: the devices the hostfile names for it), ``meshdoctor_wired_memory_bytes`` per host (MD302 on macOS),
``meshdoctor_probe_busbw_bytes_per_second`` / ``_algbw_...`` / ``meshdoctor_probe_wrong_values``
/ ``meshdoctor_probe_checked_values`` per op, ``meshdoctor_last_run_timestamp_seconds`` (the
run's start, Unix time) and ``meshdoctor_last_run_duration_seconds``.

The per-host and mesh values come from what the checks export (:data:`meshdoctor.model.EXPORTS`,
read with :func:`meshdoctor.discover.exported`): this module names no check.
"""

from __future__ import annotations

import datetime as _dt
import math
from typing import Any, Dict, Iterable, List, Optional, Tuple

from meshdoctor.discover import exported
from meshdoctor.model import STATUSES
from meshdoctor.text import printable

VERDICTS = ("go", "no-go", "unknown")
_WORST = ("fail", "error", "warn", "ok", "skip")  # the status a check shows: its worst result

Labels = Tuple[Tuple[str, str], ...]
Sample = Tuple[Labels, float]

# name -> help; every family is a gauge (a value of the last run, not a counter)
FAMILIES: Dict[str, str] = {
    "meshdoctor_info": "meshdoctor's version, the MLX version and the backend of the last run "
    "(value 1; a label the run did not learn is left out).",
    "meshdoctor_verdict": "Verdict of the last run: 1 for the verdict it gave (go, no-go, "
    "unknown), 0 for the others.",
    "meshdoctor_exit_code": "Exit code of the last run by meshdoctor's contract (0 go, 1 no-go, "
    "3 unknown).",
    "meshdoctor_check_status": "Status of each check on each host in the last run: 1 for its "
    "worst result's status, 0 for the others.",
    "meshdoctor_needs_reboot": "1 when the last run found that the host needs a reboot.",
    "meshdoctor_rdma_edges_active": "RDMA edges active on both ends (MD404, check with a "
    "hostfile).",
    "meshdoctor_rdma_edges_expected": "RDMA edges the hostfile names (MD404, check with a "
    "hostfile).",
    "meshdoctor_rdma_devices_active": "RDMA devices the hostfile names for this host that are "
    "PORT_ACTIVE (MD202, check with a hostfile).",
    "meshdoctor_rdma_devices_expected": "RDMA devices the hostfile names for this host (MD202, "
    "check with a hostfile).",
    "meshdoctor_wired_memory_bytes": "Wired memory of the host in bytes (MD302, macOS vm_stat).",
    "meshdoctor_probe_busbw_bytes_per_second": "Bus bandwidth of each probed op in bytes per "
    "second (nccl-tests doc/PERFORMANCE.md).",
    "meshdoctor_probe_algbw_bytes_per_second": "Algorithm bandwidth of each probed op in bytes "
    "per second (nccl-tests doc/PERFORMANCE.md).",
    "meshdoctor_probe_wrong_values": "Values that arrived wrong in each probed op, over all "
    "ranks and iterations.",
    "meshdoctor_probe_checked_values": "Values checked in each probed op, over all ranks and "
    "iterations.",
    "meshdoctor_last_run_timestamp_seconds": "Start of the last run, Unix time in seconds.",
    "meshdoctor_last_run_duration_seconds": "Wall time of the last run in seconds.",
}


def escape_label(value: str) -> str:
    """A label value as the text exposition format writes it: control and bidirectional
    characters made visible first (:func:`meshdoctor.text.printable`: ``\\x1b``, ``\\u202e``;
    a label is shown in dashboards and terminals), then backslash, double quote and line feed
    escaped (``\\\\``, ``\\"``, ``\\n``)."""
    return printable(value).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _escape_help(text: str) -> str:
    return text.replace("\\", "\\\\").replace("\n", "\\n")


def _value(v: float) -> str:
    if isinstance(v, bool):
        return "1" if v else "0"
    if isinstance(v, int):
        return str(v)
    return repr(float(v))


def _epoch(iso: str) -> Optional[float]:
    try:
        return _dt.datetime.fromisoformat(iso).timestamp()
    except (TypeError, ValueError):
        return None


def _number(v: Any) -> Optional[float]:
    """``v`` when it is a finite number (not a bool), else None."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    return v if math.isfinite(v) else None


def _mlx_version(doc: Dict[str, Any]) -> str:
    """The MLX version the run learnt: the MLX build check's (MD102), else the one the probe's
    ranks reported when they were ready (``probe.ranks[].mlx``; several, comma-separated, when
    the ranks disagree), else ""."""
    for r in doc.get("results", []):
        v = exported(r, "mlx_version")
        if isinstance(v, str) and v:
            return v
    ranks = (doc.get("probe") or {}).get("ranks") or []
    seen = sorted(
        {r["mlx"] for r in ranks if isinstance(r, dict) and isinstance(r.get("mlx"), str)}
    )
    return ",".join(v for v in seen if v)


def _backend(doc: Dict[str, Any]) -> str:
    """The probe's backend, else the fleet's, else the hostfile's (MD401's evidence), else ""."""
    for section in ("probe", "fleet"):
        b = (doc.get(section) or {}).get("backend")
        if isinstance(b, str):
            return b
    for r in doc.get("results", []):
        b = exported(r, "backend")
        if isinstance(b, str):
            return b
    return ""


def samples(doc: Dict[str, Any]) -> Dict[str, List[Sample]]:
    """The samples of each family of :data:`FAMILIES` for the verdict document ``doc``: family
    name -> [(labels, value)] (a family with nothing to say has no samples)."""
    cmd = (("command", str(doc.get("command", ""))),)
    out: Dict[str, List[Sample]] = {name: [] for name in FAMILIES}
    tool = doc.get("tool") or {}
    # a label the run did not learn is left out, never written empty (Prometheus data model:
    # an empty label value is the same as no label, prometheus.io/docs/concepts/data_model)
    known = (("mlx_version", _mlx_version(doc)), ("backend", _backend(doc)))
    info = (("version", str(tool.get("version", ""))),) + tuple(kv for kv in known if kv[1])
    out["meshdoctor_info"].append((cmd + info, 1))
    for v in VERDICTS:
        out["meshdoctor_verdict"].append((cmd + (("verdict", v),), int(doc.get("verdict") == v)))
    if _number(doc.get("exit_code")) is not None:
        out["meshdoctor_exit_code"].append((cmd, doc["exit_code"]))
    worst: Dict[Tuple[str, str, str], str] = {}
    for r in doc.get("results", []):
        key = (str(r.get("host", "")), str(r.get("code", "")), str(r.get("check", "")))
        status = r.get("status", "error")
        if key not in worst or _WORST.index(status) < _WORST.index(worst[key]):
            worst[key] = status
    for (host, code, check), status in worst.items():
        for s in STATUSES:
            labels = cmd + (("host", host), ("code", code), ("check", check), ("status", s))
            out["meshdoctor_check_status"].append((labels, int(s == status)))
    reboot = set(doc.get("needs_reboot") or [])
    hosts = list(dict.fromkeys([h.get("host", "") for h in doc.get("hosts", [])] + sorted(reboot)))
    for h in hosts:
        out["meshdoctor_needs_reboot"].append((cmd + (("host", str(h)),), int(h in reboot)))
    _edges(doc, cmd, out)
    _wired(doc, cmd, out)
    _probe(doc, cmd, out)
    started = _epoch(doc.get("started_at", ""))
    if started is not None:
        out["meshdoctor_last_run_timestamp_seconds"].append((cmd, started))
    if _number(doc.get("duration_s")) is not None:
        out["meshdoctor_last_run_duration_seconds"].append((cmd, doc["duration_s"]))
    return out


def _edges(doc: Dict[str, Any], cmd: Labels, out: Dict[str, List[Sample]]) -> None:
    seen = set()
    for r in doc.get("results", []):  # each host's named devices (MD202)
        e = exported(r, "named_devices")
        host = str(r.get("host", ""))
        if not isinstance(e, dict) or host in seen:
            continue
        active, expected = _number(e.get("active")), _number(e.get("named"))
        if active is not None and expected is not None:
            seen.add(host)
            out["meshdoctor_rdma_devices_active"].append((cmd + (("host", host),), active))
            out["meshdoctor_rdma_devices_expected"].append((cmd + (("host", host),), expected))
    for r in doc.get("results", []):  # the mesh's (MD404)
        m = exported(r, "edge_matrix")
        if isinstance(m, dict) and _number(m.get("active")) is not None:
            out["meshdoctor_rdma_edges_active"].append((cmd, m["active"]))
            if _number(m.get("total")) is not None:
                out["meshdoctor_rdma_edges_expected"].append((cmd, m["total"]))
            return


def _wired(doc: Dict[str, Any], cmd: Labels, out: Dict[str, List[Sample]]) -> None:
    seen = set()
    for r in doc.get("results", []):
        b = _number(exported(r, "wired_bytes"))
        host = str(r.get("host", ""))
        if b is not None and host not in seen:
            seen.add(host)
            out["meshdoctor_wired_memory_bytes"].append((cmd + (("host", host),), b))


def _probe(doc: Dict[str, Any], cmd: Labels, out: Dict[str, List[Sample]]) -> None:
    probe = doc.get("probe") or {}
    seen = set()
    for op in probe.get("ops") or []:
        name = op.get("op")
        if not isinstance(name, str) or name in seen or op.get("skipped"):
            continue
        seen.add(name)
        labels = cmd + (("op", name),)
        for key, family, scale in (
            ("busbw_gbs", "meshdoctor_probe_busbw_bytes_per_second", 1e9),
            ("algbw_gbs", "meshdoctor_probe_algbw_bytes_per_second", 1e9),
            ("wrong", "meshdoctor_probe_wrong_values", 1),
            ("checked", "meshdoctor_probe_checked_values", 1),
        ):
            v = _number(op.get(key))
            if v is not None:
                out[family].append((labels, v * scale if scale != 1 else v))


def _line(name: str, labels: Labels, value: float) -> str:
    inner = ",".join(f'{k}="{escape_label(v)}"' for k, v in labels)
    return f"{name}{{{inner}}} {_value(value)}" if inner else f"{name} {_value(value)}"


def lines(families: Dict[str, List[Sample]]) -> Iterable[str]:
    """The exposition lines of ``families`` (:func:`samples`): ``# HELP``, ``# TYPE gauge`` and
    the samples of each family that has any."""
    for name, help_text in FAMILIES.items():
        got = families.get(name) or []
        if not got:
            continue
        yield f"# HELP {name} {_escape_help(help_text)}"
        yield f"# TYPE {name} gauge"
        for labels, value in got:
            yield _line(name, labels, value)


def render(doc: Dict[str, Any]) -> str:
    """The verdict document ``doc`` as a node_exporter textfile (text exposition format 0.0.4,
    ending in a newline)."""
    return "\n".join(lines(samples(doc))) + "\n"
