#!/usr/bin/env python3
"""A stub for a macOS/RDMA command this machine cannot have: prints a fixture file.

Installed by :func:`tests.stubs.install` as ``<dir>/<command>`` wrappers that exec this script
with the fixture directory and the command name. For ``cmd a b`` it serves, in this order:
``<cmd>__a_b.hang`` / ``<cmd>.hang`` (sleep for the number of seconds inside, default 3600: a hung
tool), ``<cmd>__a_b.txt`` then ``<cmd>.txt`` (printed to stdout), with the exit status from a
matching ``.exit`` file (default 0). A command with no fixture exits 127 like a missing one.
A matching ``.apply`` file changes the fake node's state after the output: each line ``SRC DEST``
copies fixture file SRC over DEST (``ifconfig__bridge0_down.apply``: the bridge goes down).
"""

import os
import shutil
import sys
import time


def _apply(fixdir: str, key: str) -> None:
    path = os.path.join(fixdir, key + ".apply")
    if not os.path.exists(path):
        return
    for line in open(path, encoding="utf-8").read().splitlines():
        if line.strip():
            src, dest = line.split()
            shutil.copy(os.path.join(fixdir, src), os.path.join(fixdir, dest))


def main() -> int:
    fixdir, cmd, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    keys = []
    if args:
        keys.append(cmd + "__" + "_".join(a.lstrip("-").replace("/", "_") for a in args))
    keys.append(cmd)
    for key in keys:
        hang = os.path.join(fixdir, key + ".hang")
        if os.path.exists(hang):
            text = open(hang).read().strip()
            time.sleep(float(text) if text else 3600)
            return 0
    for key in keys:
        txt = os.path.join(fixdir, key + ".txt")
        if os.path.exists(txt):
            sys.stdout.write(open(txt, encoding="utf-8").read())
            sys.stdout.flush()
            _apply(fixdir, key)
            ex = os.path.join(fixdir, key + ".exit")
            return int(open(ex).read().strip()) if os.path.exists(ex) else 0
    sys.stderr.write(f"{cmd}: command not found (no fixture in {fixdir})\n")
    return 127


if __name__ == "__main__":
    sys.exit(main())
