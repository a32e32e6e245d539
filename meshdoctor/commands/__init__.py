"""The commands of the CLI, one module each, imported only when that command runs: the table in
:mod:`meshdoctor.cli` names each command's module, attribute and short help. A module holds its
click command, its options and their validation; what several share is in :mod:`.options`, how a
command prints its verdict and ends in :mod:`meshdoctor.output`."""
