"""Warnings a researcher cannot act on go to the unit's log, the others to the console."""

from __future__ import annotations

import logging
import warnings

import pytest

from privrepro.runner.unit_warnings import library_warnings_to_log


def test_library_warnings_go_to_the_log_and_the_project_s_to_the_console(
    caplog: pytest.LogCaptureFixture,
) -> None:
    import numpy as np
    import optuna
    from opacus.accountants.analysis.rdp import get_privacy_spent

    caplog.set_level(logging.INFO, logger="privrepro.warnings")
    console: list[str] = []
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.showwarning = lambda message, *args, **kwargs: console.append(str(message))
        with library_warnings_to_log():
            optuna.samplers.GPSampler(seed=0)  # Optuna's ExperimentalWarning (its category)
            # opacus warns from its own file: the best order is the largest one given
            get_privacy_spent(orders=[2.0, 3.0], rdp=np.array([1e-4, 1e-4]), delta=1e-5)
            warnings.warn(  # torch's, caused by opacus' hooks: a message on the list
                "Full backward hook is firing when gradients are computed with respect to "
                "module outputs since no inputs require gradients.",
                UserWarning,
                stacklevel=1,
            )
            warnings.warn("a warning of the project's own", UserWarning, stacklevel=1)
    logged = "\n".join(r.getMessage() for r in caplog.records if r.name == "privrepro.warnings")
    shown = "\n".join(console)
    assert "ExperimentalWarning: GPSampler is experimental" in logged
    assert "Optimal order is the largest alpha" in logged
    assert "Full backward hook is firing" in logged
    assert "a warning of the project's own" in shown  # not hidden
    for hidden in ("GPSampler", "Optimal order", "Full backward hook"):
        assert hidden not in shown
    assert "a warning of the project's own" not in logged
