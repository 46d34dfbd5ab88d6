"""The continual-learning scenario of a PEFT run: its tasks, drawn from the repeat's stream.

Used by a run (:mod:`.runs`) and by the tuning, which compares a 5-Datasets order's tuning data
with the canonical order's (:mod:`.hyperparameter_search`).
"""

from __future__ import annotations

import numpy as np

from privrepro.continual.peft.settings import PeftRun
from privrepro.continual.scenarios import Scenario
from privrepro.seeding import numpy_stream

__all__ = ["peft_scenario"]


def peft_scenario(
    run: PeftRun, train_y: np.ndarray, test_y: np.ndarray, num_classes: int, seed: int
) -> Scenario:
    """The scenario of ``run``: a blurry split (``nb_tasks`` or 5 tasks), 5-Datasets in
    ``run.order``, or the class-incremental split into ``nb_tasks`` (or 10) tasks; the class
    order or split is drawn from the repeat's stream of ``seed``."""
    from privrepro.continual.blurry import make_blurry_scenario
    from privrepro.continual.scenarios import ContinualData, class_incremental, five_datasets

    rng = numpy_stream(seed, "cl-peft", run.benchmark, f"repeat{run.repeat}", "scenario")
    if run.blurry:
        return make_blurry_scenario(
            run.blurry,
            train_y,
            test_y,
            num_classes,
            run.nb_tasks or 5,
            rng,
            run.disjoint_pct,
            run.blurry_pct,
        )
    if run.benchmark == "5-datasets":
        cd = ContinualData(
            run.benchmark,
            np.zeros((len(train_y), 1)),
            train_y,
            np.zeros((len(test_y), 1)),
            test_y,
            num_classes,
        )
        return five_datasets(cd, list(run.order) or None)
    order = rng.permutation(num_classes).astype(np.int64)
    inc = [len(a) for a in np.array_split(np.arange(num_classes), run.nb_tasks or 10)]
    return class_incremental(f"split-{run.benchmark}", train_y, test_y, num_classes, inc, order)
