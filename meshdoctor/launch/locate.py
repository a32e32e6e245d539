"""Where the installed MLX's mlx.launch is, and the command line that runs it.

The launcher is the one that comes with the MLX of this interpreter: the ``mlx.launch`` console
script next to :data:`sys.executable` (pip puts a package's scripts beside the interpreter of
its environment), else the same code as ``python -c`` through ``mlx._distributed_utils.launch``
(MLX 0.32.x has no ``mlx.launch`` module to run with ``-m``; its console script is
``mlx.launch = mlx._distributed_utils.launch:main``, MLX's setup.py ``entry_points``).
"""

from __future__ import annotations

import os
import re
import sys
from typing import List, Optional, Sequence

SCRIPT = "mlx.launch"
MODULE = "mlx._distributed_utils.launch"
# what the console script runs (MLX's setup.py: mlx.launch = mlx._distributed_utils.launch:main)
_MAIN = f"import sys; from {MODULE} import main; sys.exit(main())"


class LauncherMissing(Exception):
    """This interpreter's MLX has no mlx.launch (MLX not installed, or older than 0.22)."""


def launcher(python: Optional[str] = None) -> List[str]:
    """The argv prefix that runs mlx.launch of ``python``'s environment (default: this
    interpreter): ``[DIR/mlx.launch]`` when the console script sits next to it, else
    ``[python, "-c", ...]`` calling ``mlx._distributed_utils.launch.main``. Raises
    :class:`LauncherMissing` when neither exists."""
    python = python or sys.executable
    script = os.path.join(os.path.dirname(python), SCRIPT)
    if os.path.isfile(script) and os.access(script, os.X_OK):
        return [script]
    import importlib.util

    try:
        found = importlib.util.find_spec(MODULE) is not None
    except (ImportError, ValueError):
        found = False
    if not found:
        raise LauncherMissing(
            f"no mlx.launch next to {python} and no {MODULE} module: install MLX "
            "(pip install mlx) in this environment"
        )
    return [python, "-c", _MAIN]


_PYTHON_NAME = re.compile(r"python[0-9.]*")  # python, python3, python3.12 (whole name)


def job_python(command: Sequence[str], path: Optional[str] = None) -> Optional[str]:
    """The interpreter the job's ranks run on this machine: ``command[0]`` as the rank's shell
    finds it (mlx.launch ends each rank's script with ``exec "${cmd[@]}"``, MLX 0.32.4
    ``launch.py``: a bare name is looked up on ``PATH``, ``path`` or this process's), when it
    is a Python (its name is ``python``, ``python3``, ``python3.12``...), or the interpreter of
    its ``#!`` line (a console script such as ``mlx_lm.generate``). None when the command runs
    no Python that can be named (a shell script, a binary, a name not found)."""
    if not command:
        return None
    import shutil

    found = shutil.which(command[0], path=path)
    if found is None:
        return None
    if _PYTHON_NAME.fullmatch(os.path.basename(command[0])):
        return os.path.abspath(found)
    try:
        with open(found, "rb") as fh:
            head = fh.read(256)
    except OSError:
        return None
    if not head.startswith(b"#!"):
        return None
    words = head[2:].split(b"\n", 1)[0].decode("utf-8", "replace").split()
    if words[:1] and os.path.basename(words[0]) == "env" and len(words) > 1:
        return job_python(words[1:2], path)
    if words and _PYTHON_NAME.fullmatch(os.path.basename(words[0])) and os.path.isabs(words[0]):
        return words[0]
    return None


def argv(
    prefix: Sequence[str],
    command: Sequence[str],
    *,
    hostfile: Optional[str] = None,
    hosts: Optional[str] = None,
    backend: Optional[str] = None,
) -> List[str]:
    """mlx.launch's command line: ``prefix`` (:func:`launcher`), ``--hostfile FILE`` or
    ``--hosts A,B,C`` (none: mlx.launch's own default, 127.0.0.1), ``--backend B`` when given
    (none: the hostfile's, else mlx.launch's choice), then ``--`` and the user's ``command``
    as given (mlx.launch drops a leading ``--``, MLX 0.32.4 launch.py ``main``)."""
    out = list(prefix)
    if hostfile is not None:
        out += ["--hostfile", hostfile]
    elif hosts is not None:
        out += ["--hosts", hosts]
    if backend is not None:
        out += ["--backend", backend]
    return out + ["--", *command]
