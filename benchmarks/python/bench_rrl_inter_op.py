#!/usr/bin/env python3
"""The recsys executor's inter-op knob: batches of each model timed at every (inter_op_threads,
intra_op_threads) setting, interleaved round by round in one process so that load from other
work hits every setting alike; medians, and each setting's ratio to one thread of each kind.
Printed, never asserted.

    python benchmarks/python/bench_rrl_inter_op.py                 # rm1, rm2, wnd
    python benchmarks/python/bench_rrl_inter_op.py --smoke         # a few seconds
"""

from __future__ import annotations

import argparse
import itertools
import os

import numpy as np

import servelab
from servelab import backends


def measure(model: str, batch: int, rounds: int, threads: list[int]) -> None:
    session = servelab.make_executor(f"recsys(model={model}, backend=onednn)").open(seed=0)
    settings = list(itertools.product(threads, threads))  # (inter, intra)
    times: dict[tuple[int, int], list[float]] = {s: [] for s in settings}
    for _ in range(rounds):
        for inter, intra in settings:
            config = {"inter_op_threads": inter, "intra_op_threads": intra}
            timed = session.time_batches([1] * batch, repeats=3, warmup=1, config=config)
            times[(inter, intra)].append(float(np.median(timed["exec_ns"])) / 1e6)
    base = float(np.median(times[(1, 1)]))
    print(f"\n{model}, batches of {batch}, {rounds} rounds; load average "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")  # fmt: skip
    print("inter  intra  median ms  vs (1, 1)")
    for (inter, intra), ms in times.items():
        med = float(np.median(ms))
        print(f"{inter:5d}  {intra:5d}  {med:9.3f}  {base / med:6.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true")
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=30)
    args = parser.parse_args()
    status = backends.status("onednn")
    if not status.usable:
        print(f"skipped: the oneDNN backend is not usable ({status.reason})")
        return
    models = ["rm2"] if args.smoke else ["rm1", "rm2", "wnd"]
    for model in models:
        measure(model, args.batch, 3 if args.smoke else args.rounds, [1, 2])


if __name__ == "__main__":
    main()
