"""The ring backend's failures (``mlx/distributed/ring``, MLX v0.30.1-v0.32.x): its environment
and hostfile, binding and connecting its sockets, and peers lost mid-collective. Codes are
stable: never renumber, only add."""

from __future__ import annotations

from meshdoctor.signatures import errnos
from meshdoctor.signatures.model import (
    CAUSE,
    CONSEQUENCE,
    EITHER,
    by_group,
    role_by_group,
    signature,
)

SIGNATURES = (
    signature(
        "MD613",
        "ring.peer-lost",
        r"(\[ring\] Socket \d+ was closed by the peer|\[ring\] Too many send/recv errors\. "
        r"Failing pending tasks|\[ring\] connection to a peer was lost)",
        "A ring peer died or closed its sockets.",
        "Look at the other ranks: the first one to fail is the cause.",
        "mlx #4060 (0.32.1)",
        causes=[
            ("a peer rank died", "its log or exit status"),
            ("a link between two hosts went down", "no rank has an error of its own"),
        ],
        role=CONSEQUENCE,
        examples=(
            "[ring] Socket 4 was closed by the peer",
            "[ring] Too many send/recv errors. Failing pending tasks...",
            "RuntimeError: [ring] connection to a peer was lost",
            "[ring] Socket 7 was closed by the peer",
        ),
    ),
    signature(
        "MD614",
        "ring.abort-hang",
        r"\[ring\] Too many send/recv errors\. Aborting",
        "A ring peer died, and with MLX <= 0.32.0 the survivors then hang forever.",
        "Upgrade mlx to >= 0.32.1; kill the surviving ranks.",
        "mlx #4060",
        causes=[("a peer rank died", "its log")],
        role=CONSEQUENCE,
        fixed_in="0.32.1",
        examples=("[ring] Too many send/recv errors. Aborting...",),
    ),
    signature(
        "MD615",
        "ring.socket-errno",
        r"\[ring\] (Receiving from|Sending to) socket \d+ failed with errno (?P<errno>\d+)",
        "A ring socket transfer failed: errno 54/104 connection reset, 14 bad buffer, "
        "32 broken pipe, 22 a transfer of 2 GiB or more on MLX 0.32.0 or older.",
        "Errno 14 (EFAULT) is a memory-side fault of this rank's MLX, not the network: no "
        "link fix helps; report it to MLX and try another MLX version or backend. Reset "
        "(54/104) with no error on any peer: the network dropped the connection (check the "
        "link: Wi-Fi, NAT or firewall idle timeouts; prefer a wired link) and stop the wedged "
        "ranks; otherwise (32, 54/104) a peer died first: see the other ranks.",
        "MLX ring backend; https://github.com/ml-explore/mlx/issues/3862; "
        "https://github.com/ml-explore/mlx/issues/4276 (errno 14 on any fabric)",
        causes=[
            (
                "a link reset (the network dropped or reset the connection; every peer still "
                "alive): errno 54/104 with no error of a peer's own, often Wi-Fi or a NAT idle "
                "timeout; after 10 such errors the ring gives up and, before mlx PR #4060, every "
                "rank then hangs (MD614)",
                "no peer reports an error of its own; all ranks still running",
            ),
            ("a peer died (54/104/32)", "the peer's log"),
            (
                "a bad receive or send buffer in this rank's MLX (14, EFAULT): a memory-side "
                "MLX bug, the same on every fabric (mlx #4276)",
                "errno 14 on this rank only; the peer shows only broken pipe (32) after it",
            ),
            (
                "one transfer of 2 GiB or more on MLX <= 0.32.0 (22, MLX PR #4281)",
                "errno 22 on the sender; MD102 names the version",
            ),
        ],
        role=CONSEQUENCE,
        # ring.cpp's worker: log_info(true, "Receiving from socket", fd, "failed with errno", errno)
        examples=(
            "[ring] Receiving from socket 4 failed with errno 104",
            "[ring] Receiving from socket 7 failed with errno 54",
            "[ring] Sending to socket 5 failed with errno 32",
            "[ring] Sending to socket 5 failed with errno 22",
            "[ring] Receiving from socket 6 failed with errno 14",
        ),
        refine=by_group("errno", errnos.TRANSFER),
        role_of=role_by_group("errno", {"14": CAUSE, "22": CAUSE}),
        role_note="Errno 14 (a bad buffer on this rank) and errno 22 (a transfer too large for "
        "MLX 0.32.0 or older) are this rank's own fault, a cause; the others (32 broken pipe, "
        "54/104 connection reset) are a peer's death seen from here.",
    ),
    signature(
        "MD620",
        "ring.bind-failed",
        r"\[ring\] Couldn't bind socket \(error: (?P<errno>\d+)\)",
        "The ring backend could not listen on this rank's address: the IP is not assigned on "
        "this host (errno 99/49) or the port is in use (errno 98/48).",
        "Check the rank's IP in the hostfile is this host's address; free the port or pick "
        "another (meshdoctor probe --port).",
        "MLX ring backend (observed with 0.32.4)",
        causes=[
            ("port in use (98/48): a leftover rank", "`meshdoctor check --only MD301`"),
            ("address not on this host (99/49)", "hostfile IP vs `ip addr`/`ifconfig`"),
        ],
        examples=(
            "RuntimeError: [ring] Couldn't bind socket (error: 98)",
            "RuntimeError: [ring] Couldn't bind socket (error: 48)",
        ),
    ),
    signature(
        "MD621",
        "ring.connect-failed",
        r"\[ring\] Couldn't connect \(error: (?P<errno>\d+)\)",
        "The ring backend could not connect to its right-hand neighbour after 5 attempts "
        "(about 31 s; 15 s before 0.30.1).",
        "Check the neighbour rank started and its IP is reachable from this host: `ping IP`; "
        "when ping answers, test the port the hostfile gives it: `nc -vz IP PORT` (refused: "
        "nothing listens, the neighbour is not up; a timeout: a firewall drops the port); if "
        "ping and nc work but connect() stays in SYN_SENT, the fault is on this node (compare "
        "`netstat -an | grep SYN_SENT` on both hosts; a local filter or socket problem).",
        "MLX ring backend (observed with 0.32.4); https://github.com/ml-explore/mlx/issues/3755",
        causes=[
            ("the neighbour never started or died first (111/61 refused)", "the neighbour's log"),
            ("unreachable address (113/65 no route, 110/60 timeout)", "ping the IP fails"),
            (
                "a firewall dropping the port while the host answers (110/60 timeout)",
                "ping answers but `nc -vz IP PORT` times out",
            ),
            (
                "connect() never leaves SYN_SENT while ping and `nc -vz IP PORT` work: a "
                "host-local filter or socket problem on this node (60/65 on this node only)",
                "compare `netstat -an | grep SYN_SENT` on both hosts",
            ),
        ],
        role=EITHER,
        examples=(
            "RuntimeError: [ring] Couldn't connect (error: 111)",
            "RuntimeError: [ring] Couldn't connect (error: 61)",
        ),
        refine=by_group("errno", errnos.CONNECT),
    ),
    signature(
        "MD642",
        "ring.env-missing",
        r"You need to provide via environment variables both a rank \(MLX_RANK\) and a "
        r"hostfile",
        "The ring backend found no MLX_RANK or MLX_HOSTFILE.",
        "Start ranks with mlx.launch (or set MLX_RANK and MLX_HOSTFILE).",
        "MLX ring init",
        check="MD103",
        examples=(
            "RuntimeError: [ring] You need to provide via environment variables both a "
            "rank (MLX_RANK) and a hostfile (MLX_HOSTFILE)",
        ),
    ),
    signature(
        "MD643",
        "ring.bad-hostfile",
        r"\[ring\].*(Rank cannot be larger than the size of the group|Rank \d+ has no sockets "
        r"to the (right|left)|as many connections to the left as to the right|only supported "
        r"(with|between|for|to|from) .*neighbo)",
        "The ring hostfile does not fit this rank (rank beyond the group, no address for a "
        "neighbour, unequal connections) or send/recv went to a non-neighbour.",
        "Regenerate the hostfile; in the ring backend send/recv only between neighbours.",
        "MLX ring init",
        check="MD401",
        causes=[
            ("hostfile lists fewer entries than ranks launched", "MLX_RANK >= entries"),
            ("a rank's entry has no address for a neighbour", "empty or missing ips"),
            (
                "the program calls send/recv between non-neighbours",
                "ring only connects rank r to r-1 and r+1",
            ),
        ],
        examples=(
            "RuntimeError: [ring] Rank cannot be larger than the size of the group",
            "RuntimeError: [ring] Rank 2 has no sockets to the right.",
            "RuntimeError: [ring] It is required to have as many connections to the left "
            "as to the right but rank 1 has 2 to the left and 1 to the right",
            "RuntimeError: [ring] Send only supported between direct neighbors.",
            "RuntimeError: [ring] Send only supported to direct neighbors but tried to send "
            "to 2 from 0",
            "RuntimeError: [ring] Recv only supported from direct neighbors but tried to recv "
            "from 3 to 1",
        ),
    ),
    signature(
        "MD644",
        "ring.empty-hostfile",
        r"parse_error\.101.*unexpected end of input",
        "MLX_HOSTFILE is empty: mlx.launch started a single host for the ring backend.",
        "Give mlx.launch two or more hosts, or run without a backend.",
        "mlx.launch",
        examples=(
            "RuntimeError: [json.exception.parse_error.101] parse error at line 1, column "
            "1: syntax error while parsing value - unexpected end of input; expected '[', "
            "'{', or a literal",
        ),
    ),
    signature(
        "MD645",
        "ring.no-progress",
        r"\[ring\] Sending to socket \d+ made no progress",
        "A ring send made no progress (MLX 0.32.1+): the peer stopped reading.",
        "Look at the peer rank.",
        "MLX 0.32.1 ring",
        role=CONSEQUENCE,
        causes=[
            ("the peer stopped reading (died, stopped, or blocked)", "the peer's log"),
            ("the link is down", "no error on the peer"),
        ],
        examples=("[ring] Sending to socket 9 made no progress",),
    ),
    signature(
        "MD627",
        "ring.bad-address",
        r"Can't parse address (?P<address>\S+)",
        "An address in the hostfile (or MLX_JACCL_COORDINATOR) is not an IP:port MLX can resolve.",
        "Write each address as IP:port with a numeric IPv4 address (mlx.launch adds the "
        "ports); check for typos and host names that do not resolve.",
        "MLX distributed/utils.cpp (v0.32.1)",
        check="MD401",
        examples=("RuntimeError: Can't parse address 10.0.0.300:5000",),
    ),
    signature(
        "MD628",
        "ring.allreduce-too-small",
        r"Can't perform the ring all reduce of (?P<elements>\d+) elements with a ring of size "
        r"(?P<size>\d+)",
        "A ring all_sum of an array with fewer elements than ranks uses a 1 KiB scratch "
        "buffer, and this one (elements x item size x ranks) does not fit it.",
        "Pad the array to at least as many elements as ranks, or reduce fewer, larger arrays.",
        "MLX distributed/ring/ring.cpp (v0.32.1)",
        examples=(
            "RuntimeError: Can't perform the ring all reduce of 3 elements with a ring of size 300",
        ),
    ),
    signature(
        "MD629",
        "ring.socket-setup",
        r"\[ring\] Couldn't (create socket|enable reuse(addr|port))",
        "The ring backend could not create or set up a TCP socket (file descriptors exhausted, "
        "or a sandbox forbids sockets).",
        "Check `ulimit -n` and leftover ranks holding sockets (`meshdoctor check --only MD301`).",
        "MLX distributed/utils.cpp (v0.32.1)",
        check="MD301",
        examples=(
            "RuntimeError: [ring] Couldn't create socket (error: 24)",
            "RuntimeError: [ring] Couldn't enable reuseport (error: 22)",
        ),
    ),
)
