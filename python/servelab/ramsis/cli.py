"""`servelab ramsis ...`: the command-line interface of servelab.ramsis."""

from __future__ import annotations

import argparse


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Adds the `ramsis` command and its subcommands to servelab's CLI."""
    p = sub.add_parser("ramsis", help="ramsis: (subcommands come with the system)")
    p.set_defaults(run=lambda args: 0)
