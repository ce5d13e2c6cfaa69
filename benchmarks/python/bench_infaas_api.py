#!/usr/bin/env python3
"""The cost of INFaaS's real-serving API per query: ``InfaasServer.online_query`` (a submit to
its session, the C++ policy and serving loop, the worker's Python executor, the record) against
calling the same loaded TorchScript executor's ``forward`` directly, and against the module in
torch, in the same process.

A DLRM-style dense MLP (256-512-256-64) is registered with batch-optimised sizes 1, 8 and 32 on
one thread; per input size the three calls are interleaved (A, B, C, A, B, C, ...) and the
medians printed with the ratios online_query / forward and online_query / torch. Outputs are
checked to agree first. Times are printed, never asserted.

    python benchmarks/python/bench_infaas_api.py            # full
    python benchmarks/python/bench_infaas_api.py --smoke    # a few seconds
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from servelab import MlpWeights, infaas, smoke
from servelab.executors import make_executor


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="few repeats")
    args = parser.parse_args()
    repeats = 20 if args.smoke else 400

    import torch  # the reference; servelab's torch backend needs it anyway

    torch.set_num_threads(1)  # as the registered variants (threads=1)
    module = smoke.scripted_torch_mlp(MlpWeights.random(list(smoke.DEFAULT_WIDTHS), 0))
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "mlp.pt"
        torch.jit.save(module, str(path))
        reg = infaas.ModelRegistry()
        reg.register_model(
            "mlp", path, app="rank", accuracy=0.8, batches=(1, 8, 32), threads=(1,), repeats=5
        )
        forward = make_executor(f"torchscript(path={str(path)!r})")
        width = smoke.DEFAULT_WIDTHS[0]
        print(f"online_query vs forward vs torch, {repeats} interleaved calls, medians (us)")
        print(f"{'rows':>5} {'variant':<28} {'query':>9} {'forward':>9} {'torch':>9} "
              f"{'q/fwd':>6} {'q/torch':>7}")  # fmt: skip
        with infaas.InfaasServer(reg) as server:
            for rows in (1, 8, 32):
                x = smoke.random_batch(rows, width, seed=rows)
                first = server.online_query(x, model="mlp")
                with torch.no_grad():
                    ref = module(torch.from_numpy(x)).numpy()
                np.testing.assert_allclose(first.outputs, ref, rtol=1e-4, atol=1e-4)
                np.testing.assert_allclose(forward.forward(x), ref, rtol=1e-4, atol=1e-4)
                times: dict[str, list[float]] = {"query": [], "forward": [], "torch": []}
                variant = ""
                for _ in range(repeats):
                    t = time.perf_counter()
                    variant = server.online_query(x, model="mlp").record["variant"]
                    times["query"].append(time.perf_counter() - t)
                    t = time.perf_counter()
                    forward.forward(x)
                    times["forward"].append(time.perf_counter() - t)
                    t = time.perf_counter()
                    with torch.no_grad():
                        module(torch.from_numpy(x))
                    times["torch"].append(time.perf_counter() - t)
                med = {k: statistics.median(v) * 1e6 for k, v in times.items()}
                print(
                    f"{rows:>5} {variant:<28} {med['query']:>9.1f} {med['forward']:>9.1f} "
                    f"{med['torch']:>9.1f} {med['query'] / med['forward']:>6.2f} "
                    f"{med['query'] / med['torch']:>7.2f}"
                )


if __name__ == "__main__":
    main()
