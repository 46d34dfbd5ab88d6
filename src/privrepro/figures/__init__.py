"""privrepro.figures: one recipe per figure or table (parameters → library calls → rows → plot).

:mod:`.api` is the contract between a recipe and the runner (:class:`~.api.Figure`,
:class:`~.api.UnitContext`); :mod:`.table_schema` checks each figure's table against
``schemas/<paper>.yaml``. The recipes live in ``cl/``, ``ip/``, ``pac/``, ``pb/``; what several
recipes of a paper share sits in one module of that paper, and no recipe imports another.
"""
