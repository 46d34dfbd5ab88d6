"""What the project's command-line entry points share."""

from __future__ import annotations

import argparse

__all__ = ["command_parser"]


def command_parser(prog: str, doc: str | None) -> argparse.ArgumentParser:
    """The parser of the command ``prog``: its ``--help`` starts with ``doc`` (the module
    docstring) as written, line breaks and examples kept."""
    return argparse.ArgumentParser(
        prog=prog, description=doc, formatter_class=argparse.RawDescriptionHelpFormatter
    )
