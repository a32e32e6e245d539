"""What a socket errno means, in macOS and Linux numbering (``<sys/errno.h>`` of each), for the
backends that print one: the ring backend's transfers and connects, and JACCL's side channel
(which connects like the ring)."""

from __future__ import annotations

from typing import Dict

# errno of a failed send/recv on a ring socket
TRANSFER: Dict[str, str] = {
    "54": "connection reset by peer (macOS ECONNRESET)",
    "104": "connection reset by peer (Linux ECONNRESET)",
    "14": "bad buffer address (EFAULT): the kernel refused the buffer this rank's MLX handed "
    "to recv/send, a memory-side fault in the receiving (or sending) rank, not the network: it "
    "reproduces on every fabric (mlx #4276), so no cable, Wi-Fi or link change helps; report "
    "it to MLX with the version and try another MLX version or backend meanwhile; a peer's "
    "broken pipe (32) or reset (54/104) after it is its echo",
    "32": "broken pipe (EPIPE)",
    "22": "invalid argument (EINVAL): with MLX 0.32.0 or older, a single transfer of 2 GiB or "
    "more (fixed in 0.32.1, MLX PR #4281)",
}

# errno of a failed connect()
CONNECT: Dict[str, str] = {
    "60": "timed out (macOS ETIMEDOUT)",
    "110": "timed out (Linux ETIMEDOUT)",
    "61": "refused: nobody listening (macOS ECONNREFUSED)",
    "111": "refused: nobody listening (Linux ECONNREFUSED)",
    "65": "no route to host (macOS EHOSTUNREACH)",
    "113": "no route to host (Linux EHOSTUNREACH)",
}
