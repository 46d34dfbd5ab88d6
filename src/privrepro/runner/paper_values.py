"""The values a paper printed for a figure, to be marked on its plot.

More in ``docs/modules.md``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from privrepro.figures.api import PaperValue

_SAFE_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

#: reference sources that are the paper's own numbers (``derived`` ones are the project's)
PAPER_KINDS = ("printed", "read-off-plot", "notebook")


def reference_dir() -> Path:
    """The shipped reference files (beside the report that scores them)."""
    return Path(__file__).resolve().parents[1] / "report" / "references"


@lru_cache(maxsize=8)
def _entries(directory: str) -> tuple[tuple[str, dict[str, Any]], ...]:
    out: list[tuple[str, dict[str, Any]]] = []
    for path in sorted(Path(directory).glob("*.y*ml")):
        try:
            # libyaml's parser where PyYAML has it: the same documents, a quarter of the CPU
            # (10 files, 0.35 MB, read once per process that draws a plot)
            raw = yaml.load(path.read_text(encoding="utf-8"), Loader=_SAFE_LOADER) or {}
        except (OSError, yaml.YAMLError):
            continue  # the report names a malformed file; a plot goes without its marks
        paper = str(raw.get("paper", path.stem.split("-")[0]))
        out += [(paper, v) for v in raw.get("values") or [] if isinstance(v, dict)]
    return tuple(out)


def paper_values(
    paper: str,
    figure: str,
    profile: str,
    data_labels: Sequence[str] = (),
    directory: Path | None = None,
) -> list[PaperValue]:
    """The paper's values for ``paper``/``figure`` that the plot of ``profile`` may show (none
    when any of ``data_labels`` names a stand-in)."""
    from privrepro.data.provenance import is_stand_in_label

    if any(is_stand_in_label(label) for label in data_labels):
        return []
    found = []
    for ref_paper, ref in _entries(str(directory or reference_dir())):
        source: Mapping[str, Any] = ref.get("source") or {}
        match: Mapping[str, Any] = ref.get("match") or {}
        if ref_paper != paper or ref.get("figure") != figure:
            continue
        if source.get("kind") not in PAPER_KINDS or match.get("table") != "summary":
            continue
        if ref.get("profiles") and profile not in ref["profiles"]:
            continue
        found.append(
            PaperValue(
                id=str(ref.get("id")),
                metric=str(match.get("metric")),
                where=dict(match.get("where") or {}),
                value=float(ref["value"]),
                quantity=str(ref.get("quantity", "")),
                source=str(source.get("where", "")),
            )
        )
    return found
