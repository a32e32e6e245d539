"""What a system error's text means in a distributed job: the ``strerror`` wording of an errno
(glibc's and macOS's ``<sys/errno.h>`` texts, as C programs, Go, Rust and Python's ``[Errno N]``
print them), getaddrinfo's resolver failures, Python's exception classes of them and the HTTP
statuses a model download meets, each with what usually causes it on a cluster and what to run.

Another program's error line (a transfer engine, a downloader, a container runtime, an
exception no signature reads) most often ends in one of these words: they name the kind of
failure even where the program's own message is unknown. :func:`reading` is what the generic
readings (MD883, a Python exception, mlx.launch's or NCCL's message of no known class) say of
it.

Sources: glibc's ``strerror`` texts (its errlist), macOS ``intro(2)``; getaddrinfo
``gai_strerror`` texts (glibc ``resolv``, macOS ``gai_strerror(3)``); Apple TN3179 "Understanding
local network privacy" (a process without the Local Network permission gets EHOSTUNREACH);
CPython's OSError subclasses and asyncio's messages; RFC 9110 (HTTP 401, 403, 404, 429);
huggingface_hub's errors (GatedRepoError, RepositoryNotFoundError).
"""

from __future__ import annotations

import re
from typing import Optional, Tuple

# (errno name, texts (a regex of the strerror wordings), what it means and usually causes,
# what to run); order matters only for texts that contain another ("Too many open files in
# system" before "Too many open files")
_TABLE: Tuple[Tuple[str, str, str, str], ...] = (
    (
        "ENOSPC",
        r"No space left on device",
        "a filesystem is full: the path the line names (a checkpoint or output folder, the "
        "Hugging Face cache in ~/.cache/huggingface, /tmp), or /dev/shm, which a container "
        "gets at 64 MiB unless sized; from inotify_add_watch it is the inotify watch limit, "
        "not the disk",
        "`df -h PATH /tmp /dev/shm` on that host (`ssh HOST df -h ...`); free space or point "
        "the cache elsewhere (HF_HOME); in a container give /dev/shm room (docker --shm-size, "
        "a Memory emptyDir); for inotify raise fs.inotify.max_user_watches",
    ),
    (
        "EDQUOT",
        r"Disk quota exceeded",
        "the user's quota on that filesystem is used up (a home or scratch folder of a shared "
        "cluster)",
        "`quota -s` (or the site's quota tool); write to a scratch folder with room",
    ),
    (
        "EROFS",
        r"Read-only file system",
        "a write to a filesystem mounted read-only: a read-only volume or image layer of a "
        "container, or a disk the kernel remounted read-only after errors",
        "mount a writable folder for outputs and caches; `dmesg | tail` for a remount after errors",
    ),
    (
        "ECONNREFUSED",
        r"Connection refused",
        "nothing listens at that address and port at that moment: the peer or server process "
        "has not started yet or already died, it listens on another port or only on "
        "127.0.0.1, or a firewall rejects the connection",
        "on the target host `ss -ltnp` (macOS `lsof -nP -iTCP -sTCP:LISTEN`) for the port; "
        "start the listening side first or read its log for why it exited; bind it to an "
        "address the peers can reach",
    ),
    (
        "ETIMEDOUT",
        r"Connection timed out|Operation timed out",
        "the peer never answered: a firewall or cloud security group drops the packets, the "
        "address is wrong or on another network, or the host is down",
        "from the connecting host `nc -vz -w 5 HOST PORT`; open the port (firewall, "
        "security group) or use an address on the network the hosts share",
    ),
    (
        "EHOSTUNREACH",
        r"No route to host",
        "no path to that host: no route to its network, the host down on the local link (no "
        "ARP answer), a firewall rejecting with host-prohibited, or on macOS 15 and later a "
        "process without the Local Network permission (Apple TN3179)",
        "`ping HOST` and `ip route get ADDR` (macOS `route get ADDR`) from the failing host; "
        "check the firewall; on macOS allow Local Network for the terminal or app (System "
        "Settings > Privacy & Security > Local Network)",
    ),
    (
        "ENETUNREACH",
        r"Network is unreachable",
        "no route to that network at all: the interface is down, there is no default route, "
        "or an IPv6 address was tried on a host without IPv6 connectivity",
        "`ip route` (macOS `netstat -rn`); bring the interface up, or use an IPv4 address",
    ),
    (
        "EHOSTDOWN",
        r"Host is down",
        "the peer host does not answer on the local link",
        "check that host is up and on that link (`ping HOST`)",
    ),
    (
        "ECONNREFUSED",
        # Python's class of it, and asyncio's connect error, which names the address but
        # not the errno (CPython Lib/asyncio/selector_events.py: most often a refusal)
        r"ConnectionRefusedError|Connect call failed",
        "a TCP connect to that address and port failed, most often refused: nothing listens "
        "there at that moment (the peer or server not started yet or already exited, "
        "another port, bound to 127.0.0.1 only), else timed out or unreachable",
        "on the target host `ss -ltnp` (macOS `lsof -nP -iTCP -sTCP:LISTEN`) for the port, and "
        "from this host `nc -vz -w 5 HOST PORT`; start the listening side first or read its "
        "log for why it exited",
    ),
    (
        "ETIMEDOUT",
        r"\bTimeoutError\b|socket\.timeout",
        "a wait with a deadline ran out before the other side answered: the peer is "
        "unreachable (a firewall, an address on another network), down, or slower than the "
        "program's timeout",
        "from this host `nc -vz -w 5 HOST PORT` to the peer; read the peer's own log; raise "
        "the program's timeout only when the peer is reachable but slow",
    ),
    (
        "HTTP 401/403",
        r"\b40[13] Client Error\b|GatedRepoError|Cannot access gated repo|\b401 Unauthorized\b|"
        r"\b403 Forbidden\b|\b(?:[Dd]ownload|[Ff]etch)\w*\b[^\n]{0,300}?:\s*40[13]\s*$",
        "the server refused the request's credentials: a gated or private model repository "
        "needs a token with access and, for a gated one, its license accepted on the model's "
        "page; a repository its owner made private or removed answers the same to everyone "
        "(a program's built-in model list that still points at it)",
        "`huggingface-cli login` (or HF_TOKEN) on every host that downloads, with a token "
        "of an account that accepted the model's terms; open the repository's page to see "
        "whether it still exists publicly, and if not point the program at another "
        "repository of the model (its model list or card); or download once and point the "
        "hosts at the local copy",
    ),
    (
        # a Hugging Face repository without a root config.json: a diffusers model (FLUX,
        # Qwen-Image) has model_index.json and a config per component folder (diffusers
        # documentation, "Load pipelines": the repository layout)
        "HTTP 404",
        r"(?:[Nn]ot [Ff]ound|\b404\b)[^\n]*?huggingface\.co/\S+/resolve/\S+/config\.json\b",
        "the model repository has no config.json at its root: an image or diffusers model "
        "(FLUX, Qwen-Image, Stable Diffusion) keeps model_index.json there and one config per "
        "component folder (transformer/, vae/, text_encoder/); a program that fetches a "
        "root config.json for every model treats it as a text model: that model type is "
        "not supported by this program's code path, or the program looks it up wrongly (its "
        "own model list should say how to load it)",
        "check the repository's files on its page (model_index.json means a diffusers "
        "model); upgrade the program (its support for image models may be newer) or report "
        "the model id to it; a text model's repository must hold config.json",
    ),
    (
        "HTTP 404",
        r"\b404 Client Error\b|RepositoryNotFoundError|EntryNotFoundError|RevisionNotFoundError|"
        r"\b404 Not Found\b",
        "no such repository, revision or file at that URL: a model id or revision misspelt, "
        "a file that repository does not have, or a private repository asked for without a "
        "token",
        "check the model id and revision on the hub's page; log in when it is private",
    ),
    (
        "HTTP 429",
        r"\b429 Client Error\b|\bToo Many Requests\b",
        "the server rate-limited the requests (many hosts downloading at once)",
        "log in (authenticated limits are higher), download once and share the copy, or "
        "retry later",
    ),
    (
        "ECONNRESET",
        r"Connection reset by peer|ConnectionResetError",
        "the other end closed the connection abruptly: its process died or was killed (its "
        "own log has the cause), or a proxy or firewall reset it",
        "read the log of the process at the other end first; this side's error is its echo",
    ),
    (
        "EPIPE",
        r"Broken pipe|BrokenPipeError",
        "a write to a connection or pipe whose reader is gone: the process at the other end "
        "exited first",
        "read the log of the process at the other end; this side's error is its echo",
    ),
    (
        "ECONNABORTED",
        r"Software caused connection abort|Connection aborted",
        "the connection was torn down on this host (a timeout of the stack, or the process "
        "closing it while in use)",
        "look for the earlier error that made it close; rerun with the program's debug logging",
    ),
    (
        "ENOTCONN",
        r"Transport endpoint is not connected|Socket is not connected",
        "a socket used after its connection ended, or a FUSE or network mount that went away",
        "for a mount, remount it (`mount | grep PATH`); for a socket, the peer's earlier "
        "error is the cause",
    ),
    (
        "EADDRNOTAVAIL",
        r"Cannot assign requested address|Can't assign requested address",
        "a bind to an address this host does not have (the address of another host, or a "
        "stale IP given as the local or master address), or, on connect, no free local port",
        "`ip -br addr` (macOS `ifconfig`) for the host's addresses; give each host its own "
        "address; for ports, `sysctl net.ipv4.ip_local_port_range`",
    ),
    (
        "EAFNOSUPPORT",
        r"Address family not supported by protocol|Address family not supported by "
        r"protocol family",
        "an address of a family the host has off: an IPv6 address or '::' on a host with "
        "IPv6 disabled",
        "use an IPv4 address (or 0.0.0.0), or enable IPv6",
    ),
    (
        "EAI_NONAME",
        r"Name or service not known|nodename nor servname provided, or not known|"
        r"No address associated with hostname|Name does not resolve",
        "a host name does not resolve on this host: not in /etc/hosts or DNS (a name only "
        "the other hosts know, a .local mDNS name outside the link)",
        "`getent hosts NAME` (macOS `dscacheutil -q host -a name NAME`) on the failing host; "
        "add it to /etc/hosts or give an IP address",
    ),
    (
        "EAI_AGAIN",
        r"Temporary failure in name resolution",
        "no DNS server answered for the name (no network or resolver in the container or "
        "host, or an offline host asked for a download)",
        "`cat /etc/resolv.conf` and `getent hosts NAME` on that host; give an IP address or "
        "an /etc/hosts entry, or run offline (HF_HUB_OFFLINE=1 for a cached model)",
    ),
    (
        "EACCES",
        r"Permission denied",
        "the user may not open or use it: the file's owner or mode (a file in /tmp that "
        "another user, or an earlier run as root, created: /tmp's sticky bit lets only its "
        "owner write, remove or replace it), a device node (/dev/infiniband/*, /dev/nvidia*) "
        "not in the user's group or not given to the container, SELinux or AppArmor, a "
        "noexec mount, or a port below 1024",
        "`ls -l PATH` and `id` on that host; remove a /tmp file another user left (as that "
        "user or root) or run as its owner; give the container the device (--device, "
        "--privileged) or the user the group",
    ),
    (
        "EPERM",
        r"Operation not permitted",
        "the call needs a privilege the process lacks: a capability (IPC_LOCK to pin memory, "
        "SYS_NICE, NET_RAW, SYS_PTRACE), a container's seccomp profile, or macOS's System "
        "Integrity Protection or privacy controls",
        "run with the capability the call needs (--cap-add) or as root where that is meant; "
        "on macOS grant the terminal the permission it asks for",
    ),
    (
        "ENFILE",
        r"Too many open files in system",
        "the system-wide limit of open files is reached",
        "raise fs.file-max (macOS kern.maxfiles) or find the process holding them (`lsof | wc -l`)",
    ),
    (
        "EMFILE",
        # asyncio's accept loop logs this for EMFILE, ENFILE, ENOBUFS and ENOMEM alike
        # (CPython Lib/asyncio/selector_events.py, _accept_connection), nearly always EMFILE
        r"Too many open files|socket\.accept\(\) out of system resource",
        "the process's open-file limit is reached (often 1024 on Linux and 256 in a macOS "
        "shell): many sockets to many peers, or files left open",
        "`ulimit -n` where the process starts; raise it (`ulimit -n 65536`, or the "
        "service's LimitNOFILE), on every host",
    ),
    (
        "ENOMEM",
        r"Cannot allocate memory",
        "the kernel refused memory: RAM and swap used up, a container's or cgroup's memory "
        "limit, or for pinned or registered memory (RDMA, CUDA host buffers) the locked-memory "
        "limit (`ulimit -l`) or vm.max_map_count",
        "`free -g` and the container's memory limit; `ulimit -l unlimited` for RDMA; fewer "
        "ranks or a smaller batch per host",
    ),
    (
        "EAGAIN",
        r"Resource temporarily unavailable|can't start new thread",
        "a call that would block on a non-blocking socket, or a limit on processes or threads "
        "(`ulimit -u`, a container's pids.max) when starting one",
        "for threads, `ulimit -u` and the container's pids limit; else the program's retry",
    ),
    (
        "ENOBUFS",
        r"No buffer space available",
        "the kernel ran out of socket buffers (many connections, or a NIC's queues full)",
        "fewer connections at once; raise net.core.rmem_max/wmem_max",
    ),
    (
        "ENOENT",
        r"No such file or directory",
        "a path that does not exist on the host that looked: a model, checkpoint, script, "
        "virtual environment or binary present on one host but not another, a relative path "
        "from another working folder, or a device node whose driver is not loaded",
        "`ls -l PATH` on that host (`ssh HOST ls -l PATH`); give the same absolute paths on "
        "every host",
    ),
    (
        "ENODEV",
        r"No such device(?! or address)",
        "the device is absent: its driver is not loaded, or it was not passed to the container",
        "`lsmod` or `ls /dev` for the device; load the driver or pass the device in",
    ),
    (
        "ENXIO",
        r"No such device or address",
        "the device or address does not exist (a device node without its hardware)",
        "check the device is present (`ls -l /dev`, `dmesg`)",
    ),
    (
        "EBUSY",
        r"Device or resource busy|Resource busy",
        "another process holds the device or resource: a leftover rank, a GPU in "
        "exclusive-process compute mode, or a mount in use",
        "`nvidia-smi` or `fuser -v DEVICE` (`lsof DEVICE`); end the leftover process, or "
        "set the GPU's compute mode to default",
    ),
    (
        "EIO",
        r"Input/output error",
        "the device or filesystem under the path failed: a disk, a network filesystem, or a driver",
        "`dmesg | tail` on that host; retry after the filesystem or device recovers",
    ),
    (
        "ESTALE",
        r"Stale (?:NFS )?file handle",
        "an NFS file replaced or removed on the server while this host had it open",
        "reopen it (restart the process); avoid rewriting files other hosts read",
    ),
    (
        "ENOEXEC",
        r"Exec format error",
        "a binary built for another architecture (an x86_64 image or wheel on arm64), or a "
        "script without its #! line",
        "`file BINARY` and `uname -m`; install the build for this architecture",
    ),
    (
        "E2BIG",
        r"Argument list too long",
        "the command line and environment together exceed the kernel's limit (a very long "
        "environment passed to every rank)",
        "pass less in the environment or on the command line (a file instead)",
    ),
    (
        "ENOSYS",
        r"Function not implemented",
        "the kernel or sandbox lacks the system call (an old kernel, gVisor, an emulator)",
        "run on a kernel that has it, or without the sandbox",
    ),
    (
        "EOPNOTSUPP",
        r"Operation not supported(?: on socket)?",
        "the filesystem, socket or device does not support the operation (a network or "
        "overlay filesystem, a driver without the feature)",
        "run it on a local filesystem, or with a driver that has the feature",
    ),
    (
        "EFAULT",
        r"Bad address",
        "the kernel could not use a buffer the program passed: a pointer outside its "
        "memory, or device (GPU) memory handed to a call that takes host memory",
        "a bug of the program or its library: upgrade it, and report the call that failed",
    ),
)

_TEXTS = re.compile("|".join(f"(?P<g{k}>{row[1]})" for k, row in enumerate(_TABLE)))


def system_error(text: str) -> Optional[Tuple[str, str, str]]:
    """The last system error ``text`` names (the innermost cause of a chain like ``write
    failed: ... : No space left on device``): ``(errno name, its words as printed, what it
    means and usually causes)``, with what to run appended to the meaning; None when
    ``text`` names none."""
    found = None
    for m in _TEXTS.finditer(text):
        found = m
    if found is None:
        return None
    name, _, meaning, action = _TABLE[int((found.lastgroup or "g0")[1:])]
    return name, found.group(0), f"{meaning}; what to run: {action}"


def names_one(text: str) -> bool:
    """Whether ``text`` holds a system error's words (an error line however it is tagged)."""
    return _TEXTS.search(text) is not None


def reading(text: str) -> Optional[str]:
    """What the generic readings say of the system error ``text`` ends in: a sentence naming
    the errno and its usual causes, or None when it names none."""
    got = system_error(text)
    if got is None:
        return None
    name, words, meaning = got
    return f"the error it ends in, {name} ('{words}'), means {meaning}"
