"""Each paper's figures and headline claims beside ours, one row per claim, with a two-sided
tolerance and a verdict computed from the values.

    import servelab

    table = servelab.reproduce("infaas")                  # reduced size: seconds
    table = servelab.reproduce("kairos", size="full")     # the paper's setting
    table[["claim", "paper", "ours", "low", "high", "verdict"]]

Every row holds:

- ``claim`` and ``source``: what the paper states, and where (figure, table or section; the
  artifact's printout for RAMSIS, as ../shared/data's NOTES.md records it);
- ``paper``: the paper's value, taken from its text (never typed from our runs);
- ``ours``: computed now by the system's own API;
- ``low`` / ``high``: the two-sided tolerance interval, ``tolerance`` the same in words and
  ``tolerance_reason`` why it is that wide (values read off a figure, or given as "about", get
  wider ones);
- ``verdict``: "within" when low <= ours <= high, else "outside";
- ``cause``: for a row outside its tolerance, what makes it so, with the measured evidence;
- ``detail``: the numbers behind ``ours``.

``size="reduced"`` runs each paper in about a minute or less on two cores (fewer queries, seeds and
configurations: each paper's function says which); ``size="full"`` runs the paper's setting.
Kairos and RAMSIS read the artifacts' data from ``data`` (default: $SERVELAB_DATA, else
../shared/data beside a source checkout); INFaaS, Hera and RRL need none. ``servelab reproduce
<paper> [--size reduced|full] [--json]`` prints the same table.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from typing import Any

import pandas as pd

from . import hera, infaas, kairos, ramsis, rrl
from .rows import CHECKOUT_DATA, COLUMNS, DATA_ENV, data_root, tolerance, verdict

#: The papers :func:`reproduce` covers.
PAPERS: tuple[str, ...] = ("kairos", "ramsis", "infaas", "hera", "rrl")
#: The run sizes.
SIZES: tuple[str, ...] = ("reduced", "full")

__all__ = [
    "CHECKOUT_DATA", "COLUMNS", "DATA_ENV", "PAPERS", "PARTS", "SIZES", "data_root", "format_table",
    "reproduce", "tolerance", "verdict",
]  # fmt: skip

_BUILDERS: dict[str, Callable[..., list[dict[str, Any]]]] = {
    "kairos": kairos.claims,
    "ramsis": ramsis.claims,
    "infaas": infaas.claims,
    "hera": hera.claims,
    "rrl": rrl.claims,
}


#: The parts a paper's table can be computed in (``reproduce(..., parts=...)``): a slice of its
#: rows, for a quick look (the notebooks show one); the others compute their table whole.
PARTS: dict[str, tuple[str, ...]] = {"kairos": kairos.PARTS, "ramsis": ramsis.PARTS}


def reproduce(
    paper: str,
    size: str = "reduced",
    *,
    data: str | os.PathLike[str] | None = None,
    parts: Sequence[str] | None = None,
) -> pd.DataFrame:
    """The paper's figures and headline claims beside ours: one row per claim (see the module
    doc for the columns). ``parts``: only those parts of the table (PARTS[paper], e.g. Kairos's
    "fig12"); default the whole table. attrs: paper, size, parts, seconds (the wall time of the
    computation)."""
    if not isinstance(paper, str) or paper not in _BUILDERS:
        raise ValueError(f"paper={paper!r} is not one of {', '.join(PAPERS)}")
    if not isinstance(size, str) or size not in SIZES:
        raise ValueError(f"size={size!r} is not one of {', '.join(SIZES)}")
    if parts is not None:
        known = PARTS.get(paper, ())
        if isinstance(parts, str) or not parts or any(p not in known for p in parts):
            raise ValueError(
                f"parts={parts!r}: {paper}'s table has "
                + (f"the parts {', '.join(known)}" if known else "no parts (it comes whole)")
            )
    start = time.perf_counter()
    build = _BUILDERS[paper]
    rows = build(size, data_root(data)) if parts is None else build(size, data_root(data), parts)
    frame = pd.DataFrame([{"paper_name": paper, **r} for r in rows], columns=list(COLUMNS))
    frame.attrs.update(
        {
            "paper": paper,
            "size": size,
            "parts": None if parts is None else list(parts),
            "seconds": round(time.perf_counter() - start, 2),
        }
    )
    return frame


def format_table(frame: pd.DataFrame, *, markdown: bool = False) -> str:
    """The table as text (or a markdown table): claim, paper, ours, tolerance, verdict, cause
    and the numbers behind ours."""

    def num(x: float) -> str:
        return f"{x:.3g}" if abs(x) < 100 else f"{x:.1f}"

    head = ("claim", "paper", "ours", "tolerance", "verdict", "cause", "detail")
    body = [
        (
            r.claim,
            num(r.paper),
            num(r.ours),
            f"{r.tolerance} = [{num(r.low)}, {num(r.high)}]",
            r.verdict,
            r.cause,
            r.detail,
        )  # fmt: skip
        for r in frame.itertuples()
    ]
    within = int((frame["verdict"] == "within").sum())
    a = frame.attrs
    part = f" (parts {', '.join(a['parts'])})" if a.get("parts") else ""
    foot = (
        f"{a.get('paper')}, size {a.get('size')}{part}: {within} of {len(frame)} rows within "
        f"tolerance ({a.get('seconds')} s)"
    )
    if markdown:
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        lines += ["| " + " | ".join(c.replace("|", "/") for c in row) + " |" for row in body]
        return "\n".join(lines) + f"\n\n{foot}"
    lines = []
    for row, r in zip(body, frame.itertuples(), strict=True):
        lines.append(f"{r.verdict.upper():8} {row[0]}")
        lines.append(f"         paper {row[1]}, ours {row[2]}, tolerance {row[3]}")
        lines.append(f"         source: {r.source}")
        lines.append(f"         tolerance: {r.tolerance_reason}")
        if r.detail:
            lines.append(f"         detail: {r.detail}")
        if r.cause:
            lines.append(f"         cause: {r.cause}")
    lines.append(foot)
    return "\n".join(lines)
