"""Seal the units a store holds from before manifests existed (an explicit, one-time migration).

    python -m privrepro.store.migrate                        # every figure under experiments/
    python -m privrepro.store.migrate --experiments STORE --dry-run

A unit folder without ``manifest.json`` fails verification: a run moves it aside and computes it
again, ``make tables`` leaves it out. A store written before manifests existed (each unit marked
complete by its ``env.json``) can instead be sealed in place by this command, once, on the
user's word that its files are the ones the harness wrote. Each unit is checked by the rule it was
written under, strengthened (:func:`~privrepro.store.seal.check_unsealed`: the config
belongs to the figure and hashes to the folder's name, ``rows.csv`` parses and is not cut short,
and equals the CSV export of ``rows.parquet`` where both exist); the command prints one line per
unit: the files it sealed, or why it refused (a refused unit is left as it is, for a run to
quarantine and recompute). That rule cannot tell rows edited consistently in both files from the
computed ones: seal only a store whose history you know.
"""

from __future__ import annotations

import sys
from pathlib import Path

from privrepro.commands import command_parser
from privrepro.store.units import figure_stores

__all__ = ["main", "seal_store"]


def seal_store(experiments: Path, dry_run: bool = False) -> tuple[int, int]:
    """Seal every unsealed unit of the store that passes the rule; print one line per unit.

    Returns:
        ``(sealed, refused)`` counts (with ``dry_run``, ``sealed`` counts those that would be).
    """
    sealed = refused = 0
    for store in figure_stores(experiments):
        for uid in store.unsealed_ids():
            path = store.path(uid)
            names: list[str] = []
            if dry_run:
                result = store.check_unsealed(uid)
            else:
                result, names = store.seal_unsealed(uid)
            if result.ok:
                sealed += 1
                what = "would seal" if dry_run else f"sealed {', '.join(names)} of"
                print(f"{what} {path}")
            else:
                refused += 1
                print(f"refused {path}: {result.reason} (left as it is)")
    return sealed, refused


def main(argv: list[str] | None = None) -> int:
    parser = command_parser("privrepro-seal-unsealed", __doc__)
    parser.add_argument("--experiments", type=Path, default=Path("experiments"))
    parser.add_argument("--dry-run", action="store_true", help="check and list, write no manifest")
    args = parser.parse_args(argv)
    sealed, refused = seal_store(args.experiments, args.dry_run)
    verb = "would be sealed" if args.dry_run else "sealed"
    print(
        f"{sealed} unit(s) written before manifests {verb}, {refused} refused "
        f"(under {args.experiments})"
    )
    return 1 if refused else 0


if __name__ == "__main__":
    sys.exit(main())
