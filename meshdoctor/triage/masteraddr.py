"""A rank that dialled another rendezvous address than the one the job was configured with.

PyTorch's ranks meet at a TCPStore on MASTER_ADDR:MASTER_PORT (torch.distributed
``env://``; torchrun ``--master-addr``/``--rdzv-endpoint``); a launcher above them (accelerate's
``main_process_ip``, DeepSpeed's ``--master_addr``, a batch script's ``MASTER_ADDR=``) passes it
down. When a layer drops or overrides the configured value, the ranks dial another host (an
address of another network, a stale default) and fail to reach the store: ``The client
socket has failed to connect to ... (errno: 113 - No route to host)``. The store's error
names the address dialled, the configuration the one meant; together they say it. Triage
names it with MD855, a finding it makes itself.

The rule (:func:`readings`): a finding of MD838 (the store unreachable) names the host it
dialled, the logs read (their first and last bytes) configure a rendezvous address
(``main_process_ip: X``, ``MASTER_ADDR=X``, ``--master_addr X``, ``--master-addr=X``,
``master_addr: X``), and none of the configured ones is the host dialled. The finding names
the configuration line and comes just before the store's failure, which becomes its
consequence.
"""

from __future__ import annotations

import re
from typing import List, Optional, Sequence, Tuple

from meshdoctor import signatures
from meshdoctor.signatures.model import signature
from meshdoctor.signatures.pytorch import store_address
from meshdoctor.triage import reading
from meshdoctor.triage.alone import _lines as input_lines  # head and tail lines, each once
from meshdoctor.triage.findings import Finding, Input
from meshdoctor.triage.reading import entry, with_why

CODE = "MD855"

MASTER_SIG = signature(
    CODE,
    "triage.rendezvous-address-differs",
    None,
    "A rank dialled another rendezvous address than the one the job was configured with: "
    "the launcher's configuration names one MASTER_ADDR (accelerate's main_process_ip, "
    "DeepSpeed's --master_addr, the batch script's MASTER_ADDR), the store's error another. "
    "A layer between them dropped or replaced the setting (a launcher that takes its own "
    "default or the first host of its hostfile), so the ranks looked for rank 0 where it "
    "is not.",
    "Pass the address to the layer that starts the ranks, not only to the one above it: "
    "export MASTER_ADDR (and MASTER_PORT) in the environment every rank inherits, or give "
    "the launcher that spawns them its own option (deepspeed --master_addr, torchrun "
    "--master-addr / --rdzv-endpoint); then check the address the ranks dial (the store's "
    "error, or `env | grep MASTER` in a rank) is rank 0's host as the others reach it.",
    "PyTorch torch.distributed (env:// rendezvous: MASTER_ADDR, MASTER_PORT), torchrun "
    "options; accelerate config (main_process_ip); DeepSpeed launcher (--master_addr); "
    "https://github.com/huggingface/accelerate/issues/2468",
    examples=(),
    causes=[
        (
            "a launcher that does not pass the configured address to the one below it "
            "(accelerate with DeepSpeed's multi-node launcher)",
            "the configured main_process_ip differs from the host in the store's error",
        ),
        (
            "a stale MASTER_ADDR in the environment of some hosts",
            "`env | grep MASTER` differs between hosts",
        ),
    ],
)

MASTER_SIG = with_why(
    MASTER_SIG,
    "The store's error reads like a network fault or a dead rank 0; the address it dialled "
    "is simply not the one configured.",
)

ENTRY = entry(MASTER_SIG, "triage rendezvous address differs from the configured one")

_CONFIGURED = re.compile(
    r"\b(?:main_process_ip|master_addr|MASTER_ADDR)\b['\"]?\s*[:=]\s*['\"]?"
    r"(?P<a>[\w.:-]+)|--master[_-]addr[= ](?P<b>[\w.:-]+)"
)
_LOGS = ("log", "stdin")


def readings(inputs: Sequence[Input], findings: Sequence[Finding]) -> List[Finding]:
    """The MD855 finding (the rule in the module's docstring) for what triage read, or none:
    ``inputs`` in the order read; ``findings`` the others (an MD838 among them)."""
    stores = [f for f in findings if f.code == "MD838" and _dialled(f)]
    if not stores:
        return []
    dialled = {_dialled(f) for f in stores}
    configured: List[Tuple[str, int, int, str]] = []  # (address, input index, line, text)
    for i, inp in enumerate(inputs):
        if inp.kind not in _LOGS or inp.error:
            continue
        for lineno, text in input_lines(inp):
            for m in _CONFIGURED.finditer(text):
                configured.append((m.group("a") or m.group("b"), i, lineno, text.strip()))
    if not configured or any(a in dialled for a, *_ in configured):
        return []
    addr, i, lineno, text = configured[0]
    here = f"configured {addr}; the ranks dialled {', '.join(sorted(d for d in dialled if d))}."
    m = reading.match(
        MASTER_SIG,
        here,
        line=signatures.printable(text),
        lineno=lineno,
        groups={"configured": addr, "dialled": ",".join(sorted(d for d in dialled if d))},
    )
    return [reading.explains(m, inputs[i], stores)]


def _dialled(f: Finding) -> Optional[str]:
    return store_address(f.match.groups)[0]
