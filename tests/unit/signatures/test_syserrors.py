"""The system error a line ends in, read where no signature knows the program that printed it."""

import pytest

from meshdoctor import signatures
from meshdoctor.signatures import syserrors


@pytest.mark.parametrize(
    "text,name,says",
    [
        ("write /data/ckpt/shard3: No space left on device", "ENOSPC", "/dev/shm"),
        ("OSError: [Errno 28] No space left on device", "ENOSPC", "df -h"),
        ("connect to 10.0.0.2:5000 failed: Connection refused", "ECONNREFUSED", "ss -ltnp"),
        ("ConnectionRefusedError: [Errno 61] Connection refused", "ECONNREFUSED", "lsof"),
        ("dial tcp 192.168.1.7:52415: connect: no route to host", None, ""),
        ("dial tcp 192.168.1.7:52415: connect: No route to host", "EHOSTUNREACH", "TN3179"),
        (
            "socket.gaierror: [Errno 8] nodename nor servname provided, or not known",
            "EAI_NONAME",
            "getent hosts",
        ),
        ("socket.gaierror: [Errno -2] Name or service not known", "EAI_NONAME", "/etc/hosts"),
        ("[Errno -3] Temporary failure in name resolution", "EAI_AGAIN", "resolv.conf"),
        ("OSError: [Errno 24] Too many open files", "EMFILE", "ulimit -n"),
        ("socket.accept() out of system resource", "EMFILE", "ulimit -n"),
        (
            "Cannot connect to host 10.0.0.5:52415 ssl:default [Connect call failed ('10.0.0.5', 52415)]",
            "ECONNREFUSED",
            "nc -vz",
        ),
        ("Error connecting peer 7f3a@10.0.0.5:5678: TimeoutError()", "ETIMEDOUT", "nc -vz"),
        (
            "huggingface_hub.errors.GatedRepoError: 403 Client Error. Cannot access gated repo for url https://huggingface.co/x",
            "HTTP 401/403",
            "huggingface-cli login",
        ),
        (
            "huggingface_hub.errors.RepositoryNotFoundError: 404 Client Error.",
            "HTTP 404",
            "model id",
        ),
        ("accept: Too many open files in system", "ENFILE", "fs.file-max"),
        ("mmap of 4096 MiB failed: Cannot allocate memory", "ENOMEM", "ulimit -l"),
        ("open /dev/infiniband/uverbs0: Permission denied", "EACCES", "--device"),
        ("read /mnt/ckpt/x: Stale file handle", "ESTALE", "NFS"),
        ("exec /usr/bin/python3: exec format error", None, ""),
        ("exec /usr/bin/python3: Exec format error", "ENOEXEC", "uname -m"),
        ("open /dev/nvidia-uvm: No such device or address", "ENXIO", "dmesg"),
        ("open /dev/nvidia-uvm: No such device", "ENODEV", "driver"),
    ],
)
def test_a_system_errors_words_name_it_and_its_usual_causes(text, name, says):
    got = syserrors.system_error(text)
    if name is None:  # strerror's wording is capitalised; Go's lower-case texts are its own
        assert got is None
        return
    assert got is not None and got[0] == name, got
    assert says in got[2]


def test_the_innermost_error_of_a_chain_is_read():
    """``a: Broken pipe ... caused by: Connection refused``: the last one named is the cause."""
    got = syserrors.system_error("send failed: Broken pipe (caused by: Connection refused)")
    assert got is not None and got[0] == "ECONNREFUSED"


def test_a_python_exception_no_signature_reads_names_its_errno():
    (m,) = [
        m
        for m in signatures.classify("OSError: [Errno 28] No space left on device", generic=True)
        if m.code == "MD663"
    ]
    assert "ENOSPC" in m.meaning and "df -h" in m.meaning


def test_a_line_without_a_system_error_gets_no_such_reading():
    assert syserrors.reading("ValueError: shapes (2,3) and (4,) do not broadcast") is None
    (m,) = [
        m for m in signatures.classify("ValueError: bad value 3", generic=True) if m.code == "MD663"
    ]
    assert "system error" not in m.meaning
