"""meshdoctor.parsers.macos on the documented formats (vm_stat, sysctl, sw_vers), and on noise."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from meshdoctor.parsers import macos
from tests.stubs import FIXTURES


def test_macos_parsers_on_documented_formats():
    vm = macos.parse_vm_stat(
        "Mach Virtual Memory Statistics: (page size of 16384 bytes)\n"
        "Pages free:      10.\nPages wired down:    412345.\n"
    )
    assert macos.wired_bytes(vm) == 412345 * 16384
    assert macos.parse_sysctl("iogpu.wired_limit_mb: 0\nhw.memsize: 8\n") == {
        "iogpu.wired_limit_mb": "0",
        "hw.memsize": "8",
    }
    assert macos.parse_sw_vers("ProductVersion:\t\t26.3.1\n")["ProductVersion"] == "26.3.1"
    assert macos.version_tuple("26.3.1") == (26, 3, 1)
    assert macos.version_tuple("0.32.1.dev20260101+abc") == (0, 32, 1)
    assert macos.wired_bytes(macos.parse_vm_stat("garbage")) is None


@given(st.text())
def test_macos_parsers_never_raise(text):
    macos.wired_bytes(macos.parse_vm_stat(text))
    macos.parse_sysctl(text)
    macos.parse_sw_vers(text)
    macos.version_tuple(text)
    macos.to_int(text)


@given(st.text(alphabet=st.characters(), max_size=400), st.integers(0, 400))
def test_macos_parsers_on_truncated_fixture(noise, cut):
    text = (
        "Mach Virtual Memory Statistics: (page size of 16384 bytes)\n"
        "Pages wired down:    412345.\n" + noise
    )[:cut]
    v = macos.wired_bytes(macos.parse_vm_stat(text))
    assert v is None or v >= 0


def test_pmset_reads_apples_settings_with_their_notes():
    text = (FIXTURES / "sleep-on" / "pmset__g.txt").read_text()
    got = macos.parse_pmset(text)
    assert got["sleep"] == {"value": 1, "note": "sleep prevented by sharingd, powerd"}
    assert got["disksleep"] == {"value": 10, "note": ""}
    assert got["powernap"]["value"] == 1
    assert got["Sleep On Power Button"]["value"] == 1  # a name with spaces
    assert got["hibernatefile"]["value"] == "/var/vm/sleepimage"  # not a number: text
    assert "System-wide power settings:" not in got and "Currently in use:" not in got
    assert macos.parse_pmset(" displaysleep 10\n standby 1\n") == {
        "displaysleep": {"value": 10, "note": ""},
        "standby": {"value": 1, "note": ""},
    }


@given(st.text())
def test_pmset_parser_never_raises(text):
    for v in macos.parse_pmset(text).values():
        assert isinstance(v["value"], (int, str))
