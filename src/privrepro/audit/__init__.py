"""privrepro.audit: Monte Carlo lower confidence bounds on ε that can refute a DP claim."""

from __future__ import annotations

from typing import TYPE_CHECKING

from privrepro.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from privrepro.audit.auditor import (
        AuditReport,
        Sampler,
        audit,
        neighbour_samplers,
        sampler_from_distribution,
    )
    from privrepro.audit.binomial import clopper_pearson_lower, clopper_pearson_upper

_EXPORTS = {
    "privrepro.audit.auditor": (
        "AuditReport",
        "Sampler",
        "audit",
        "neighbour_samplers",
        "sampler_from_distribution",
    ),
    "privrepro.audit.binomial": ("clopper_pearson_lower", "clopper_pearson_upper"),
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

__all__ = [
    "AuditReport",
    "Sampler",
    "audit",
    "clopper_pearson_lower",
    "clopper_pearson_upper",
    "neighbour_samplers",
    "sampler_from_distribution",
]
