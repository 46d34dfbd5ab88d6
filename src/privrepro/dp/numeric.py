"""Exact numeric privacy profiles of two 1-D output distributions, with a stated error.

For output distributions P and Q on ℝ — densities p, q (callables) plus optional point masses —
this evaluates the hockey-stick divergence (the exact privacy profile δ(ε)) and the Rényi
divergence, each with a stated error (more in ``docs/modules.md``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from privrepro.config import ConfigError
from privrepro.dp.checks import as_float_array, check_range

__all__ = [
    "NumericDivergence",
    "NumericEpsilon",
    "epsilon_for_delta_numeric",
    "hockey_stick_divergence",
    "privacy_profile",
    "renyi_divergence",
]

Density = Callable[[NDArray[np.float64]], ArrayLike]


@dataclass(frozen=True)
class NumericDivergence:
    """Values of a divergence on a grid of ``order`` (ε for hockey-stick, α for Rényi).

    ``value[i] ± error_bound[i]`` contains the true value under the stated assumptions (module
    docstring). ``tail_mass`` is the P-mass outside ``support`` that was bounded, not integrated.
    ``converged`` is False when the interval limit stopped the refinement before the tolerance
    was met (the bound is still the stated one, just larger than asked for).
    """

    order: NDArray[np.float64]
    value: NDArray[np.float64]
    error_bound: NDArray[np.float64]
    quadrature_error: float
    tail_mass: float
    support: tuple[float, float]
    kind: str
    converged: bool = True


# 21-point Gauss–Kronrod rule (nodes on [−1, 1]; the 10-point Gauss rule uses every other node),
# the QUADPACK constants (Piessens et al. 1983).
_GK_X = np.array(
    [
        0.995657163025808080735527280689003,
        0.973906528517171720077964012084452,
        0.930157491355708226001207180059508,
        0.865063366688984510732096688423493,
        0.780817726586416897063717578345042,
        0.679409568299024406234327365114874,
        0.562757134668604683339000099272694,
        0.433395394129247190799265943165784,
        0.294392862701460198131126603103866,
        0.148874338981631210884826001129720,
    ]
)
_GK_X = np.concatenate([_GK_X, [0.0], -_GK_X[::-1]])
_G_W = np.array(
    [
        0.066671344308688137593568809893332,
        0.149451349150580593145776339657697,
        0.219086362515982043995534934228163,
        0.269266719309996355091226921569469,
        0.295524224714752870173892994651338,
    ]
)
_G_W = np.concatenate([_G_W, _G_W[::-1]])
_K_W = np.array(
    [
        0.011694638867371874278064396062192,
        0.032558162307964727478818972459390,
        0.054755896574351996031381300244580,
        0.075039674810919952767043140916190,
        0.093125454583697605535065465083366,
        0.109387158802297641899210590325805,
        0.123491976262065851077958109831074,
        0.134709217311473325928054001771707,
        0.142775938577060080797094273138717,
        0.147739104901338491374841515972068,
    ]
)
_K_W = np.concatenate([_K_W, [0.149445554002916905664936468389821], _K_W[::-1]])


def _adaptive_gk21(
    func: Callable[[NDArray[np.float64]], NDArray[np.float64]],
    edges: Sequence[float],
    epsabs: float,
    epsrel: float,
    limit: int,
) -> tuple[NDArray[np.float64], NDArray[np.float64], bool]:
    """∫ func over [edges[0], edges[-1]] for a vector-valued ``func`` (m points → (m, k) values).

    Returns the K21 integral, the summed |K21 − G10| per component, and whether the tolerance
    max(epsabs, epsrel·|I|) was met for every component within ``limit`` intervals.
    """
    a = np.asarray(edges[:-1], dtype=float)
    b = np.asarray(edges[1:], dtype=float)
    length = float(edges[-1] - edges[0])
    done_val: NDArray[np.float64] | None = None
    done_err: NDArray[np.float64] | None = None
    n_total = len(a)
    while True:
        half = 0.5 * (b - a)
        x = (0.5 * (a + b))[:, None] + half[:, None] * _GK_X[None, :]
        vals = np.asarray(func(x.ravel()), dtype=float).reshape(len(a), len(_GK_X), -1)
        kron = np.einsum("ijk,j->ik", vals, _K_W) * half[:, None]
        gauss = np.einsum("ijk,j->ik", vals[:, 1::2, :], _G_W) * half[:, None]
        err = np.abs(kron - gauss)
        err = np.where(np.isnan(err), np.inf, err)
        if done_val is None:
            done_val = np.zeros(kron.shape[1])
            done_err = np.zeros(kron.shape[1])
        assert done_err is not None
        total = done_val + kron.sum(axis=0)
        total_err = done_err + err.sum(axis=0)
        tol = np.maximum(epsabs, epsrel * np.abs(total))
        if np.all(total_err <= tol) or n_total >= limit:
            return total, total_err, bool(np.all(total_err <= tol))
        share = tol[None, :] * ((b - a) / length)[:, None]
        split = np.any(err > share, axis=1)
        if not np.any(split):
            split = err.max(axis=1) >= err.max()
        done_val = done_val + kron[~split].sum(axis=0)
        done_err = done_err + err[~split].sum(axis=0)
        mid = 0.5 * (a[split] + b[split])
        a, b = np.concatenate([a[split], mid]), np.concatenate([mid, b[split]])
        n_total += int(split.sum())


def _atoms(name: str, atoms: Mapping[float, float] | None) -> dict[float, float]:
    out: dict[float, float] = {}
    for x, m in (atoms or {}).items():
        if not 0 <= m <= 1:
            raise ConfigError(f"{name}[{x!r}]", m, "must lie in [0, 1]")
        out[float(x)] = float(m)
    return out


def _support(
    support: tuple[float, float], breakpoints: Sequence[float]
) -> tuple[float, float, list[float]]:
    lo, hi = float(support[0]), float(support[1])
    if not (np.isfinite(lo) and np.isfinite(hi) and lo < hi):
        raise ConfigError("support", support, "must be a finite interval (lo, hi) with lo < hi")
    pts = sorted({float(b) for b in breakpoints if lo < float(b) < hi})
    return lo, hi, pts


def hockey_stick_divergence(
    p: Density,
    q: Density,
    epsilon: ArrayLike,
    *,
    support: tuple[float, float],
    breakpoints: Sequence[float] = (),
    p_atoms: Mapping[float, float] | None = None,
    q_atoms: Mapping[float, float] | None = None,
    p_tail_mass: float | None = None,
    epsabs: float = 1e-13,
    epsrel: float = 1e-10,
    limit: int = 100_000,
) -> NumericDivergence:
    """δ(ε) = H_{e^ε}(P‖Q) of two 1-D distributions by adaptive quadrature, with an error bound.

    Args:
        p, q: the continuous parts' densities, called with a float array (vectorised, ≥ 0).
        epsilon: the ε grid (any real values; vectorised).
        support: the integration range; P-mass outside it is bounded, not integrated.
        breakpoints: kinks or jumps of p or q inside ``support``.
        p_atoms, q_atoms: point masses {location: mass} of P and Q.
        p_tail_mass: P-mass outside ``support`` if known exactly (e.g. from a cdf); else derived
            from normalisation.
        epsabs, epsrel: tolerance per ε on the quadrature error; limit: most intervals.
    """
    eps = as_float_array("epsilon", epsilon).ravel()
    lo, hi, pts = _support(support, breakpoints)
    pa, qa = _atoms("p_atoms", p_atoms), _atoms("q_atoms", q_atoms)
    with np.errstate(over="ignore"):
        scale = np.exp(eps)

    def f(x: NDArray[np.float64]) -> NDArray[np.float64]:
        px = np.asarray(p(x), dtype=float)
        qx = np.asarray(q(x), dtype=float)
        with np.errstate(over="ignore", invalid="ignore"):
            h = px[:, None] - scale[None, :] * qx[:, None]
        h = np.where(qx[:, None] > 0, h, px[:, None])
        return np.concatenate([np.maximum(h, 0.0), px[:, None]], axis=1)

    res, errs, converged = _adaptive_gk21(f, [lo, *pts, hi], epsabs, epsrel, limit)
    err_body, err_mass = errs[:-1], float(errs[-1])
    body, p_mass = res[:-1], float(res[-1])
    atom_part = np.zeros_like(eps)
    for x in set(pa) | set(qa):
        pm, qm = pa.get(x, 0.0), qa.get(x, 0.0)
        with np.errstate(over="ignore", invalid="ignore"):
            atom_part += np.maximum(pm - scale * qm if qm > 0 else np.full(eps.shape, pm), 0.0)
    if p_tail_mass is None:
        tail = max(0.0, 1.0 - sum(pa.values()) - p_mass) + err_mass
    else:
        tail = float(check_range("p_tail_mass", p_tail_mass, ge=0, le=1))
    value = np.clip(body + atom_part, 0.0, 1.0)
    bound = err_body + tail
    return NumericDivergence(
        eps,
        value,
        bound,
        float(err_body.max(initial=0.0)),
        tail,
        (lo, hi),
        "hockey_stick",
        converged,
    )


def renyi_divergence(
    p: Density,
    q: Density,
    alpha: ArrayLike,
    *,
    support: tuple[float, float],
    breakpoints: Sequence[float] = (),
    log_p: Density | None = None,
    log_q: Density | None = None,
    p_atoms: Mapping[float, float] | None = None,
    q_atoms: Mapping[float, float] | None = None,
    epsabs: float = 1e-14,
    epsrel: float = 1e-11,
    limit: int = 100_000,
) -> NumericDivergence:
    """D_α(P‖Q) = 1/(α−1) log(∫ p^α q^{1−α} + Σ_atoms P^α Q^{1−α}), α > 0, α ≠ 1, by quadrature.

    ``log_p``/``log_q`` (log-densities) keep far tails accurate where the densities underflow.
    The error bound propagates the quadrature error to first order, err_I / (I |α − 1|); the
    integrand outside ``support`` is not bounded (``docs/modules.md``). A P-atom where Q has no
    mass gives +inf for α > 1.
    """
    alp = check_range("alpha", alpha, gt=0).ravel()
    if np.any(alp == 1):
        raise ConfigError("alpha", alpha, "must not equal 1 (use the KL divergence)")
    lo, hi, pts = _support(support, breakpoints)
    pa, qa = _atoms("p_atoms", p_atoms), _atoms("q_atoms", q_atoms)

    def lg(dens: Density, logd: Density | None, x: NDArray[np.float64]) -> NDArray[np.float64]:
        if logd is not None:
            return np.asarray(logd(x), dtype=float)
        with np.errstate(divide="ignore"):
            return np.log(np.asarray(dens(x), dtype=float))

    def f(x: NDArray[np.float64]) -> NDArray[np.float64]:
        lp, lq = lg(p, log_p, x)[:, None], lg(q, log_q, x)[:, None]
        with np.errstate(over="ignore", invalid="ignore"):
            out = np.exp(alp[None, :] * lp + (1.0 - alp[None, :]) * lq)
        out = np.where(lp == -np.inf, 0.0, out)
        return np.where(np.isnan(out), np.inf, out)

    res, err, converged = _adaptive_gk21(f, [lo, *pts, hi], epsabs, epsrel, limit)
    total = np.asarray(res, dtype=float).copy()
    for x in set(pa) | set(qa):
        pm, qm = pa.get(x, 0.0), qa.get(x, 0.0)
        if pm == 0:
            continue
        with np.errstate(divide="ignore", over="ignore"):
            total += np.where(qm > 0, pm**alp * qm ** (1.0 - alp), np.where(alp > 1, np.inf, 0.0))
    with np.errstate(divide="ignore", invalid="ignore"):
        value = np.log(total) / (alp - 1.0)
        bound = err / (total * np.abs(alp - 1.0))
    return NumericDivergence(
        alp,
        value,
        np.asarray(bound, dtype=float),
        float(err.max(initial=0.0)),
        float("nan"),
        (lo, hi),
        "renyi",
        converged,
    )


def privacy_profile(
    p: Density,
    q: Density,
    epsilon: ArrayLike,
    *,
    support: tuple[float, float],
    breakpoints: Sequence[float] = (),
    p_atoms: Mapping[float, float] | None = None,
    q_atoms: Mapping[float, float] | None = None,
    p_tail_mass: float | None = None,
    q_tail_mass: float | None = None,
    epsabs: float = 1e-13,
    epsrel: float = 1e-10,
) -> NumericDivergence:
    """The symmetric profile δ(ε) = max(H_{e^ε}(P‖Q), H_{e^ε}(Q‖P)) of a neighbouring pair.

    If each order's true value lies within its ``error_bound``, the max lies within the larger of
    the two bounds of the larger value, which is what is returned.
    """

    divergence = functools.partial(
        hockey_stick_divergence,
        epsilon=epsilon,
        support=support,
        breakpoints=breakpoints,
        epsabs=epsabs,
        epsrel=epsrel,
    )
    pq = divergence(p, q, p_atoms=p_atoms, q_atoms=q_atoms, p_tail_mass=p_tail_mass)
    qp = divergence(q, p, p_atoms=q_atoms, q_atoms=p_atoms, p_tail_mass=q_tail_mass)
    return NumericDivergence(
        pq.order,
        np.maximum(pq.value, qp.value),
        np.maximum(pq.error_bound, qp.error_bound),
        max(pq.quadrature_error, qp.quadrature_error),
        max(pq.tail_mass, qp.tail_mass),
        pq.support,
        "privacy_profile",
        pq.converged and qp.converged,
    )


@dataclass(frozen=True)
class NumericEpsilon:
    """ε(δ) of a numerically evaluated profile: ``epsilon`` solves value(ε) = δ, and the true
    ε(δ) lies in [``epsilon_low``, ``epsilon_high``] under the profile's stated error bound
    (δ(ε) is decreasing, so the band value ± error_bound maps to an ε interval)."""

    delta: float
    epsilon: float
    epsilon_low: float
    epsilon_high: float


def epsilon_for_delta_numeric(
    profile: Callable[[NDArray[np.float64]], NumericDivergence],
    delta: float,
    *,
    bracket: tuple[float, float] = (-50.0, 50.0),
    xtol: float = 1e-10,
) -> NumericEpsilon:
    """Invert a numeric profile at ``delta`` by vectorised bisection on three targets at once
    (value, value − bound, value + bound each equal to δ).

    ``profile(eps_array)`` returns a :class:`NumericDivergence`, e.g.
    ``lambda e: privacy_profile(p, q, e, support=(-30, 30))``. ``bracket`` must contain the
    three roots (ε where the profile crosses δ); an end that does not is reported as ±inf.
    """
    dlt = float(check_range("delta", delta, gt=0, lt=1))
    lo = np.full(3, float(bracket[0]))
    hi = np.full(3, float(bracket[1]))
    sign = np.array([0.0, -1.0, 1.0])  # value, value − bound, value + bound

    def g(e: NDArray[np.float64]) -> NDArray[np.float64]:
        r = profile(e)
        return np.asarray(r.value + sign * r.error_bound, dtype=float)

    at_lo, at_hi = g(lo), g(hi)
    while np.max(hi - lo) > xtol:
        mid = 0.5 * (lo + hi)
        below = g(mid) <= dlt
        hi = np.where(below, mid, hi)
        lo = np.where(below, lo, mid)
    root = np.where(at_lo <= dlt, -np.inf, np.where(at_hi > dlt, np.inf, hi))
    return NumericEpsilon(dlt, float(root[0]), float(root[1]), float(root[2]))
