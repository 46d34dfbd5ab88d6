"""privrepro.dp: the differential-privacy core shared by the four papers.

Modules (each imported on its own; none pulls in torch or dp_accounting at import time):

* ``gaussian`` — classical and analytic calibration, the exact profile δ(ε) for every real ε,
  its inverse ε(δ), RDP and closed-form composition.
* ``laplace`` — b = Δ/ε, the exact profile and its inverse, RDP.
* ``numeric`` — hockey-stick and Rényi divergences of two 1-D output distributions by adaptive
  quadrature, with a stated error bound.
* ``accounting`` — composition and calibration of (subsampled) Gaussians through dp_accounting
  (PLD) and opacus (RDP, PRV), each result marked exact, bound or estimate: the one calibration
  and accounting interface of the project, DP-SGD's included.
* ``pld`` — privacy-loss distributions on a grid: pessimistic connect-the-dots from an exact
  profile, and their T-fold composition for every T ≤ t_max in one pass (FFT), each ε an upper
  bound with its discretisation error stated.
* ``group`` — group privacy δ_k = Σ_{i<k} e^{iε} δ (cl Fig. 2; the ip paper's chaining).

Paper-specific rules live in their paper's package (the ip paper's composition and chaining:
:mod:`privrepro.inference.accountant`); nothing here imports a paper package.
"""
