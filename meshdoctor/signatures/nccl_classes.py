"""Failure classes of NCCL's ``WARN`` lines (the sites of ``sites/nccl.tsv``: NCCL v2.30.7
src/transport/net_ib, net_socket.cc, shm.cc, p2p.cc, net.cc, nvls.cc, coll_net.cc,
bootstrap.cc, proxy.cc, init.cc, enqueue.cc, group.cc, transport.cc, mem_manager.cc,
allocator.cc, mnnvl.cc, src/graph, src/ras, src/register, src/plugin/net.cc, misc/socket.cc,
misc/shmutils.cc, misc/ibvwrap.cc, misc/cudawrap.cc, misc/argcheck.cc, misc/nvmlwrap.cc,
misc/gdrwrap.cc, os/linux.cc, os/linux_ipcsocket.cc), each a
:class:`~meshdoctor.signatures.model.FailureClass` of nccl.warn with its cause and what
helps, most specific first."""

from __future__ import annotations

from dataclasses import replace

from meshdoctor.signatures.model import CAUSE, failure_class as fc

_S = "NCCL v2.30.7 "

CLASSES = (
    # an API struct not set up with its initializer macro (NCCL checks a magic field of it)
    fc(
        "nccl.struct-initializer",
        r"(?:must be initialized|not initialized) via NCCL_\w+_INITIALIZER",
        "the program passed NCCL an API struct (ncclConfig_t, ncclDevCommRequirements_t, "
        "ncclCommProperties_t, ncclSimInfo_t) that was not set up with its initializer macro: "
        "NCCL checks the macro's magic fields and refuses the call (ncclInvalidArgument or "
        "ncclInvalidUsage)",
        "the code declares the struct without the initializer, or zero-fills it with memset; "
        "code written against one NCCL release meets a newer one that checks the struct (the "
        "device communicator's requirements since NCCL 2.29: PyTorch's symmetric memory "
        "before its fix, pytorch/pytorch #172398; NCCL's own device examples, NVIDIA/nccl "
        "#1959)",
        "initialise the struct with the macro the WARN names (`ncclDevCommRequirements_t reqs "
        "= NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER;`, `ncclConfig_t config = "
        "NCCL_CONFIG_INITIALIZER;`) before setting its fields; for a framework, use the NCCL "
        "release it was built with or its release with the fix",
        _S + "src/dev_runtime.cc (ncclDevCommCreate, ncclCommQueryProperties), src/init.cc "
        "(ncclCommInitRankConfig), src/group.cc; src/nccl.h.in",
    ),
    fc(
        "nccl.topo-xml-attribute",
        r"Attribute \S+ of node \S+ not found",
        "NCCL read a topology XML that lacks an attribute it needs (a node without its arch, "
        "vendor or a link's attributes): a topology file given to NCCL (NCCL_TOPO_FILE) that "
        "does not fit this machine, not the machine's own hardware",
        "a static topology file from a network plugin: aws-ofi-nccl before 1.11 sets "
        "NCCL_TOPO_FILE to its own file for p4d/p5 instances "
        "(/opt/amazon/efa/share/aws-ofi-nccl/xml/*-topo.xml), which breaks when only some of "
        "the GPUs are visible to the process; or a hand-written or copied topology file",
        "upgrade aws-ofi-nccl (1.11 and later generate the topology instead of a static "
        "file), or unset NCCL_TOPO_FILE (or fix the file) so NCCL detects the topology "
        "itself; `env | grep NCCL_TOPO_FILE` where the ranks run",
        _S + "src/graph/xml.h (xmlGetAttr... 'Attribute %s of node %s not found'); "
        "https://github.com/aws/aws-ofi-nccl/issues/785",
    ),
    fc(
        "nccl.topology",
        r"Could not find (?:NET|GPU|NIC|CPU|NVS|PCI) with id|Could not find (?:NET|GPU|NIC) "
        r"\d|Could not get PCI path|Topology detection failed|Could not find (?:a )?path|"
        r"ncclTopo\w+ failed|Could not find nodes of type|XML (?:Import|Parse|parse|Load) ?"
        r"(?:error|Error|failed)|Could not open XML|XML topology|XML (?:Parse|Mismatch|Graph|"
        r"Topology|Export)|XML parser|XML (?:nodes|subnodes)|Could not find (?:node|id|net|gpu|"
        r"rev link|NIC|intermediate GPU|local GPU|any local path|CPU)|TOPO/NET|NET/TOPO|fused NIC|"
        r"Fusing NET|Topo links|too many nodes|too many DEV|Add (?:NVLink|PCI Link|C2c) error|"
        r"numa ID|CPU architecture|KV Convert|localHostHash|ncclTopo\w+|MLOPart|requires NIC|"
        r"reverse path|No path computed|CPU close to GPU|unable to find GPU/CPU|system node|"
        r"Unrecognized (?:element|prefix) token|Attribute \S+ of node|not dumping topology|"
        r"P2P is disabled between NVLINK|(?:name|value) \S+ too long|ran out of room|"
        r"ncclTopoFillNet",
        "NCCL's topology search could not place a device it found (a NIC, GPU or path between "
        "them) in its graph of the machine",
        "a bug of this NCCL release with this machine's devices (several NICs, IB with "
        "NVLink, a new platform; fixed releases exist for such cases), or a topology file "
        "(NCCL_TOPO_FILE, a container's or VM image's XML) that does not match the real "
        "machine",
        "upgrade NCCL (a newer release, or a newer container image that bundles it) first; "
        "remove NCCL_TOPO_FILE or give one of this machine; narrow NCCL_IB_HCA to the NICs "
        "in use; NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=GRAPH,INIT shows what it found",
        "NCCL v2.30.7 src/graph/topo.cc, src/graph/topo.h, src/graph/paths.cc; "
        "https://github.com/NVIDIA-NeMo/Speech/issues/13996 (NCCL 2.25 in a container, 2.27.3 "
        "fixed it)",
    ),
    fc(
        "nccl.nvls-multicast",
        r"Failed to bind NVLink SHARP \(NVLS\) Multicast|NVLS\) Multicast memory",
        "NCCL could not bind NVLink SHARP (NVLS) multicast memory on the NVSwitches: the CUDA "
        "error it names is about the switches, not the GPU ('out of memory': their multicast "
        "objects; 401 'the operation cannot be performed in the present state': the fabric's "
        "state, Fabric Manager or the NVSwitches)",
        "the NVSwitches' multicast objects used up (NCCL creates NVLS buffers for each "
        "communicator of a node's GPUs: many small communicators, FSDP or tensor-parallel "
        "sub-groups, use them up and a release that does not fall back then fails), or "
        "Fabric Manager (or IMEX on multi-node NVLink) not running or in error",
        "NCCL_NVLS_ENABLE=0 on every rank (NCCL then uses its other algorithms); check "
        "Fabric Manager (`systemctl status nvidia-fabricmanager`, `nvidia-smi -q | grep -A2 "
        "-i fabric`); with many communicators, create fewer or upgrade NCCL",
        _S + "src/transport/nvls.cc ('Failed to bind NVLink SHARP (NVLS) Multicast memory "
        "... Disable NVLS (NCCL_NVLS_ENABLE=0)')",
    ),
    fc(
        "nccl.cuda-oom",
        r"Cuda failure (?:\d+ )?'out of memory'|Failed to CUDA (?:calloc|malloc|host alloc)|"
        r"CUDA_ERROR_OUT_OF_MEMORY",
        "a CUDA allocation inside NCCL failed: the GPU is out of memory (NCCL's buffers, "
        "allocated at communicator init and on a peer's first connection, found no room)",
        "the job's own tensors (model, optimizer state, activations) or another process "
        "hold the GPU's memory, leaving no headroom for NCCL's buffers",
        "leave GPU memory for NCCL: a smaller per-GPU model or batch (more sharding or "
        "offload), create the communicator (and run one collective) before loading the "
        "model, no other process on the GPU (`nvidia-smi`); lower NCCL_BUFFSIZE or "
        "NCCL_MAX_NCHANNELS (NCCL's environment variables)",
        _S + "src/include/alloc.h, src/include/checks.h, src/include/cudawrap.h; NVIDIA/nccl #1235",
    ),
    fc(
        "nccl.shm-attach",
        r"Error while attaching to shared memory segment|Call to open failed: ?No such file",
        "NCCL could not open a shared-memory segment that a local peer rank created "
        "(/dev/shm/nccl-*: attaching, not creating)",
        "the ranks of one host do not share /dev/shm (separate containers or IPC "
        "namespaces), or the peer that created the segment died and removed it",
        "run the ranks of a host in one container or with a shared IPC namespace (docker "
        "--ipc=host, one pod), read whether the local peer died first; or set "
        "NCCL_SHM_DISABLE=1 to use another transport",
        _S + "src/os/linux.cc, src/misc/shmutils.cc (2.19-2.28); NVIDIA/nccl #1589",
    ),
    fc(
        "nccl.file-call",
        r"Call to open failed",
        "opening a file NCCL needs failed (a /dev/shm segment, a /proc or sysfs file)",
        "the file is missing (ENOENT: a peer's /dev/shm segment not visible here, sysfs not "
        "mounted) or not allowed (EACCES)",
        "read the errno text and the WARN after it (it names the file); for /dev/shm run the "
        "ranks of a host with a shared /dev/shm (docker --ipc=host)",
        "NCCL 2.32.3 libnccl.so.2 (nvidia-nccl-cu13 wheel); NCCL v2.21.5 src/misc/shmutils.cc",
    ),
    fc(
        "nccl.shm",
        r"shared memory|/dev/shm|posix_fallocate|Could not map \S+ size|failed to extend|shm (?:close|unlink)|"
        r"No space left on device",
        "NCCL could not create, size or map a shared-memory segment in /dev/shm",
        "/dev/shm is full or too small (a container's 64 MB default, a Kubernetes pod "
        "without a memory-backed /dev/shm), or filled by the segments of earlier runs "
        "(NCCL's /dev/shm/nccl-* files of ranks that died before unlinking them stay: over "
        "restarts of one pod or container they fill it, 'No space left on device')",
        "`df -h /dev/shm` and `ls -la /dev/shm`: remove the nccl-* files no live process holds "
        "(`lsof /dev/shm/nccl-*`), or clear /dev/shm before the job starts; size the tmpfs "
        "(docker --shm-size=1g or --ipc=host; in Kubernetes an emptyDir volume with medium: "
        "Memory mounted on /dev/shm, or hostIPC), or set NCCL_SHM_DISABLE=1 to use another "
        "transport",
        _S + "src/os/linux.cc, src/misc/shmutils.cc, src/proxy.cc; NVIDIA/nccl #290; "
        "llm-d/llm-d #352 (stale segments after crashes)",
    ),
    fc(
        "nccl.create-qp",
        r"ibv_create_qp",
        "the RDMA device refused another queue pair (ibv_create_qp)",
        "ENOMEM: the NIC's queue-pair limit (max_qp) or its memory for them reached (many "
        "ranks or communicators per host, each with NCCL_IB_QPS_PER_CONNECTION queue pairs "
        "per peer), or the locked-memory limit (`ulimit -l`); EINVAL: an attribute the "
        "device does not take (a send or receive depth, NCCL_IB_* settings)",
        "`ibv_devinfo -v | grep max_qp` against the queue pairs the job needs; fewer "
        "communicators or NCCL_IB_QPS_PER_CONNECTION=1; `ulimit -l unlimited` where the ranks "
        "run",
        _S + "src/misc/ibvwrap.cc (wrap_ibv_create_qp), src/transport/net_ib; ibv_create_qp(3)",
    ),
    fc(
        "nccl.bootstrap-nranks",
        r"mismatch in rank count|mismatch in info from procs",
        "the processes that met at one bootstrap root disagree on the communicator's size "
        "(nranks) or roots: they do not belong to one communicator",
        "ranks of two jobs meeting at one root (the same NCCL_COMM_ID, or a master address "
        "and port reused while another job still runs there), or ranks started with "
        "different world sizes (a launcher's node or process count that differs between "
        "hosts, a hostfile that differs)",
        "give every job its own rendezvous (a free port, its own NCCL_COMM_ID), end the "
        "leftover job, and start every rank with the same world size (the same launcher "
        "arguments and hostfile on every host)",
        _S + "src/bootstrap.cc (bootstrapRoot: 'mismatch in rank count', 'mismatch in info "
        "from procs')",
    ),
    fc(
        "nccl.reg-mr",
        r"ibv_reg_mr|reg_mr|reg_dmabuf_mr|could not find mr|Cannot allocate memory|register "
        r"fails",
        "registering memory with the RDMA device failed",
        "the locked-memory limit (ENOMEM under a small `ulimit -l`), then the kernel's or "
        "driver's memory registration (peer memory for GPU buffers); with the limit already "
        "unlimited and a kernel just upgraded, the kernel's page pinning itself: NVIDIA's "
        "Linux 7.0 kernels (7.0.0-*-nvidia, DGX Spark) hand out CMA pageblocks through Kexec "
        "HandOver, and long-term pinning of them fails with ENOMEM (NVIDIA/NV-Kernels PR #591)",
        "raise the locked-memory limit (`ulimit -l unlimited`, limits.conf memlock, docker "
        "--ulimit memlock=-1) where the ranks really run (`cat /proc/PID/limits`: a "
        "limits.conf edit reaches only new logins, not a running daemon's or container's "
        "children); when it is already unlimited and the failure came with a new kernel "
        "(`uname -r`), boot the previous kernel or add kho=off to the kernel command line; "
        "then check nvidia-peermem / DMA-BUF support; for GPU buffers "
        "(ibv_reg_dmabuf_mr) with the limit already unlimited, register less: a smaller "
        "NCCL_BUFFSIZE or fewer channels (NCCL_MAX_NCHANNELS), or NCCL_DMABUF_ENABLE=0",
        _S + "src/misc/ibvwrap.cc, src/transport/net_ib; NVIDIA/NV-Kernels PR #591",
    ),
    fc(
        "nccl.mismatch",
        r"[Mm]essage truncated|Mismatched response size|magic "
        r"mismatch|posted incorrect receive info|collective mismatch",
        "a peer sent a message of another size than this rank expected",
        "ranks calling collectives of different sizes or in a different order, or NCCL "
        "settings (NCCL_PROTO, NCCL_ALGO, buffer sizes) that differ across ranks",
        "make every rank call the same collectives in the same order with the same counts; "
        "give every rank the same NCCL_* environment",
        _S + "src/bootstrap.cc, src/transport/net_socket.cc; NVIDIA/nccl #605",
    ),
    fc(
        "nccl.foreign-connection",
        r"wrong magic|bad magic|Invalid magic",
        "a connection to one of NCCL's listening ports (bootstrap, proxy service, RAS) did "
        "not start with NCCL's 8-byte magic: something that is not this job's NCCL "
        "connected (a magic that reads as text, 'GET /met', is another protocol's request)",
        "another program reaching the port: a metrics scraper or health probe, a port "
        "scanner, a load balancer's check, or a rank of another job using the same address "
        "and port (NCCL_COMM_ID, a reused MASTER_PORT); releases before the fix of "
        "NVIDIA/nccl #1808 retry on such a connection in the proxy and RAS threads and spin "
        "there, so the job hangs after init",
        "find what connects to the job's ports (`ss -tnp` on the host while it runs; the "
        "cluster's scrapers and scanners) and keep it off the hosts' NCCL addresses, or bind "
        "NCCL to an interface they do not reach (NCCL_SOCKET_IFNAME); upgrade NCCL to a "
        "release with the fix of #1808 (2.30.u1 branch and later)",
        _S + "src/misc/socket.cc (socketFinalizeAccept 'wrong magic'); NVIDIA/nccl #1808",
    ),
    fc(
        "nccl.version-mismatch",
        r"Mismatched NCCL version|mixed local (?:Coll)?Net device counts|netName \S+ is "
        r"different|incompatible|wrong type|different number of devices|Can't merge "
        r"net devices|merge multiple devices",
        "the ranks do not agree on NCCL's version or their network devices",
        "different NCCL builds on the hosts, or hosts with different NIC counts or link types",
        "install the same NCCL on every host; select NICs of one link type (NCCL_IB_HCA) or "
        "set the NCCL_IGNORE_*_MISMATCH the message names",
        _S + "src/init.cc, src/transport/net_ib",
    ),
    fc(
        "nccl.no-interface",
        r"no socket interface found|No usable listening interface|no (?:device|interface) "
        r"found|No IP interface found|NCCL_OOB_NET_IFNAME|No valid \S+ pair found|getting "
        r"address info|unsupported IP family|neither AF_INET|Invalid NCCL_COMM_ID|No interface "
        r"found|is invalid for family|Address family not supported",
        "NCCL found no usable network interface or address",
        "NCCL_SOCKET_IFNAME (or NCCL_OOB_NET_IFNAME) names an interface this host lacks, or "
        "none is up with an address; NCCL_COMM_ID malformed; an IPv6 address picked on a host "
        "or container whose IPv6 is off (EAFNOSUPPORT, 'Address family not supported')",
        "set NCCL_SOCKET_IFNAME to the interface the hosts share (`ip -br addr`); for "
        "'Address family not supported', an interface with an IPv4 address (or "
        "NCCL_SOCKET_FAMILY=AF_INET)",
        _S + "src/bootstrap.cc, src/misc/socket.cc, src/transport/net_socket.cc",
    ),
    fc(
        "nccl.connect-no-pollout",
        r"poll\(\) returned \d+, no POLLOUT",
        "NCCL's non-blocking connect to a peer ended without the socket becoming writable: "
        "poll() reported an error or hang-up (the SYN refused or dropped, the connect timed "
        "out) and NCCL gave up on it",
        "the peer's host dropping or refusing the connection (a firewall, a full SYN or "
        "conntrack table on a large job, the peer not listening yet), which releases before "
        "NCCL 2.27.3 do not retry (NVIDIA/nccl #1618)",
        "upgrade NCCL to 2.27.3 or later (it retries such a connect); find why connects to "
        "that peer fail: `nc -vz PEER PORT` from this host, the peer's firewall and "
        "`nf_conntrack` counters (`conntrack -S`), SYN drops (`netstat -s | grep -i listen`)",
        _S + "src/misc/socket.cc (socketPollConnect); https://github.com/NVIDIA/nccl/issues/1618",
    ),
    fc(
        "nccl.ofi-reg-mr",
        r"NET/OFI Unable to register memory",
        "aws-ofi-nccl could not register a buffer with Libfabric (type 2: CUDA, GPU memory; "
        "type 1: host memory)",
        "an EFA Libfabric older than this NCCL needs: NCCL 2.19 and later register GPU "
        "buffers in a way that Libfabric of EFA installers before 1.29.1 refuses (RC -22, "
        "Invalid argument) (aws/aws-ofi-nccl #584)",
        "upgrade the EFA installer (Libfabric) to 1.29.1 or later on every host (`fi_info -p "
        "efa` shows the provider's version), or set FI_EFA_SET_CUDA_SYNC_MEMOPS=0, or stay on "
        "NCCL 2.18 until then; the aws-ofi-nccl plugin and the EFA installer should be of one "
        "release",
        "aws-ofi-nccl (register_mr_buffers: 'NET/OFI Unable to register memory'); "
        "https://github.com/aws/aws-ofi-nccl/issues/584",
    ),
    fc(
        "nccl.ofi-tuner",
        r"tuner plugin can ?not be loaded when explicitly choosing an algorithm or protocol",
        "aws-ofi-nccl's tuner refused to load because NCCL_ALGO or NCCL_PROTO is set, and "
        "under NCCL before 2.21 (its tuner v1 interface) that refusal fails the "
        "communicator's init ('invalid argument'); the plugin sets NCCL_PROTO=simple itself "
        "on EFA without byte-delivery ordering (p4d/p4de: 'Adding NCCL_PROTO=simple to "
        "environment'), so its own setting trips its own tuner",
        "an aws-ofi-nccl release whose tuner is on by default, with NCCL 2.20 or "
        "older, and NCCL_PROTO/NCCL_ALGO set by the job or by the plugin",
        "upgrade aws-ofi-nccl to a release that falls back to NCCL's own tuner when "
        "NCCL_ALGO or NCCL_PROTO is set (aws/aws-ofi-nccl PR #986), or upgrade NCCL to 2.21 "
        "or later; meanwhile keep the plugin's tuner out (NCCL_TUNER_PLUGIN naming another "
        "library) or unset NCCL_ALGO/NCCL_PROTO where the job set them",
        "aws-ofi-nccl nccl_ofi_tuner ('The tuner plugin can not be loaded when explicitly "
        "choosing an algorithm or protocol'); https://github.com/aws/aws-ofi-nccl/issues/982, "
        "PR #986",
    ),
    fc(
        "nccl.ofi-av-insert",
        r"NET/OFI Unable to insert remote address into address vector",
        "aws-ofi-nccl could not add the peer's EFA address to its address vector "
        "(fi_av_insert): Libfabric found no path to the peer's EFA device",
        "on AWS, a security group that does not let EFA traffic between the instances: EFA "
        "needs an inbound and an outbound rule allowing all traffic whose source (and "
        "destination) is the security group itself; the default outbound 0.0.0.0/0 rule does "
        "not cover EFA's traffic, while TCP and ping between the hosts still work; or "
        "instances in different subnets",
        "add both self-referencing rules (inbound and outbound, all traffic, the group's own "
        "ID) to the security group of every instance, in one subnet; check with `fi_pingpong "
        "-p efa` between two hosts before NCCL",
        "AWS EFA documentation (an EFA-enabled security group: inbound and outbound rules "
        "that reference the group itself); aws-ofi-nccl ('Unable to insert remote address "
        "into address vector')",
    ),
    fc(
        "nccl.ofi-getinfo",
        r"NET/OFI OFI fi_getinfo\(\) call failed",
        "aws-ofi-nccl asked Libfabric for its provider (EFA) and got none ('No data "
        "available': `fi_info -p efa` returns -61, ENODATA)",
        "the EFA devices not visible to the process: a container started without them "
        "(/dev/infiniband/uverbs*), an instance type or ENI without EFA, or the EFA driver "
        "not loaded; rarely a Libfabric without the efa provider",
        "pass the devices into the container (`docker run --device /dev/infiniband/uverbs0 "
        "...` for each, or the EFA device plugin's resource in a pod), check `fi_info -p efa` "
        "inside it, and on the host `lsmod | grep efa`",
        "aws-ofi-nccl (nccl_net_ofi init: 'OFI fi_getinfo() call failed'); Libfabric fi_info; "
        "AWS EFA documentation (EFA in containers)",
    ),
    fc(
        "nccl.connect-loopback",
        r"[Cc]onnect to (?:127\.\d+\.\d+\.\d+|::1|\[::1\])<\d+> failed",
        "NCCL dialled a loopback address (127.x, ::1) for a peer: in a job across hosts the "
        "peer announced loopback as its own address, which no other host can reach",
        "the address NCCL chose on that peer is lo's: NCCL_SOCKET_IFNAME names lo (or a "
        "pattern that only lo matches), NCCL found no other interface it may use there (it "
        "takes docker and lo only when nothing else matches), or the address handed to it "
        "resolves to loopback (a host name that /etc/hosts maps to 127.0.1.1, the launcher's "
        "master address given as localhost)",
        "set NCCL_SOCKET_IFNAME to the interface the hosts share on every node (`ip -br addr` "
        "on each; e.g. NCCL_SOCKET_IFNAME=eth0, or a prefix such as enp); check that `getent "
        "hosts $(hostname)` gives the routable address, not 127.0.1.1; in a job of one host "
        "a loopback peer is normal: read that peer's own log",
        "NCCL v2.23.4 src/misc/socket.cc (ncclFindInterfaces: NCCL_SOCKET_IFNAME, else any "
        "interface but docker and lo, then docker, then lo; socketStartConnect)",
    ),
    fc(
        "nccl.connect-link-local",
        r"[Cc]onnect to (?:fe80:[0-9a-fA-F:]*|169\.254\.\d+\.\d+)(?:%[\w.-]+)?<\d+> failed",
        "NCCL dialled a peer's link-local address (IPv6 fe80::...%IF or IPv4 169.254.x.x): the "
        "interface NCCL chose on that peer has no routable address, only one valid on a "
        "single link",
        "NCCL_SOCKET_IFNAME unset, and NCCL took an interface whose only address is "
        "link-local: an SR-IOV or accelerated-networking virtual function beside the primary "
        "NIC (Azure's enP... interfaces beside eth0), a virtual or container interface; or "
        "NCCL_SOCKET_FAMILY=AF_INET6 on hosts whose IPv6 is link-local only",
        "set NCCL_SOCKET_IFNAME to the interface that holds the hosts' routable address "
        "(`ip -br addr` on each node; eth0 on Azure VMs) on every node, or "
        "NCCL_SOCKET_FAMILY=AF_INET; for an image that enables accelerated networking, use one "
        "whose NCCL setup supports it",
        "NCCL v2.23.4 src/misc/socket.cc (findInterfaces takes each interface's first "
        "address; NCCL_SOCKET_FAMILY); Azure accelerated networking (the VF interface beside "
        "the synthetic one)",
    ),
    fc(
        "nccl.connect-aborted",
        r"[Cc]onnect to \S+ failed ?: Software caused connection abort",
        "NCCL's connect to a peer failed with ECONNABORTED ('Software caused connection "
        "abort'): in releases before 2.24 this is NCCL's own connect retry failing after the "
        "connect was refused or timed out, a bug of the retry path that hides the first "
        "error",
        "most often ECONNREFUSED underneath: the peer not listening yet, or gone (its log), "
        "or a firewall that rejects the port, or an address of the peer that this host does "
        "not reach (another subnet than its own: a node whose NCCL chose another interface "
        "because NCCL_SOCKET_IFNAME, or GLOO_SOCKET_IFNAME, was not set the same on every "
        "node or container); the retry bug of NCCL before 2.24 turns it into this abort",
        "upgrade NCCL to 2.24 or later (its connect retry was reworked, and the real error "
        "shows); then find why that peer refuses: its log, `nc -vz PEER PORT` from this host, "
        "the firewall between them; when the peer's address is on another subnet than the "
        "hosts share, set NCCL_SOCKET_IFNAME (and GLOO_SOCKET_IFNAME) to the shared "
        "interface on every node and container",
        "NCCL v2.23.4 src/misc/socket.cc (socketStartConnect, its retry on ECONNREFUSED and "
        "ETIMEDOUT); NCCL 2.24 release notes",
    ),
    fc(
        "nccl.connect",
        r"connect to \S+ (?:returned|failed)|exceeded (?:error )?retr|PollConnect|Accept "
        r"failed|TryAccept|Connect to \S+ failed|exceeded timeouts",
        "NCCL could not connect to (or accept) a peer's socket",
        "the peer is not listening (it died or has not started), a firewall drops the port, "
        "or the address is on the wrong interface",
        "read the peer's log first; then `nc -vz PEER PORT` and NCCL_SOCKET_IFNAME",
        _S + "src/os/linux.cc, src/misc/socket.cc",
    ),
    fc(
        "nccl.socket-call",
        r"Call to (?:accept|bind|close|getifaddrs|getsockopt|listen|read|setsockopt[\w ]*|"
        r"shutdown|socket|write) failed:|file descriptor is -1|Socket creation failed",
        "a socket system call NCCL made failed (the text after it is the errno's)",
        "too many open files (EMFILE: `ulimit -n`), a port in use (bind: EADDRINUSE), or an "
        "interface that went away",
        "read the errno text; raise `ulimit -n`; free or change the port; check NCCL_SOCKET_IFNAME",
        "NCCL 2.32.3 libnccl.so.2 (nvidia-nccl-cu13 wheel); NCCL v2.30.7 src/misc/socket.cc",
    ),
    fc(
        "nccl.peer-lost",
        r"Call to \S+ (?:from |to )?\S+ failed :|socket progress error|Socket recv failed while polling|"
        r"Could not receive type from localRank|Connection closed|asynchronous (?:bootstrap )?"
        r"send (?:to peer \d+ )?failed|call to (?:tpRank|rank|top parent rank) \d+.* failed",
        "a socket to a peer failed mid-transfer",
        "the peer rank died or its host or link went away; in init with no peer failing, "
        "on NCCL before 2.27.3, a connection of another program to the bootstrap port that "
        "closed before sending NCCL's magic (NVIDIA/nccl #1612: 2.27.3 ignores it)",
        "find the rank that failed first; if none died, check the link between the hosts, "
        "and on NCCL before 2.27.3 what else connects to the job's ports (scanners, "
        "probes: `ss -tnp`), then upgrade NCCL",
        _S + "src/os/linux.cc, src/proxy.cc, src/transport/net_socket.cc",
    ),
    fc(
        "nccl.ib-qp-error",
        r"local access violation work queue error|invalid request local work queue error|"
        r"local work queue catastrophic error",
        "the RDMA device put a queue pair in error for a request it could not carry out "
        "(libibverbs async events IBV_EVENT_QP_ACCESS_ERR, QP_REQ_ERR, QP_FATAL): the two "
        "ends' queue pairs or buffers do not match",
        "ports of different MTUs on the two hosts (NCCL 2.20 and later no longer lower a queue "
        "pair's MTU to the smaller end's), or a buffer deregistered while in use; the failed "
        "and flushed completions that follow (status 5) are its echo",
        "compare the ports on both hosts (`ibv_devinfo -v`: active_mtu; `ip link` MTU for "
        "RoCE) and give them, and the switch, the same MTU; if it began with an NCCL upgrade "
        "and the MTUs match, report it with both hosts' `ibv_devinfo -v`",
        "libibverbs ibv_event_type_str (enum ibv_event_type); " + _S + "src/transport/net_ib; "
        "https://github.com/NVIDIA/nccl/issues/1524",
    ),
    fc(
        "nccl.ib-fault",
        r"Got completion from peer|CQE with error|async fatal event|failed QP|marked as "
        r"failed|Fatal error\. Detected|The error is fatal|encountered a fatal error|GID table "
        r"changed|async event|unknown event type|stale CQE|functional device|(?:ECE|Init|RTR|"
        r"RTS|Reset) failed \(\d+\) for QP|Flush QP|port-recovery|Resiliency QPs|GID change|"
        r"async error event|"
        r"GID-change",
        "the InfiniBand/RoCE device reported a failed work request or a fatal event",
        "a link, cable or switch port fault (port down, retry exceeded), RoCE without a "
        "lossless fabric, or the peer died mid-transfer",
        "check the port (`ibv_devinfo`: PORT_ACTIVE, `ethtool -S` errors), the cable and the "
        "switch; read the peer's log",
        _S + "src/transport/net_ib",
    ),
    fc(
        "nccl.ib-gid-select",
        r"(?:open|read) failed in ncclIbRoceGetVersionNum|ncclIbGetGidIndex|"
        r"NCCL_IB_ROCE_VERSION_NUM",
        "NCCL's automatic GID selection for a RoCE port failed: it reads each GID's RoCE "
        "version from the port's sysfs table (/sys/class/infiniband/DEV/ports/PORT/gid_attrs/"
        "types/INDEX) and one of those reads failed",
        "a container or pod that sees only some of the port's GID indices (macvlan or SR-IOV "
        "sub-interfaces of the RoCE NIC: the indices it lacks read as empty or fail), or "
        "NCCL_IB_ROCE_VERSION_NUM / NCCL_IB_ADDR_FAMILY asking for a GID the port does not "
        "have; HPC-X's IBext plugin selects GIDs the same way",
        "give the GID yourself on every rank: NCCL_IB_GID_INDEX=N, the index of the RoCE v2 "
        "GID holding the interface's IPv4 address (`show_gids`, or `cat /sys/class/infiniband/"
        "DEV/ports/1/gid_attrs/types/N` and `.../gids/N` for each N), and unset "
        "NCCL_IB_ROCE_VERSION_NUM",
        _S + "src/transport/net_ib/connect.cc ('open failed in ncclIbRoceGetVersionNum', "
        "'read failed in ncclIbRoceGetVersionNum'); NCCL environment variables "
        "NCCL_IB_GID_INDEX, NCCL_IB_ROCE_VERSION_NUM",
    ),
    fc(
        "nccl.ib-device",
        r"Unable to (?:open|query) (?:device|port)|ibv_modify_qp|lib wrapper not "
        r"initialized|Call to +failed|Call to ibv_\w+ failed|mlx5dv|virtual (?:device|NIC)|vNic|physical device|"
        r"OOO RQ|FLID|SUBNET_PREFIX|DOCA|GIN|Peermem|DMA-BUF|plane ID|"
        r"data_direct",
        "NCCL could not open, query or set up the RDMA device",
        "rdma-core or the driver missing or mismatched, a device NCCL_IB_HCA names that is "
        "down, a wrong GID index (NCCL_IB_GID_INDEX), or a feature the NIC lacks",
        "run `ibv_devinfo` on the host; fix NCCL_IB_HCA / NCCL_IB_GID_INDEX, or set "
        "NCCL_IB_DISABLE=1 to use sockets",
        _S + "src/misc/ibvwrap.cc, src/transport/net_ib",
    ),
    fc(
        "nccl.cuda-driver",
        r"CUDA Driver version|PFN functions|Retrieve \S+ .*failed|Failed to set CUDA device|"
        r"cudaIpcGetMemHandle|failed to peer with device|libnvidia-ml|Cuda failure|Failed to "
        r"(?:find|load) CUDA|cuDriverGetVersion failed|CUMEM(?: Host)? is not supported|"
        r"not supported prior to CUDA|CUDA context|thread context",
        "a CUDA driver call NCCL needs failed",
        "a driver older than the CUDA runtime, a GPU not visible to the process, or peer "
        "access refused between GPUs",
        "compare `nvidia-smi` with the wheel's CUDA; check CUDA_VISIBLE_DEVICES; try "
        "NCCL_P2P_DISABLE=1",
        _S + "src/misc/cudawrap.cc, src/transport/p2p.cc, src/proxy.cc",
    ),
    fc(
        "nccl.gpu-mapping",
        r"same GPU|Duplicate GPU|intra proc ranks|local ranks rank|invalid IPC peer|diviser "
        r"of the number of ranks",
        "the ranks' GPUs or local ranks do not map as NCCL expects",
        "two ranks on one GPU (CUDA_VISIBLE_DEVICES), or hosts whose ranks disagree on who "
        "is local",
        "run one rank per GPU; give each local rank its own device",
        _S + "src/init.cc, src/transport/p2p.cc",
    ),
    fc(
        "nccl.feature-off",
        r"CollNet currently|MNNVL is not supported|CC On|sharp resources|cap it to|Limiting "
        r"value|set both to|set it to 0|is being ignored|NCCL_IB_MERGE_NICS",
        "NCCL turned a feature off or capped a setting it cannot use here (a warning: the job "
        "goes on)",
        "the system lacks the feature (CollNet/SHARP, MNNVL, confidential computing) or an "
        "NCCL_* setting asks for more than NCCL allows",
        "nothing, unless the job fails after it; unset or correct the NCCL_* setting it names",
        _S + "src/init.cc, src/transport/net_ib (2.21-2.26)",
    ),
    fc(
        "nccl.usage",
        r"Invalid config|Invalig config|ncclConfig_t|improper usage|Invalid rank requested|"
        r"Invalid device|invalid device count|exceeds ndev|should not be called when|"
        r"ncclCommGrow|before the previous operation returned|already been destroyed|"
        r"CTA_POLICY|graphStreamOrdering|NCCL_WORK_FIFO_BYTES|NCCL_SOCKET_NTHREADS|"
        r"NCCL_NSOCKS_PERTHREAD|SHM locality|Resiliency is enabled|Invalid handle",
        "NCCL was called or configured in a way it does not accept (ncclInvalidUsage)",
        "an NCCL_* setting out of range, or the program's use of the API (rank or device "
        "numbers, a communicator used after an error or after it was destroyed)",
        "fix the setting or call the message names; unset NCCL_* variables you did not mean",
        _S + "src/init.cc, src/bootstrap.cc, src/transport/net_socket.cc, src/transport/shm.cc",
    ),
    fc(
        "nccl.aborted",
        r"abort state|SetAsyncError|commDestroySync|commReclaim|destroys proxy resource|"
        r"cleanup callback failed|Error encountered progressing operation|Failed to execute "
        r"operation|proxyDestroy failed",
        "the communicator was aborted or torn down after an error",
        "an earlier failure on this or another rank (this line is its consequence)",
        "find the first error of the job (the earliest WARN, the rank that exited first)",
        _S + "src/init.cc, src/proxy.cc",
    ),
    fc(
        "nccl.resources",
        r"unable to allocate|Failed to allocate|Too many connections|Not enough space|Cannot "
        r"allocate any more|Failed to malloc|Allocation failed|Thread creation failed",
        "NCCL ran out of host resources (memory, connections)",
        "host memory exhausted, or too many ranks or connections for the limits",
        "free host memory; raise `ulimit -n`; lower NCCL_NSOCKS_PERTHREAD / NCCL_SOCKET_NTHREADS",
        _S + "src/transport/net_socket.cc, src/transport/net_ib, src/proxy.cc",
    ),
    fc(
        "nccl.system-call",
        r"Poll failed|sched_[gs]etaffinity|Could not find real path|WSAPoll|listenSock",
        "a system call NCCL relies on failed",
        "a container's seccomp or cgroup limits, a CPU affinity mask NCCL cannot apply, or "
        "sysfs not mounted",
        "run with the container's defaults relaxed (--cap-add SYS_NICE, sysfs mounted); check "
        "the CPU set given to the rank",
        _S + "src/os/linux.cc, src/proxy.cc",
    ),
    fc(
        "nccl.graph-capture",
        r"cannot be captured in a graph|built with CUDA runtime >= 11\.3|CUDA driver < R465",
        "this NCCL cannot run inside a CUDA graph: it was built for a CUDA runtime older "
        "than 11.3, or the driver is older than R465",
        "an NCCL build for an older CUDA than the system's (the '+cudaX.Y' of its 'NCCL "
        "version' line: a wheel or a framework build pulled in for another CUDA), or an old "
        "driver; serving engines capture NCCL calls in CUDA graphs",
        "install the NCCL (and PyTorch) build for this system's CUDA (`pip install` from the "
        "matching index: the 'NCCL version 2.x+cudaY' line must show a CUDA of 11.3 or later "
        "that the driver supports), or upgrade the driver to R465+; without that, run without "
        "CUDA graphs (vLLM --enforce-eager)",
        _S + "src/enqueue.cc (the graph capture check); "
        "https://github.com/vllm-project/vllm/issues/3069",
    ),
    fc(
        "nccl.bad-setting",
        r"User asked for a (?:minimum|maximum) of \d+ channels|Invalid \S+ \d+ \((?:must be|"
        r"maximum|minimum)|unknown value '|Please specify a valid|' is too small\. Minimum|"
        r"has been set to \"1\" and|ignoring NCCL_ALGO|Invalid number of network devices|"
        r"Unknown netDevs policy|All entries except the first must have a prefix",
        "an NCCL environment setting has a value NCCL cannot use (channels, NCCL_ALGO, "
        "NCCL_WORK_FIFO_DEPTH, NCCL_NVLS_ENABLE, the NIC merge and fusing settings)",
        "an NCCL_* variable set in the environment or in /etc/nccl.conf, ~/.nccl.conf or "
        "NCCL_CONF_FILE, often copied from another machine",
        "unset the variable the WARN names (`env | grep NCCL_`, `grep NCCL_ /etc/nccl.conf "
        "~/.nccl.conf`) and let NCCL choose; set it again only to a value within the range "
        "the WARN gives",
        _S + "src/graph/connect.cc, src/graph/paths.cc, src/graph/topo.cc, src/enqueue.cc, "
        "src/transport/nvls.cc; NCCL environment variables",
    ),
    fc(
        "nccl.invalid-usage",
        r"is not a valid pointer|invalid root|invalid type|invalid reduction|reduction operation "
        r"\d+ unknown|mismatchs with NCCL device|argument is NULL|corrupted comm object|Trying to "
        r"(?:send|recv) to self|user-created ncclRedOp_t|Streams given to a communicator|"
        r"ncclRedOpDestroy|Either none or all communicators|Blocking and nonblocking|not in a "
        r"group call|NCCL_SIM_INFO_INITIALIZER|communicator was revoked|ncclPutSignal|ncclSignal|"
        r"ncclWaitSignal|Context \d+ is invalid|Signal index|Flags \d+ is invalid|symmetric "
        r"registration check|One.sided RMA|FP8 reduction|does not match the parent|No allocation "
        r"found at offset|extends beyond allocation|shadow pool",
        "the program called NCCL with an argument or in a state NCCL refuses "
        "(ncclInvalidArgument, ncclInvalidUsage): a buffer on another GPU than the "
        "communicator's, a NULL or non-device pointer, a bad root, type or reduction, "
        "communicators mixed in one group against its rules",
        "the program or its framework: a tensor on another device than the rank's GPU (no "
        "torch.cuda.set_device(local_rank) before init), a collective under CUDA graph capture "
        "mixed with uncaptured ones, a datatype the GPU lacks (FP8 before sm90)",
        "read the argument the WARN names; make each rank use one GPU and put its tensors on "
        "it (torch.cuda.set_device(local_rank), CUDA_VISIBLE_DEVICES), keep every call of one "
        "group all captured or all uncaptured",
        _S + "src/misc/argcheck.cc, src/enqueue.cc, src/group.cc, src/allocator.cc",
    ),
    fc(
        "nccl.no-algorithm",
        r"no algorithm/protocol available|No algorithm/protocol available|Unknown (?:collnet )?"
        r"pattern|Net registration invalid algorithm|Sendrecv plan not aligned|Invalid regBufType|"
        r"tree already has|does not loop back|does not contain rank|dynamic smem \d+ exceeds",
        "NCCL found no algorithm and protocol it can run this collective with, or built an "
        "inconsistent plan",
        "NCCL_ALGO or NCCL_PROTO restricted to choices this collective, datatype or machine "
        "cannot use (a tree or CollNet-only setting, LL128 on a GPU without it), or a "
        "datatype or operation this NCCL and GPU do not support",
        "unset NCCL_ALGO and NCCL_PROTO (and NCCL_TUNER_PLUGIN) and let NCCL choose; if it "
        "persists, upgrade NCCL and report it with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING",
        _S + "src/enqueue.cc, src/graph/connect.cc, src/graph/rings.cc, src/graph/tuning.cc",
    ),
    fc(
        "nccl.gdrcopy",
        r"\bgdr_\w+|GDRCopy",
        "GDRCopy (CPU access to GPU memory, used by NCCL's network proxy) failed",
        "the gdrdrv kernel module not loaded or of another version than libgdrapi, or a "
        "container without /dev/gdrdrv",
        "load gdrdrv (`lsmod | grep gdrdrv`, `modprobe gdrdrv`) matching libgdrapi, pass "
        "/dev/gdrdrv into the container, or turn it off with NCCL_GDRCOPY_ENABLE=0",
        _S + "src/misc/gdrwrap.cc, src/include/gdrwrap.h",
    ),
    fc(
        "nccl.nvml",
        r"\bnvml\w*\(|\bnvml\w+ failed|NVML device|Skipping nvlink detection|\(\) failed: ",
        "an NVML call (libnvidia-ml, the driver's management library) failed, so NCCL cannot "
        "see the GPUs' topology",
        "a driver upgraded without a reboot ('Driver/library version mismatch'), a container "
        "whose libnvidia-ml does not match the host's driver, or more GPUs than this NCCL "
        "handles",
        "run `nvidia-smi` on the host: if it fails too, reboot after the driver upgrade (or "
        "reload the nvidia modules); in containers use the NVIDIA container toolkit so the "
        "host's libnvidia-ml is mounted",
        _S + "src/misc/nvmlwrap.cc, src/graph/topo.cc",
    ),
    fc(
        "nccl.uds",
        r"\bUDS: ",
        "NCCL's Unix-domain socket between the ranks of one host (the exchange of cuMem "
        "memory handles) failed",
        "ranks of one host in different containers or network namespaces (the abstract "
        "socket namespace is per network namespace), or a peer that died",
        "run the ranks of a host in one container, or share its network and IPC namespaces "
        "(docker --network=host --ipc=host); else NCCL_CUMEM_ENABLE=0 avoids the handle "
        "exchange",
        _S + "src/os/linux_ipcsocket.cc",
    ),
    fc(
        "nccl.mem-manager",
        r"MemManager|Memory (?:suspend|resume) not supported",
        "NCCL's memory manager (suspending and resuming a communicator's memory, exporting "
        "cuMem buffers to peers) failed",
        "a driver or GPU without the cuMem fabric handles it uses, memory the manager does "
        "not track, or a peer's failure during the exchange",
        "read the WARN before it; do without suspend/resume on this system, and upgrade the "
        "driver and NCCL together",
        _S + "src/mem_manager.cc",
    ),
    fc(
        "nccl.mnnvl",
        r"\bMNNVL\b|\bIMEX\b",
        "multi-node NVLink (MNNVL) is present but NCCL cannot use it",
        "the IMEX service or its channels are not set up on the nodes (/dev/nvidia-caps-imex-"
        "channels missing in the container, nvidia-imex not running)",
        "configure IMEX (`nvidia-imex-ctl -N`, the channel device in the container), or set "
        "NCCL_MNNVL_ENABLE=0 to run without multi-node NVLink",
        _S + "src/mnnvl.cc",
    ),
    fc(
        "nccl.net-plugin",
        r"NET plugin|network \S+ not found|netPlugin\[|Unknown device code|netName \(",
        "NCCL could not load or select its network: no net plugin initialized, or NCCL_NET "
        "names a network no plugin provides",
        "NCCL_NET (or a communicator's netName) naming a plugin that is not on this host's "
        "library path, or the plugin failing its own init (its library, driver or fabric "
        "missing)",
        "check NCCL_NET and NCCL_NET_PLUGIN against what this host has (NCCL_DEBUG=INFO prints "
        "'NET/Plugin' lines); install the plugin on every host or unset them",
        _S + "src/plugin/net.cc; NCCL environment variables (NCCL_NET, NCCL_NET_PLUGIN)",
    ),
    fc(
        "nccl.collnet",
        r"CollNet|(?:send|recv)ProxyConnect: (?:req|resp)Size|GDR Flush only",
        "NCCL's CollNet (SHARP in-network reduction) could not be set up or failed",
        "the SHARP plugin or its subnet manager setup missing or mismatched on some hosts",
        "run without it: NCCL_COLLNET_ENABLE=0 (and no NCCL_ALGO=CollNet*)",
        _S + "src/transport/coll_net.cc, src/transport.cc",
    ),
    fc(
        "nccl.ras-version",
        r"NCCL version mismatch|RAS received unknown|Invalid client status",
        "ranks of different NCCL versions met (their RAS service says so)",
        "hosts with different NCCL libraries (wheels, containers, a system libnccl first on "
        "LD_LIBRARY_PATH)",
        "install the same NCCL on every host; NCCL_RAS_ENABLE=0 silences the RAS service only",
        _S + "src/ras",
    ),
    fc(
        "nccl.no-transport",
        r"No transport found for rank",
        "no NCCL transport can connect these two ranks",
        "every transport between them turned off or unavailable (NCCL_P2P_DISABLE, "
        "NCCL_SHM_DISABLE and no network: NCCL_IB_DISABLE with no socket interface), or "
        "ranks NCCL takes for one host that are not",
        "unset the NCCL_*_DISABLE variables one by one; check NCCL_SOCKET_IFNAME gives an "
        "interface on both hosts",
        _S + "src/transport.cc",
    ),
    fc(
        "nccl.async-job",
        r"pthread_join|asyncJobLaunch|ncclAsyncJobComplete|deregister|Deregister",
        "a step of NCCL's asynchronous work (a group's init job, a buffer's deregistration) "
        "failed after another error",
        "an earlier failure of the same communicator (its WARN comes first)",
        "find the first WARN of the job and fix that one",
        _S + "src/group.cc, src/register",
    ),
    fc(
        "nccl.internal",
        r"pass NULL socket|socket is invalid|socket state|invalid socket|invalid arguments|"
        r"Invalid argument|string is null|Proxy append|Inactive op|List loop|dequeue|opId=|"
        r"Could not find pool|Unknown command|Unrecognized request|Unknown completion|No "
        r"format specified|expected a '(?:send|recv)' request|Invalid (?:request index|wr_id)|"
        r"replay|failed request|repost|Unsupported|prob(?:e|ing)|Resiliency context|outstanding "
        r"recovery|GoToPrevState|alive message|Listencomm|already connected|non-connected "
        r"peer|ready == 0|Unexpected connections|bcastGrowHandle|are NULL|out of range|already "
        r"checked in|out of bounds|Group creation failed|schedule creation|has no transport|"
        r"NULL request|ncclNetSocketListen|events=|Rma Proxy|incomplete proxy op|"
        r"replacement QP|Cannot replace QP|NET/IB: Invalid |Failed QP index|duplicate socket "
        r"index|ncclSocketStateError|Can't make virtual|unable to allocate|could not retreive|"
        r"resiliency send request|peers\[\d+\]\.sock|neither send or recv|req->type|Cannot "
        r"store sizes",
        "an internal consistency check of NCCL failed (ncclInternalError)",
        "usually the echo of an earlier failure (a closed socket, an aborted communicator); "
        "alone, an NCCL defect",
        "find the earlier error first; if there is none, upgrade NCCL and report it to "
        "NVIDIA/nccl with NCCL_DEBUG=INFO output",
        _S + "src/misc/socket.cc, src/proxy.cc, src/transport/net_ib, src/bootstrap.cc",
    ),
)

# classes whose cause is this host's own setup or resources (a full /dev/shm, the locked-memory
# limit, a missing interface, a setting): a first cause even where NCCL's other WARN texts are
# often echoes of a peer's failure
_OWN = frozenset(
    {
        "nccl.topology",
        "nccl.topo-xml-attribute",
        "nccl.nvls-multicast",
        "nccl.cuda-oom",
        "nccl.shm",
        "nccl.reg-mr",
        "nccl.create-qp",
        "nccl.bootstrap-nranks",
        "nccl.ofi-reg-mr",
        "nccl.ofi-av-insert",
        "nccl.ofi-getinfo",
        "nccl.ofi-tuner",
        "nccl.foreign-connection",
        "nccl.version-mismatch",
        "nccl.no-interface",
        "nccl.ib-gid-select",
        "nccl.cuda-driver",
        "nccl.bad-setting",
        "nccl.no-algorithm",
        "nccl.net-plugin",
        "nccl.gdrcopy",
        "nccl.mnnvl",
    }
)
CLASSES = tuple(replace(c, role=CAUSE) if c.name in _OWN else c for c in CLASSES)
