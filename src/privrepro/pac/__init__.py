"""privrepro.pac: the pac paper (Xiao & Devadas, *PAC Security*, arXiv 2210.03458 v1).

Usable from plain Python (no Hydra, no run store); ``docs/pac.md`` shows a session. All mutual
information is in nats. The entry points:

* making a mechanism PAC-private: :func:`make_private` (a batched trainer: Monte-Carlo
  trainings, Algorithm 1 per budget, the released model's utility with and without noise; the
  MLP of Example 4 from :func:`mlp_mechanism`), :func:`noise_rows` (Algorithm 1, Theorem 3 and a
  DP baseline on a mechanism's samples), :func:`smooth_image_noise` (the dimension experiment);
* the automatic analyses on black boxes: :func:`algorithm1`, :func:`algorithm1_from_samples`,
  :func:`algorithm2`, :func:`algorithm3`; the noise they return, :class:`GaussianNoise`;
* Theorem 3 and Example 5: :func:`anisotropic_variances`, :func:`anisotropic_noise_norm`,
  :func:`isotropic_noise_norm`, :func:`logdet_mi_bound`, :func:`example5_noise`, and the DP
  baselines :func:`dp_local_noise_norm`, :func:`dp_mean_noise_norm`;
* from MI to an adversary's success (Sec. 3): :func:`posterior_success_bound`,
  :func:`individual_success_bound`, :func:`pinsker_success_bound`,
  :func:`identification_bounds` (Example 1), :func:`success_curves`;
* the Examples' mechanisms and data: :func:`local_publishing_samples`,
  :func:`poisson_mean_samples` (with their exact spectra), :func:`load_pool`, and batched MLP
  training (:class:`MLPSpec`, :func:`init_mlp`, :func:`train_batched`, :func:`mlp_accuracy`).

:mod:`privrepro.pac.plots` draws each experiment's rows. Bad parameters raise
:class:`privrepro.config.ConfigError` (key, value, allowed range).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from privrepro.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from privrepro.pac.algorithms import (
        Algorithm1Result,
        Algorithm2Result,
        Algorithm3Result,
        algorithm1,
        algorithm1_from_samples,
        algorithm2,
        algorithm3,
        sample_outputs,
        spectrum,
    )
    from privrepro.pac.bounds import (
        identification_bounds,
        individual_success_bound,
        pinsker_advantage_bound,
        pinsker_success_bound,
        posterior_success_bound,
        success_curves,
    )
    from privrepro.pac.gaussian import (
        anisotropic_noise_norm,
        anisotropic_variances,
        dp_local_noise_norm,
        dp_mean_noise_norm,
        example5_noise,
        isotropic_noise_norm,
        isotropic_variance,
        logdet_mi_bound,
    )
    from privrepro.pac.mechanisms import (
        local_publishing_samples,
        local_publishing_spectrum,
        poisson_mean_samples,
        poisson_mean_spectrum,
        smooth_image_pool,
    )
    from privrepro.pac.noise import GaussianNoise
    from privrepro.pac.pools import Pool, load_pool
    from privrepro.pac.private import (
        PrivateTraining,
        make_private,
        mlp_mechanism,
        noise_rows,
        smooth_image_noise,
    )
    from privrepro.pac.training import MLPSpec, init_mlp, mlp_accuracy, train_batched

_EXPORTS = {
    "privrepro.pac.algorithms": (
        "Algorithm1Result",
        "Algorithm2Result",
        "Algorithm3Result",
        "algorithm1",
        "algorithm1_from_samples",
        "algorithm2",
        "algorithm3",
        "sample_outputs",
        "spectrum",
    ),
    "privrepro.pac.bounds": (
        "identification_bounds",
        "individual_success_bound",
        "pinsker_advantage_bound",
        "pinsker_success_bound",
        "posterior_success_bound",
        "success_curves",
    ),
    "privrepro.pac.gaussian": (
        "anisotropic_noise_norm",
        "anisotropic_variances",
        "dp_local_noise_norm",
        "dp_mean_noise_norm",
        "example5_noise",
        "isotropic_noise_norm",
        "isotropic_variance",
        "logdet_mi_bound",
    ),
    "privrepro.pac.mechanisms": (
        "local_publishing_samples",
        "local_publishing_spectrum",
        "poisson_mean_samples",
        "poisson_mean_spectrum",
        "smooth_image_pool",
    ),
    "privrepro.pac.noise": ("GaussianNoise",),
    "privrepro.pac.pools": ("Pool", "load_pool"),
    "privrepro.pac.private": (
        "PrivateTraining",
        "make_private",
        "mlp_mechanism",
        "noise_rows",
        "smooth_image_noise",
    ),
    "privrepro.pac.training": ("MLPSpec", "init_mlp", "mlp_accuracy", "train_batched"),
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

__all__ = [
    "Algorithm1Result",
    "Algorithm2Result",
    "Algorithm3Result",
    "GaussianNoise",
    "MLPSpec",
    "Pool",
    "PrivateTraining",
    "algorithm1",
    "algorithm1_from_samples",
    "algorithm2",
    "algorithm3",
    "anisotropic_noise_norm",
    "anisotropic_variances",
    "dp_local_noise_norm",
    "dp_mean_noise_norm",
    "example5_noise",
    "identification_bounds",
    "individual_success_bound",
    "init_mlp",
    "isotropic_noise_norm",
    "isotropic_variance",
    "load_pool",
    "local_publishing_samples",
    "local_publishing_spectrum",
    "logdet_mi_bound",
    "make_private",
    "mlp_accuracy",
    "mlp_mechanism",
    "noise_rows",
    "pinsker_advantage_bound",
    "pinsker_success_bound",
    "poisson_mean_samples",
    "poisson_mean_spectrum",
    "posterior_success_bound",
    "sample_outputs",
    "smooth_image_noise",
    "smooth_image_pool",
    "spectrum",
    "success_curves",
    "train_batched",
]
