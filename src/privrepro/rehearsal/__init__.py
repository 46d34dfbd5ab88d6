"""Rehearsal of the paper profile before a user spends GPU days on it: a tool above the runner.

The paper profile reads real datasets and pretrained weights that cannot be fetched everywhere.
A rehearsal runs its exact code path on files of the same formats and sizes, with a compute cap,
and measures what the full run would cost. It reaches the library through two doors only: the
runner's plan step (:mod:`privrepro.runner.plan`) and the loops a unit is passed
(:mod:`privrepro.loops`); nothing below it imports it.

* :mod:`privrepro.rehearsal.standins` — full-size, format-real stand-in datasets and randomly
  initialised checkpoints, written into a data root marked so that nothing read from it can pass
  for real data (``make rehearsal-data``).
* :mod:`privrepro.rehearsal.cap` — the compute cap, the loops a rehearsed unit is passed: every
  long loop runs its first items, and the cap predicts the rest (each loop's record:
  :mod:`privrepro.rehearsal.loop_record`).
* :mod:`privrepro.rehearsal.device_model` — a GPU's time for the torch operators counted on the
  CPU (a roofline; the H100 of every prediction).
* :mod:`privrepro.rehearsal.measure` — one figure under the paper profile on the stand-ins,
  capped: peak host and device memory, load time, rates, counts and the predicted full cost.
* :mod:`privrepro.rehearsal.settings` — what a rehearsal runs and where, and the runner's plan of
  a figure under the paper profile on the stand-ins.
* :mod:`privrepro.rehearsal.figure_cost` — the cost model: a figure's predicted cost from the
  units it ran, per cost class and part, a shared part counted once per key.
* :mod:`privrepro.rehearsal.rehearse` — ``make rehearsal`` (``python -m privrepro.rehearsal``):
  every figure, each in its own process, into ``results/rehearsal.csv`` and
  ``plots/rehearsal.png``.
* :mod:`privrepro.rehearsal.summary` — what it hands to the report: that table's columns and
  totals.
"""
