"""Failures of what lies under MLX: Apple's Thunderbolt RDMA driver (its crash in
``tbt_post_recv``/``tbt_post_send``, mlx #4192/#4319; a wedged fabric), Metal command buffers,
native crash signals (POSIX signals, macOS exception types) and Python's uncaught exceptions.
Codes are stable: never renumber, only add."""

from __future__ import annotations

from meshdoctor.signatures.model import CRASH, EITHER, TRACEBACK, signature

SIGNATURES = (
    signature(
        "MD612",
        "tbt.post-recv-sigsegv",
        r"(libthunderboltrdma.*tbt_post_(recv|send)|tbt_post_(recv|send).*libthunderboltrdma)",
        "Apple Thunderbolt RDMA driver crash in tbt_post_recv/tbt_post_send.",
        "Reboot the crashed node; check port state; no known prevention.",
        "mlx #4192, #4319; Apple FB24371487",
        causes=[
            ("a Thunderbolt cable was unplugged mid-collective", "both ends die; mlx #4192"),
            ("a link dropped on its own after hours", "port PORT_DOWN until reboot; mlx #4319"),
        ],
        examples=(
            "0 libthunderboltrdma.dylib tbt_post_recv + 44",
            "0   libthunderboltrdma.dylib   0x0000000104c0d52c tbt_post_recv + 44",
            "Exception Type:  EXC_BAD_ACCESS (SIGSEGV)\n"
            "  frame #0: libthunderboltrdma.dylib`tbt_post_recv + 44",
        ),
        frame=r"tbt_post_(recv|send)|libthunderboltrdma[^`]*`tbt_",
    ),
    signature(
        "MD616",
        "metal.gpu-timeout",
        r"kIOGPUCommandBufferCallbackErrorTimeout",
        "A collective inside a GPU command buffer waited more than ~5 s on a slow peer and the "
        "Metal watchdog killed it.",
        "Run collectives on stream=mx.cpu and evaluate them separately; smaller command "
        "buffers (MLX_MAX_OPS_PER_BUFFER, MLX_MAX_MB_PER_BUFFER) shorten each GPU wait.",
        "Apple Metal",
        causes=[("a slow or dead peer during a GPU-stream collective", "the peer's log")],
        examples=(
            "[METAL] Command buffer execution failed: Caused GPU Timeout Error "
            "(00000002:kIOGPUCommandBufferCallbackErrorTimeout)",
        ),
    ),
    signature(
        "MD619",
        "fabric.wedged",
        r"(`ibv_devinfo[^`]*` did not finish within|ibv_devinfo.*(hung|timed out))",
        "The RDMA fabric or driver is wedged: ibv_devinfo hangs, ports drop to PORT_DOWN, "
        "processes sit in uninterruptible sleep.",
        "Full-fleet reboot, then one mlx.distributed_config --auto-setup, then confirm edges.",
        "mlx #4530",
        causes=[
            (
                "the Thunderbolt RDMA driver is wedged after JACCL errors or a link drop",
                "ports PORT_DOWN, processes in U state; only a reboot clears it",
            ),
            ("a rank still holds the device in the kernel", "MD301 lists it"),
        ],
        examples=("`ibv_devinfo -v` did not finish within 3.0 s (killed)",),
    ),
    signature(
        "MD661",
        "metal.command-buffer-failed",
        r"Command buffer execution failed(?!.*kIOGPUCommandBufferCallbackErrorTimeout)",
        "A Metal command buffer failed (GPU timeout has its own code, MD616).",
        "Read the error name: out of memory -> smaller working set; page fault -> MLX bug.",
        "Apple Metal MTLCommandBufferError",
        causes=[
            (
                "GPU out of memory (kIOGPUCommandBufferCallbackErrorOutOfMemory)",
                "the error name in the message",
            ),
            ("GPU page fault or hang", "kIOGPUCommandBufferCallbackErrorPageFault/Hang"),
        ],
        examples=(
            "[METAL] Command buffer execution failed: Insufficient Memory "
            "(00000008:kIOGPUCommandBufferCallbackErrorOutOfMemory)",
            "Exception Type:  EXC_CRASH (SIGABRT)\n"
            "  frame #3: 0x000000019b7c1a2c Metal`MTLReportFailure + 500",
        ),
        # a crashed thread in Metal's command-buffer code, or any Metal frame of an abort
        frame=r"MTLCommandBuffer|IOGPUMetal|kIOGPUCommandBuffer|MTLReportFailure",
        abort_frame=r"^[^`]*Metal[^`]*`",
        report_remedy="Read the abort message in the report's Application Specific "
        "Information (the Metal error name): out of memory -> smaller working set; page fault "
        "-> report it to MLX with the report, the MLX and the macOS versions.",
    ),
    signature(
        "MD662",
        "native.crash",
        None,
        "A process died of a native crash signal with no known faulting frame.",
        "Find the crash report (~/Library/Logs/DiagnosticReports/*.ips) and triage it.",
        "POSIX signals",
        causes=[
            (
                "Thunderbolt RDMA driver crash seen without its frame",
                "tbt_post_recv among the crashed thread's frames in the crash report (MD612)",
            ),
            ("a bug in a native library", "the library of the crashed thread's top frame"),
        ],
        examples=(
            "Segmentation fault: 11",
            "Exception Type:  EXC_BAD_ACCESS (SIGSEGV)",
            "Exception Type:  EXC_BAD_ACCESS (SIGSEGV)\n"
            "Crashed Thread:        0  Dispatch queue: com.apple.main-thread\n"
            "Thread 0 Crashed::  Dispatch queue: com.apple.main-thread\n"
            "0   libobjc.A.dylib    0x000000018c3d0c20 objc_release + 16",
        ),
        fallback=CRASH,
        refine=lambda g: (
            f"the crashed thread's top frame is {g['frame']}, not one of a known failure"
            + (" (a libjaccl frame: report it to MLX)" if "jaccl" in g["frame"] else "")
            if g.get("frame")
            else None
        ),
        report_remedy="Read the faulting frame: report the crash with this file to the project "
        "whose library it is in (MLX for libmlx/libjaccl), with the MLX and macOS versions.",
    ),
    signature(
        "MD663",
        "python.exception",
        None,
        "An uncaught Python exception (no known signature in it): it ends the process when "
        "raised in the main thread; one raised in another thread ends only that thread, and "
        "the process may go on.",
        "Read the exception; it is the cause unless another rank failed first. If the process "
        "went on, look at what that thread did (a failed collective in a worker thread leaves "
        "its peers waiting).",
        "Python",
        role=EITHER,
        examples=(
            "Traceback (most recent call last):\n"
            '  File "/srv/serve.py", line 40, in <module>\n'
            "    main()\n"
            '  File "/srv/serve.py", line 31, in main\n'
            "    cfg = json.load(fh)\n"
            "json.decoder.JSONDecodeError: Expecting value: line 1 column 1 (char 0)",
        ),
        fallback=TRACEBACK,
    ),
    signature(
        "MD672",
        "metal.resource-limit",
        r"Resource limit \((?P<limit>\d+)\) exceeded",
        "Metal refused another buffer: the process holds as many Metal resources as the "
        "device allows (499000 on recent Macs), usually many small arrays kept alive (a "
        "growing KV cache, un-evaluated graphs).",
        "Evaluate and release arrays sooner (mx.eval in the loop), lower the prompt cache or "
        "batch size, and upgrade mlx-lm.",
        "mlx-lm #831, #1672",
        examples=("RuntimeError: [metal::malloc] Resource limit (499000) exceeded.",),
    ),
    signature(
        "MD673",
        "metal.buffer-too-large",
        r"Attempting to allocate (?P<bytes>\d+) bytes which is greater than the maximum "
        r"allowed buffer size",
        "One array is larger than the largest Metal buffer this GPU allows.",
        "Split the array (shard the weights, smaller batch or sequence), or run that op on "
        "the CPU stream.",
        "MLX metal allocator",
        examples=(
            "RuntimeError: [metal::malloc] Attempting to allocate 77309411328 bytes which is "
            "greater than the maximum allowed buffer size of 57982058496 bytes.",
        ),
    ),
    signature(
        "MD674",
        "malloc.failed",
        r"\[malloc\] Unable to allocate",
        "MLX could not allocate host memory for an array: the node is out of memory.",
        "Free memory (other processes, leftover ranks: MD301), use a smaller model or shard "
        "it over more ranks.",
        "MLX allocator",
        check="MD302",
        examples=("RuntimeError: [malloc] Unable to allocate 17179869184 bytes.",),
    ),
    signature(
        "MD675",
        "metal.residency-set",
        r"Unable to construct residency set",
        "Metal could not build the residency set that keeps MLX's buffers wired (MLX 0.32.2+): "
        "wired memory is exhausted or held by another process.",
        "Stop leftover ranks and measure wired memory again (MD302); lower "
        "MLX_RESIDENCY_SET_MAX_PCT or the wired limit; reboot if memory stays wired.",
        "MLX 0.32.2 release (MLX_RESIDENCY_SET_MAX_PCT)",
        check="MD302",
        examples=("RuntimeError: [metal::Device] Unable to construct residency set.",),
    ),
    signature(
        "MD679",
        "python.address-in-use",
        r"OSError: \[Errno (?:98|48)\] Address already in use",
        "The application's own socket (a server the job opens: an HTTP API, a coordinator "
        "port) could not bind: another process already holds the port, most often a rank or "
        "server of the last run that never exited.",
        "Find what holds the port (`ss -ltnp`, `lsof -iTCP -sTCP:LISTEN`), stop leftover ranks "
        "(MD301), and check the mesh's ports are free (`meshdoctor check --hostfile HOSTFILE "
        "--only MD408`).",
        "Python socket.bind (errno 98 EADDRINUSE on Linux, 48 on macOS); errno(3)",
        check="MD301",
        causes=[
            ("a leftover rank or server of the last run", "`meshdoctor check --only MD301`"),
            ("another job using the same port", "`ss -ltnp` names the process"),
        ],
        examples=(
            "OSError: [Errno 98] Address already in use",
            "OSError: [Errno 48] Address already in use",
        ),
    ),
    signature(
        "MD678",
        "metal.fence-timeout",
        r"\[Fence::wait\] Timed out",
        "A CPU-stream operation (the distributed backends run there) waited for a Metal fence "
        "that the GPU never signalled: the GPU work it depends on hung or was lost (a GPU "
        "timeout, wired memory exhausted, or a peer's collective that never completed).",
        "Look for the first failure on every rank (a peer that died, a JACCL or ring error "
        "before it); stop leftover ranks and measure wired memory (MD302); if it recurs on one "
        "Mac, reboot it.",
        "MLX mlx/backend/metal/fence.cpp (Fence::wait); exo issues #2208, #2173",
        role=EITHER,
        check="MD302",
        causes=[
            ("a peer's collective never completed (it died or hung)", "a peer's earlier error"),
            ("GPU work hung or was lost (GPU timeout)", "MTLCommandBuffer errors before it"),
            ("wired memory exhausted", "MD302, Metal resource-limit errors"),
        ],
        examples=(
            "libc++abi: terminating due to uncaught exception of type "
            "std::runtime_error: [Fence::wait] Timed out",
        ),
    ),
    signature(
        "MD676",
        "macos.kernel-panic",
        r"panic\(cpu \d+ caller 0x[0-9a-fA-F]+\): (?P<msg>.+)",
        "The Mac's kernel panicked and rebooted (a crash report of bug_type 210): every rank "
        "on it died at that moment, so its peers' errors that follow are echoes.",
        "Read the panic's message: an IOGPUMemory assertion (prepare count underflow) is GPU "
        "memory accounting in the kernel, seen after Metal or JACCL failures; update macOS, "
        "report it to Apple with the panic file, and re-run after the reboot.",
        "Apple, kernel panic reports (bug_type 210)",
        causes=[
            (
                "GPU-wired memory accounting broke (IOGPUMemory prepare count underflow)",
                "IOGPUMemory.cpp in the panic message",
            ),
            ("a driver fault (Thunderbolt, RDMA)", "the kernel extension named in the panic"),
        ],
        refine=lambda g: (
            "the GPU memory driver (IOGPUMemory) panicked: wired-memory accounting underflowed"
            if "IOGPUMemory" in g.get("msg", "")
            else None
        ),
        examples=(
            "panic(cpu 2 caller 0xfffffe002f8c1234): IOGPUMemory.cpp:550 Assertion failed: "
            "prepare count underflow",
        ),
    ),
    signature(
        "MD677",
        "macos.jetsam",
        r"memorystatus: (?P<why>killing_\w+) pid (?P<pid>\d+) \[(?P<proc>[^\]]*)\] "
        r"\((?P<cause>[\w-]+)",
        "macOS killed the process for memory (jetsam, a report of bug_type 298): a rank that "
        "ended with SIGKILL and no error of its own was taken by the system, not by MLX.",
        "Use a smaller model or shard it over more ranks, lower the wired limit "
        "(iogpu.wired_limit_mb) so the OS keeps room, and stop other large processes.",
        "xnu bsd/kern/kern_memorystatus.c (memorystatus kill log)",
        check="MD302",
        examples=(
            "1733050000.123 memorystatus: killing_top_process pid 4242 [python3.12] "
            "(vm-pageshortage 10) - memorystatus_available_pages: 1200",
        ),
    ),
    signature(
        "MD693",
        "macos.gpu-restart",
        r'"bug_type"\s*:\s*"284"',
        "The Mac's GPU hung or faulted and macOS restarted it (a GPU restart report, bug_type "
        "284, written by DumpGPURestart): every Metal command buffer in flight on that Mac "
        "failed at that moment, so a rank's Metal errors or aborts right after it are its "
        "consequences.",
        "See what ran on the GPU at that time (the report names the process when it can); "
        "lower memory pressure (smaller model or batch, a lower MLX memory limit with "
        "mx.set_memory_limit, the wired limit iogpu.wired_limit_mb) and shorter command "
        "buffers (MLX_MAX_OPS_PER_BUFFER, MLX_MAX_MB_PER_BUFFER); update macOS, and report it "
        "to Apple with the report file.",
        "DumpGPURestart, the macOS tool that saves a GPU restart report after a GPU hang or "
        "reset (peterspath.net, 'What are DumpGPURestart and DumpPanic?'); the report's "
        "bug_type from its JSON header line",
        causes=[
            ("GPU memory pressure (wired memory exhausted)", "MD302; Metal out-of-memory errors"),
            ("a GPU hang in a long command buffer", "GPU timeout errors (MD616) before it"),
            ("a GPU driver fault", "the report's text; repeats after a macOS update or not"),
        ],
        examples=(
            '{"bug_type":"284","timestamp":"2026-01-05 10:00:03.00 +0100",'
            '"os_version":"macOS 26.2 (25C56)","name":"GPURestart"}',
        ),
    ),
    signature(
        "MD694",
        "macos.exc-resource",
        r"EXC_RESOURCE -> (?P<proc>[^\[]*)\[(?P<pid>\d+)\] exceeded mem limit: "
        r"(?P<limit>\w+) (?P<mb>\d+) MB \((?P<fatal>fatal|non-fatal)\)"
        r"|^\s*Exception Type:\s+(?P<report>EXC_RESOURCE)\b",
        "A process went over a macOS resource limit (EXC_RESOURCE: memory, CPU, wakeups or "
        "disk writes). Over a hard memory limit it is killed for memory; over a CPU, wakeups "
        "or disk-writes limit, or a soft memory limit, it is only reported and goes on.",
        "Read which resource and limit: for memory, use a smaller model or shard it over more "
        "ranks and lower the wired limit (iogpu.wired_limit_mb); for CPU or wakeups, nothing "
        "stopped the process, so look for the first failure elsewhere.",
        "xnu bsd/kern/kern_memorystatus.c (memorystatus_log_exception); Apple, Understanding "
        "the exception types in a crash report (EXC_RESOURCE)",
        role=EITHER,
        check="MD302",
        causes=[
            ("over a hard (fatal) memory limit: killed", "'(fatal)' or Action taken: killed"),
            ("over a CPU or wakeups limit: a warning", "Event: cpu usage / wakeups"),
        ],
        refine=lambda g: (
            f"{g.get('proc') or 'the process'} crossed its {g.get('limit')} limit of "
            f"{g.get('mb')} MB and "
            + (
                "was killed for memory"
                if g.get("fatal") == "fatal"
                else "went on (a warning, not killed)"
            )
            if g.get("mb")
            else (
                "a crash report of type EXC_RESOURCE: the process was killed for going over "
                "the limit its Exception Subtype line names (MEMORY: killed for memory; "
                "CPU_FATAL: for CPU time)"
                if g.get("report")
                else None
            )
        ),
        examples=(
            "EXC_RESOURCE -> python3.12[48213] exceeded mem limit: ActiveHard 6144 MB (fatal)",
            "Exception Type:  EXC_RESOURCE",
        ),
    ),
)
