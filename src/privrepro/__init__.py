"""privrepro: four differential-privacy papers reproduced, as a library and a harness.

The papers' libraries: :mod:`privrepro.inference` (ip), :mod:`privrepro.boosting` (pb),
:mod:`privrepro.continual` (cl), :mod:`privrepro.pac` (pac), over :mod:`privrepro.dp`,
:mod:`privrepro.training`, :mod:`privrepro.models`, :mod:`privrepro.data`,
:mod:`privrepro.audit`, :mod:`privrepro.store` and the ground floor (:mod:`privrepro.config`,
:mod:`privrepro.seeding`, :mod:`privrepro.progress`, :mod:`privrepro.loops`, ...). Above
them: :mod:`privrepro.figures` (one recipe per figure), :mod:`privrepro.runner` (the command
line), :mod:`privrepro.rehearsal` (the paper profile rehearsed) and :mod:`privrepro.report`.
Each package's face hands on its entry points lazily (:mod:`privrepro.lazy_exports`).
"""
