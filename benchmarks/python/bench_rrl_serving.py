#!/usr/bin/env python3
"""RRL's real run: the tuner serves a real CPU executor in servelab.serve, choosing request
parallelism, inter-op and intra-op threads per episode from measured latencies; then the learned
configuration and the default (fcfs on every worker, the executor's own threads) serve the same
arrivals alternately, round by round. Prints both medians and their ratio (never asserted).

    python benchmarks/python/bench_rrl_serving.py            # about a minute on 2 cores
    python benchmarks/python/bench_rrl_serving.py --smoke    # a few seconds
"""

from __future__ import annotations

import argparse
import os

from servelab import backends, rrl


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true")
    parser.add_argument("--executor", default="recsys(model=rm2, backend=onednn)")
    parser.add_argument("--rate", type=float, default=30.0, help="requests/s")
    parser.add_argument("--batch", type=int, default=32, help="items per request")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    status = backends.status("onednn")
    if "onednn" in args.executor and not status.usable:
        print(f"skipped: the oneDNN backend is not usable ({status.reason})")
        return
    size = (
        {"episodes": 4, "episode_requests": 5, "rounds": 1, "round_requests": 10}
        if args.smoke
        else {"episodes": 40, "episode_requests": 20, "rounds": 6, "round_requests": 100}
    )
    run = rrl.tune_serving(args.executor, rate=args.rate, batch=args.batch, seed=args.seed, **size)
    before, after = run.load_average
    print(f"{run.executor}: {args.rate:g} requests/s of {args.batch} items on {os.cpu_count()} "
          f"cores, load average {before:.1f} -> {after:.1f}")  # fmt: skip
    print("episodes (workers, inter, intra): metric ms")
    for h in run.history:
        print(f"  {tuple(h['values'])}: {h['metric_ms']:.1f}")
    tuned, default = ([round(x, 1) for x in ms] for ms in (run.tuned_ms, run.default_ms))
    print(f"learned {tuple(run.learned)}; mean latency per round, tuned {tuned}, default {default}")
    print(f"median tuned {run.tuned_median_ms:.2f} ms, default {run.default_median_ms:.2f} ms: "
          f"ratio default / tuned {run.speedup:.2f}")  # fmt: skip


if __name__ == "__main__":
    main()
