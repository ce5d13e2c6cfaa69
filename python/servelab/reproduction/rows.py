"""The rows of servelab.reproduce's tables: the two-sided tolerance, the verdict computed from
the values, one row's fields, and where the artifacts' data is found."""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

#: Where the artifacts' data is looked for when ``data`` is not given.
DATA_ENV = "SERVELAB_DATA"
CHECKOUT_DATA = Path(__file__).resolve().parents[4] / "shared" / "data"

COLUMNS = (
    "paper_name", "claim", "source", "paper", "ours", "low", "high", "tolerance",
    "tolerance_reason", "verdict", "cause", "detail",
)  # fmt: skip


def tolerance(
    paper: float,
    *,
    rel: float | None = None,
    abs_: float | None = None,
    interval: tuple[float, float] | None = None,
) -> tuple[float, float, str]:
    """The interval (low, high) and its words: ``rel`` (a share of the paper's value on either
    side), ``abs_`` (that much on either side) or an explicit ``interval``."""
    given = [x is not None for x in (rel, abs_, interval)]
    if sum(given) != 1:
        raise ValueError("give exactly one of rel=, abs_= or interval=")
    if rel is not None:
        low, high = sorted((paper * (1 - rel), paper * (1 + rel)))  # a negative value too
        return low, high, f"±{rel:.0%}"
    if abs_ is not None:
        return paper - abs_, paper + abs_, f"±{abs_:g}"
    assert interval is not None
    low, high = interval
    return float(low), float(high), f"[{low:g}, {high:g}]"


def verdict(ours: float, low: float, high: float) -> str:
    """ "within" when low <= ours <= high (a NaN is never within), else "outside"."""
    ok = ours is not None and not math.isnan(float(ours)) and low <= float(ours) <= high
    return "within" if ok else "outside"


def row(
    claim: str,
    source: str,
    paper: float,
    ours: float,
    tol: tuple[float, float, str],
    reason: str,
    *,
    cause: str | Callable[[], str] = "",
    detail: str = "",
) -> dict[str, Any]:
    """One row; ``cause`` (text, or a function computing it) is kept only for a row outside."""
    low, high, words = tol
    v = verdict(ours, low, high)
    if v == "outside":
        cause = cause() if callable(cause) else cause
        if not cause:
            cause = "not yet explained"
    else:
        cause = ""
    return {
        "claim": claim, "source": source, "paper": float(paper), "ours": float(ours),
        "low": low, "high": high, "tolerance": words, "tolerance_reason": reason,
        "verdict": v, "cause": cause, "detail": detail,
    }  # fmt: skip


def data_root(data: str | os.PathLike[str] | None = None) -> Path:
    """The folder holding the artifacts' data (kairos/, ramsis/, ...)."""
    if data is None:
        data = os.environ.get(DATA_ENV) or CHECKOUT_DATA
    return Path(data)


def needs(root: Path, name: str) -> Path:
    folder = root / name
    if not folder.is_dir():
        raise FileNotFoundError(
            f"{folder}: the {name} artifact's data is absent (give data= or set ${DATA_ENV})"
        )
    return folder
