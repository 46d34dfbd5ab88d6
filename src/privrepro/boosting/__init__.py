"""privrepro.boosting — paper pb: Jiang et al., *Meeting Utility Constraints in Differential
Privacy: A Privacy-Boosting Approach* (IEEE S&P 2025).

PB-DP boosts a DP kernel (Gaussian or Laplace) so that its output lands in a preferred region
``S(Q(X))`` with probability at least ρ (eq. 1), by scaling the density outside ``S`` by
``1 − q`` (eqs. 2–3). One entry point per experiment, each returning a ``pandas.DataFrame``:
:func:`sweep` (Figs. 2–3), :func:`output_densities` (Fig. 1), :func:`sampler_runtime` (Fig. 4),
:func:`fixed_region_profiles`, :func:`fixed_region_extra_loss` (Fig. 5), :func:`composition_dp`,
:func:`composition_rdp` (Fig. 6), :func:`grr_mse_curve`, :func:`best_eps0` (Fig. 7); the design
minimising the exact ε: :func:`best_design`, :func:`best_composition_dp`. Bad parameters raise
:class:`privrepro.config.ConfigError` before any compute.

Use from Python and the modules: docs/pb.md, "From Python" and "The library".
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from privrepro.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from privrepro.boosting.composition import composition_dp as composition_dp
    from privrepro.boosting.composition import composition_rdp as composition_rdp
    from privrepro.boosting.densities import output_densities as output_densities
    from privrepro.boosting.design import PBSetting as PBSetting
    from privrepro.boosting.design import SearchResult as SearchResult
    from privrepro.boosting.design import gaussian_baseline_epsilon as gaussian_baseline_epsilon
    from privrepro.boosting.design import gaussian_baseline_sigma as gaussian_baseline_sigma
    from privrepro.boosting.design import largest_rho as largest_rho
    from privrepro.boosting.design import narrowest_size as narrowest_size
    from privrepro.boosting.design import optimise_eps0 as optimise_eps0
    from privrepro.boosting.epsilon_sweep import sweep as sweep
    from privrepro.boosting.exact_design import BestDesign as BestDesign
    from privrepro.boosting.exact_design import DesignSearch as DesignSearch
    from privrepro.boosting.exact_design import best_composition_dp as best_composition_dp
    from privrepro.boosting.exact_design import best_design as best_design
    from privrepro.boosting.exact_design import best_design_batch as best_design_batch
    from privrepro.boosting.fixed_region import fixed_region_extra_loss as fixed_region_extra_loss
    from privrepro.boosting.fixed_region import fixed_region_profiles as fixed_region_profiles
    from privrepro.boosting.grr import GRRProbabilities as GRRProbabilities
    from privrepro.boosting.grr import grr_probabilities as grr_probabilities
    from privrepro.boosting.grr_mse import best_eps0 as best_eps0
    from privrepro.boosting.grr_mse import grr_mse_curve as grr_mse_curve
    from privrepro.boosting.kernels import GaussianKernel as GaussianKernel
    from privrepro.boosting.kernels import LaplaceKernel as LaplaceKernel
    from privrepro.boosting.mechanism import BoostedMechanism as BoostedMechanism
    from privrepro.boosting.plots import plot_sweep as plot_sweep
    from privrepro.boosting.regions import AbsoluteRegion as AbsoluteRegion
    from privrepro.boosting.regions import FixedRegion as FixedRegion
    from privrepro.boosting.regions import RelativeRegion as RelativeRegion
    from privrepro.boosting.regions import make_region as make_region
    from privrepro.boosting.runtime import sampler_runtime as sampler_runtime

__getattr__, __dir__, __all__ = lazy_exports(__name__, __file__)
