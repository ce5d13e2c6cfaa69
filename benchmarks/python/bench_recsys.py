#!/usr/bin/env python3
"""Recommendation models: servelab's oneDNN backend against the same model in torch eager (CPU).

For each model and batch size, both sides score the same inputs with the same weights (the torch
model is rebuilt from servelab's exported weights by servelab.recsys_torch); their outputs are
checked to agree first. Then both are timed, interleaved, median of N calls, and the ratio
torch / servelab is printed (above 1: servelab is faster).

It also measures the machine's ceilings with servelab's own small kernels (a register-blocked
FMA loop for peak FLOP/s, a STREAM-like triad for streaming memory bandwidth, and rows read at
random positions of a buffer far bigger than the caches, the ceiling of a gather whose rows come
from memory) and prints what share of them the MLPs (GFLOP/s over the time spent in them) and the
embedding gathers (bytes of the rows read over the time spent gathering) reach, for servelab's
gather and for torch's embedding bags alone (the same rows), so that a ceiling one side sits at
shows for the other too. The machine and its load average (at the start and the end) are printed
with the table.

    python benchmarks/python/bench_recsys.py                 # full (`make bench`)
    python benchmarks/python/bench_recsys.py --smoke         # a few seconds (the test suite)
    python benchmarks/python/bench_recsys.py --threads 2 --json out.json
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from timing import median_us  # noqa: E402

from servelab import _core, backends, recsys  # noqa: E402

BATCHES = (1, 16, 64, 256)


@dataclass(frozen=True)
class Row:
    model: str
    batch: int
    servelab_us: float
    torch_us: float
    mlp_gflops: float
    mlp_peak_share: float
    gather_gbps: float
    gather_bandwidth_share: float
    gather_random_share: float  # of the random-row ceiling at the model's row size
    torch_gather_gbps: float  # torch's embedding bags alone (RecsysTorch.embeddings), same bytes
    torch_gather_random_share: float

    @property
    def ratio(self) -> float:
        return self.torch_us / self.servelab_us


def bench_model(
    name: str,
    args: argparse.Namespace,
    peak_gflops: float,
    triad_gbps: float,
    random_rows_gbps: Callable[[int], float],
) -> list[Row]:
    import torch  # noqa: PLC0415  (the benchmark's only torch use; keeps --help fast)

    model = recsys.build(name, backend="onednn", scale=args.scale, seed=0)
    module = model.to_torch()
    spec = model.spec
    rows = []
    for batch in args.batches:
        dense, sparse = model.inputs(np.arange(batch) + 1000 * batch, seed=1)
        td, ts = torch.from_numpy(dense), torch.from_numpy(sparse)
        ours = model.run(dense, sparse, args.threads)
        with torch.inference_mode():
            theirs = module(td, ts).numpy()
        np.testing.assert_allclose(
            ours, theirs, rtol=1e-4, atol=1e-6, err_msg=f"{name} batch {batch}"
        )

        def run_torch(td=td, ts=ts):
            with torch.inference_mode():
                module(td, ts)

        servelab_times, torch_times = [], []
        for _ in range(args.rounds):  # interleaved, so drifting load hits both sides alike
            servelab_times.append(
                median_us(lambda d=dense, s=sparse: model.run(d, s, args.threads), args.repeats)
            )
            torch_times.append(median_us(run_torch, args.repeats))
        # Per-stage times, medians of `repeats` calls; torch's gather is its embedding bags
        # alone, the same rows read.
        gather_s, mlp_s, torch_gather_s = [], [], []
        for _ in range(args.repeats):
            _, t = model.run_timed(dense, sparse, args.threads)
            gather_s.append(t["gather_s"])
            mlp_s.append(t["mlp_s"])
            with torch.inference_mode():
                start = time.perf_counter()
                module.embeddings(ts)
                torch_gather_s.append(time.perf_counter() - start)
        mlp_gflops = model.mlp_flops(batch) / statistics.median(mlp_s) / 1e9
        gathered = batch * spec.lookups_per_sample * spec.dim * 4
        gather_gbps = gathered / statistics.median(gather_s) / 1e9
        torch_gather_gbps = gathered / statistics.median(torch_gather_s) / 1e9
        rows.append(
            Row(
                name,
                batch,
                statistics.median(servelab_times),
                statistics.median(torch_times),
                mlp_gflops,
                mlp_gflops / (peak_gflops * args.threads),
                gather_gbps,
                gather_gbps / triad_gbps,
                gather_gbps / random_rows_gbps(spec.dim * 4),
                torch_gather_gbps,
                torch_gather_gbps / random_rows_gbps(spec.dim * 4),
            )
        )
    return rows


def cpu_model() -> str:
    """The CPU's model name (Linux), else what the platform module knows."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--smoke", action="store_true", help="tiny tables and batches, a few seconds"
    )
    parser.add_argument("--threads", type=int, default=1, help="threads for both sides (default 1)")
    parser.add_argument("--models", nargs="+", default=None, help="models (default: all)")
    parser.add_argument("--json", metavar="PATH", help="also write the rows as JSON")
    args = parser.parse_args()
    if args.threads < 1:
        parser.error(f"--threads={args.threads} must be at least 1")
    status = backends.status("onednn")
    if not status.usable:
        print(f"skipped: the onednn backend is not usable: {status.reason}")
        return 0
    try:
        import torch  # noqa: PLC0415
    except ImportError as e:
        print(f"skipped: torch is not installed ({e})")
        return 0
    torch.set_num_threads(args.threads)
    args.models = args.models or (["rm1", "din"] if args.smoke else recsys.list_models())
    args.batches = (1, 4) if args.smoke else BATCHES
    # Full size: tables of 1.4k-500k rows, most of them far beyond the caches.
    args.scale = 1e-4 if args.smoke else 0.05
    args.repeats = 3 if args.smoke else 15
    args.rounds = 1 if args.smoke else 3

    machine = cpu_model()
    load_start = os.getloadavg()
    print(
        f"machine: {machine}, {os.cpu_count()} logical CPUs; load average "
        f"{load_start[0]:.2f} {load_start[1]:.2f} {load_start[2]:.2f} (1, 5, 15 min)"
    )
    # Best of several measurements: on a shared machine a single one can catch a busy core.
    peak = max(_core.recsys.measure_peak_gflops(0.02 if args.smoke else 0.3) for _ in range(3))
    triad = _core.recsys.measure_triad_gbps(
        16.0 if args.smoke else 256.0, args.threads, 2 if args.smoke else 5
    )
    print(
        f"machine: peak {peak:.1f} GFLOP/s per thread (FMA loop), "
        f"triad {triad:.1f} GB/s on {args.threads} thread(s)"
    )

    @functools.cache
    def random_rows(row_bytes: int) -> float:
        """Rows of row_bytes (rounded up to whole cache lines) read at random positions."""
        gbps = _core.recsys.measure_random_rows_gbps(
            16.0 if args.smoke else 256.0,
            -(-row_bytes // 64) * 64,
            args.threads,
            2 if args.smoke else 3,
        )
        print(f"machine: random {row_bytes}-byte rows {gbps:.2f} GB/s on {args.threads} thread(s)")
        return gbps

    print(
        f"threads: {args.threads} (servelab and torch {torch.__version__}); "
        f"tables at scale {args.scale}"
    )
    header = (
        f"{'model':<6} {'batch':>5} {'servelab us':>12} {'torch us':>10} {'ratio':>6} "
        f"{'MLP GFLOP/s':>11} {'of peak':>8} {'gather GB/s':>11} {'of triad':>8} "
        f"{'of random':>9} {'torch gather':>12} {'of random':>9}"
    )
    print(header)
    rows = []
    for name in args.models:
        for row in bench_model(name, args, peak, triad, random_rows):
            rows.append(row)
            print(
                f"{row.model:<6} {row.batch:>5} {row.servelab_us:>12.1f} {row.torch_us:>10.1f} "
                f"{row.ratio:>6.2f} "
                f"{row.mlp_gflops:>11.1f} {row.mlp_peak_share:>8.1%} {row.gather_gbps:>11.2f} "
                f"{row.gather_bandwidth_share:>8.1%} {row.gather_random_share:>9.1%} "
                f"{row.torch_gather_gbps:>12.2f} {row.torch_gather_random_share:>9.1%}"
            )
    load_end = os.getloadavg()
    print(f"load average at the end: {load_end[0]:.2f} {load_end[1]:.2f} {load_end[2]:.2f}")
    ratios = [r.ratio for r in rows]
    print(
        f"ratio torch / servelab: min {min(ratios):.2f}, "
        f"median {statistics.median(ratios):.2f}, max {max(ratios):.2f}"
    )
    if args.json:
        with open(args.json, "w") as f:
            payload = {"peak_gflops_per_thread": peak, "triad_gbps": triad, "threads": args.threads}
            payload["machine"] = machine
            payload["load_average"] = {"start": load_start, "end": load_end}
            payload["random_rows_gbps"] = {str(b): random_rows(b) for b in (64, 128, 256)}
            payload["rows"] = [{**asdict(r), "ratio": r.ratio} for r in rows]
            json.dump(payload, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
