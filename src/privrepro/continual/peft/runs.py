"""One PEFT run end to end, as tidy rows (cl paper, Secs. 6–7, Algs. 2, A1, A2; App. E, F).

:func:`run_peft` runs one :class:`~.settings.PeftRun` (more in ``docs/modules.md``).
"""

from __future__ import annotations

import itertools
from dataclasses import replace
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
import torch

from privrepro.config import ConfigError
from privrepro.continual.peft.data import PeftData, load_peft_data
from privrepro.continual.peft.hyperparameter_search import tune_hyper, unclipped_if_nondp
from privrepro.continual.peft.scenario import peft_scenario
from privrepro.continual.peft.settings import (
    FeatureSettings,
    FilmSettings,
    PeftRun,
    TrainSettings,
    TuningSettings,
    check_settings,
    eps_label,
    identity,
)
from privrepro.continual.scenarios import Scenario
from privrepro.continual.workspace import Workspace
from privrepro.loops import PLAIN, Loops
from privrepro.metrics import prefixed
from privrepro.seeding import torch_stream
from privrepro.training.dpsgd import DPSGDHyper
from privrepro.training.rows import select_rows

__all__ = ["PeftOutput", "ensemble_all_orders", "run_peft"]

#: the widest label space whose logits are stacked (entropy rule, saved logits)
MAX_STACKED_LABELS = 20000


class PeftOutput(NamedTuple):
    """A run's tidy rows and, when ``save_logits``, its members' test logits
    (``member<t>``, ``labels<t>``, ``y_test``, ``test_task``)."""

    rows: pd.DataFrame
    logits: dict[str, np.ndarray]


def _label_ids(run: PeftRun, scenario: Scenario, num_classes: int) -> list[np.ndarray]:
    from privrepro.continual.label_spaces import label_spaces_for

    spaces = label_spaces_for(run.label_policy, scenario, run.dummy_factor, run.dummy_reference)
    return [s.ids(num_classes) for s in spaces]


def _privacy_columns(rec: Any) -> dict[str, Any]:
    """A run's ``dp_*`` columns: the opacus accountant's record (σ, q, steps, ε spent, the
    composition) and dp_accounting's PLD ε of the same mechanism beside it
    (``dp_epsilon_pld``, :func:`privrepro.training.dpsgd.pld_epsilon`)."""
    from privrepro.training.dpsgd import pld_epsilon

    if rec is None:
        return {}
    return {**rec.as_row("dp_"), "dp_epsilon_pld": pld_epsilon(rec)}


class _RunState:
    """The state one run's evaluation shares: data, scenario, label spaces, per-task rows and
    hyperparameters, the DP-SGD generator and the rows written so far."""

    def __init__(
        self,
        run: PeftRun,
        data: PeftData,
        scenario: Scenario,
        label_ids: list[np.ndarray],
        hps: list[DPSGDHyper],
        film: FilmSettings,
        generator: torch.Generator,
        precision: str = "fp32",
    ) -> None:
        self.run, self.data, self.sc, self.ids, self.hps = run, data, scenario, label_ids, hps
        self.nb = scenario.nb_tasks
        self.dev = data.train_x.device
        self.y_test = torch.as_tensor(data.test_y, device=self.dev)
        self.test_task = torch.as_tensor(scenario.test_task_of(len(data.test_y)), device=self.dev)
        self.tasks = [
            (select_rows(data.train_x, ix), data.train_y[ix]) for ix in scenario.train_tasks
        ]
        self.train_kw: dict[str, Any] = {
            "generator": generator,
            "backbone": data.backbone,
            "physical_batch": film.physical_batch,
            "engine": film.engine,
            "precision": precision,
        }
        self.loops: Loops = PLAIN  # the workspace's (run_peft)
        self.base = {
            "benchmark": run.benchmark,
            "method": run.method,
            "epsilon": run.epsilon,
            "eps_label": eps_label(run.epsilon),
            "repeat": run.repeat,
            "label_policy": run.label_policy,
            "dummy_factor": run.dummy_factor,
            "blurry": run.blurry,
            "order": "-".join(map(str, run.order)),
        }
        self.member_key = ""  # a PEFT Ensemble's members: their key and cache (run_peft)
        self.cache_dir: str | None = None
        self.rows: list[dict[str, Any]] = []
        self.privacy: list[dict[str, Any]] = []
        self.logits: dict[str, np.ndarray] = {}

    def log_privacy(self, task: int, member: Any, batch_size: float | None) -> None:
        self.privacy.append(
            {
                **self.base,
                "row": "privacy",
                "task": task,
                "n_train": member.n_train,
                "batch_size": batch_size,
                **_privacy_columns(member.privacy),
            }
        )

    def predict(self, member: Any) -> torch.Tensor:
        """The member's argmax prediction (global labels) on the test set."""
        from privrepro.continual.peft.members import member_logits

        z = member_logits(
            member, self.data.test_x, precision=self.train_kw["precision"], loops=self.loops
        )
        return torch.as_tensor(member.label_ids, device=self.dev)[z.argmax(1)]

    def accuracy(self, preds: list[torch.Tensor]) -> np.ndarray:
        from privrepro.continual.ensemble import accuracy_matrix

        stacked = torch.stack(preds)
        return accuracy_matrix(stacked, self.y_test.cpu(), self.test_task.cpu(), self.nb).numpy()

    def add_rule_rows(self, rule: str, acc: np.ndarray) -> None:
        """acc[t, i] of one rule, then AA_t and AF_t (NaN entries read as 0, tasks without test
        samples)."""
        from privrepro.continual.metrics import average_accuracy, average_forgetting

        nb, base = self.nb, self.base
        for t in range(nb):
            for i in range(nb):
                self.rows.append(
                    {
                        **base,
                        "row": "acc",
                        "rule": rule,
                        "t": t + 1,
                        "i": i + 1,
                        "value": float(acc[t, i]),
                    }
                )
        aa = average_accuracy(np.nan_to_num(acc))
        af = average_forgetting(np.nan_to_num(acc))
        for t in range(nb):
            for metric, values in (("AA", aa), ("AF", af)):
                self.rows.append(
                    {
                        **base,
                        "row": "metric",
                        "rule": rule,
                        "metric": metric,
                        "t": t + 1,
                        "value": float(values[t]),
                    }
                )


def _non_cl(r: _RunState, hp0: DPSGDHyper, n_tune: int, train: TrainSettings) -> pd.DataFrame:
    """Non-CL (Alg. A2): one model on all tasks' data, evaluated once (AA over all tasks)."""
    from privrepro.continual.peft.members import train_member
    from privrepro.training.optuna_studies import transfer_hyper

    all_ix = np.concatenate(r.sc.train_tasks)
    hp = unclipped_if_nondp(transfer_hyper(hp0, n_tune, len(all_ix)), train)
    union = np.unique(np.concatenate(r.ids))
    x = select_rows(r.data.train_x, all_ix)
    y = r.data.train_y[all_ix]  # one DP-SGD run on the union: a single release
    m = train_member(r.run.kind, x, y, union, hp, composition="single", **r.train_kw)
    acc = r.accuracy([r.predict(m).cpu()])[0]
    for i in range(r.nb):
        r.rows.append(
            {
                **r.base,
                "row": "acc",
                "rule": "argmax",
                "t": r.nb,
                "i": i + 1,
                "value": float(acc[i]),
            }
        )
    r.rows.append(
        {
            **r.base,
            "row": "metric",
            "rule": "argmax",
            "metric": "AA",
            "t": r.nb,
            "value": float(np.nanmean(acc)),
        }
    )
    r.log_privacy(-1, m, hp.batch_size)
    return pd.DataFrame(r.rows + r.privacy)


def _naive(r: _RunState, loops: Loops, desc: str) -> dict[str, list[torch.Tensor]]:
    """Naive (Alg. A1): the checkpoint after each task predicts by argmax."""
    from privrepro.continual.baselines import iter_naive

    union = np.unique(np.concatenate(r.ids))
    preds: list[torch.Tensor] = []
    members = iter_naive(r.run.kind, r.tasks, union, r.hps, **r.train_kw)
    for t, m in enumerate(loops(members, desc, r.nb)):
        preds.append(r.predict(m).cpu())
        r.log_privacy(t, m, r.hps[min(t, r.nb - 1)].batch_size)
    return {"argmax": loops.full_list(preds, r.nb)} if preds else {}  # full_list: see _ensemble


def _stack_row(r: _RunState, z: torch.Tensor, label_ids: np.ndarray, width: int) -> torch.Tensor:
    """One member's logits on the global label axis (−inf outside its label space)."""
    if width > MAX_STACKED_LABELS:
        raise ConfigError(
            "rules",
            list(r.run.rules),
            f"entropy/save_logits need label spaces of at most {MAX_STACKED_LABELS} labels",
        )
    g = torch.full((len(r.data.test_y), width), float("-inf"))
    g[:, label_ids] = z.cpu()
    return g


def _ensemble(r: _RunState, loops: Loops, desc: str) -> dict[str, list[torch.Tensor]]:
    """The PEFT Ensemble (Alg. 2): after task t, each rule predicts from members 1..t.

    ArgMax and Median decompose over members (a running best per sample); Entropy needs every
    member's logits on the global label axis, stacked (also kept when ``save_logits``)."""
    from privrepro.continual.ensemble import aggregate_scores, combine_best, member_best
    from privrepro.continual.peft.members import iter_ensemble, member_logits

    run = r.run
    full = ("entropy" in run.rules) or run.save_logits
    best: dict[str, tuple[list[torch.Tensor], list[torch.Tensor]]] = {
        rule: ([], []) for rule in run.rules if rule != "entropy"
    }
    preds: dict[str, list[torch.Tensor]] = {}
    stack: list[torch.Tensor] = []
    width = max(int(i.max()) for i in r.ids) + 1
    from privrepro.continual.peft.shared_members import shared_members

    members = shared_members(  # trained once per member key (their stream: r.train_kw)
        r.member_key,
        r.cache_dir,
        lambda: iter_ensemble(run.kind, r.tasks, r.ids, r.hps, **r.train_kw),
        nb_tasks=r.nb,
        backbone=r.data.backbone,
        dim=int(r.data.train_x.shape[1]) if isinstance(r.data.train_x, torch.Tensor) else 0,
        device=r.dev,
    )
    for t, m in enumerate(loops(members, desc, r.nb)):
        z = member_logits(m, r.data.test_x, precision=r.train_kw["precision"], loops=loops)
        lid = torch.as_tensor(m.label_ids, device=r.dev)
        for rule, (ss, ll) in best.items():
            s, lab = member_best(z, lid, rule)
            ss.append(s.cpu())
            ll.append(lab.cpu())
            preds.setdefault(rule, []).append(combine_best(torch.stack(ss), torch.stack(ll)))
        if full:
            stack.append(_stack_row(r, z, m.label_ids, width))
            if run.save_logits:
                r.logits[f"member{t}"] = z.cpu().numpy().astype(np.float32)
                r.logits[f"labels{t}"] = m.label_ids
        r.log_privacy(t, m, r.hps[min(t, r.nb - 1)].batch_size)
        del m
    # unchanged, unless ``loops`` shortened the tasks: the tasks not run repeat the last one's
    # predictions (placeholders), so the accuracy matrix and the entropy rule run at full size
    preds = {rule: loops.full_list(plist, r.nb) for rule, plist in preds.items()}
    stack = loops.full_list(stack, r.nb)
    if "entropy" in run.rules:
        mask = torch.zeros(r.nb, stack[0].shape[1], dtype=torch.bool)
        for t in range(r.nb):
            mask[t, r.ids[t]] = True
        preds["entropy"] = [
            aggregate_scores(torch.stack(stack[: t + 1]), mask[: t + 1], "entropy").argmax(1)
            for t in range(r.nb)
        ]
    return preds


def run_peft(
    run: PeftRun,
    features: FeatureSettings | None = None,
    film: FilmSettings | None = None,
    train: TrainSettings | None = None,
    tuning: TuningSettings | None = None,
    *,
    seed: int = 0,
    workspace: Workspace | None = None,
    study_tag: str = "",
    generator: torch.Generator | None = None,
    progress_desc: str = "tasks",
) -> PeftOutput:
    """One PEFT run (PEFT Ensemble, Naive or Non-CL): its rows, and its member logits when
    ``run.save_logits``.

    Args:
        run: what to run (benchmark, method, ε, repeat, scenario, label space, rules).
        features, film, train, tuning: the settings groups (defaults: the paper's, on synthetic
            data); checked before any compute (:class:`~privrepro.config.ConfigError`).
        seed: the root seed: the repeat's scenario and tuning split, the study's sampler.
        workspace: data, caches, studies, device and loops (:class:`~..workspace.Workspace`).
        study_tag: appended to study names (the harness: the profile).
        generator: a Naive or Non-CL run's DP-SGD stream (default: of ``seed`` and ``run``);
            a PEFT Ensemble's members draw from their member key's stream and are trained once
            for every run asking for them (:mod:`~privrepro.continual.peft.shared_members`).
    """
    from privrepro.training.optuna_studies import transfer_hyper

    features = features or FeatureSettings()
    film = film or FilmSettings()
    train = train or TrainSettings()
    tuning = tuning or TuningSettings()
    check_settings(run, features=features, film=film, train=train, tuning=tuning)
    ws = workspace or Workspace()
    data = load_peft_data(run, features, film, ws)
    sc = peft_scenario(run, data.train_y, data.test_y, data.num_classes, seed)
    ids = _label_ids(run, sc, data.num_classes)
    tuned = tune_hyper(
        run,
        data,
        sc,
        ids,
        tuning,
        train,
        film,
        seed=seed,
        studies=ws.study_dir,
        tag=study_tag,
        features=features,
        loops=ws.loops,
        log_metric=prefixed(ws.metrics, "tuning/"),
    )
    hp0, n_tune = tuned.hyper, tuned.n_tune
    hps = [unclipped_if_nondp(transfer_hyper(hp0, n_tune, len(ix)), train) for ix in sc.train_tasks]
    key = ""
    if run.family == "peft":  # members keyed by what they are trained from, shared by all
        from privrepro.continual.peft.shared_members import member_key, member_stream

        groups = {"train": identity(train)}
        if run.kind == "film":
            groups.update(film=identity(film), features=identity(features))
        inputs: dict[str, Any] = {
            "kind": run.kind,
            "train_x": data.train_x,
            "train_y": data.train_y,
            "tasks": sc.train_tasks,
            "label_ids": ids,
            "hypers": hps,
            "seed": seed,
            "device": ws.device,
        }
        key = member_key(settings=groups, **inputs)
        # the stream leaves the precision out: an fp32 and a bf16 run of the same members draw
        # the same batches and noise (their cache keys differ)
        groups["train"] = identity(replace(train, precision="fp32"))
        generator = member_stream(seed, member_key(settings=groups, **inputs), ws.device)
    elif generator is None:
        generator = torch_stream(seed, "cl-peft", repr(run), "dpsgd", device=ws.device)
    r = _RunState(run, data, sc, ids, hps, film, generator, train.precision)
    r.member_key, r.cache_dir = key, str(ws.cache_dir)
    r.train_kw["loops"] = r.loops = ws.loops
    r.train_kw["log_metric"] = prefixed(ws.metrics, "dpsgd/")
    if run.family == "noncl":
        return PeftOutput(_non_cl(r, hp0, n_tune, train), r.logits)
    family = _naive if run.family == "naive" else _ensemble
    preds = family(r, ws.loops, progress_desc)
    if run.save_logits:
        r.logits["y_test"] = data.test_y
        r.logits["test_task"] = r.test_task.cpu().numpy()
    for rule, plist in preds.items():
        r.add_rule_rows(rule, r.accuracy(plist))
    meta = {
        **r.base,
        "row": "tuning",
        "n_tune": n_tune,
        "tune_batch": hp0.batch_size,
        "tune_lr": hp0.lr,
        "tune_clip": hp0.clip,
        **{k: v for k, v in tuned.meta.items() if k != "study"},
        "study": tuned.meta.get("study", ""),
    }
    return PeftOutput(pd.DataFrame([*r.rows, *r.privacy, meta]), r.logits)


def ensemble_all_orders(
    rows: pd.DataFrame, logits: dict[str, np.ndarray], max_orders: int = 120
) -> pd.DataFrame:
    """AA_t and AF_t (ArgMax rule) of a PEFT Ensemble under the first ``max_orders`` task orders,
    from the members' saved logits (:func:`run_peft` with ``save_logits``): the members do not
    depend on the order, only which of them exist after task t does. One ``row == "metric"`` row
    per (order, metric, t), with the run's columns of ``rows`` and ``order`` ("0-1-2-3-4")."""
    from privrepro.continual.ensemble import accuracy_matrix, combine_best, member_best
    from privrepro.continual.metrics import average_accuracy, average_forgetting

    keys = [
        "benchmark",
        "method",
        "epsilon",
        "eps_label",
        "repeat",
        "label_policy",
        "dummy_factor",
        "blurry",
    ]
    base = rows.iloc[0][keys].to_dict()
    y = torch.as_tensor(logits["y_test"])
    task = torch.as_tensor(logits["test_task"])
    nb = sum(1 for k in logits if k.startswith("member"))
    best = [
        member_best(torch.as_tensor(logits[f"member{k}"]), torch.as_tensor(logits[f"labels{k}"]))
        for k in range(nb)
    ]
    out = []
    for order in [list(p) for p in itertools.permutations(range(nb))][:max_orders]:
        preds = [
            combine_best(
                torch.stack([best[o][0] for o in order[: t + 1]]),
                torch.stack([best[o][1] for o in order[: t + 1]]),
            )
            for t in range(nb)
        ]
        acc = accuracy_matrix(torch.stack(preds), y, task, nb).numpy()[:, order]
        aa, af = average_accuracy(acc), average_forgetting(acc)
        for t in range(nb):
            for metric, v in (("AA", aa[t]), ("AF", af[t])):
                out.append(
                    {
                        **base,
                        "row": "metric",
                        "rule": "argmax",
                        "metric": metric,
                        "t": t + 1,
                        "value": float(v),
                        "order": "-".join(map(str, order)),
                    }
                )
    return pd.DataFrame(out)
