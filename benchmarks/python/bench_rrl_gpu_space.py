#!/usr/bin/env python3
"""RRL's GPU space on a real CPU executor: RrlBatchTuner serves a TorchScript MLP in
servelab.serve, choosing batch size, batch timeout and batch threads per episode from measured
latencies (max_batch_items and intra_op_threads set with set_config); then the learned
configuration and the default (fcfs on every worker: one request per batch, the executor's own
threads) serve the same arrivals alternately, round by round. Prints both medians and their ratio
(never asserted). Needs torch.

    python benchmarks/python/bench_rrl_gpu_space.py            # about 20 s on 2 cores
    python benchmarks/python/bench_rrl_gpu_space.py --smoke    # a few seconds
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

from servelab import backends, rrl


def save_mlp(folder: Path, widths: list[int]) -> Path:
    import torch

    torch.manual_seed(0)
    layers: list[torch.nn.Module] = []
    for a, b in zip(widths[:-1], widths[1:], strict=True):
        layers += [torch.nn.Linear(a, b), torch.nn.ReLU()]
    path = folder / "mlp.pt"
    torch.jit.save(torch.jit.script(torch.nn.Sequential(*layers[:-1]).eval()), str(path))
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true")
    parser.add_argument("--widths", default="256,2048,2048,16", help="the MLP's layer widths")
    parser.add_argument("--rate", type=float, default=1000.0, help="requests/s, one item each")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    status = backends.status("torch")
    if not status.usable:
        print(f"skipped: the torch backend is not usable ({status.reason})")
        return
    size = (
        {"episodes": 4, "episode_requests": 5, "rounds": 1, "round_requests": 20}
        if args.smoke
        else {"episodes": 40, "episode_requests": 20, "rounds": 8, "round_requests": 400}
    )
    with tempfile.TemporaryDirectory() as folder:
        path = save_mlp(Path(folder), [int(w) for w in args.widths.split(",")])
        executor = f"torchscript(path={str(path)!r})"
        run = rrl.tune_serving(executor, space="gpu", rate=args.rate, seed=args.seed, **size)
    before, after = run.load_average
    print(f"MLP {args.widths}: {args.rate:g} requests/s of 1 item on {os.cpu_count()} cores, "
          f"load average {before:.1f} -> {after:.1f}")  # fmt: skip
    for note in run.notes:
        print(f"note: {note}")
    print("episodes (batch_size, batch_timeout_ms, batch_threads): metric ms, mean batch items")
    for h in run.history:
        print(f"  {tuple(h['values'])}: {h['metric_ms']:.1f}, {h['mean_batch_items']:.1f}")
    tuned, default = ([round(x, 1) for x in ms] for ms in (run.tuned_ms, run.default_ms))
    print(f"learned {tuple(run.learned)}; mean latency per round, tuned {tuned}, default {default}")
    print(f"median tuned {run.tuned_median_ms:.2f} ms, default {run.default_median_ms:.2f} ms: "
          f"ratio default / tuned {run.speedup:.2f}")  # fmt: skip


if __name__ == "__main__":
    main()
