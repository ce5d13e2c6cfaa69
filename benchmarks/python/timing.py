"""Timing shared by the Python benchmarks."""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


def best_of(fn: Callable[[], Any], repeats: int) -> tuple[float, Any]:
    """The shortest of ``repeats`` timed calls of ``fn`` (seconds) and the last call's result."""
    best, out = float("inf"), None
    for _ in range(repeats):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out


def median_us(fn: Callable[[], Any], repeats: int) -> float:
    """The median of ``repeats`` timed calls of ``fn``, in microseconds."""
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    times.sort()
    mid = len(times) // 2
    return (times[mid] if len(times) % 2 else (times[mid - 1] + times[mid]) / 2) * 1e6


@dataclass
class Sizes:
    """How large a simulator benchmark runs (benchmark_sizes)."""

    smoke: bool
    queries: int
    reference_queries: int  # for the plain-Python reference
    repeats: int


def benchmark_sizes(doc: str | None, argv: list[str] | None) -> Sizes:
    """``--smoke`` / ``--queries N`` of a simulator benchmark. Smoke: 20k queries, one repeat;
    else N (default 1M), a reference of at most 200k, three repeats."""
    parser = argparse.ArgumentParser(description=doc)
    parser.add_argument("--smoke", action="store_true", help="20k queries, one repeat")
    parser.add_argument("--queries", type=int, default=1_000_000)
    args = parser.parse_args(argv)
    queries = 20_000 if args.smoke else args.queries
    reference = min(queries, 20_000 if args.smoke else 200_000)
    return Sizes(args.smoke, queries, reference, 1 if args.smoke else 3)
