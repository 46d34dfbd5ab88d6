"""What the project's command-line entry points share: the parser and the console's logging."""

from __future__ import annotations

import argparse
import logging
import sys

__all__ = ["command_parser", "quiet_console_logging"]


def command_parser(prog: str, doc: str | None) -> argparse.ArgumentParser:
    """The parser of the command ``prog``: its ``--help`` starts with ``doc`` (the module
    docstring) as written, line breaks and examples kept."""
    return argparse.ArgumentParser(
        prog=prog, description=doc, formatter_class=argparse.RawDescriptionHelpFormatter
    )


def quiet_console_logging() -> None:
    """Warnings and errors on the console; each unit's full log goes to its log.txt.

    Installed before any library is imported, so a library's own ``logging.basicConfig`` (opacus
    calls one at import) finds the root configured and adds no INFO console handler.
    """
    handler = logging.StreamHandler(sys.stderr)
    handler.setLevel(logging.WARNING)
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=logging.INFO, handlers=[handler], force=True)
