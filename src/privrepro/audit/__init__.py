"""privrepro.audit: Monte Carlo lower confidence bounds on ε that can refute a DP claim."""

from __future__ import annotations

from typing import TYPE_CHECKING

from privrepro.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from privrepro.audit.auditor import AuditReport as AuditReport
    from privrepro.audit.auditor import Sampler as Sampler
    from privrepro.audit.auditor import audit as audit
    from privrepro.audit.auditor import neighbour_samplers as neighbour_samplers
    from privrepro.audit.auditor import sampler_from_distribution as sampler_from_distribution
    from privrepro.audit.binomial import clopper_pearson_lower as clopper_pearson_lower
    from privrepro.audit.binomial import clopper_pearson_upper as clopper_pearson_upper

__getattr__, __dir__, __all__ = lazy_exports(__name__, __file__)
