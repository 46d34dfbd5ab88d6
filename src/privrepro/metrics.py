"""Per-step metrics of long computations, handed to whoever tracks them.

A :data:`MetricLogger` is a plain callable ``log(name, value, step)`` (the signature of
``mlflow.log_metric``). Library loops take one as an optional argument (``log_metric=``: DP-SGD
training logs its loss per step and the ε spent so far, a tuning study each trial's value) and
call it only when given; the library imports no tracking package. The harness's
``tracking=mlflow`` switch passes one that writes to MLflow; in a notebook any callable works::

    history = []
    train_dpsgd(..., log_metric=lambda name, value, step: history.append((name, step, value)))
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["MetricLogger", "prefixed"]

#: ``log(name, value, step)``: one value of a named metric at an integer step
MetricLogger = Callable[[str, float, int], None]


def prefixed(log: MetricLogger | None, prefix: str) -> MetricLogger | None:
    """``log`` with ``prefix`` put before every metric name (``None`` stays ``None``), so runs
    that share one logger keep their curves apart (``task2/loss``, ``trial7/loss``)."""
    if log is None:
        return None

    def inner(name: str, value: float, step: int) -> None:
        log(prefix + name, value, step)

    return inner
