"""Check that the composed config gives the parameters and run units it gave before a change.

Two comparisons, each over every experiment; any difference in the validated parameters or in a
unit hash is listed and makes the exit status 1 (unit hashes name the stored results: a changed
hash means recomputation).

    # this tree against a run's record: the params and unit ids in <results>/<paper>/<fig>.meta.json
    uv run --frozen python benchmarks/check_params.py --results path/to/results

    # this tree against the config layout of a git revision whose experiment YAMLs held their
    # profile blocks under ``profiles:`` (merged over ``params`` by the runner), every profile
    uv run --frozen python benchmarks/check_params.py --ref <revision>

The second form reads ``conf/`` of the revision with ``git archive`` and applies that revision's
merge (``params``, then ``profiles[<profile>]``); it is how the move of the profile blocks into
Hydra's composition was checked.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import subprocess
import sys
import tarfile
import tempfile
from io import BytesIO
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf

from privrepro.config.validation import build_params
from privrepro.runner.catalog import list_experiments
from privrepro.runner.plan import compose, effective_params, unit_identity
from privrepro.runner.recipe_config import load_recipe
from privrepro.store.identity import unit_hash

REPO = Path(__file__).resolve().parents[1]


def _plain(obj: Any) -> Any:
    """Parameters as JSON would record them (tuples become lists)."""
    return json.loads(json.dumps(dataclasses.asdict(obj), default=str))


def _resolved(cfg: DictConfig, params: dict[str, Any]) -> tuple[str, Any, list[str]]:
    """The recipe path, the validated params (plain) and the unit ids of a composed config."""
    recipe_path = str(cfg.figure.recipe)
    recipe = load_recipe(recipe_path)
    built = build_params(recipe.params_type, params, "params")
    ids = [
        unit_hash(
            unit_identity(
                str(cfg.figure.paper),
                str(cfg.figure.name),
                recipe,
                str(cfg.profile.name),
                int(cfg.seed),
                u,
            )
        )
        for u in recipe.units(built)
    ]
    return recipe_path, _plain(built), ids


def _old_layout_params(cfg: DictConfig) -> dict[str, Any]:
    """The merge the runner applied before profiles were composed by Hydra."""
    base = OmegaConf.create(OmegaConf.to_container(cfg.get("params") or {}, resolve=True))
    blocks = cfg.get("profiles") or {}
    profile = str(cfg.profile.name)
    merged = OmegaConf.merge(base, blocks.get(profile) or {} if profile in blocks else {})
    return OmegaConf.to_container(merged, resolve=True)  # type: ignore[return-value]


def _diff(a: Any, b: Any, key: str = "params") -> list[str]:
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for k in sorted(set(a) | set(b), key=str):
            if k not in a or k not in b:
                out.append(f"{key}.{k}: only in {'new' if k not in a else 'old'}")
            else:
                out += _diff(a[k], b[k], f"{key}.{k}")
        return out
    return [] if a == b else [f"{key}: {a!r} -> {b!r}"]


def against_results(results: Path) -> list[str]:
    problems = []
    metas = sorted(results.glob("*/*.meta.json"))
    if not metas:
        return [f"no <paper>/<figure>.meta.json under {results}"]
    for meta_path in metas:
        meta = json.loads(meta_path.read_text())
        name = f"{meta['paper']}/{meta['figure']}"
        cfg = compose(name, [f"profile={meta['profile']}", f"seed={meta['seed']}"])
        recipe, params, ids = _resolved(cfg, effective_params(cfg))
        found = _diff(meta["params"], params)
        if recipe != meta["recipe"]:
            found.append(f"recipe: {meta['recipe']} -> {recipe}")
        if ids != meta["units"]:
            found.append(f"unit ids: {len(meta['units'])} recorded, {len(ids)} composed, differ")
        status = "same" if not found else "DIFFERENT"
        print(f"{name:<22} {meta['profile']:<6} {len(ids):>4} units  {status}")
        problems += [f"{name} ({meta['profile']}): {d}" for d in found]
    return problems


def against_revision(ref: str, profiles: list[str]) -> list[str]:
    archive = subprocess.run(
        ["git", "archive", ref, "conf"], cwd=REPO, check=True, capture_output=True
    ).stdout
    problems = []
    with tempfile.TemporaryDirectory() as tmp:
        tarfile.open(fileobj=BytesIO(archive)).extractall(tmp)
        old_conf = Path(tmp) / "conf"
        old_names = [e.name for e in list_experiments(old_conf)]
        new_names = [e.name for e in list_experiments()]
        for name in sorted(set(old_names) ^ set(new_names)):
            problems.append(
                f"{name}: only in {'the revision' if name in old_names else 'this tree'}"
            )
        for name in sorted(set(old_names) & set(new_names)):
            for profile in profiles:
                old_cfg = compose(name, [f"profile={profile}"], conf=old_conf)
                old = _resolved(old_cfg, _old_layout_params(old_cfg))
                new_cfg = compose(name, [f"profile={profile}"])
                new_raw = effective_params(new_cfg)
                new = _resolved(new_cfg, new_raw)
                found = _diff(old[1], new[1])
                if old[0] != new[0]:
                    found.append(f"recipe: {old[0]} -> {new[0]}")
                if old[2] != new[2]:
                    found.append("unit ids differ")
                raw = _diff(_old_layout_params(old_cfg), new_raw)
                note = (
                    f" (as written: {len(raw)} values differ, equal once validated)" if raw else ""
                )
                status = "same" if not found else "DIFFERENT"
                print(f"{name:<22} {profile:<6} {len(new[2]):>4} units  {status}{note}")
                problems += [f"{name} ({profile}): {d}" for d in found]
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--results", type=Path, help="a results folder with <paper>/<fig>.meta.json")
    group.add_argument("--ref", help="a git revision with the profiles: layout")
    parser.add_argument("--profiles", nargs="+", default=["tiny", "smoke", "paper"])
    args = parser.parse_args(argv)
    problems = (
        against_results(args.results) if args.results else against_revision(args.ref, args.profiles)
    )
    for p in problems:
        print("DIFFERENT", p, file=sys.stderr)
    print(f"{len(problems)} differences")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
