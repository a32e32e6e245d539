"""MD113 GPU health: memory errors, NVLink links, PCIe link and clock slowdowns, per GPU.

Sources (NVML API reference, nvidia-smi manual, NVIDIA GPU memory error management guide):
volatile uncorrected ECC errors since the last driver load (nvmlDeviceGetTotalEccErrors) mean
data was corrupted; retired pages pending (nvmlDeviceGetRetiredPagesPendingStatus) and row
remapping pending (nvmlDeviceGetRemappedRows, A100 and later) take effect only after a GPU reset;
a failed row remapping means the GPU should be serviced. NVLink state per link
(nvmlDeviceGetNvLinkState) and its error counters (recovery judged; replay and CRC recorded);
PCIe current against
maximum generation and width (a GPU lowers its link generation when idle, so generation is judged
only in performance state P0); clock event reasons for power and heat
(nvmlDeviceGetCurrentClocksEventReasons).
"""

from __future__ import annotations

from typing import Any, Dict, List

from meshdoctor.checker.model import Check, Doc, Finding, fail, ok, warn
from meshdoctor.facts.context import NodeContext
from meshdoctor.checks._gpu import gpus_or_finding
from meshdoctor.facts.nvml import throttle_names
from meshdoctor.text import shell_line


def _links(snap):
    """Per GPU: (active link numbers, down link numbers, degraded {link: errors}, links active
    on the best GPU). A GPU with fewer active links than another GPU of this host has its
    inactive links down. A link is degraded when it went through recovery (the link retrained):
    replay and CRC counters grow slowly on healthy links (2 idle H200s here showed 3 to 36 CRC
    data errors per link) and NVIDIA judges them as a rate over time (DCGM), so they are only
    reported in the evidence."""
    gpus = [g for g in snap["gpus"] if "unreadable" not in g]
    expected = max((sum(1 for ln in g.get("nvlink", []) if ln["active"]) for g in gpus), default=0)
    out = {}
    for g in gpus:
        links = g.get("nvlink", [])
        active = [ln["link"] for ln in links if ln["active"]]
        down = (
            [ln["link"] for ln in links if not ln["active"]]
            if expected and len(active) < expected
            else []
        )
        degraded = {
            ln["link"]: {k: v for k, v in ln["errors"].items() if k == "recovery" and v}
            for ln in links
            if ln["active"]
        }
        out[g["index"]] = (active, down, {k: v for k, v in degraded.items() if v}, expected)
    return out


def _memory(g: Dict[str, Any], tag: str, reset: str) -> List[Finding]:
    """The rules on GPU memory: uncorrected ECC errors, page retirement and row remapping."""
    out: List[Finding] = []
    i = g["index"]
    ecc = g.get("ecc_volatile_uncorrected")
    if ecc:
        out.append(
            fail(
                f"{tag}: {ecc} volatile uncorrected ECC error(s) since the driver "
                "loaded: data on this GPU was corrupted",
                evidence={"gpu": i, "ecc_volatile_uncorrected": ecc},
                remediation=f"Drain the GPU and reset it ({reset}); if errors return, "
                "have it serviced.",
            )
        )
    rp = g.get("retired_pages") or {}
    if rp.get("pending"):
        out.append(
            warn(
                f"{tag}: page retirement pending ({rp.get('double_bit')} double-"
                f"bit, {rp.get('single_bit')} single-bit pages retired): it takes "
                "effect after a GPU reset",
                evidence={"gpu": i, "retired_pages": rp},
                remediation=f"{reset} when idle",
            )
        )
    rr = g.get("remapped_rows") or {}
    if rr.get("failed"):
        out.append(
            fail(
                f"{tag}: a row remapping failed ({rr.get('uncorrectable')} "
                "uncorrectable rows): the GPU memory cannot be repaired in the "
                "field",
                evidence={"gpu": i, "remapped_rows": rr},
                remediation="Have this GPU serviced (RMA); do not run jobs on it.",
            )
        )
    elif rr.get("pending"):
        out.append(
            warn(
                f"{tag}: row remapping pending ({rr.get('uncorrectable')} "
                "uncorrectable rows): it takes effect after a GPU reset",
                evidence={"gpu": i, "remapped_rows": rr},
                remediation=f"{reset} when idle",
            )
        )
    return out


def _nvlink(g: Dict[str, Any], tag: str, reset: str, link) -> List[Finding]:
    """The rules on NVLink: links down, links retrained. ``link``: this GPU's entry of
    :func:`_links` (active, down, degraded, expected)."""
    out: List[Finding] = []
    i = g["index"]
    active, down, degraded, expected = link
    if down:
        out.append(
            fail(
                f"{tag}: NVLink link(s) {', '.join(map(str, down))} down "
                f"({len(active)} of {expected} active)",
                evidence={"gpu": i, "down": down, "active": active, "nvlink": g.get("nvlink")},
                remediation="NCCL falls back to slower paths or fails: reset the "
                f"GPU ({reset}), then reboot; if the "
                "link stays down, service the baseboard.",
            )
        )
    if degraded:
        desc = "; ".join(
            f"link {k}: " + ", ".join(f"{n} {v}" for n, v in e.items())
            for k, e in sorted(degraded.items())
        )
        out.append(
            warn(
                f"{tag}: NVLink link(s) retrained ({desc})",
                evidence={"gpu": i, "degraded": degraded, "nvlink": g.get("nvlink")},
                remediation="Recovery errors mean a marginal link that dropped and retrained: "
                "watch the counters (nvidia-smi nvlink -e); reset the GPU or service the "
                "baseboard if they keep rising.",
            )
        )
    return out


def _pcie_and_clocks(g: Dict[str, Any], tag: str) -> List[Finding]:
    """The rules on the PCIe link (width, generation while busy) and on slowed clocks."""
    out: List[Finding] = []
    i = g["index"]
    pc = g.get("pcie") or {}
    if pc.get("width") and pc.get("max_width") and pc["width"] < pc["max_width"]:
        out.append(
            warn(
                f"{tag}: PCIe link at x{pc['width']} of x{pc['max_width']}",
                evidence={"gpu": i, "pcie": pc},
                remediation="Reseat the GPU or riser; check the slot's wiring.",
            )
        )
    if pc.get("gen") and pc.get("max_gen") and pc["gen"] < pc["max_gen"] and g.get("pstate") == 0:
        out.append(
            warn(
                f"{tag}: PCIe Gen{pc['gen']} of Gen{pc['max_gen']} while busy (P0)",
                evidence={"gpu": i, "pcie": pc, "pstate": 0},
                remediation="Check the BIOS PCIe speed setting, the riser and the slot.",
            )
        )
    slow = throttle_names(g.get("clock_event_reasons"))
    if slow:
        out.append(
            warn(
                f"{tag}: clocks slowed by {', '.join(slow)}",
                evidence={"gpu": i, "clock_event_reasons": g.get("clock_event_reasons")},
                remediation="Check cooling, power limits (nvidia-smi -q -d PERFORMANCE,POWER) "
                "and the power supply.",
            )
        )
    return out


def _healthy(snap: Dict[str, Any], links) -> Finding:
    """The one ok finding when no rule found anything."""
    gpus = [g for g in snap["gpus"] if "unreadable" not in g]
    nl = {i: len(v[0]) for i, v in links.items()}
    return ok(
        f"{len(gpus)} GPU(s) healthy: no uncorrected ECC errors, no pending "
        "retirement"
        + (
            f", NVLink {min(nl.values())} of {max(nl.values())} links active on each"
            if nl and max(nl.values())
            else ""
        )
        + ", no power or thermal slowdown",
        evidence={
            "gpus": [
                {
                    k: g.get(k)
                    for k in (
                        "index",
                        "ecc_volatile_uncorrected",
                        "retired_pages",
                        "remapped_rows",
                        "pcie",
                        "clock_event_reasons",
                    )
                }
                for g in gpus
            ],
            "nvlink_active": nl,
        },
    )


def run(ctx: NodeContext):
    snap, unusable = gpus_or_finding(ctx)
    if unusable is not None:
        return unusable
    out = []
    links = _links(snap)
    for g in snap["gpus"]:
        if "unreadable" in g:
            continue
        i = g["index"]
        reset = shell_line(["sudo", "nvidia-smi", "--gpu-reset", "-i", i])
        tag = f"GPU {i} ({g.get('name')})"
        out += _memory(g, tag, reset)
        out += _nvlink(g, tag, reset, links.get(i, ([], [], {}, 0)))
        out += _pcie_and_clocks(g, tag)
    return out or _healthy(snap, links)


CHECK = Check(
    code="MD113",
    name="gpu.health",
    title="GPU health: ECC, NVLink, PCIe, clocks",
    run=run,
    platforms=("linux",),
    doc=Doc(
        meaning="""
Reads each GPU's health through NVML. Fails on volatile uncorrected ECC errors (data was
corrupted since the driver loaded), on a failed row remapping (service the GPU), and on NVLink
links that are down while another GPU of this host has more links up. Warns on retired pages or
row remapping pending (they take effect after a GPU reset), on NVLink links that went through
recovery (replay and CRC counts are in the evidence only: healthy links accumulate a few), on
a PCIe link narrower than its maximum (or a lower generation while the GPU is busy in P0; idle
GPUs lower it on purpose), and on clocks slowed for power or heat. Skipped without an NVIDIA
driver.
""",
        why="""
Uncorrected ECC errors mean data was corrupted; a failed row remapping means the GPU should be
serviced; retired pages and row remapping pending take effect only after a GPU reset. A link
that is down, narrower or slowed, and clocks slowed for power or heat, slow every collective.
""",
        action="""
Reset the GPU when idle (sudo nvidia-smi --gpu-reset -i N), reseat or service hardware that
keeps failing, check cooling and power limits.
""",
        sources=(
            "NVIDIA NVML API reference (nvmlDeviceGetTotalEccErrors, "
            "nvmlDeviceGetRetiredPagesPendingStatus, nvmlDeviceGetRemappedRows, "
            "nvmlDeviceGetNvLinkState, nvmlDeviceGetCurrentClocksEventReasons)",
            "nvidia-smi manual (--gpu-reset)",
            "NVIDIA GPU memory error management guide",
        ),
    ),
)
