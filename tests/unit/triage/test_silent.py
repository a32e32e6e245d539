"""meshdoctor.triage.silent without the CLI: the silent rank rule over logs known by host (a
hostfile's hosts, read over ssh as ``HOST:PATH``), and its remedy's commands quoted for the
shell they are pasted into."""

from __future__ import annotations

import io
import shlex

from meshdoctor.triage import silent
from meshdoctor.triage.collect import Collected, read_stream
from meshdoctor.triage.findings import Input


def _read(logs):
    col = Collected()
    for host, text in logs:
        read_stream(io.BytesIO(text.encode()), Input(source=f"{host}:/tmp/job.log", host=host), col)
    return col


def test_a_host_whose_log_ends_without_an_error_is_the_suspect():
    col = _read(
        [
            ("m1", "[ring] Socket 4 was closed by the peer\n"),
            ("m2; touch x", "step 10 loss 1.2\n"),
            ("m3", "RuntimeError: [jaccl] Recv failed with errno=2\n"),
        ]
    )
    (f,) = silent.suspects(col.inputs, col.findings)
    assert (f.code, f.host, f.rank, f.role) == ("MD691", "m2; touch x", None, "cause")
    assert "m1, m3 lost a peer" in f.match.meaning
    quoted = shlex.quote("m2; touch x")
    assert f"`ssh {quoted} meshdoctor triage --crash-reports`" in f.match.remedy
    assert f"`ssh {quoted} dmesg`" in f.match.remedy


def test_no_suspect_when_a_host_or_a_log_could_not_be_read():
    logs = [("m1", "[ring] Socket 4 was closed by the peer\n"), ("m2", "step 10\n")]
    col = _read(logs)
    assert len(silent.suspects(col.inputs, col.findings)) == 1
    # m3 powered off: it, not m2, may be the rank that died
    assert silent.suspects(col.inputs, col.findings, {"m3": "ssh: connect: No route"}) == []
    col.add(Input(source="m3:/tmp/job.log", host="m3", error="No such file or directory"), [])
    assert silent.suspects(col.inputs, col.findings) == []


def test_no_suspect_when_every_log_has_a_finding_or_a_warning():
    col = _read([("m1", "[ring] Socket 4 was closed by the peer\n"), ("m2", "step 10\n")])
    col.inputs[1].warnings.append("read cut off at the host's deadline")
    assert silent.suspects(col.inputs, col.findings) == []
    col = _read(
        [
            ("m1", "[ring] Socket 4 was closed by the peer\n"),
            ("m2", "[ring] Socket 5 was closed by the peer\n"),
        ]
    )
    assert silent.suspects(col.inputs, col.findings) == []
