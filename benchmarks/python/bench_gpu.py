#!/usr/bin/env python3
"""GPU executors against the same work in torch on the same GPU, with the device's ceilings.

Every case takes host (numpy) inputs and returns host outputs, as a serving loop does, so the
reference is what a competent torch user writes for that: copy in, run the module under
inference_mode, copy out. Outputs are checked to agree before anything is timed; times are medians
of interleaved rounds; ratio = torch time / servelab time (above 1: servelab is faster).

  recsys       servelab's cuda recommendation backend (its embedding-bag kernel + cuBLAS) against
               servelab.recsys_torch's module (nn.EmbeddingBag + nn.Linear) with the same weights
  gather       the embedding-bag kernel alone (its device time from run_timed) on tables far
               bigger than the GPU's cache: bytes moved per second, as a share of the device copy
  cuda_mlp     servelab.CudaMlp against an nn.Sequential of the same layers
  torchscript  the torchscript executor on device='cuda' (pinned buffer, its own stream) against
               torch.jit.load(...).cuda() called from Python
  serving      throughput of servelab.serve with the torchscript executor on 1 and 4 workers

Ceilings printed first: device-to-device copy bandwidth (bytes read + written) and the round trip of
one tiny launch plus its copy back (what a batch of one cannot go below).

    python benchmarks/python/bench_gpu.py [--smoke] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from timing import median_us  # noqa: E402

import servelab  # noqa: E402
from servelab import backends, recsys  # noqa: E402
from servelab.results import COMPLETED  # noqa: E402

CASES = ("recsys", "gather", "cuda_mlp", "torchscript", "serving")


@dataclass(frozen=True)
class Row:
    case: str
    batch: int
    servelab_us: float
    torch_us: float

    @property
    def ratio(self) -> float:
        return self.torch_us / self.servelab_us


def interleaved(case: str, batch: int, ours, theirs, args) -> Row:
    ours(), theirs()  # warm-up: allocator, cuBLAS handles, kernel caches
    a, b = [], []
    for _ in range(args.rounds):
        a.append(median_us(ours, args.repeats))
        b.append(median_us(theirs, args.repeats))
    return Row(case, batch, statistics.median(a), statistics.median(b))


def ceilings(torch) -> dict:
    n = 256 * 2**20  # 1 GiB of float32
    src = torch.empty(n, device="cuda")
    dst = torch.empty_like(src)
    dst.copy_(src)
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(10):
        dst.copy_(src)
    end.record()
    end.synchronize()
    copy_gbps = 2 * 4 * n * 10 / (start.elapsed_time(end) / 1e3) / 1e9
    tiny = torch.zeros(1, device="cuda")
    round_trip_us = median_us(lambda: (tiny + 1).cpu(), 200)
    del src, dst
    torch.cuda.empty_cache()
    return {"copy_gbps": copy_gbps, "launch_and_copy_back_us": round_trip_us}


def recsys_rows(torch, args) -> list[Row]:
    rows = []
    for name in args.models:
        ours = recsys.build(name, backend="cuda", scale=args.scale, seed=0)
        module = ours.to_torch().cuda().eval()
        for batch in args.batches:
            dense, sparse = ours.inputs(np.arange(batch) + 1000 * batch, seed=1)

            def theirs(dense=dense, sparse=sparse, module=module):
                with torch.inference_mode():
                    d = torch.from_numpy(dense).cuda(non_blocking=True)
                    s = torch.from_numpy(sparse).cuda(non_blocking=True)
                    return module(d, s).cpu().numpy()

            np.testing.assert_allclose(
                ours.run(dense, sparse), theirs(), rtol=1e-3, atol=1e-5, err_msg=f"{name} {batch}"
            )
            rows.append(
                interleaved(
                    f"recsys {name}",
                    batch,
                    lambda d=dense, s=sparse, m=ours: m.run(d, s),
                    theirs,
                    args,
                )
            )
    return rows


def gather_rows(args, copy_gbps: float) -> list[dict]:
    """The embedding gather's achieved bandwidth: rows read (uniform indices, so nearly every one
    comes from HBM), indices read and sums written, over the kernel's device time."""
    out = []
    for name in ("rm1", "rm2"):
        model = recsys.build(name, backend="cuda", scale=args.gather_scale, seed=0)
        spec = model.spec
        table_bytes = 4 * spec.dim * sum(rows for _, rows in spec.tables)
        lookups = sum(f["lookups"] for f in map(dict, spec.features))
        pooled = sum(1 for f in map(dict, spec.features) if not f["sequence"])
        for batch in args.gather_batches:
            dense, sparse = model.inputs(np.arange(batch), seed=3)
            model.run_timed(dense, sparse)  # warm-up
            times = [model.run_timed(dense, sparse)[1]["gather_s"] for _ in range(args.repeats)]
            gather_s = statistics.median(times)
            moved = batch * (lookups * spec.dim * 4 + lookups * 8 + pooled * spec.dim * 4)
            gbps = moved / gather_s / 1e9
            out.append(
                {
                    "model": name,
                    "table_gb": table_bytes / 1e9,
                    "batch": batch,
                    "gather_us": gather_s * 1e6,
                    "gbps": gbps,
                    "share_of_copy": gbps / copy_gbps,
                }
            )
        del model
    return out


def cuda_mlp_rows(torch, args) -> list[Row]:
    widths = [512, 1024, 1024, 512, 1]
    weights = servelab.MlpWeights.random(widths, 1)
    ours = servelab.CudaMlp(weights)
    layers = []
    for w, b in weights.layers:  # nn.Linear's layout: weight [out, in]
        linear = torch.nn.Linear(w.shape[1], w.shape[0])
        with torch.no_grad():
            linear.weight.copy_(torch.from_numpy(np.ascontiguousarray(w)))
            linear.bias.copy_(torch.from_numpy(np.ascontiguousarray(b)))
        layers += [linear, torch.nn.ReLU()]
    module = torch.nn.Sequential(*layers[:-1]).cuda().eval()
    rows = []
    for batch in args.batches:
        x = np.random.default_rng(batch).standard_normal((batch, widths[0]), dtype=np.float32)

        def theirs(x=x):
            with torch.inference_mode():
                return module(torch.from_numpy(x).cuda(non_blocking=True)).cpu().numpy()

        np.testing.assert_allclose(ours(x), theirs(), rtol=1e-3, atol=1e-3)
        rows.append(interleaved("cuda_mlp", batch, lambda x=x: ours(x), theirs, args))
    return rows


def torchscript_rows(torch, args, folder: Path) -> list[Row]:
    widths = (256, 1024, 1024, 64)
    body = []
    for a, b in zip(widths[:-1], widths[1:], strict=True):
        body += [torch.nn.Linear(a, b), torch.nn.ReLU()]
    torch.manual_seed(0)
    path = folder / "mlp.pt"
    torch.jit.save(torch.jit.script(torch.nn.Sequential(*body[:-1]).eval()), str(path))
    executor = servelab.make_executor(f"torchscript(path={str(path)!r}, device='cuda')")
    module = torch.jit.load(str(path)).cuda()
    rows = []
    for batch in args.batches:
        x = executor.inputs([batch], seed=batch)

        def theirs(x=x):
            with torch.inference_mode():
                return module(torch.from_numpy(x).cuda(non_blocking=True)).cpu().numpy()

        np.testing.assert_allclose(executor.forward(x), theirs(), rtol=1e-4, atol=1e-4)
        rows.append(
            interleaved("torchscript", batch, lambda x=x: executor.forward(x), theirs, args)
        )
    return rows


def serving_rows(args, folder: Path) -> list[dict]:
    path = folder / "mlp.pt"
    spec = f"torchscript(path={str(path)!r}, device='cuda')"
    profile = servelab.profiles.from_dict(
        {
            "format": "servelab.profile",
            "version": 1,
            "hardware": {"gpu": {"price_per_hour": 1.0}},
            "models": {"m": {}},
            "latency": [
                {"hardware": "gpu", "model": "m", "batch": b, "samples_ms": [0.2 + b / 100]}
                for b in (1, 32)
            ],
        }
    )
    out = []
    for workers in (1, 4):
        scenario = {
            "profile": profile,
            "workers": [{"hardware": "gpu", "count": workers, "executor": spec}],
            "workload": {
                "arrivals": "poisson(rate=200000)",  # far over capacity: measures throughput
                "count": args.serve_queries,
                "apps": [{"name": "m", "slo_ms": 60000, "sizes": "constant(value=32)"}],
            },
            "drain_s": 120,
        }
        t = time.perf_counter()
        r = servelab.serve(scenario, scheduler="fcfs", seed=0)
        wall = time.perf_counter() - t
        c = r.columns
        done = int((c["status"] == COMPLETED).sum())
        span_s = (c["finish_ns"].max() - c["arrival_ns"].min()) / 1e9
        out.append(
            {
                "workers": workers,
                "completed": done,
                "queries_per_s": done / span_s,
                "median_exec_us": float(np.median(c["exec_ns"]) / 1e3),
                "wall_s": wall,
            }
        )
    return out


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--smoke", action="store_true", help="a few seconds")
    parser.add_argument("--json", metavar="PATH", help="also write the rows as JSON")
    parser.add_argument(
        "--cases", nargs="+", choices=CASES, default=list(CASES), help="which cases (default: all)"
    )
    args = parser.parse_args()
    status = backends.status("cuda")
    if not status.usable:
        print(f"skipped: the cuda backend is not usable: {status.reason}")
        return 0
    try:
        import torch  # noqa: PLC0415
    except ImportError as e:
        print(f"skipped: torch is not installed ({e})")
        return 0
    if not torch.cuda.is_available():
        print("skipped: this torch sees no CUDA GPU")
        return 0
    args.models = ["rm1", "rm2"] if args.smoke else ["rm1", "rm2", "rm3", "wnd", "ncf", "din"]
    args.batches = (1, 64) if args.smoke else (1, 16, 64, 256, 1024)
    args.scale = 0.001 if args.smoke else 0.05
    args.repeats, args.rounds = (5, 1) if args.smoke else (30, 3)
    args.serve_queries = 200 if args.smoke else 20000
    args.gather_scale = 0.001 if args.smoke else 0.25
    args.gather_batches = (64,) if args.smoke else (256, 1024, 4096)

    print(f"device: {torch.cuda.get_device_name(0)}; torch {torch.__version__}")
    peaks = ceilings(torch)
    print(
        f"ceilings: device copy {peaks['copy_gbps']:.0f} GB/s (read + write); "
        f"tiny launch + copy back {peaks['launch_and_copy_back_us']:.1f} us"
    )
    rows: list[Row] = []
    serving: list[dict] = []
    gathers: list[dict] = []
    if "recsys" in args.cases:
        rows += recsys_rows(torch, args)
    if "gather" in args.cases:
        gathers = gather_rows(args, peaks["copy_gbps"])
    if "cuda_mlp" in args.cases:
        rows += cuda_mlp_rows(torch, args)
    with tempfile.TemporaryDirectory() as tmp:
        if "torchscript" in args.cases or "serving" in args.cases:
            rows += torchscript_rows(torch, args, Path(tmp))  # also saves the served model
        if "serving" in args.cases:
            serving = serving_rows(args, Path(tmp))
    print(f"{'case':<14} {'batch':>5} {'servelab us':>12} {'torch us':>10} {'ratio':>6}")
    for r in rows:
        print(
            f"{r.case:<14} {r.batch:>5} {r.servelab_us:>12.1f} {r.torch_us:>10.1f} {r.ratio:>6.2f}"
        )
    ratios = [r.ratio for r in rows] or [float("nan")]
    print(
        f"ratio torch / servelab: min {min(ratios):.2f}, median {statistics.median(ratios):.2f}, "
        f"max {max(ratios):.2f}"
    )
    for g in gathers:
        print(
            f"gather {g['model']} (tables {g['table_gb']:.2f} GB), batch {g['batch']}: "
            f"{g['gather_us']:.1f} us, {g['gbps']:.0f} GB/s, "
            f"{100 * g['share_of_copy']:.0f}% of the device copy"
        )
    for s in serving:
        print(
            f"serving torchscript cuda, {s['workers']} worker(s): {s['queries_per_s']:.0f} q/s "
            f"(batches of 32), median exec {s['median_exec_us']:.0f} us, "
            f"{s['completed']} completed in {s['wall_s']:.1f} s"
        )
    if len(serving) == 2 and serving[0]["queries_per_s"] > 0:
        speedup = serving[1]["queries_per_s"] / serving[0]["queries_per_s"]
        print(f"4 workers / 1 worker: {speedup:.2f}x")
    if args.json:
        payload = {"ceilings": peaks, "serving": serving, "gather": gathers}
        payload["rows"] = [{**asdict(r), "ratio": r.ratio} for r in rows]
        Path(args.json).write_text(json.dumps(payload, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
