"""Signatures of PyTorch's distributed layer (c10d, torchrun) around an NCCL job: the store
that ranks meet through before NCCL's init (MASTER_ADDR:MASTER_PORT), the communicator
aborted after a failure, and torchrun's summary of a failed rank. The texts are PyTorch's own
(torch/csrc/distributed/c10d/TCPStore.cpp, socket.cpp, ProcessGroupNCCL.cpp;
torch/distributed/elastic/multiprocessing/errors/__init__.py)."""

from __future__ import annotations

from typing import Mapping, Optional, Tuple

from meshdoctor.signatures.model import CONSEQUENCE, EITHER, signature

_C10D = "PyTorch torch/csrc/distributed/c10d/"

# what a connect errno says of the store's address (errno(3), Linux)
_STORE_ERRNO = {
    "111": "refused: the host answered and nothing listens on the port (rank 0 not started, "
    "gone, or on another port)",
    "113": "no route to host: this host cannot reach that address at all, so it is the wrong "
    "address (another network's, a stale MASTER_ADDR or main_process_ip that a launcher "
    "passed instead of the configured one) or a firewall rejects it",
    "99": "cannot assign requested address: the name resolves to an address this host cannot "
    "use (localhost on a multi-node job)",
}


def store_address(g: Mapping[str, str]) -> Tuple[Optional[str], Optional[str]]:
    """``(host, port)`` of the store an MD838 match names (its three wordings' groups), each
    None when the match names none."""
    host = g.get("host") or g.get("host2") or g.get("host3") or None
    port = g.get("port") or g.get("port2") or g.get("port3") or None
    return host, port


def _store_at(g: Mapping[str, str]) -> Optional[str]:
    """MD838's detail: the store's host:port and what the connect errno says of it."""
    host, port = store_address(g)
    if not host:
        return None
    errno = g.get("errno") or g.get("errno3")
    said = f" (errno {errno}: {_STORE_ERRNO[errno]})" if errno in _STORE_ERRNO else ""
    return f"the store at {host}:{port}{said}"


_FAMILY = {"2": "IPv4 (AF_INET)", "10": "IPv6 (AF_INET6)", "30": "IPv6 (AF_INET6, macOS)"}


def gloo_family(g: Mapping[str, str]) -> Optional[str]:
    """Which families Gloo's two sockets had (groups ``a``, ``b``: Linux's 2 AF_INET, 10
    AF_INET6)."""
    a, b = g.get("a", ""), g.get("b", "")
    return (
        f"this rank's socket is {_FAMILY.get(a, 'family ' + a)}, its peer's "
        f"{_FAMILY.get(b, 'family ' + b)}"
    )


SIGNATURES = (
    signature(
        "MD838",
        "torch.store-unreachable",
        r"The client socket has (?:timed out after (?P<s>\d+)s while trying to connect to "
        r"\((?P<host>[^,()]+), (?P<port>\d+)\)|failed to connect to \[(?P<host2>[^\]]+)\]:"
        r"(?P<port2>\d+)(?: \(errno: (?P<errno>\d+)[^)]*\))?"
        # PyTorch 2.2+: "... has failed to connect to any network address of (HOST, PORT). The
        # client socket has failed to connect to HOST:PORT (errno: 113 - No route to host)."
        r"|failed to connect to any network address of \((?P<host3>[^,()]+), (?P<port3>\d+)\)"
        r"(?:.*?\(errno: (?P<errno3>\d+)[^)]*\))?)",
        "This rank could not reach PyTorch's rendezvous store (the TCPStore at MASTER_ADDR:"
        "MASTER_PORT that rank 0 serves): the ranks never met, so NCCL's init never started.",
        "Check that rank 0 is running and listening there (`ss -ltnp | grep PORT` on its "
        "host), that MASTER_ADDR is the address of rank 0's host as the other hosts reach it "
        "(not localhost or 127.0.0.1 on a multi-node job), and that no firewall drops the "
        "port between the hosts (`nc -vz MASTER_ADDR PORT` from this host).",
        _C10D + "TCPStore.cpp and socket.cpp ('The client socket has timed out after ...', "
        "'The client socket has failed to connect to ...'); torchrun --rdzv-endpoint",
        role=EITHER,  # a single refused connect is retried; a timeout ends the rank
        causes=[
            (
                "rank 0 not started or already gone (it failed before serving the store)",
                "rank 0's own log ends earlier, or holds its own error",
            ),
            (
                "MASTER_ADDR names an address the other hosts cannot reach (localhost, a "
                "container's address, another interface)",
                "the host:port the line names is not rank 0's reachable address",
            ),
            ("a firewall between the hosts", "`nc -vz HOST PORT` fails from this host"),
        ],
        refine=_store_at,
        examples=(
            "torch.distributed.DistNetworkError: The client socket has timed out after 600s "
            "while trying to connect to (10.0.0.1, 29500).",
            "torch.distributed.DistNetworkError: The client socket has failed to connect to any "
            "network address of (192.168.121.122, 1040). The client socket has failed to "
            "connect to 192.168.121.122:1040 (errno: 113 - No route to host).",
            "[W socket.cpp:663] [c10d] The client socket has failed to connect to "
            "[localhost]:29500 (errno: 99 - Cannot assign requested address).",
        ),
    ),
    signature(
        "MD839",
        "torch.store-port-in-use",
        r"server socket has failed to listen on any local network address\.(?: port: "
        r"(?P<port>\d+))?(?:.*?failed to bind to \S*?:(?P<bport>\d+))?.*?(?:EADDRINUSE|"
        r"[Aa]ddress already in use)",
        "Rank 0 could not serve PyTorch's rendezvous store: MASTER_PORT is already taken on "
        "its host, most often by a rank of an earlier run that is still alive.",
        "Find what holds the port (`ss -ltnp | grep :PORT` on rank 0's host) and end that "
        "run's leftover processes, or launch with another MASTER_PORT (torchrun "
        "--master-port, --rdzv-endpoint HOST:PORT); two jobs on one host each need their own "
        "port (torchrun's default is 29500 for every job: --rdzv-endpoint localhost:0 or "
        "--standalone picks a free one).",
        _C10D + "socket.cpp ('The server socket has failed to listen on any local network "
        "address')",
        causes=[
            (
                "a leftover rank of an earlier run still holds the port",
                "`ss -ltnp` shows a python process on it",
            ),
            ("two jobs on one host with the same MASTER_PORT", "another job is running"),
        ],
        refine=lambda g: (
            f"port {g.get('port') or g.get('bport')}" if g.get("port") or g.get("bport") else None
        ),
        examples=(
            # an older PyTorch's form (socket.cpp): the bind error of each address it tried
            "torch.distributed.DistNetworkError: The server socket has failed to listen on any "
            "local network address. The server socket has failed to bind to [::]:29400 "
            "(errno: 98 - Address already in use).",
            "torch.distributed.DistNetworkError: The server socket has failed to listen on any "
            "local network address. port: 29500, useIPv6: 0, code: -98, name: EADDRINUSE, "
            "message: address already in use",
        ),
    ),
    signature(
        "MD840",
        "torch.rendezvous-timeout",
        r"DistStoreError: Timed out after (?P<s>\d+) seconds waiting for clients\. "
        r"(?P<joined>\d+)/(?P<n>\d+) clients joined",
        "Not every rank reached PyTorch's rendezvous store before its timeout: the store on "
        "rank 0's host waited for the world size's ranks and fewer joined.",
        "Find the ranks that never joined: they did not start (a host the launcher never "
        "reached), failed before init (their own logs), or could not reach MASTER_ADDR:"
        "MASTER_PORT; check that the world size (nnodes x nproc-per-node) is the number of "
        "ranks actually started.",
        _C10D + "TCPStore.cpp ('Timed out after ... seconds waiting for clients. N/M clients "
        "joined.')",
        causes=[
            (
                "ranks that never started or failed before their init",
                "fewer rank logs than the world size; their own errors",
            ),
            (
                "a world size larger than the ranks launched (nnodes or nproc-per-node "
                "differ between hosts)",
                "N/M with M larger than the processes started",
            ),
            (
                "the other hosts cannot reach MASTER_ADDR:MASTER_PORT",
                "their logs hold 'The client socket has timed out'",
            ),
        ],
        refine=lambda g: (
            f"{g['joined']} of {g['n']} ranks joined in {g['s']} s" if g.get("n") else None
        ),
        examples=(
            "torch.distributed.DistStoreError: Timed out after 1801 seconds waiting for "
            "clients. 1/2 clients joined.",
        ),
    ),
    signature(
        "MD841",
        "torch.unique-id-exchange",
        r"retrieving ncclUniqueId from \[(?P<root>\d+)\] via c10d key-value store by key "
        r"'[^']*', but store->get\('[^']*'\) got error: (?P<err>.*)",
        "This rank could not get NCCL's unique id from the root rank through PyTorch's store: "
        "the root (rank 0 of the group) never put it there, or the store went away, usually "
        "because the root failed or hung first.",
        "Read the root rank's log (the rank in brackets): its own failure is the cause; if it "
        "waited in another collective or step, the ranks create their process groups or "
        "call their first collective in a different order.",
        _C10D + "ProcessGroupNCCL.cpp (broadcastUniqueNCCLID: 'is setting up NCCL "
        "communicator and retrieving ncclUniqueId from [0] via c10d key-value store')",
        role=CONSEQUENCE,
        causes=[
            ("the root rank failed or exited first", "its log ends earlier or holds an error"),
            (
                "the root rank creates this communicator later than the others (another "
                "order of new_group() or of first collectives)",
                "the root's stack in another collective or group",
            ),
        ],
        refine=lambda g: (
            f"the root is rank {g['root']}; the store said '{g['err'].strip()[:80]}'"
            if g.get("root")
            else None
        ),
        examples=(
            "RuntimeError: [1] is setting up NCCL communicator and retrieving ncclUniqueId from "
            "[0] via c10d key-value store by key '0', but store->get('0') got error: "
            "Connection reset by peer",
        ),
    ),
    signature(
        "MD842",
        "torch.communicator-aborted",
        r"NCCL communicator was aborted on rank (?P<rank>\d+)",
        "PyTorch aborted this rank's NCCL communicator after a failure: its watchdog timed "
        "out a collective or saw an NCCL or CUDA error, on this rank or another.",
        "Look for the failure before it: this rank's watchdog line (a collective timeout or "
        "an NCCL/CUDA error), or the first rank that failed; this line is its echo.",
        _C10D + "ProcessGroupNCCL.cpp ('NCCL communicator was aborted on rank N')",
        role=CONSEQUENCE,
        examples=("RuntimeError: NCCL communicator was aborted on rank 1.",),
    ),
    signature(
        "MD843",
        "torch.child-failed",
        r"\bChildFailedError\b|Root Cause \(first observed failure\)",
        "torchrun's summary of a failed job: the rank under 'Root Cause (first observed "
        "failure)' failed first, with the exit code it gives (a negative one is the signal "
        "that killed it: -9 SIGKILL, most often the out-of-memory killer; -6 SIGABRT).",
        "Read that rank's own log (its error_file, or its output above the summary) for why "
        "it failed; for exitcode -9 look for the out-of-memory killer (`dmesg | grep -i "
        "oom`); the ranks listed under 'Other Failures' are its consequences.",
        "PyTorch torch/distributed/elastic/multiprocessing/errors/__init__.py "
        "(ChildFailedError, 'Root Cause (first observed failure)')",
        role=CONSEQUENCE,
        examples=(
            "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
            "Root Cause (first observed failure):",
        ),
    ),
    signature(
        "MD846",
        "torch.store-without-libuv",
        r"(?:Error|Exception): use_libuv was requested but PyTorch was buil[dt] without libuv "
        r"support",
        "PyTorch's rendezvous store (TCPStore) was asked for its libuv server, the default "
        "since PyTorch 2.4, and this PyTorch build has no libuv: the official Windows builds "
        "(and some source builds) are made without it, so every init_process_group with a "
        "TCP store fails before any rank connects.",
        "Ask for the store without libuv: USE_LIBUV=0 in every rank's environment (or "
        "use_libuv=0 in the init_method URL, `env://?use_libuv=0`, or "
        "TCPStore(..., use_libuv=False)); or a PyTorch build with libuv (a release that "
        "defaults to USE_LIBUV=0 on Windows).",
        _C10D + "TCPStore.cpp ('use_libuv was requested but PyTorch was build without libuv "
        "support'); PyTorch 2.4 release notes (libuv TCPStore by default); "
        "https://github.com/pytorch/pytorch/issues/139990",
        causes=[
            (
                "a Windows build of PyTorch 2.4 or later (built without libuv)",
                "the traceback's paths are C:\\...; `torch.__version__` 2.4+",
            ),
            ("a source build without libuv (USE_LIBUV off)", "the build's CMake options"),
        ],
        examples=(
            "RuntimeError: use_libuv was requested but PyTorch was build without libuv support",
        ),
    ),
    signature(
        "MD852",
        "torch.deepspeed-no-sync-zero",
        r"AssertionError: no_sync context manager is incompatible with gradient partitioning "
        r"logic of ZeRO "
        r"stage (?P<stage>\d)",
        "DeepSpeed's engine refused no_sync(): under ZeRO stage 2 or 3 the gradients are "
        "partitioned, which needs a reduction on every backward. DeepSpeed 0.16.0 added this "
        "check; Hugging Face's Trainer (through accelerate) enters no_sync on every "
        "micro-step between gradient-accumulation boundaries, so any run with "
        "gradient_accumulation_steps > 1 under ZeRO 2/3 dies at its first step, without the "
        "job's own code calling it.",
        "Upgrade transformers to a release that skips no_sync for ZeRO 2/3 (its PR #35157), or "
        "pin deepspeed 0.15.4, or set gradient_accumulation_steps=1; in code of your own, do "
        "not wrap backward in engine.no_sync() under ZeRO 2/3.",
        "DeepSpeed runtime/engine.py no_sync (added in 0.16.0, deepspeed PR #6675); "
        "https://github.com/deepspeedai/DeepSpeed/issues/6793; huggingface/transformers PR "
        "#35157",
        causes=[
            (
                "Hugging Face Trainer or accelerate with gradient accumulation on DeepSpeed "
                ">= 0.16.0 under ZeRO 2/3",
                "`pip show deepspeed transformers`; gradient_accumulation_steps > 1",
            ),
        ],
        examples=(
            "[rank0]: AssertionError: no_sync context manager is incompatible with gradient "
            "partitioning logic of ZeRO stage 3",
        ),
    ),
    signature(
        "MD858",
        "torch.te-userbuffers-multicast",
        r"userbuffers[\w/.-]*:\d+ in function (?P<func>\w+): CUDA Error: (?P<msg>operation not "
        r"supported|[^\n]+)",
        "Transformer Engine's Userbuffers (its communication-GEMM overlap, "
        "te.initialize_ub) could not create its communicator: it shares buffers across the "
        "GPUs with CUDA multicast objects, which need a recent driver (535 or later) and a "
        "platform with NVSwitch multicast; 'operation not supported' is the driver or platform "
        "refusing them.",
        "Set UB_SKIPMC=1 on every rank (Userbuffers then shares its buffers through CUDA IPC "
        "instead of multicast), or upgrade the driver to 535 or later on an NVSwitch system "
        "(`nvidia-smi` shows the driver version); without overlap, drop ub_tp_comm_overlap.",
        "NVIDIA TransformerEngine transformer_engine/pytorch/csrc/userbuffers/userbuffers-host.cpp "
        "(create_communicator_grouped2, UB_SKIPMC); "
        "https://github.com/NVIDIA/TransformerEngine/issues/991",
        causes=[
            (
                "a driver older than 535, or a platform without NVSwitch multicast",
                "`nvidia-smi` Driver Version; the GPUs' NVLink topology",
            ),
        ],
        examples=(
            "RuntimeError: /src/transformer_engine/pytorch/csrc/userbuffers/userbuffers-host.cpp:"
            "208 in function create_communicator_grouped2: CUDA Error: operation not supported",
        ),
    ),
    signature(
        "MD866",
        "gloo.address-family-mismatch",
        r"(?:rror: |what\(\):\s*)\[enforce fail at [^\]]*\] ss1\.ss_family == "
        r"ss2\.ss_family\. (?P<a>\d+) vs (?P<b>\d+)",
        "Gloo's TCP transport refused to pair two sockets of different address families: "
        "one rank's address is IPv4 and its peer's IPv6. Each rank takes its Gloo address "
        "from its hostname (or GLOO_SOCKET_IFNAME); a rendezvous address of 0.0.0.0 or a "
        "hostname, on dual-stack hosts where PyTorch binds IPv6 by default, gives the ranks "
        "addresses of mixed families.",
        "Give every rank an address of one family: MASTER_ADDR (or --master_addr, "
        "--rdzv_endpoint) the master host's real IPv4 address, not 0.0.0.0 or a hostname; "
        "GLOO_SOCKET_IFNAME (and NCCL_SOCKET_IFNAME) an interface with an IPv4 address on "
        "every host; check that `getent ahosts $(hostname)` lists the same family first on "
        "every host.",
        "Gloo gloo/transport/tcp/device.cc (the ss_family check when pairing); PyTorch "
        "distributed environment variables (MASTER_ADDR, GLOO_SOCKET_IFNAME); POSIX "
        "AF_INET = 2, Linux AF_INET6 = 10",
        causes=[
            (
                "MASTER_ADDR=0.0.0.0 or a hostname resolving to IPv6 on one host",
                "'2 vs 10' on one rank, '10 vs 2' on its peer",
            ),
            ("hosts whose hostnames resolve to different families", "`getent ahosts` differs"),
        ],
        refine=gloo_family,
        examples=(
            "[rank0]: RuntimeError: [enforce fail at ../third_party/gloo/gloo/transport/tcp/"
            "device.cc:276] ss1.ss_family == ss2.ss_family. 2 vs 10",
        ),
    ),
)
