"""Rehearsal of the paper profile before a user spends GPU days on it.

The paper profile reads real datasets and pretrained weights that cannot be fetched everywhere.
A rehearsal runs its exact code path on files of the same formats and sizes, with a compute cap,
and measures what the full run would cost.

* :mod:`privrepro.rehearsal.standins` — full-size, format-real stand-in datasets and randomly
  initialised checkpoints, written into a data root marked so that nothing read from it can pass
  for real data (``make rehearsal-data``).
* :mod:`privrepro.rehearsal.cap` — the compute cap: a :class:`~.cap.RehearsalCap` in the unit
  context makes every ``ctx.progress`` loop run its first items and predicts the rest.
* :mod:`privrepro.rehearsal.measure` — one figure under the paper profile on the stand-ins,
  capped: peak host and device memory, load time, rates, counts and the predicted full cost.
* :mod:`privrepro.rehearsal.rehearse` — ``make rehearsal``: every figure, each in its own process,
  into ``results/rehearsal.csv`` and ``plots/rehearsal.png``.
"""
