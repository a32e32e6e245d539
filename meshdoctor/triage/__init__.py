"""``meshdoctor triage``: logs, exit statuses and crash reports in, the first cause out.

Modules, one job each: :mod:`.findings` (the data), :mod:`.logs` (streaming log reader),
:mod:`.ips` (macOS crash reports), :mod:`.timeline` (first cause and consequences),
:mod:`.collect` (files, standard input, crash-report folders, hosts over ssh) and :mod:`.report`
(the verdict).
"""
