"""How mlx.launch reaches each rank: the one rule, as MLX states it.

MLX 0.32.4 ``mlx/_distributed_utils/launch.py`` (``RemoteProcess.__init__``): a host runs
locally only when its ssh name is exactly ``127.0.0.1`` (``is_local = host == "127.0.0.1"``);
every other name, ``localhost`` and this machine's own host name included, is reached with
``ssh -tt -o LogLevel=QUIET HOST``, and the remote kill after a failure with ``ssh HOST``.

This answers only "is ssh used"; which machine a rank then lands on is
:mod:`meshdoctor.hostfile.locality`'s question.
"""

from __future__ import annotations

from typing import Optional

#: The only ssh name mlx.launch runs without ssh (MLX 0.32.4 launch.py, ``RemoteProcess``).
LOCAL_SSH_NAME = "127.0.0.1"


def runs_without_ssh(ssh_name: str) -> bool:
    """True when mlx.launch starts a rank whose hostfile ``ssh`` is ``ssh_name`` as a local
    child: the name is exactly ``127.0.0.1`` (MLX 0.32.4 launch.py). ``localhost``, ``::1``,
    ``127.0.0.2`` and this machine's own names are all reached with ssh."""
    return ssh_name == LOCAL_SSH_NAME


def ssh_destination(ssh_name: str) -> Optional[str]:
    """The name mlx.launch passes to ssh for an entry whose ``ssh`` is ``ssh_name`` (the name
    as written), or None when it runs the rank without ssh (:func:`runs_without_ssh`)."""
    return None if runs_without_ssh(ssh_name) else ssh_name
