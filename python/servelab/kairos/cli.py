"""`servelab kairos ...`: the command-line interface of servelab.kairos."""

from __future__ import annotations

import argparse


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Adds the `kairos` command and its subcommands to servelab's CLI."""
    p = sub.add_parser("kairos", help="kairos: (subcommands come with the system)")
    p.set_defaults(run=lambda args: 0)
