"""What a recipe may tell a cost model about its units (optional; the rehearsal reads it).

A recipe whose units share expensive work across units and figures (a feature cache, a base
model, a tuning study) or whose units cost differently (ip's series groups, cl's FiLM and head
runs) also subclasses :class:`CostModel` and overrides its hooks. Nothing in the run reads them:
only a tool that predicts a run's cost (:mod:`privrepro.rehearsal`) does, through
:func:`cost_model_of`, which gives every other recipe the defaults.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["CostModel", "CostPart", "cost_model_of"]


@dataclass(frozen=True)
class CostPart:
    """A part of a unit's work as a cost model prices it (:meth:`CostModel.cost_parts`).

    Attributes:
        name: what the part is called in a cost report (``FiLM tuning``, ``features``).
        key: what the part computes, when other units or figures compute the very same thing
            (a cache, a tuning study, an ensemble's members): units whose parts have equal
            names and keys compute it once over every figure of the run. ``None``: every unit
            computes its own.
    """

    name: str
    key: Any = None


class CostModel:
    """A recipe's hooks for a cost model; the defaults are those of a recipe without them."""

    def shared_cache_key(self, unit: Mapping[str, Any]) -> Any:
        """What identifies the cache a unit builds and other units reuse (cl's features, ip's
        base model): units with equal keys share it, in this figure and in any other figure of
        the same run (the key must then name what the cache holds, not the figure). A cost
        model counts each cache once per distinct key (``None``, the default: once per figure,
        shared with no other figure)."""
        return None

    def cost_parts(self, unit: Mapping[str, Any]) -> Mapping[str, CostPart]:
        """The parts of a unit's work a cost model prices apart, by the part it measures
        (``features``: loops that build a shared cache; ``tuning``: an Optuna study's trials;
        ``training``; ``evaluation``: test-set predictions), each with its report name and what
        it shares (:class:`CostPart`). A part not named is priced per unit under its measured
        name. The default: the cache of :meth:`shared_cache_key` (``caches``; ``None``: once
        per figure)."""
        return {"features": CostPart("caches", self.shared_cache_key(unit))}

    def cost_class(self, unit: Mapping[str, Any]) -> Any:
        """Units with equal classes cost alike: a cost model may measure one unit of each
        class and predict the others of its class from it (``None``, the default: every unit
        alike, such as the points of a sweep; ip: the series group, whose stages differ)."""
        return None


_DEFAULTS = CostModel()


def cost_model_of(recipe: object) -> CostModel:
    """``recipe``'s cost-model hooks: the recipe itself when it is a :class:`CostModel`, else
    the defaults."""
    return recipe if isinstance(recipe, CostModel) else _DEFAULTS
