"""The engine's own codes: those no check, fix, signature or probe outcome declares.

Each is one :class:`meshdoctor.codes.model.Entry`, declared here once and used by the part of
the engine that emits it: :data:`INTERNAL_ERROR` (MD100, :func:`meshdoctor.output.internal_error`),
:data:`CHECK_INTERRUPTED` (MD190, :func:`meshdoctor.checker.runner.interrupt_result`),
:data:`FLEET_REACH` (MD402, :mod:`meshdoctor.checker.fleet`), :data:`FIX_NOT_STARTED`
(MD700) and :data:`FIX_INTERRUPTED` (MD790, both :mod:`meshdoctor.fixer.plan`). :mod:`meshdoctor.catalogue` collects them.
"""

from __future__ import annotations

from meshdoctor.codes.model import CHECK, FIX, INTERNAL, Doc, Entry

INTERNAL_ERROR = Entry(
    code="MD100",
    kind=INTERNAL,
    title="internal error",
    names=("meshdoctor",),
    doc=Doc(
        meaning="meshdoctor itself failed before it could assess the node (a bug, or a "
        "broken install); the summary names the exception.",
        why="The verdict is 'unknown' (exit 3): nothing was assessed, so a gate must not "
        "launch on it.",
        action="Re-run with --json and report the evidence; reinstall meshdoctor if the "
        "install is broken.",
        sources=("meshdoctor README, exit codes",),
    ),
)

CHECK_INTERRUPTED = Entry(
    code="MD190",
    kind=CHECK,
    title="check interrupted",
    names=("check.interrupted",),
    doc=Doc(
        meaning="meshdoctor check was interrupted (Ctrl-C, SIGTERM from a supervisor, SIGHUP "
        "from a closed terminal) before every check finished. Every command it had "
        "started was killed with its process group; the checks that had finished "
        "keep their results, the others are in error.",
        why="The node was not fully assessed: the verdict is 'unknown' (exit 3), or 'no-go' "
        "(exit 1) if a finished check had already failed.",
        action="Run the check again; give it a longer supervisor timeout if one sent SIGTERM.",
        sources=("POSIX signals (SIGINT, SIGTERM, SIGHUP)", "meshdoctor README, exit codes"),
    ),
    details=(("Applies to", "darwin, linux"),),
)

FLEET_REACH = Entry(
    code="MD402",
    kind=CHECK,
    title="Host reachable and running meshdoctor",
    names=("fleet.reach",),
    doc=Doc(
        meaning="Fleet mode runs meshdoctor on every host of the hostfile over ssh (BatchMode, "
        "a connect timeout, the user's ssh config, as mlx.launch). A host that cannot "
        "be reached, that has no meshdoctor for the chosen interpreter, or that does "
        "not answer by the deadline is an error with ssh's own message and the "
        "command to install meshdoctor there. A host whose name the hostfile's host-name "
        "rule refuses (MD401) is never reached: its result says so and offers no command. "
        "mlx.launch runs a rank without ssh only when its ssh name is exactly 127.0.0.1 "
        "(localhost and this machine's own name go through ssh): for an entry on this "
        "machine under another name the fleet check runs `ssh -o BatchMode=yes NAME true`; a "
        "failure is a fail (no-go) naming ssh's message.",
        why="A host that was not assessed cannot be vouched for: the fleet verdict is then "
        "'unknown' (exit 3), and mlx.launch would fail to reach it the same way.",
        action="Make `ssh HOST true` work without a prompt; install meshdoctor there; pick "
        "the interpreter with --python or MESHDOCTOR_REMOTE_PYTHON. For a refused name, "
        'fix the host\'s "ssh" entry in the hostfile. For ranks on this machine, write '
        '"ssh": "127.0.0.1" or run an sshd here that answers the name.',
        sources=(
            "OpenSSH ssh(1) BatchMode and ConnectTimeout",
            "MLX mlx.launch (ssh to each host, --python)",
            'MLX 0.32.4 mlx/_distributed_utils/launch.py (is_local = host == "127.0.0.1")',
        ),
    ),
    details=(("Applies to", "fleet"),),
)

FIX_INTERRUPTED = Entry(
    code="MD790",
    kind=FIX,
    title="fix interrupted",
    names=("fix.interrupted",),
    doc=Doc(
        meaning="`meshdoctor fix --yes` was interrupted (Ctrl-C, SIGTERM from a supervisor, "
        "SIGHUP from a closed terminal) while it applied its plan. The actions it had already "
        "taken on this machine are listed with their outcome; every command it had started "
        "was stopped; nothing was verified.",
        why="Some steps may have been applied and others not: the verdict is 'unknown' "
        "(exit 3), or 'no-go' (exit 1) if a step had already failed.",
        action="Read the actions listed, then run the fix again (it plans from what is left).",
        sources=("POSIX signals (SIGINT, SIGTERM, SIGHUP)", "meshdoctor README, fix"),
    ),
)

FIX_NOT_STARTED = Entry(
    code="MD700",
    kind=FIX,
    title="fix run could not start",
    names=("fix",),
    doc=Doc(
        meaning="`meshdoctor fix` did not apply anything: another fix run holds the lock in "
        "meshdoctor's state directory (two runs must not interleave), the state directory "
        "cannot be used (a file or link in its place, not writable, not owned by the user "
        "running meshdoctor or writable by others), the lock file in it is not a regular file "
        "of that user, or the hosts could not be assessed. As a warning: the fix ran, but "
        "the state directory could not be made or written (a read-only or full home), so "
        "its lock was taken in the runtime directory ($XDG_RUNTIME_DIR/meshdoctor, "
        "/run/meshdoctor for root) and no receipt could be kept.",
        why="Nothing was changed or verified: the verdict is 'unknown' (exit 3).",
        action="Wait for the other run; make the state directory one of your own that nobody "
        "else can write (chmod 700), or set MESHDOCTOR_STATE_DIR to one; remove a lock file "
        "that is a link; or make the hosts reachable. Then run the fix again.",
        sources=("meshdoctor README, fix",),
    ),
)

HEALTHY_SUBMESH = Entry(
    code="MD410",
    kind=CHECK,
    title="Healthy sub-mesh",
    names=("fleet.submesh",),
    doc=Doc(
        meaning="With --healthy-hostfile OUT, `check --hostfile` and `probe --hostfile --pairs` "
        "list the hosts that passed and those that failed (with why), and write OUT: the "
        "hostfile restricted to the passing hosts in mlx.launch's format, ranks renumbered "
        "from 0, each rdma row cut to the ranks kept and, for jaccl, to the cables whose "
        "ports are active at both ends. A JACCL mesh connects every pair, so of two hosts "
        "with no working cable between them the one with more such pairs is left out. "
        "Nothing is written when the passing hosts hold fewer than two ranks, or when a finding "
        "about the whole "
        "mesh (the hostfile's own problems) leaves nothing to vouch for.",
        why="The largest mesh that still works lets a job run while a bad node is repaired; "
        "the file is written atomically (a temporary file renamed over OUT), so a launch never "
        "reads half of it.",
        action="Launch on what is left (`mlx.launch --hostfile OUT ...`), repair the failing "
        "hosts named, then check the whole hostfile again.",
        sources=(
            "MLX mlx.launch hostfile format (ssh, ips, rdma)",
            "MLX distributed documentation, JACCL (a fully connected mesh)",
        ),
    ),
    details=(("Applies to", "fleet"),),
)

SUPPORT_BUNDLE = Entry(
    code="MD412",
    kind=CHECK,
    title="Support bundle",
    names=("bundle",),
    doc=Doc(
        meaning="`meshdoctor bundle` collected one host's share of the support archive: its "
        "check verdict (JSON), the raw outputs of the tools the checks run (ibv_devinfo, "
        "ibv_devices, rdma_ctl, system_profiler, ifconfig, networksetup, sysctl, vm_stat, pmset, "
        "nvidia-smi -q, ip, as the host has them), versions, the MLX_*/JACCL_*/NCCL_* "
        "environment, the newest crash and panic reports (--since). One result per host: ok "
        "when every item came, warn naming what failed or when the host could not be "
        "reached; the archive's MANIFEST lists every item with its status.",
        why="It is what maintainers ask people to paste by hand in MLX and exo issues. Values "
        "of secret-looking variables, private keys, tokens and the home directory are "
        "removed before anything is written; each item and each host is bounded in bytes "
        "and time.",
        action="Attach the archive to the issue; read MANIFEST.txt for what could not be "
        "collected and why.",
        sources=(
            "Apple, Acquiring crash reports and diagnostic logs (DiagnosticReports)",
            "MLX and exo issue templates (system information asked for)",
        ),
    ),
)

# Every entry above, in the order the catalogue lists them within their kind; the catalogue
# takes each kind's from here (a new engine code is declared above and named here, nowhere else).
ENTRIES = (
    INTERNAL_ERROR,
    FLEET_REACH,
    HEALTHY_SUBMESH,
    SUPPORT_BUNDLE,
    CHECK_INTERRUPTED,
    FIX_NOT_STARTED,
    FIX_INTERRUPTED,
)
