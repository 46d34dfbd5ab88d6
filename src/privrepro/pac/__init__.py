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
    from privrepro.pac.algorithms import Algorithm1Result as Algorithm1Result
    from privrepro.pac.algorithms import Algorithm2Result as Algorithm2Result
    from privrepro.pac.algorithms import Algorithm3Result as Algorithm3Result
    from privrepro.pac.algorithms import algorithm1 as algorithm1
    from privrepro.pac.algorithms import algorithm1_from_samples as algorithm1_from_samples
    from privrepro.pac.algorithms import algorithm2 as algorithm2
    from privrepro.pac.algorithms import algorithm3 as algorithm3
    from privrepro.pac.algorithms import sample_outputs as sample_outputs
    from privrepro.pac.algorithms import spectrum as spectrum
    from privrepro.pac.bounds import identification_bounds as identification_bounds
    from privrepro.pac.bounds import individual_success_bound as individual_success_bound
    from privrepro.pac.bounds import pinsker_advantage_bound as pinsker_advantage_bound
    from privrepro.pac.bounds import pinsker_success_bound as pinsker_success_bound
    from privrepro.pac.bounds import posterior_success_bound as posterior_success_bound
    from privrepro.pac.bounds import success_curves as success_curves
    from privrepro.pac.gaussian import anisotropic_noise_norm as anisotropic_noise_norm
    from privrepro.pac.gaussian import anisotropic_variances as anisotropic_variances
    from privrepro.pac.gaussian import dp_local_noise_norm as dp_local_noise_norm
    from privrepro.pac.gaussian import dp_mean_noise_norm as dp_mean_noise_norm
    from privrepro.pac.gaussian import example5_noise as example5_noise
    from privrepro.pac.gaussian import isotropic_noise_norm as isotropic_noise_norm
    from privrepro.pac.gaussian import isotropic_variance as isotropic_variance
    from privrepro.pac.gaussian import logdet_mi_bound as logdet_mi_bound
    from privrepro.pac.mechanisms import local_publishing_samples as local_publishing_samples
    from privrepro.pac.mechanisms import local_publishing_spectrum as local_publishing_spectrum
    from privrepro.pac.mechanisms import poisson_mean_samples as poisson_mean_samples
    from privrepro.pac.mechanisms import poisson_mean_spectrum as poisson_mean_spectrum
    from privrepro.pac.mechanisms import smooth_image_pool as smooth_image_pool
    from privrepro.pac.noise import GaussianNoise as GaussianNoise
    from privrepro.pac.pools import Pool as Pool
    from privrepro.pac.pools import load_pool as load_pool
    from privrepro.pac.private import PrivateTraining as PrivateTraining
    from privrepro.pac.private import make_private as make_private
    from privrepro.pac.private import mlp_mechanism as mlp_mechanism
    from privrepro.pac.private import noise_rows as noise_rows
    from privrepro.pac.private import smooth_image_noise as smooth_image_noise
    from privrepro.pac.training import MLPSpec as MLPSpec
    from privrepro.pac.training import init_mlp as init_mlp
    from privrepro.pac.training import mlp_accuracy as mlp_accuracy
    from privrepro.pac.training import train_batched as train_batched

__getattr__, __dir__, __all__ = lazy_exports(__name__, __file__)
