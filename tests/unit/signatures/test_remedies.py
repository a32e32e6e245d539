"""What the signatures tell a user to do: advice to ping an address never stands alone, since a
host that answers ping may still drop the port (a firewall); the same text says how to test the
port (``nc -vz IP PORT``)."""

from __future__ import annotations

import re

from meshdoctor import signatures

PING = re.compile(r"\bping\b", re.I)


def test_every_ping_advice_says_what_to_do_when_ping_answers():
    lonely = []
    for s in signatures.CATALOGUE:
        texts = [s.remedy] + [c.evidence for c in s.causes]
        if any(PING.search(t) for t in texts) and not any("nc -vz" in t for t in texts):
            lonely.append(s.code)
        if PING.search(s.remedy) and "nc -vz" not in s.remedy:
            lonely.append(f"{s.code} remedy")
    assert lonely == []
    # the signatures of a connect that failed say it in their remedy
    for code in ("MD607", "MD621", "MD637", "MD648"):
        assert "nc -vz" in signatures.BY_CODE[code].remedy, code
