"""The ip sweeps: rows calibrated point by point, the modes' μ_C, the tuned family cached."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from privrepro.config import ConfigError
from privrepro.inference.basemodels import BaseModelSpec, get_base_model
from privrepro.inference.calibration import calibrate
from privrepro.inference.data import ImageData
from privrepro.inference.evaluate import Evaluation
from privrepro.inference.networks import ArchSpec
from privrepro.inference.noisy_finetuning import TuneGrid, tuned_family
from privrepro.inference.sweep import resnet_series, sll_series, tuned_sweep
from privrepro.seeding import torch_stream
from privrepro.training.classifier import TrainConfig

POINTS = [(0.0, 1.0), (0.1, 1.0), (0.1, 10.0)]


def _data() -> ImageData:
    g = torch.Generator().manual_seed(0)
    x = torch.rand(90, 1, 4, 4, generator=g)
    y = torch.randint(0, 3, (90,), generator=g)
    return ImageData("toy", x[:50], y[:50], x[50:60], y[50:60], x[60:], y[60:], 3, (0.5,), (0.3,))


def _noise(name: str) -> torch.Generator:
    return torch_stream(0, "test", name)


def _base(arch: ArchSpec, tmp_path: Path):  # type: ignore[no-untyped-def]
    spec = BaseModelSpec(arch, "toy", TrainConfig(epochs=1, batch_size=25))
    return get_base_model(spec, _data(), tmp_path, seed=0)


SLL = ArchSpec("sll", depth_conv=1, depth_linear=1, width=2, conv_inner=2, linear_inner=8, pool=2)


@pytest.mark.parametrize("mode", ["repo_compat", "corrected"])
def test_sll_series_calibrates_each_point(mode: str, tmp_path: Path) -> None:
    base, data = _base(SLL, tmp_path), _data()
    ev = Evaluation(1e-5, mode, n_draws=3)
    rows = sll_series(base, data, POINTS, ev, _noise, seed=0, power_iterations=20)
    out, inp = rows[rows["series"] == "sll_output"], rows[rows["series"] == "sll_input"]
    mu_bound = float(out["mu_bound"].iloc[0])
    mu = 1.0 if mode == "repo_compat" else mu_bound  # the notebooks' μ_C = 1 (docs/ip.md)
    assert (out["mu"] == mu).all() and (inp["mu"] == 1.0).all()
    for (a, e), s_out, s_in in zip(POINTS, out["sigma"], inp["sigma"], strict=True):
        assert s_out == calibrate(e, 1e-5, a * mu, mode).sigma  # Δ = α μ_C (Def. 4)
        assert s_in == calibrate(e, 1e-5, a, mode).sigma  # Δ = α (Def. 5)
    # ε = 10: the classical σ misses δ = 1e-5 (ip note M1); only corrected switches
    expected = "classical" if mode == "repo_compat" else "analytic"
    assert list(out["calibration"]) == ["none", "classical", expected]
    # α = 0 draws no noise: every draw scores the clean accuracy
    assert out["accuracy"].iloc[0] == pytest.approx(base.clean_accuracy, abs=1e-6)
    assert (rows["noise_space"] == "pixel").all() and (rows["dataset"] == "toy").all()


def test_resnet_noise_space_follows_the_mode(tmp_path: Path) -> None:
    base, data = _base(ArchSpec("resnet_small", resnet_width=4, resnet_blocks=1), tmp_path), _data()
    for mode, space in (("repo_compat", "normalized"), ("corrected", "pixel")):
        rows = resnet_series(base, data, POINTS, Evaluation(1e-5, mode, n_draws=2), _noise)
        assert (rows["noise_space"] == space).all() and (rows["series"] == "resnet").all()


def test_tuned_family_is_cached_and_selected(tmp_path: Path) -> None:
    base, data = _base(ArchSpec("resnet_small", resnet_width=4, resnet_blocks=1), tmp_path), _data()
    grid = TuneGrid(eps_targets=[1.0, 2.0], multipliers=[1.0], epochs=1, batch_size=25)
    ev = Evaluation(1e-5, "corrected", n_draws=2)
    first = tuned_family(base, data, grid, ev, tmp_path, seed=0)
    assert [(t.eps_target, t.eps_train) for t in first] == [(1.0, 1.0), (2.0, 2.0)]
    assert len(list((tmp_path / "ip").glob("tune-*"))) == 2
    again = tuned_family(base, data, grid, ev, tmp_path, seed=0)  # loaded, not retrained
    for a, b in zip(first, again, strict=True):
        sa, sb = a.model.state_dict(), b.model.state_dict()
        assert all(torch.equal(sa[k], sb[k]) for k in sa)
    rows = tuned_sweep(first, data, POINTS, ev, _noise)
    assert set(rows["tuned_eps_target"]) <= {1.0, 2.0}
    assert (rows["selection"] == "validation split").all()


def test_evaluation_refuses_bad_settings() -> None:
    with pytest.raises(ConfigError, match="mode"):
        Evaluation(mode="paper")
    with pytest.raises(ConfigError, match="delta"):
        Evaluation(delta=1.0)
    with pytest.raises(ConfigError, match="n_draws"):
        Evaluation(n_draws=0)
