"""privrepro.audit: Monte Carlo lower confidence bounds on ε that can refute a DP claim."""

from privrepro.audit.auditor import (
    AuditReport,
    Sampler,
    audit,
    neighbour_samplers,
    sampler_from_distribution,
)
from privrepro.audit.binomial import clopper_pearson_lower, clopper_pearson_upper

__all__ = [
    "AuditReport",
    "Sampler",
    "audit",
    "clopper_pearson_lower",
    "clopper_pearson_upper",
    "neighbour_samplers",
    "sampler_from_distribution",
]
