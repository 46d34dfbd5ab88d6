"""The tracking switch for real: ``tracking=mlflow`` writes a figure's runs to a local MLflow
store (no server) with the units' parameters, per-step metrics, the table and the plot."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

pytest.importorskip("mlflow", reason="the mlflow extra (locked in the test group)")


def _paths(tmp: Path) -> list[str]:
    return [
        f"paths.experiments_dir={tmp / 'exp'}",
        f"paths.results_dir={tmp / 'res'}",
        f"paths.plots_dir={tmp / 'plots'}",
        "progress=false",
    ]


@pytest.mark.slow
def test_tracking_mlflow_logs_units_metrics_table_and_plot(tmp_path: Path) -> None:
    from mlflow.tracking import MlflowClient

    from privrepro.runner.run import run_experiment

    n_trials = 2
    run = run_experiment(
        "cl/fig3_peft",
        [
            "profile=tiny",
            "params.tuning.enabled=true",
            f"params.tuning.n_trials={n_trials}",
            "tracking=mlflow",
            *_paths(tmp_path),
        ],
    )
    store = tmp_path / "exp" / "_mlflow" / "mlflow.db"
    assert store.is_file()  # conf/tracking/mlflow.yaml: a local store beside the run store
    client = MlflowClient(f"sqlite:///{store}")
    exp = client.get_experiment_by_name("privrepro/cl/fig3_peft")
    assert exp is not None
    runs = client.search_runs([exp.experiment_id])
    figure_runs = [r for r in runs if "privrepro.unit_id" not in r.data.tags]
    unit_runs = [r for r in runs if "privrepro.unit_id" in r.data.tags]
    assert len(figure_runs) == 1 and len(unit_runs) == run.computed == 3
    fig = figure_runs[0]
    assert fig.info.status == "FINISHED"
    assert fig.data.params["params.tuning.n_trials"] == str(n_trials)
    assert "tracking=mlflow" in fig.data.tags["privrepro.overrides"]  # the command: pytest
    files = {
        a.path for d in ("results", "plots") for a in client.list_artifacts(fig.info.run_id, d)
    }
    # the figure's table and meta, and this run's own plot (tuning on: not the figure's own
    # parameters for tiny, so no default plot), named by what it varied
    own = "plots/profile-tiny_tuning_enabled-true_tuning_n_trials-2.png"
    assert {"results/fig3_peft.csv", "results/fig3_peft.meta.json", own} <= files

    table = pd.read_parquet(tmp_path / "res" / "cl" / "fig3_peft.parquet")
    tuned_here: list[int] = []
    for unit in unit_runs:
        assert unit.info.status == "FINISHED"
        assert unit.data.tags["mlflow.parentRunId"] == fig.info.run_id  # nested in the figure
        uid = unit.data.tags["privrepro.unit_id"]
        rows = table[table["unit_id"] == uid]
        assert unit.data.params["method"] == rows["method"].iloc[0]  # the unit's parameters
        # tuning: one value per trial the unit ran, the best of them as best_value; a unit whose
        # study another unit already tuned (identical objective: tuned once) runs none
        trials = client.get_metric_history(unit.info.run_id, "tuning/trial_value")
        best = client.get_metric_history(unit.info.run_id, "tuning/best_value")
        assert len(trials) in (0, n_trials)
        if trials:
            assert best[-1].value == max(m.value for m in trials)
        tuned_here.append(len(trials))
        # DP-SGD: a loss per step of each task's run, its ε spent ending at the table's value
        privacy = rows[rows["row"] == "privacy"].sort_values("task")
        for _, prow in privacy.iterrows():
            t, steps = int(prow["task"]), int(prow["dp_steps"])
            loss = client.get_metric_history(unit.info.run_id, f"dpsgd/task{t}/loss")
            eps = client.get_metric_history(unit.info.run_id, f"dpsgd/task{t}/epsilon_spent")
            assert sorted(m.step for m in loss) == list(range(1, steps + 1))
            last = max(eps, key=lambda m: m.step)
            assert last.step == steps
            assert math.isclose(last.value, prow["dp_epsilon_spent"], rel_tol=1e-12)
            # ε spent grows with the steps (composition) up to the calibrated target
            values = [m.value for m in sorted(eps, key=lambda m: m.step)]
            assert values == sorted(values) and values[-1] <= prow["dp_epsilon_target"] + 0.011
        # its outcome: the largest ε its DP-SGD runs spent, its final accuracy (the figure's
        # summary of this unit alone), sortable in MLflow's UI
        spent = pd.to_numeric(rows["dp_epsilon_spent"], errors="coerce").dropna()
        assert unit.data.metrics["epsilon_spent"] == pytest.approx(spent.max(), rel=1e-12)
        assert any(k.startswith("final_AA_mean") for k in unit.data.metrics)
    assert sum(tuned_here) >= n_trials  # the first unit's study was tuned, and logged
    assert any(k.startswith("final_AA_mean") for k in fig.data.metrics)


def test_tracking_mlflow_logs_each_units_outcome_and_the_figures_numbers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """cl Fig. 2 on two ε: each unit run is named by its ε and seed and carries the figure's
    named numbers for that ε; the figure's run carries them all; the console names the run."""
    from mlflow.tracking import MlflowClient

    from privrepro.runner.plan import plan_experiment
    from privrepro.runner.run import run_experiment

    epsilons = (0.5, 1.0)
    overrides = [
        "profile=tiny",
        f"params.epsilons=[{epsilons[0]},{epsilons[1]}]",
        "plot=false",
        "tracking=mlflow",
        *_paths(tmp_path),
    ]
    run = run_experiment("cl/fig2", overrides)
    uri = f"sqlite:///{tmp_path / 'exp' / '_mlflow' / 'mlflow.db'}"
    client = MlflowClient(uri)
    exp = client.get_experiment_by_name("privrepro/cl/fig2")
    assert exp is not None
    runs = client.search_runs([exp.experiment_id])
    (fig,) = [r for r in runs if "privrepro.unit_id" not in r.data.tags]
    units = {r.info.run_name: r for r in runs if "privrepro.unit_id" in r.data.tags}
    assert sorted(units) == [f"cl/fig2 epsilon={e} seed=0" for e in epsilons]
    assert fig.info.run_name == "cl/fig2 seed=0"
    # the numbers to find: the figure's summary of this run's units (cl paper, Fig. 2's k at
    # 99 %), what the tracker logs; summary.csv shows the profile's canonical view, which an
    # ad-hoc run's parameters are not
    plan = plan_experiment("cl/fig2", overrides, check=False)
    summary = plan.recipe.summarize(run.table, plan.params).dropna(subset=["value"])
    assert len(summary) >= len(epsilons)
    for _, row in summary.iterrows():
        unit = units[f"cl/fig2 epsilon={row['epsilon']} seed=0"]
        assert unit.data.metrics[row["metric"]] == pytest.approx(row["value"], rel=1e-12)
        name = f"{row['metric']}/epsilon:{row['epsilon']}"
        assert fig.data.metrics[name] == pytest.approx(row["value"], rel=1e-12)
    out = capsys.readouterr().out
    assert f"MLflow run {fig.info.run_id}" in out and uri in out


def test_outcome_metrics_name_each_number_by_the_labels_that_vary() -> None:
    from privrepro.runner.tracking import outcome_metrics, run_label

    summary = pd.DataFrame(
        {
            "metric": ["mass", "mass", "mass"],
            "case": ["abs", "abs", "rel"],
            "input": ["X", "X'", "X"],
            "const": ["a", "a", "a"],
            "value": [0.9, 0.8, float("inf")],
        }
    )
    # 'const' names nothing; X' is a valid MLflow name; ±inf is dropped (MLflow refuses it)
    assert outcome_metrics(summary) == {
        "mass/case:abs/input:X": 0.9,
        "mass/case:abs/input:Xprime": 0.8,
    }
    assert outcome_metrics(None) == {}
    units = [{"k": 5, "eps": 1.0, "m": {"a": 1}}, {"k": 5, "eps": 2.0, "m": {"a": 2}}]
    assert run_label(units[1], units) == "eps=2.0 a=2"


def test_tracking_uri_that_cannot_be_opened_is_one_line_before_any_compute(
    tmp_path: Path,
) -> None:
    from privrepro.config import ConfigError
    from privrepro.runner.run import run_experiment

    blocker = tmp_path / "a-file"
    blocker.write_text("")
    with pytest.raises(ConfigError, match=r"^tracking\.uri = .*cannot be opened"):
        run_experiment(
            "pb/fig2",
            [
                "profile=tiny",
                "tracking=mlflow",
                f"tracking.uri=sqlite:///{blocker}/x/m.db",
                *_paths(tmp_path),
            ],
        )
    assert not (tmp_path / "exp" / "pb").exists()


def test_the_library_hook_gets_dp_sgd_steps_and_tuning_trials() -> None:
    """``log_metric`` is a plain callable: no tracking package in the library."""
    import torch

    from privrepro.loops import PLAIN
    from privrepro.training.dpsgd import DPSGDHyper, epsilon_log_steps, train_linear_head
    from privrepro.training.optuna_studies import open_study, run_study

    got: list[tuple[str, float, int]] = []
    g = torch.Generator().manual_seed(0)
    x, y = torch.randn(200, 5, generator=g), torch.randint(0, 3, (200,), generator=g)
    hp = DPSGDHyper(epochs=2.0, batch_size=50.0, lr=1e-2, clip=1.0, epsilon=2.0, delta=1e-5)
    log = train_linear_head(
        torch.nn.Linear(5, 3),
        x,
        y,
        hp,
        generator=g,
        log_metric=lambda n, v, s: got.append((n, v, s)),
    )
    losses = [s for n, _, s in got if n == "loss"]
    eps = [(s, v) for n, v, s in got if n == "epsilon_spent"]
    assert losses == list(range(1, log.steps + 1))
    assert [s for s, _ in eps] == sorted(epsilon_log_steps(log.steps))
    assert eps[-1] == (log.steps, log.privacy.epsilon_spent)

    trials: list[tuple[str, float, int]] = []
    study = open_study("hook", "sqlite://", sampler="random")
    run_study(
        study,
        lambda t: t.suggest_float("x", 0, 1),
        n_complete=3,
        loops=PLAIN,  # no bar
        log_metric=lambda n, v, s: trials.append((n, v, s)),
    )
    values = [(s, v) for n, v, s in trials if n == "trial_value"]
    assert [s for s, _ in values] == [0, 1, 2]
    assert [v for n, v, s in trials if n == "best_value"][-1] == max(v for _, v in values)
