#!/usr/bin/env python3
"""Write docs/reproduce.md's tables from servelab.reproduce: nothing in them is typed by hand.

Each table lives in the document between two markers,

    <!-- reproduce kairos full -->
    ...
    <!-- /reproduce kairos full -->

and the summary of every table in the document between ``<!-- reproduce summary -->`` and
``<!-- /reproduce summary -->``. For each PAPER:SIZE given, the script takes the rows of
``servelab reproduce PAPER --size SIZE --json`` saved as ``PAPER-SIZE.json`` in ``--from`` (so a
full run of an hour is made once, in the background, and written into the document afterwards), or
runs ``servelab.reproduce`` itself when there is no such file, and replaces that block. Blocks of
other papers and sizes are left as they are; the summary is rebuilt from every block present.

    servelab reproduce kairos --size full --json > servelab-output/reproduce/kairos-full.json
    python scripts/reproduce_docs.py --from servelab-output/reproduce kairos:full hera:full \\
        --note "kairos:full=Run on 2026-12-08 on two cores shared with other work."
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "reproduce.md"
TITLES = {"kairos": "Kairos", "ramsis": "RAMSIS", "infaas": "INFaaS", "hera": "Hera", "rrl": "RRL"}
FOOT = re.compile(r"^(\w+), size (\w+): (\d+) of (\d+) rows within tolerance \(([\d.]+) s\)$", re.M)


def frame_of(saved: dict) -> pd.DataFrame:
    """The table again from ``servelab reproduce ... --json`` (its rows and attrs)."""
    from servelab.reproduction import COLUMNS

    frame = pd.DataFrame(saved["rows"], columns=list(COLUMNS))
    frame.attrs.update({k: saved[k] for k in ("paper", "size", "seconds")})
    return frame


def table(paper: str, size: str, source: Path | None) -> pd.DataFrame:
    import servelab

    saved = source / f"{paper}-{size}.json" if source else None
    if saved is not None and saved.is_file():
        frame = frame_of(json.loads(saved.read_text()))
        if (frame.attrs["paper"], frame.attrs["size"]) != (paper, size):
            raise SystemExit(f"{saved}: holds {frame.attrs['paper']} {frame.attrs['size']}")
        return frame
    return servelab.reproduce(paper, size)


def block(frame: pd.DataFrame, note: str) -> str:
    from servelab.reproduction import format_table

    paper, size = frame.attrs["paper"], frame.attrs["size"]
    head = f"### {TITLES.get(paper, paper)} ({size}, {_took(frame.attrs['seconds'])})\n\n"
    text = f"{note}\n\n" if note else ""
    return head + text + format_table(frame, markdown=True) + "\n"


def _took(seconds: float) -> str:
    return f"{seconds / 60:.0f} minutes" if seconds >= 120 else f"{seconds:.0f} s"


def summary(doc: str) -> str:
    lines = [
        "| paper | size | rows | within tolerance | share | wall time |",
        "|---|---|---|---|---|---|",
    ]
    for match in FOOT.finditer(doc):
        paper, size, within, rows, seconds = match.groups()
        share = int(within) / int(rows) if int(rows) else math.nan
        lines.append(
            f"| {paper} | {size} | {rows} | {within} | {share:.0%} | {_took(float(seconds))} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tables", nargs="+", metavar="PAPER:SIZE", help="e.g. kairos:full")
    parser.add_argument("--from", dest="source", type=Path, help="folder of PAPER-SIZE.json")
    parser.add_argument("--doc", type=Path, default=DOC, help="the document (docs/reproduce.md)")
    parser.add_argument(
        "--note", action="append", default=[], metavar="PAPER:SIZE=TEXT",
        help="a sentence above that table (when and on what it ran)",
    )  # fmt: skip
    args = parser.parse_args(argv)
    notes = dict(n.split("=", 1) for n in args.note)
    doc = args.doc.read_text()
    for spec in args.tables:
        paper, _, size = spec.partition(":")
        marker = f"<!-- reproduce {paper} {size} -->"
        if marker not in doc:
            raise SystemExit(f"{args.doc}: no {marker} block to replace")
        end = f"<!-- /reproduce {paper} {size} -->"
        new = f"{marker}\n{block(table(paper, size, args.source), notes.get(spec, ''))}{end}"
        pattern = re.compile(f"{re.escape(marker)}\n.*?{re.escape(end)}", re.DOTALL)
        doc = pattern.sub(lambda _match, new=new: new, doc)
        print(f"{spec}: written", file=sys.stderr)
    start, end = "<!-- reproduce summary -->\n", "<!-- /reproduce summary -->"
    if start in doc and end in doc:
        before, rest = doc.split(start, 1)
        doc = before + start + summary(doc) + end + rest.split(end, 1)[1]
    args.doc.write_text(doc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
