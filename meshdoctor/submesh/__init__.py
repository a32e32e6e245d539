"""The healthy sub-mesh: which hosts (and, for jaccl, which cables) of a hostfile passed a fleet
check or a ``probe --pairs``, and the hostfile restricted to them (``--healthy-hostfile OUT``).

:mod:`meshdoctor.submesh.select` reads a verdict into a :class:`~meshdoctor.submesh.select.Split`
(passing and failing hosts, cables cut); :mod:`meshdoctor.submesh.write` builds the restricted
hostfile (ranks renumbered, rdma matrix cut to match), writes it atomically and reports it as
one result (MD410).
"""
