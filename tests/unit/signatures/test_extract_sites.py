"""tools/extract_sites.py on a small source tree written here: a C++ throw built in an
ostringstream, a ring-style log line, an NCCL WARN, mlx.launch's log_warning and parser.error;
each becomes one row with its format fields as wildcards."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def _tool():
    spec = importlib.util.spec_from_file_location("extract_sites", ROOT / "tools/extract_sites.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    return mod


CPP = """
#define IBV_TAG "[jaccl]"
void f(int status, const char* name) {
  if (status != 0) {
    std::ostringstream msg;
    msg << IBV_TAG << " Changing queue pair to RTR failed with errno " << status;
    throw std::invalid_argument(msg.str());
  }
  log_info(true, "Sending to socket", fd_, "failed with errno", errno);
  log_info(verbose_, "Rank", rank_, "accepting");
  throw std::runtime_error("[jaccl] Could not open device " + std::string(name));
}
"""

PY = """
def main(parser, e, rank):
    log_warning(f"Node with rank {rank} was killed")
    if e:
        parser.error("No script is provided")
    log_error("Could not find a full ring.")
    log_error()
    log_error("Try passing --dot to visualize the connectivity")
"""


def test_cpp_sites_are_read_with_their_fields_as_wildcards(tmp_path):
    tool = _tool()
    p = tmp_path / "rdma.cpp"
    p.write_text(CPP)
    got = {(how, pat) for _, how, pat in tool.cpp_sites(str(p), "rdma.cpp")}
    assert got == {
        ("ValueError", "[jaccl] Changing queue pair to RTR failed with errno {status}"),
        ("stderr", "[ring] Sending to socket {fd} failed with errno {errno}"),
        ("RuntimeError", "[jaccl] Could not open device {name}"),
    }  # the verbose-only log line is no error text


def test_python_sites_merge_a_message_with_its_hint_lines(tmp_path):
    tool = _tool()
    p = tmp_path / "launch.py"
    p.write_text(PY)
    got = [(how, pat) for _, how, pat in tool.py_sites(str(p))]
    assert got == [
        ("[WARN]", "Node with rank {rank} was killed"),
        ("usage error", "No script is provided"),
        ("[ERROR]", "Could not find a full ring."),
    ]


def test_nccl_warn_formats_become_wildcards(tmp_path):
    tool = _tool()
    p = tmp_path / "shm.cc"
    p.write_text(
        'void g() { WARN("Error while %s shared memory segment %s (size %ld)", a, b, c); }'
    )
    assert tool.nccl_sites(str(p)) == [
        (1, "WARN", "Error while {s} shared memory segment {s} (size {d})")
    ]
