"""Prediction rules of the PEFT Ensemble (cl paper, Alg. 2, Eq. 8; App. E.2, Eq. A107; Fig. A1).

A stack of member logits ``logits[l, n, o]`` holds member ``l``'s logit for test sample ``n`` and
global label ``o``; ``labels[l, o]`` says whether ``o`` is in member ``l``'s output space
``O_l``. Entries outside ``O_l`` are ignored by every rule. After task ``t`` only members
``1..t`` exist, so predictions range over ``∪_{k≤t} O_k`` (Eq. 8).

More in ``docs/modules.md``.
"""

from __future__ import annotations

import torch
from torch import Tensor

from privrepro.config import ConfigError

__all__ = ["RULES", "accuracy_matrix", "aggregate_scores", "combine_best", "member_best", "predict"]

RULES = ("argmax", "median", "entropy")


def _check(logits: Tensor, labels: Tensor) -> None:
    if logits.ndim != 3:
        raise ConfigError("logits.shape", tuple(logits.shape), "must be (members, samples, labels)")
    if labels.shape != (logits.shape[0], logits.shape[2]) or labels.dtype != torch.bool:
        raise ConfigError(
            "labels.shape",
            tuple(labels.shape),
            f"must be a bool (members, labels) = {(logits.shape[0], logits.shape[2])} mask",
        )
    if not bool(labels.any(dim=1).all()):
        raise ConfigError("labels", "a member without labels", "every member needs an output label")


def _member_entropy(logits: Tensor, labels: Tensor) -> Tensor:
    """``H(softmax(f_l(x)))`` over each member's own labels: shape (members, samples)."""
    masked = logits.masked_fill(~labels[:, None, :], float("-inf"))
    logp = torch.log_softmax(masked, dim=2)
    p = logp.exp()
    return -(p * logp.masked_fill(~labels[:, None, :], 0.0)).sum(dim=2)


def aggregate_scores(
    logits: Tensor, labels: Tensor, rule: str = "argmax", gamma: float = 1.0
) -> Tensor:
    """Scores (samples, labels) whose argmax is the ensemble's prediction; −inf where no member
    predicts a label."""
    _check(logits, labels)
    neg = torch.tensor(float("-inf"), dtype=logits.dtype, device=logits.device)
    mask = labels[:, None, :]
    if rule == "argmax":
        return torch.where(mask, logits, neg).amax(dim=0)
    if rule == "median":
        shifted = torch.empty_like(logits)
        for m in range(logits.shape[0]):
            own = logits[m][:, labels[m]]
            med = torch.quantile(own, 0.5, dim=1, keepdim=True)
            shifted[m] = logits[m] - med
        return torch.where(mask, shifted, neg).amax(dim=0)
    if rule == "entropy":
        w = torch.softmax(-gamma * _member_entropy(logits, labels), dim=0)  # (members, samples)
        contrib = torch.where(
            mask, logits, torch.zeros((), dtype=logits.dtype, device=logits.device)
        )
        scores = (w[:, :, None] * contrib).sum(dim=0)
        return torch.where(labels.any(dim=0)[None, :], scores, neg)
    raise ConfigError("rule", rule, f"must be one of {list(RULES)}")


def predict(logits: Tensor, labels: Tensor, rule: str = "argmax", gamma: float = 1.0) -> Tensor:
    """Predicted global label per sample (ties: the smallest label index)."""
    return aggregate_scores(logits, labels, rule, gamma).argmax(dim=1)


def member_best(logits: Tensor, label_ids: Tensor, rule: str = "argmax") -> tuple[Tensor, Tensor]:
    """One member's best (score, global label) per sample for the rules that decompose over
    members (``argmax``, ``median``): the ensemble's prediction is the label of the largest
    member score (:func:`combine_best`). Avoids the (members, samples, labels) stack when label
    spaces are huge (×1000 dummy labels, cl paper Sec. 7.1)."""
    if rule not in ("argmax", "median"):
        raise ConfigError("rule", rule, "member_best supports ['argmax', 'median']")
    z = logits
    if rule == "median":
        z = z - torch.quantile(z, 0.5, dim=1, keepdim=True)
    best, arg = z.max(dim=1)
    return best, label_ids.to(arg.device)[arg]


def combine_best(scores: Tensor, labels: Tensor) -> Tensor:
    """Prediction from per-member bests ``(members, samples)``: the label of the largest score
    (ties: the first member)."""
    return labels.gather(0, scores.argmax(dim=0, keepdim=True)).squeeze(0)


def accuracy_matrix(preds: Tensor, y: Tensor, test_task: Tensor, nb_tasks: int) -> Tensor:
    """``acc[t, i]``: accuracy on task i's test samples of the predictions after task t.

    ``preds`` is (tasks, samples): the prediction after each task; tasks without test samples
    give NaN (cl paper, App. E: acc_{t,i}).
    """
    out = torch.full((preds.shape[0], nb_tasks), float("nan"), dtype=torch.float64)
    correct = (preds == y[None, :]).to(torch.float64)
    for i in range(nb_tasks):
        sel = test_task == i
        if bool(sel.any()):
            out[:, i] = correct[:, sel].mean(dim=1)
    return out
