"""privrepro.report: the reproduction report.

``python -m privrepro.report`` (``make report``) holds every reproduced number against the one
the paper reports: :mod:`~privrepro.report.references` loads the reference files,
:mod:`~privrepro.report.results` reads what the runner wrote, :mod:`~privrepro.report.scorecard`
computes the verdicts, :mod:`~privrepro.report.render` writes ``REPORT.md`` and ``REPORT.html``
(see ``docs/report.md``). The plot style lives in :mod:`privrepro.plotting.style`.
"""
