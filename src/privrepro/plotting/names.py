"""Human names for the keys the tables use (methods, samplers, settings), as the plots show them.

Tables keep short keys (``pac_theorem3_exact``, ``peft_film``, ``si-blurry``): they are stable
selectors for the report and for users' code. A reader of a plot gets the paper's words instead:
:func:`display` looks a key up and falls back to the key itself, so a new key is never hidden.
"""

from __future__ import annotations

__all__ = ["MATH", "NAMES", "display", "math_text"]

#: the papers' symbols as matplotlib mathtext (a plot shows S with its sub- and superscripts)
MATH: dict[str, str] = {
    "S_prior^const": r"$S_{\mathrm{prior}}^{\mathrm{const}}$",
    "S_prior": r"$S_{\mathrm{prior}}$",
    "|S(Q(X̃))|": r"$|S(Q(\tilde{X}))|$",
    "AA_t": r"$\mathrm{AA}_t$",
    "AF_t": r"$\mathrm{AF}_t$",
}


def math_text(text: str) -> str:
    """``text`` with the papers' symbols written as mathtext (:data:`MATH`), longest first."""
    for plain, math in sorted(MATH.items(), key=lambda kv: -len(kv[0])):
        text = text.replace(plain, math)
    return text


NAMES: dict[str, dict[str, str]] = {
    # cl (Tobaben et al., arXiv 2411.04680)
    "benchmark": {
        "cifar100": "Split-CIFAR-100",
        "imagenet-r": "Split-ImageNet-R",
        "5-datasets": "5-Datasets",
    },
    "cl_method": {
        "peft_film": "PEFT Ensemble (FiLM)",
        "peft_head": "PEFT Ensemble (last layer)",
        "naive_film": "Naive (FiLM)",
        "naive_head": "Naive (last layer)",
        "noncl_film": "Non-CL baseline (FiLM)",
        "noncl_head": "Non-CL baseline (last layer)",
    },
    "blurry": {"not-blurry": "Not Blurry", "i-blurry": "i-Blurry", "si-blurry": "Si-Blurry"},
    "rule": {
        "argmax": "ArgMax (eq. 8)",
        "median": "Median (eq. A107)",
        "entropy": "Entropy (SAFE)",
    },
    "label_config": {
        "prior": MATH["S_prior"],
        "const": MATH["S_prior^const"],
        "prior_const": MATH["S_prior^const"],
        "x10": "+10× dummy",
        "x100": "+100× dummy",
        "x1000": "+1000× dummy",
    },
    # pac (Xiao & Devadas, arXiv 2210.03458 v1)
    "pac_method": {
        "dp_local": "local DP (Gaussian, d/√(2v))",
        "dp_mean": "DP for the mean (Gaussian, zCDP)",
        "pac_theorem3_exact": "PAC, Theorem 3 on the exact covariance",
        "pac_theorem3_estimated": "PAC, Theorem 3 on Algorithm 1's estimate",
        "pac_isotropic_exact": "PAC, isotropic noise on the exact covariance",
        "pac_algorithm1_isotropic": "PAC, Algorithm 1 as stated (isotropic branch)",
        "pac_algorithm1_anisotropic": "PAC, Algorithm 1 as stated (anisotropic branch)",
        "pac_algorithm1 (isotropic)": "PAC, Algorithm 1 as stated (isotropic branch)",
        "pac_algorithm1 (anisotropic)": "PAC, Algorithm 1 as stated (anisotropic branch)",
    },
    # pb (Jiang et al., arXiv 2412.10612)
    "sampler": {
        "gaussian": "Gaussian",
        "pb_rejection": "PB-DP, rejection sampler",
        "pb_mixture": "PB-DP, mixture sampler",
    },
    # ip (Tian & Tandon, arXiv 2411.18746)
    "mode": {"repo_compat": "notebooks' protocol", "corrected": "corrected protocol"},
    "dataset": {
        "cifar10": "CIFAR-10",
        "cifar100": "CIFAR-100",
        "digits": "digits",
        "synthetic_images": "synthetic images",
    },
}


def display(kind: str, key: object) -> str:
    """The human name of ``key`` among ``NAMES[kind]`` (the key itself when unknown)."""
    return NAMES.get(kind, {}).get(str(key), str(key))
