"""The experiments that exist: one YAML file per figure under ``conf/experiment/<paper>/``."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any


def conf_dir() -> Path:
    """The Hydra config root: ``PRIVREPRO_CONF``, else the checkout's ``conf/``, else the copy an
    installed wheel carries (``privrepro/conf``)."""
    env = os.environ.get("PRIVREPRO_CONF")
    if env:
        return Path(env).resolve()
    checkout = Path(__file__).resolve().parents[3] / "conf"
    if checkout.is_dir():
        return checkout.resolve()
    return (Path(__file__).resolve().parents[1] / "conf").resolve()


@dataclass(frozen=True)
class ExperimentEntry:
    """One experiment config: ``name`` is what ``experiment=`` takes (``cl/fig2``)."""

    name: str
    paper: str
    figure: str
    description: str
    path: Path

    @property
    def make_target(self) -> str:
        fig = self.figure[3:] if self.figure.startswith("fig") else self.figure
        return f"fig-{self.paper}-{fig}"


def _description(path: Path) -> str:
    for line in path.read_text().splitlines():
        line = line.strip()
        if line.startswith("#") and "@package" not in line:
            return line.lstrip("# ").strip()
    return ""


def list_experiments(root: Path | None = None) -> list[ExperimentEntry]:
    """Every ``conf/experiment/<paper>/<figure>.yaml``, sorted by paper then figure."""
    base = (root or conf_dir()) / "experiment"
    entries = []
    for path in sorted(base.glob("*/*.yaml")):
        paper, figure = path.parent.name, path.stem
        entries.append(
            ExperimentEntry(f"{paper}/{figure}", paper, figure, _description(path), path)
        )
    return entries


def resolve_target(target: str, root: Path | None = None) -> list[ExperimentEntry]:
    """The experiments a ``make fig-<paper>-<id>`` target runs.

    ``cl-2`` → ``cl/fig2`` and ``cl/fig2_*``; ``pac-ex1`` → ``pac/ex1`` and ``pac/ex1_*``;
    an exact experiment name (``cl/fig2``) is accepted too.
    """
    entries = list_experiments(root)
    if "/" in target:
        found = [e for e in entries if e.name == target]
    else:
        paper, _, ident = target.partition("-")
        pattern = re.compile(rf"^(fig)?{re.escape(ident)}(_.*)?$")
        found = [e for e in entries if e.paper == paper and pattern.match(e.figure)]
    if not found:
        known = ", ".join(e.make_target for e in entries)
        raise SystemExit(f"no experiment matches '{target}'. Known targets: {known}")
    return found


def experiment_recipe(path: Path) -> tuple[str, str, str] | None:
    """``(paper, figure, recipe)`` of an experiment config, read as YAML data; ``None`` when its
    defaults list names no ``/recipe``."""
    import yaml

    try:
        doc = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError):
        return None
    if not isinstance(doc, dict):
        return None
    recipe = None
    for item in doc.get("defaults") or []:
        if isinstance(item, dict):
            for key, value in item.items():
                if str(key).lstrip("/") == "recipe" and isinstance(value, str):
                    recipe = value
    node = doc.get("figure")
    figure: dict[str, Any] = node if isinstance(node, dict) else {}
    paper = str(figure.get("paper") or path.parent.name)
    name = str(figure.get("name") or path.stem)
    return None if recipe is None else (paper, name, recipe)


def figure_recipes(root: Path | None = None) -> dict[tuple[str, str], str]:
    """The registry of the project's figures: ``(paper, figure)`` → the recipe its experiment
    config names (never a name read from the store or a results file)."""
    out: dict[tuple[str, str], str] = {}
    for entry in list_experiments(root):
        found = experiment_recipe(entry.path)
        if found is not None:
            out[(found[0], found[1])] = found[2]
    return out
