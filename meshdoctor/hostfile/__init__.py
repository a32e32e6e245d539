"""The mlx.launch hostfile as typed data.

Format (mlx ``python/mlx/_distributed_utils/common.py`` ``Hostfile.from_file``, mlx 0.32.4):
either a JSON list of hosts, or ``{"backend": ..., "envs": ["K=V", ...], "hosts": [...]}``; a host
is ``{"ssh": name, "ips": [ip, ...], "rdma": [null | "dev" | ["dev", ...], ...]}``; rank = position.

* :mod:`~meshdoctor.hostfile.types`: the frozen data (:class:`~.types.Host`,
  :class:`~.types.Hostfile`, :class:`~.types.Problem`, :class:`~.types.BadCell`);
* :mod:`~meshdoctor.hostfile.load`: the only code that reads the JSON (``load``, ``parse``,
  ``from_list``), and :class:`~.load.HostfileError`;
* :mod:`~meshdoctor.hostfile.rules`: the consistency rules, found once as a hostfile is built;
* :mod:`~meshdoctor.hostfile.locality`: which entries are this machine;
* :mod:`~meshdoctor.hostfile.phrases`: ranks in words.
"""
