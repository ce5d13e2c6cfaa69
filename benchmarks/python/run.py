#!/usr/bin/env python3
"""Python-side benchmarks: servelab's executors against reference code run in the same process.

Each case checks first that servelab and the reference agree (np.allclose, atol 1e-4), then times
both with the best of N repeats after a warm-up, and prints the ratio reference / servelab (above 1
means servelab is faster). Times are printed, never asserted.

    python benchmarks/python/run.py            # full run (`make bench`)
    python benchmarks/python/run.py --smoke    # a few seconds (the test suite)
    python benchmarks/python/run.py --json out.json
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

import servelab
from servelab import backends, smoke

WIDTHS = smoke.DEFAULT_WIDTHS  # the dense MLP of a DLRM-style model
ATOL = 1e-4


@dataclass(frozen=True)
class Settings:
    batches: tuple[int, ...]
    repeats: int
    min_repeat_s: float  # each repeat loops the call until it has run at least this long


FULL = Settings(batches=(1, 16, 64, 256), repeats=7, min_repeat_s=0.05)
SMOKE = Settings(batches=(1, 4), repeats=2, min_repeat_s=0.0)


@dataclass(frozen=True)
class Row:
    case: str
    batch: int
    servelab_us: float
    reference_us: float

    @property
    def ratio(self) -> float:
        return self.reference_us / self.servelab_us


class Mismatch(Exception):
    """servelab and the reference disagree, so timing them would be meaningless."""


Batch = Callable[[np.ndarray], np.ndarray]


def calls_per_repeat(fn: Callable[[], Any], min_repeat_s: float) -> int:
    """How many calls make one repeat last at least min_repeat_s (doubling, like timeit)."""
    number = 1
    while True:
        start = time.perf_counter()
        for _ in range(number):
            fn()
        if time.perf_counter() - start >= min_repeat_s or number >= 1 << 20:
            return number
        number *= 2


def best_time_us(fn: Callable[[], Any], settings: Settings) -> float:
    """Best of settings.repeats repeats, in microseconds per call (calibrating warms up)."""
    number = calls_per_repeat(fn, settings.min_repeat_s)
    best = float("inf")
    for _ in range(settings.repeats):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        best = min(best, (time.perf_counter() - start) / number)
    return best * 1e6


def inputs(batch: int, seed: int = 0) -> np.ndarray:
    return smoke.random_batch(batch, WIDTHS[0], seed)


def compare(case: str, batch: int, ours: Batch, reference: Batch, settings: Settings) -> Row:
    """Checks that both give the same output on one batch, then times each on it."""
    x = inputs(batch)
    got, expected = np.asarray(ours(x)), np.asarray(reference(x))
    if got.shape != expected.shape:
        raise Mismatch(f"{case}, batch {batch}: shape {got.shape}, the reference {expected.shape}")
    if not np.allclose(got, expected, atol=ATOL):
        error = np.max(np.abs(got - expected))
        raise Mismatch(f"{case}, batch {batch}: max |diff| {error:.2e} exceeds atol {ATOL}")
    return Row(
        case,
        batch,
        best_time_us(lambda: ours(x), settings),
        best_time_us(lambda: reference(x), settings),
    )


def numpy_mlp(weights: servelab.MlpWeights) -> Batch:
    """The same MLP in numpy: x @ W.T + b per layer, ReLU between layers."""
    layers = weights.layers

    def run(x: np.ndarray) -> np.ndarray:
        for i, (w, b) in enumerate(layers):
            x = x @ w.T + b
            if i + 1 < len(layers):
                x = np.maximum(x, 0)
        return x

    return run


def onednn_rows(settings: Settings) -> list[Row]:
    weights = servelab.MlpWeights.random(list(WIDTHS), 1)
    onednn, reference = servelab.OneDnnMlp(weights), servelab.ReferenceMlp(weights)
    in_numpy = numpy_mlp(weights)
    rows = []
    for batch in settings.batches:
        rows.append(compare("OneDnnMlp vs numpy", batch, onednn, in_numpy, settings))
        rows.append(compare("OneDnnMlp vs ReferenceMlp", batch, onednn, reference, settings))
    return rows


def torch_rows(settings: Settings) -> list[Row]:
    import torch

    module = smoke.scripted_torch_mlp(servelab.MlpWeights.random(list(WIDTHS), 1))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "mlp.pt"
        torch.jit.save(module, str(path))
        model = servelab.TorchScriptModel(str(path), "cpu")

    def in_python(x: np.ndarray) -> np.ndarray:
        with torch.inference_mode():
            return module(torch.from_numpy(x)).numpy()

    case = "TorchScriptModel vs torch in Python"
    return [compare(case, batch, model, in_python, settings) for batch in settings.batches]


def cuda_rows(settings: Settings) -> list[Row]:
    weights = servelab.MlpWeights.random(list(WIDTHS), 1)
    model, in_numpy = servelab.CudaMlp(weights), numpy_mlp(weights)
    return [
        compare("CudaMlp vs numpy", batch, model, in_numpy, settings) for batch in settings.batches
    ]


CASES: dict[str, Callable[[Settings], list[Row]]] = {
    "onednn": onednn_rows,
    "torch": torch_rows,
    "cuda": cuda_rows,
}


def print_table(rows: Sequence[Row], skipped: dict[str, str]) -> None:
    width = max([len("case"), *(len(r.case) for r in rows)])
    line = f"{{:<{width}}}  {{:>5}}  {{:>13}}  {{:>14}}  {{:>7}}"
    print(line.format("case", "batch", "servelab (us)", "reference (us)", "ratio"))
    for r in rows:
        times = f"{r.servelab_us:.1f}", f"{r.reference_us:.1f}", f"{r.ratio:.2f}"
        print(line.format(r.case, r.batch, *times))
    print("ratio = reference time / servelab time (above 1: servelab is faster)")
    for name, reason in skipped.items():
        print(f"{name}: skipped ({reason})")


def write_json(path: str, settings: Settings, rows: Sequence[Row], skipped: dict[str, str]) -> None:
    doc = {
        "widths": list(WIDTHS),
        "settings": asdict(settings),
        "build_info": servelab.build_info(),
        "results": [{**asdict(r), "ratio": r.ratio} for r in rows],
        "skipped": skipped,
    }
    Path(path).write_text(json.dumps(doc, indent=2) + "\n")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--smoke", action="store_true", help="tiny sizes and 2 repeats (seconds)")
    parser.add_argument("--json", metavar="PATH", help="also write the results to PATH as JSON")
    args = parser.parse_args(argv)
    settings = SMOKE if args.smoke else FULL

    print(
        f"MLP {list(WIDTHS)}, best of {settings.repeats} repeats, batches {list(settings.batches)}"
    )
    rows: list[Row] = []
    skipped: dict[str, str] = {}
    for name, run_case in CASES.items():
        status = backends.status(name)
        if not status.usable:
            skipped[name] = status.reason
            continue
        try:
            rows.extend(run_case(settings))
        except Mismatch as e:
            print(f"error: outputs differ, not timed: {e}", file=sys.stderr)
            return 1

    print_table(rows, skipped)
    if args.json:
        write_json(args.json, settings, rows, skipped)
    return 0


if __name__ == "__main__":
    sys.exit(main())
