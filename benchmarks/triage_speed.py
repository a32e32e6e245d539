"""Triage throughput and peak memory, side by side with a baseline scanner and `grep -c`.

    python benchmarks/triage_speed.py [--baseline REV] [--lines 2000000] [--base-lines 200000]
                                      [--varying-lines 1000000] [--quiet-size 1GiB]
                                      [--only TITLE-WORD] [--stream 0] [--save DIR]

Three logs, each read by `meshdoctor triage FILE --json` of this tree and of git revision REV
(default: the commit this work started from; extracted with `git archive` into a temporary
folder and run from there), with `grep -c` on the same file as the floor:

1. every line matches: ``RuntimeError: [jaccl] Recv failed with errno=2`` behind one fixed
   timestamp, repeated --lines times (2,000,000 lines: 142 MB), as survivors that print an
   error every step write it; then the bare error line the same number of times (94 MB). The
   baseline scanner runs all its regexes on every such line, so it reads --base-lines lines of
   the same text (its MB/s is a rate: the same on any length of this log).
2. every line matches and no two are alike: the same error behind a fresh timestamp and a rank,
   as real survivors write it (--lines lines for this tree, --base-lines for the baseline,
   whose memo knew a line by all of its text and so matched every one of these).
3. every line matches and the lines differ in their numbers (--varying-lines, 1,000,000:
   about 140 MB): a rank prefix, a pid, a step counter, a path holding the pid, a 0x address
   on some lines, five MLX / mlx.launch messages mixed (``write_varying``), as survivors print
   them; its figure is the ratio to ``grep -c`` on the same file, run in the same command.
4. no line matches: --quiet-size of realistic runner output (timestamped runner lines, mlx-lm
   progress, mlx.launch and ring/jaccl noise, one failure every ~4 MiB).

Prints MB/s (1e6 bytes per wall second, interpreter start included; "own": per second of the
verdict's own ``duration_s``, without the interpreter's start), CPU seconds and peak RSS (MiB),
both from wait4 (CPU time says the most on a shared, loaded machine)
and the first cause with its count for each run, and the ratio this tree / baseline. Targets:
>= 200 MB/s on log 1 with peak RSS < 100 MiB; log 3 about 3 s per GB. With --stream SIZE, also
pipes that many bytes of log 3 into `meshdoctor triage -` (bounded memory on any size). With
--save DIR, writes the printed table to DIR/triage_speed.txt. Asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BASE_REV = "dcf69e1d1aa6ea741859fd1febf5d23aeeba8cd6"  # the tree before the combined scan
SIZES = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
RECV = b"RuntimeError: [jaccl] Recv failed with errno=2\n"
STAMPED = b"2026-01-05 10:00:04,100 " + RECV  # 71 bytes: 2,000,000 lines are 142 MB
# runs meshdoctor from the tree named by argv[1], bypassing an editable install's finder
LAUNCH = (
    "import sys, runpy; tree = sys.argv[1]; sys.argv = ['meshdoctor'] + sys.argv[2:]; "
    "sys.path.insert(0, tree); "
    "sys.meta_path[:] = [f for f in sys.meta_path if not (getattr(f, '__module__', '') or "
    "type(f).__module__).startswith('__editable__')]; "
    "runpy.run_module('meshdoctor', run_name='__main__', alter_sys=True)"
)


def parse_size(text: str) -> int:
    t = text.strip().lower().replace("ib", "").replace("b", "")
    unit = t[-1] if t and t[-1] in "kmg" else ""
    return int(float(t[: len(t) - len(unit)] if unit else t) * SIZES[unit])


def quiet_block(seed: int = 1, target: int = 4 << 20) -> bytes:
    """About ``target`` bytes of realistic lines; failures are rare, as in real logs."""
    rnd = random.Random(seed)
    out = []
    n = 0
    step = 0
    while n < target:
        step += 1
        s = step % 60
        k = rnd.random()
        if k < 0.45:
            line = (
                f"2026-01-05 10:{s:02d}:{(step * 7) % 60:02d},{step % 1000:03d} INFO  "
                f"exo.worker.runner:step:{step % 300} - Iter {step}: train loss "
                f"{2 + rnd.random():.3f}, tokens/sec {1200 + rnd.random() * 400:.1f}, "
                f"peak mem {30 + rnd.random() * 5:.2f} GB\n"
            )
        elif k < 0.75:
            line = (
                f"Prompt: {rnd.randint(16, 4096)} tokens, {rnd.random() * 900:.3f} "
                f"tokens-per-sec; Generation: {rnd.randint(1, 512)} tokens, "
                f"{rnd.random() * 90:.3f} tokens-per-sec\n"
            )
        elif k < 0.9:
            line = (
                f"[INFO] rank {step % 4} all_sum {rnd.randint(1, 256)} MiB in "
                f"{rnd.random() * 30:.2f} ms ({rnd.random() * 40:.1f} GB/s busbw)\n"
            )
        elif k < 0.99:
            line = (
                f'127.0.0.1 - - [05/Jan/2026 10:00:{s:02d}] "POST /v1/chat/completions '
                f'HTTP/1.1" 200 -\n'
            )
        else:
            line = (
                f"2026-01-05 10:00:{s:02d},000 DEBUG mlx_lm.server: cache hit for prompt "
                f"prefix of {rnd.randint(1, 9000)} tokens\n"
            )
        out.append(line)
        n += len(line)
    out.insert(
        len(out) // 2,
        "2026-01-05 10:00:04,100 ERROR runner: RuntimeError: [jaccl] "
        "Couldn't allocate protection domain\n",
    )
    return "".join(out).encode()


def write_repeated(path: Path, lines: int, line: bytes = STAMPED) -> None:
    with open(path, "wb") as fh:
        left = lines
        while left:
            n = min(left, 100_000)
            fh.write(line * n)
            left -= n


def write_stamped(path: Path, lines: int) -> None:
    with open(path, "wb") as fh:
        for i in range(lines):
            fh.write(
                f"2026-01-05 10:{i // 60000 % 60:02d}:{i // 1000 % 60:02d},{i % 1000:03d} "
                f"ERROR rank {i % 4}: RuntimeError: [jaccl] Recv failed with errno=2\n".encode()
            )


VARYING = (
    "RuntimeError: [jaccl] Recv failed with errno=2",
    "[ring] Socket {s} was closed by the peer",
    "ValueError: [jaccl] Changing queue pair to RTR failed with errno 22",
    "libc++abi: terminating due to uncaught exception of type std::runtime_error: "
    "[jaccl] Recv failed with errno=60 at 0x{a:012x}",
    "[WARN] Node with rank {r2} exited with code 255",
)


def write_varying(path: Path, lines: int, ranks: int = 8, seed: int = 1) -> None:
    """``lines`` survivor lines that differ in more than their timestamp: ``[rank R]``, a
    timestamp, the rank's pid, a step counter, a path holding the pid, one of
    :data:`VARYING` (socket numbers, 0x addresses, another rank's number in it)."""
    rnd = random.Random(seed)
    pids = [rnd.randint(1000, 99999) for _ in range(ranks)]
    with open(path, "w") as fh:
        buf = []
        for i in range(lines):
            r = i % ranks
            msg = VARYING[rnd.randrange(len(VARYING))].format(
                s=rnd.randint(3, 40), a=rnd.getrandbits(44) | (0x7F << 40), r2=rnd.randrange(ranks)
            )
            buf.append(
                f"[rank {r}] 2026-12-02 00:{i // 60000 % 60:02d}:{i // 1000 % 60:02d},"
                f"{i % 1000:03d} pid {pids[r]} iter {i // ranks} /tmp/mlx-{pids[r]}/step.py: "
                f"{msg}\n"
            )
            if len(buf) == 10000:
                fh.writelines(buf)
                buf = []
        fh.writelines(buf)


def write_quiet(path: Path, size: int, blk: bytes) -> None:
    with open(path, "wb") as fh:
        written = 0
        while written < size:
            fh.write(blk)
            written += len(blk)


def wait_rss(proc: subprocess.Popen):
    """(exit status, peak RSS in MiB, CPU seconds) of a child, from wait4 (Linux ru_maxrss is
    KiB)."""
    _, status, ru = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return proc.returncode, ru.ru_maxrss / 1024, ru.ru_utime + ru.ru_stime


def triage(argv, path: Path):
    """(seconds, peak RSS MiB, first cause 'CODE xCOUNT', exit, the verdict's own seconds, CPU
    seconds) of one triage run."""
    with tempfile.TemporaryFile() as out:
        t0 = time.perf_counter()
        p = subprocess.Popen([*argv, "triage", str(path), "--json"], stdout=out)
        rc, rss, cpu = wait_rss(p)
        dt = time.perf_counter() - t0
        out.seek(0)
        try:
            doc = json.loads(out.read())
            tri = doc["triage"]
            first = [f for f in tri["findings"] if f["id"] in tri["first_cause"]]
            cause = ", ".join(f"{f['code']} line {f['line_number']} x{f['count']}" for f in first)
            own = float(doc["duration_s"])
        except (ValueError, KeyError):
            cause, own = "no verdict", float("nan")
    return dt, rss, cause, rc, own, cpu


def grep(path: Path, needle: str):
    """(wall seconds, CPU seconds) of ``grep -c -F`` on ``path``, its output read through a
    pipe (GNU grep stops at once when its output is /dev/null)."""
    t0 = time.perf_counter()
    p = subprocess.Popen(["grep", "-c", "-F", needle, str(path)], stdout=subprocess.PIPE)
    p.stdout.read()  # type: ignore[union-attr]
    p.stdout.close()  # type: ignore[union-attr]
    _, _, cpu = wait_rss(p)
    return time.perf_counter() - t0, cpu


def extract(rev: str, into: Path) -> Path:
    """The ``meshdoctor`` package of ``rev`` under ``into``, importable from there."""
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", rev, "meshdoctor"],
        capture_output=True,
        check=True,
        timeout=120,
    ).stdout
    into.mkdir(parents=True)
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True, timeout=120)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(into)], check=True, timeout=300)
    return into


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--baseline", default=BASE_REV, metavar="REV")
    ap.add_argument("--lines", type=int, default=2_000_000)
    ap.add_argument("--base-lines", type=int, default=200_000)
    ap.add_argument("--varying-lines", type=int, default=1_000_000)
    ap.add_argument("--quiet-size", default="1GiB")
    ap.add_argument("--only", metavar="WORD", help="run only the logs whose title holds WORD")
    ap.add_argument("--stream", default="0")
    ap.add_argument("--save", metavar="DIR")
    a = ap.parse_args()
    printed = []

    def say(text: str = "") -> None:
        print(text, flush=True)
        printed.append(text)

    with tempfile.TemporaryDirectory(prefix="triage-speed-", dir="/tmp") as tmp:
        d = Path(tmp)
        trees = {
            "this tree": [sys.executable, "-c", LAUNCH, str(REPO)],
            f"@{a.baseline[:7]}": [
                sys.executable,
                "-c",
                LAUNCH,
                str(extract(a.baseline, d / "baseline")),
            ],
        }
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(REPO / "meshdoctor")])
        rep, rep_base = d / "repeated.log", d / "repeated-base.log"
        write_repeated(rep, a.lines)
        write_repeated(rep_base, a.base_lines)
        bare, bare_base = d / "bare.log", d / "bare-base.log"
        write_repeated(bare, a.lines, RECV)
        write_repeated(bare_base, a.base_lines, RECV)
        stamped, stamped_base = d / "stamped.log", d / "stamped-base.log"
        write_stamped(stamped, a.lines)
        write_stamped(stamped_base, a.base_lines)
        varying, varying_base = d / "varying.log", d / "varying-base.log"
        write_varying(varying, a.varying_lines)
        write_varying(varying_base, a.base_lines)
        blk = quiet_block()
        quiet = d / "quiet.log"
        write_quiet(quiet, parse_size(a.quiet_size), blk)
        logs = [
            ("every line matches, identical", {"this tree": rep, "base": rep_base}, "[jaccl]"),
            ("same, without the timestamp", {"this tree": bare, "base": bare_base}, "[jaccl]"),
            (
                "every line matches, all differ",
                {"this tree": stamped, "base": stamped_base},
                "[jaccl]",
            ),
            (
                "every line matches, numbers vary",
                {"this tree": varying, "base": varying_base},
                "rank",
            ),
            ("no line matches (runner output)", {"this tree": quiet, "base": quiet}, "[jaccl]"),
        ]
        if a.only:
            logs = [x for x in logs if a.only in x[0]]
        load = " ".join(f"{x:.2f}" for x in os.getloadavg())
        say(
            f"# python benchmarks/triage_speed.py --baseline {a.baseline[:7]} "
            f"({os.cpu_count()} CPUs, load average {load} at the start)"
        )
        say(
            f"{'log':<32} {'reader':<12} {'MB':>7} {'lines':>9} {'s':>7} {'MB/s':>7} "
            f"{'own MB/s':>8} {'cpu s':>6} {'RSS MiB':>8}  first cause"
        )
        for title, files, needle in logs:
            rates, cpus = {}, {}
            for tag, argv in trees.items():
                path = files["this tree" if tag == "this tree" else "base"]
                subprocess.run(["cat", str(path)], stdout=subprocess.DEVNULL)  # warm the cache
                size = path.stat().st_size
                with open(path, "rb") as fh:
                    nl = sum(b.count(b"\n") for b in iter(lambda: fh.read(1 << 24), b""))
                dt, rss, cause, rc, own, cpu = triage(argv, path)
                rates[tag] = size / dt / 1e6
                cpus[tag] = cpu
                say(
                    f"{title:<32} {tag:<12} {size / 1e6:7.1f} {nl:9d} {dt:7.2f} "
                    f"{rates[tag]:7.1f} {size / own / 1e6:8.1f} {cpu:6.2f} {rss:8.1f}  "
                    f"{cause} (exit {rc})"
                )
            path = files["this tree"]
            tg, gcpu = grep(path, needle)
            say(
                f"{title:<32} {'grep -c -F':<12} {path.stat().st_size / 1e6:7.1f} {'':>9} "
                f"{tg:7.2f} {path.stat().st_size / tg / 1e6:7.1f} {'':>8} {gcpu:6.2f}"
            )
            say(
                f"{title:<32} this tree / grep -c: {rates['this tree'] / (path.stat().st_size / tg / 1e6):.3f} "
                f"of its MB/s, {cpus['this tree'] / max(gcpu, 1e-3):.1f} x its CPU seconds"
            )
            base = rates[f"@{a.baseline[:7]}"]
            say(f"{title:<32} this tree / @{a.baseline[:7]} = {rates['this tree'] / base:.1f} x")
        say(
            "targets: every line matches >= 200 MB/s, numbers vary >= 150 MB/s, peak RSS < 100 "
            "MiB; 1 GB of non-matching text in about 3 s"
        )
        stream = parse_size(a.stream) if a.stream not in ("0", "") else 0
        if stream:
            p = subprocess.Popen(
                [*trees["this tree"], "triage", "-", "--json"],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
            )

            def feed() -> None:
                sent = 0
                try:
                    while sent < stream:
                        p.stdin.write(blk)  # type: ignore[union-attr]
                        sent += len(blk)
                finally:
                    p.stdin.close()  # type: ignore[union-attr]

            t0 = time.perf_counter()
            th = threading.Thread(target=feed)
            th.start()
            rc, rss, _ = wait_rss(p)
            th.join()
            tt = time.perf_counter() - t0
            say(
                f"stream {stream / 1e9:.1f} GB through stdin: {stream / tt / 1e6:.0f} MB/s, "
                f"exit {rc}, peak RSS {rss:.1f} MiB"
            )
    if a.save:
        out = Path(a.save)
        out.mkdir(parents=True, exist_ok=True)
        (out / "triage_speed.txt").write_text("\n".join(printed) + "\n")


if __name__ == "__main__":
    main()
