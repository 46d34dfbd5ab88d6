"""privrepro.report: the reproduction report.

``python -m privrepro.report`` (``make report``) holds every reproduced number against the one
the paper reports: :mod:`~privrepro.report.references` loads the reference files into the records
of :mod:`~privrepro.report.reference_records`, :mod:`~privrepro.report.results` reads what the runner wrote, :mod:`~privrepro.report.scorecard`
computes the verdicts, :mod:`~privrepro.report.render` writes ``REPORT.md`` and ``REPORT.html``
(see ``docs/report.md``) from its sections (:mod:`~privrepro.report.summary_section`,
:mod:`~privrepro.report.figure_section`, :mod:`~privrepro.report.errata_section`,
:mod:`~privrepro.report.closing_sections`). The claims are parsed by
:mod:`~privrepro.report.claim_checks`, evaluated by :mod:`~privrepro.report.check_evaluation` and
scored by :mod:`~privrepro.report.claims`. The plot style lives in :mod:`privrepro.plotting.style`.
"""
