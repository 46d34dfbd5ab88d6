"""Two cl figures tuning DP-SGD in one PostgreSQL database: their studies stay apart.

The study of a run is keyed by everything its objective sees (``privrepro.training.optuna_studies.study_name``):
fig3_peft and figA1 with different epochs get two studies, each with exactly ``n_trials``
COMPLETE trials; figA1 with fig3_peft's settings reuses fig3_peft's study and runs no trial.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from privrepro.runner.run import run_experiment
from privrepro.training.optuna_studies import complete_trials, open_study

TUNE = [
    "profile=tiny",
    "params.tuning.enabled=true",
    "params.tuning.n_trials=2",
    "params.tuning.n_startup_trials=1",
    "params.tuning.sampler=random",
    "plot=false",
]


def _studies(table: pd.DataFrame) -> set[str]:
    return set(table.loc[table["row"] == "tuning", "study"])


@pytest.mark.slow
def test_two_figures_tuning_in_one_database_keep_their_studies_apart(
    postgres_url: str, store_overrides: list[str], tmp_path: Path
) -> None:
    import optuna

    common = [*store_overrides, *TUNE, f"params.tuning.storage={postgres_url}"]
    fig3 = run_experiment("cl/fig3_peft", [*common, "params.train.epochs=1"])
    figa1 = run_experiment("cl/figA1", [*common, "params.train.epochs=2"])
    s3, sa1 = _studies(fig3.table), _studies(figa1.table)
    assert s3 and sa1 and not s3 & sa1  # different epochs: different objectives and studies
    shared_runs = {_base(s) for s in s3} & {_base(s) for s in sa1}
    assert shared_runs  # the same runs (benchmark, ε, labels, seed) tuned by both figures
    names = {s.study_name for s in optuna.get_all_study_summaries(postgres_url)}
    assert s3 | sa1 <= names
    for name in s3 | sa1:
        study = open_study(name, postgres_url, sampler="random")
        assert len(complete_trials(study)) == 2 and len(study.trials) == 2

    # figA1 with fig3_peft's settings: the same objective, so fig3_peft's trials are reused
    again = run_experiment("cl/figA1", [*common, "params.train.epochs=1", "force=true"])
    reused = {s for s in _studies(again.table) if _base(s) in shared_runs}
    assert reused and reused <= s3
    for name in reused:
        assert len(open_study(name, postgres_url, sampler="random").trials) == 2  # none added


def _base(study: str) -> str:
    return study.rsplit("-", 1)[0]
