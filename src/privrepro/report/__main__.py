"""``uv run python -m privrepro.report [--results results --plots plots --out REPORT.md]``.

Writes ``<results>/scorecard.csv`` (values), ``<results>/claims.csv`` (claims), the Markdown
report and (unless ``--no-html``) the HTML page next to it, then prints the per-paper counts and
the paths. Exits 2 on a malformed reference file; with ``--strict``, exits 1 when a printed or
derived value fails or a claim is contradicted.
"""

from __future__ import annotations

import sys

from privrepro.commands import command_parser
from privrepro.report.make import generate_report
from privrepro.report.reference_records import ReferenceError


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point; returns the exit status."""
    ap = command_parser("python -m privrepro.report", __doc__)
    ap.add_argument("--results", default="results", help="results folder (default: results)")
    ap.add_argument("--plots", default="plots", help="plots folder (default: plots)")
    ap.add_argument("--out", default="REPORT.md", help="Markdown report (default: REPORT.md)")
    ap.add_argument(
        "--references",
        default=None,
        help="folder of reference files (default: the package's references/)",
    )
    ap.add_argument(
        "--conf",
        default="conf/experiment",
        help="experiment configs, to list figures not run yet (default: conf/experiment)",
    )
    ap.add_argument("--no-html", action="store_true", help="skip the HTML page")
    ap.add_argument(
        "--strict",
        action="store_true",
        help="exit 1 when any value fails or any claim is contradicted",
    )
    args = ap.parse_args(argv)
    try:
        outcome = generate_report(
            args.results, args.plots, args.out, args.references, args.conf, html=not args.no_html
        )
    except ReferenceError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    shown = [
        "paper",
        "figures run",
        "printed reproduced",
        "printed failed",
        "printed not comparable",
        "derived consistent",
        "derived inconsistent",
        "derived not comparable",
        "claims reproduced",
        "claims contradicted",
        "claims not comparable",
        "not run",
    ]
    print(outcome.counts[shown].to_string(index=False))
    for path in outcome.written:
        print(f"wrote {path}")
    for fr in outcome.figures.values():
        if fr.error:
            print(f"warning: {fr.error}", file=sys.stderr)
    n_fail = int((outcome.scorecard["verdict"] == "fail").sum())
    n_fail += int((outcome.claims["verdict"] == "contradicted").sum())
    return 1 if args.strict and n_fail else 0


if __name__ == "__main__":
    sys.exit(main())
