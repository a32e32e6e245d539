"""Extract the names of NCCL's environment settings (``NCCL_*``) from NCCL's sources, per release.

Usage::

    python3 tools/extract_nccl_params.py --repo NCCL_GIT_DIR v2.18.6-1 ... v2.30.7-1 \
        > meshdoctor/signatures/sites/nccl_params.tsv

``NCCL_GIT_DIR`` is a git directory of github.com/NVIDIA/nccl (a clone, or the bare mirror that
``git clone --mirror`` makes); each TAG is read from it with ``git show``, nothing is checked
out. A setting is a name that NCCL reads from the environment or its configuration files:
``NCCL_PARAM(Name, "ENV", default)`` declares ``NCCL_ENV`` (src/include/param.h), and
2.30's ``DEFINE_NCCL_PARAM(var, type, NCCL_X, ...)`` (src/debug.cc) and
``ncclGetEnv("NCCL_X")`` or a table of such literals reads the others (NCCL_SOCKET_IFNAME,
NCCL_IB_HCA, NCCL_DEBUG). Each row: the name, the first and the last of the given tags whose
``src/`` has it (tags in the order given, oldest first). Standard library only.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from typing import Dict, List, Tuple

_DECLARED = re.compile(r'NCCL_PARAM\(\s*\w+\s*,\s*"([A-Z0-9_]+)"', re.S)
# 2.30's typed parameters: DEFINE_NCCL_PARAM(var, type, NCCL_NAME, default, ...) (src/debug.cc)
_TYPED = re.compile(r"DEFINE_NCCL_PARAM\(\s*\w+\s*,\s*[^,]+,\s*(NCCL_[A-Z0-9_]+)\b", re.S)
_LITERAL = re.compile(r'"(NCCL_[A-Z0-9_]+)"')
_SOURCE = (".cc", ".h", ".cu", ".c", ".cpp", ".hpp")


def _git(repo: str, *args: str) -> str:
    return subprocess.run(
        ["git", "--git-dir", repo, *args], check=True, capture_output=True, text=True
    ).stdout


def names_at(repo: str, tag: str) -> List[str]:
    """The ``NCCL_*`` settings that ``src/`` of ``tag`` reads, sorted."""
    found = set()
    for path in _git(repo, "ls-tree", "-r", "--name-only", tag, "--", "src").splitlines():
        if not path.endswith(_SOURCE):
            continue
        text = _git(repo, "show", f"{tag}:{path}")
        found.update("NCCL_" + m for m in _DECLARED.findall(text))
        found.update(_TYPED.findall(text))
        found.update(_LITERAL.findall(text))
    return sorted(found)


def main(argv: List[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repo", required=True, help="git directory of NVIDIA/nccl")
    ap.add_argument("tags", nargs="+", help="release tags, oldest first")
    args = ap.parse_args(argv)
    seen: Dict[str, Tuple[str, str]] = {}
    commits = []
    for tag in args.tags:
        commits.append((tag, _git(args.repo, "rev-list", "-n1", tag).strip()))
        for name in names_at(args.repo, tag):
            first = seen.get(name, (tag, tag))[0]
            seen[name] = (first, tag)
    out = sys.stdout
    for tag, commit in commits:
        out.write(f"# source\tgithub.com/NVIDIA/nccl {tag} (commit {commit})\n")
    out.write("# made by\ttools/extract_nccl_params.py\n")
    out.write("name\tfirst\tlast\n")
    for name in sorted(seen):
        first, last = seen[name]
        out.write(f"{name}\t{first}\t{last}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
