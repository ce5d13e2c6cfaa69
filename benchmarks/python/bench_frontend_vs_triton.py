#!/usr/bin/env python3
"""servelab's Open Inference Protocol front-end side by side with Triton, serving the same
TorchScript model (a small MLP) on the CPU, under the same closed-loop load.

- **servelab**: ``servelab frontend`` in a process of its own, one worker with the
  ``torchscript`` executor (``intra_op=1``) and dynamic batching (``batching(max_batch=64 / b,
  timeout_ms=0)``: whatever is queued, up to 64 items);
- **Triton**: the Triton server that the PyPI package ``nvidia-pytriton`` bundles, one model
  instance whose Python callable runs the same TorchScript file with torch (one intra-op thread),
  ``max_batch_size=64`` and Triton's dynamic batcher (no queue delay);
- **session**: ``servelab.Session.submit`` in this process on the same model and scheduler, the
  floor the front-end adds to.

The load: ``--concurrency`` clients (asyncio tasks on ``tritonclient.grpc.aio``; the session's
are tasks awaiting ``submit``'s future), each sending its next request of ``b`` items (``--batch``,
rows of 64 float32 features) as soon as the last is answered, for ``--seconds`` after a warm-up.
Printed: requests/s, p50 and p99 per system, the ratios servelab / Triton, and the front-end's
p99 minus the session's, with the load average. perf_analyzer is not used: the PyPI package of
that name is a placeholder (0.1.0, no binary); this load generator stands in for it.

Triton needs its own Python: ``nvidia-pytriton`` pins numpy<2 (it would downgrade the project's
environment), and its Python backend's stub links the system's ``libpython3.11``, so it must run
under that interpreter (under another 3.11 build the stub fails in ``multiprocessing``: "'_thread
.RLock' object has no attribute '_recursion_count'"). Make one and name it::

    /usr/bin/python3.11 -m venv triton-venv
    triton-venv/bin/pip install nvidia-pytriton torch      # torch: the CPU build
    python benchmarks/python/bench_frontend_vs_triton.py --triton-python triton-venv/bin/python

Without ``--triton-python`` (or ``$SERVELAB_TRITON_PYTHON``) only servelab's front-end and the
in-process session are measured. Never asserted. ``--smoke``: seconds.
"""

# This file also runs as Triton's server under the other interpreter (--serve-triton), where
# servelab is not installed: only the standard library and numpy at the top.
from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

FEATURES = 64
WIDTHS = (FEATURES, 256, 256, 16)
MAX_ITEMS = 64  # items per batch on both servers


# --- Triton (run under the Triton interpreter) ---------------------------------------------------
def serve_triton(model: str, http_port: int, grpc_port: int, metrics_port: int) -> int:
    import torch
    from pytriton.decorators import batch
    from pytriton.model_config import DynamicBatcher, ModelConfig, Tensor
    from pytriton.triton import Triton, TritonConfig

    # pytriton prints the server's log on stdout: the ready line goes to the real one alone.
    ready = os.fdopen(os.dup(sys.stdout.fileno()), "w")
    sys.stdout = sys.stderr
    torch.set_num_threads(1)
    module = torch.jit.load(model).eval()

    @batch
    def infer(INPUT0):  # noqa: N803 (the tensor's name)
        with torch.no_grad():
            return {"OUTPUT0": module(torch.from_numpy(INPUT0)).numpy()}

    config = TritonConfig(http_port=http_port, grpc_port=grpc_port, metrics_port=metrics_port)
    with Triton(config=config) as triton:
        triton.bind(
            model_name="mlp",
            infer_func=infer,
            # Rows of any width: the same server serves the tests' models.
            inputs=[Tensor(name="INPUT0", dtype=np.float32, shape=(-1,))],
            outputs=[Tensor(name="OUTPUT0", dtype=np.float32, shape=(-1,))],
            config=ModelConfig(max_batch_size=MAX_ITEMS, batcher=DynamicBatcher()),
        )
        triton.run()
        print(json.dumps({"grpc": f"127.0.0.1:{grpc_port}"}), file=ready, flush=True)
        sys.stdin.read()  # until the benchmark closes it
    return 0


# --- this side ---------------------------------------------------------------------------------
def save_model(folder: Path) -> Path:
    import torch

    torch.manual_seed(0)
    layers: list[torch.nn.Module] = []
    for i, (a, b) in enumerate(zip(WIDTHS[:-1], WIDTHS[1:], strict=True)):
        layers += [torch.nn.Linear(a, b)] + ([torch.nn.ReLU()] if i < len(WIDTHS) - 2 else [])
    path = folder / "mlp.pt"
    torch.jit.save(torch.jit.script(torch.nn.Sequential(*layers).eval()), str(path))
    return path


def scenario(model: Path, batch: int) -> dict:
    executor = f"torchscript(path={str(model)!r}, intra_op=1)"
    return {
        "profile": {
            "format": "servelab.profile",
            "version": 1,
            "hardware": {"cpu": {"price_per_hour": 0.0}},
            "models": {"mlp": {}},
            "latency": [
                {"hardware": "cpu", "model": "mlp", "batch": b, "samples_ms": [0.05 + 0.005 * b]}
                for b in (1, 8, 16, 32, MAX_ITEMS)
            ],
        },
        "workers": [
            {"hardware": "cpu", "count": 1, "executor": executor}
        ],
        "workload": {"arrivals": "poisson(rate=1)", "count": 1, "apps": [
            {"name": "mlp", "slo_ms": 10_000}
        ]},
        "scheduler": f"batching(max_batch={MAX_ITEMS // batch}, timeout_ms=0)",
        "seed": 0,
    }  # fmt: skip


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(command: list[str], log: Path) -> tuple[subprocess.Popen, str]:
    """A server process that prints its addresses as a JSON line once it serves; its stderr
    (Triton's log) goes to ``log``."""
    with open(log, "w") as err:
        proc = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, text=True
        )
    line = proc.stdout.readline()
    if not line:
        proc.wait(timeout=60)
        tail = "".join(log.read_text().splitlines(keepends=True)[-20:])
        raise RuntimeError(
            f"{' '.join(command[:4])} exited ({proc.returncode}) before serving:\n{tail}"
        )
    return proc, json.loads(line)["grpc"]


def stop_server(proc: subprocess.Popen, by_eof: bool) -> None:
    """Triton's side ends when its stdin does (closing Triton cleanly); the front-end on
    SIGTERM."""
    proc.stdin.close()
    if not by_eof:
        proc.terminate()
    try:
        proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


async def closed_loop(send, concurrency: int, seconds: float, warmup_s: float) -> np.ndarray:
    """Latencies (s) of the requests that started after the warm-up and ended in time."""
    start = time.perf_counter()
    begin, end = start + warmup_s, start + warmup_s + seconds
    latencies: list[float] = []

    async def client():
        while (t0 := time.perf_counter()) < end:
            await send()
            t1 = time.perf_counter()
            if t0 >= begin and t1 <= end:
                latencies.append(t1 - t0)

    await asyncio.gather(*(client() for _ in range(concurrency)))
    return np.asarray(latencies)


def grpc_load(address: str, x: np.ndarray, concurrency: int, seconds: float, warmup_s: float):
    import tritonclient.grpc as grpcclient
    from tritonclient.grpc.aio import InferenceServerClient

    tensor = grpcclient.InferInput("INPUT0", list(x.shape), "FP32")
    tensor.set_data_from_numpy(x)
    expected_rows = x.shape[0]

    async def run():
        client = InferenceServerClient(address)

        async def send():
            out = (await client.infer("mlp", [tensor])).as_numpy("OUTPUT0")
            assert out.shape == (expected_rows, WIDTHS[-1]), out.shape

        try:
            return await closed_loop(send, concurrency, seconds, warmup_s)
        finally:
            await client.close()

    return asyncio.run(run())


def session_load(session, x: np.ndarray, concurrency: int, seconds: float, warmup_s: float):
    async def send():
        outcome = await asyncio.wrap_future(session.submit("mlp", x))
        assert outcome.completed, outcome.reason

    return asyncio.run(closed_loop(send, concurrency, seconds, warmup_s))


def stats(latencies: np.ndarray, seconds: float) -> dict[str, float]:
    us = latencies * 1e6
    return {
        "rps": len(latencies) / seconds,
        "p50": float(np.percentile(us, 50)),
        "p99": float(np.percentile(us, 99)),
    }


def load() -> str:
    a, b, c = os.getloadavg()
    return f"load average {a:.2f} {b:.2f} {c:.2f} on {os.cpu_count()} cores"


def cell(s: dict[str, float] | None) -> str:
    return "- | -" if s is None else f"{s['rps']:,.0f} | {s['p50']:.0f} / {s['p99']:.0f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--triton-python", default=os.environ.get("SERVELAB_TRITON_PYTHON", ""))
    parser.add_argument("--batch", default="1,8", help="items per request (default 1,8)")
    parser.add_argument("--concurrency", default="1,4,16", help="clients (default 1,4,16)")
    parser.add_argument("--seconds", type=float, default=4.0, help="measured, per cell")
    parser.add_argument("--smoke", action="store_true", help="seconds, one cell")
    parser.add_argument("--serve-triton", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve_triton:
        model, *ports = args.serve_triton
        return serve_triton(model, *(int(p) for p in ports))
    try:
        import tritonclient.grpc.aio  # noqa: F401
    except ImportError as e:
        print(f"skipped: tritonclient is not installed ({e})")
        return 0
    import servelab  # here: this file also runs where servelab is not installed

    batches = [1] if args.smoke else [int(b) for b in args.batch.split(",")]
    levels = [2] if args.smoke else [int(c) for c in args.concurrency.split(",")]
    seconds, warmup = (0.5, 0.3) if args.smoke else (args.seconds, 1.0)
    print(f"front-end vs Triton: MLP {WIDTHS}, {seconds:g} s per cell after {warmup:g} s warm-up")
    print(load())
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        model = save_model(Path(tmp))
        triton = None
        if args.triton_python:
            ports = [str(free_port()) for _ in range(3)]
            command = [args.triton_python, __file__, "--serve-triton", str(model), *ports]
            triton = start_server(command, Path(tmp) / "triton.log")
        try:
            for b in batches:
                x = np.random.default_rng(b).standard_normal((b, FEATURES)).astype(np.float32)
                path = Path(tmp) / f"b{b}.json"
                path.write_text(json.dumps(scenario(model, b)))
                command = [sys.executable, "-m", "servelab", "frontend", str(path)]
                command += ["--json", "--no-http", "--grpc-port", "0"]
                front = start_server(command, Path(tmp) / "frontend.log")
                try:
                    with servelab.Session(scenario(model, b)) as session:
                        for c in levels:
                            s = stats(grpc_load(front[1], x, c, seconds, warmup), seconds)
                            t = None
                            if triton:
                                t = stats(grpc_load(triton[1], x, c, seconds, warmup), seconds)
                            inproc = stats(session_load(session, x, c, seconds, warmup), seconds)
                            rows.append((b, c, s, t, inproc))
                finally:
                    stop_server(front[0], by_eof=False)
        finally:
            if triton:
                stop_server(triton[0], by_eof=True)
    print(load() + " (after)")
    print()
    print(
        "| batch | clients | servelab req/s | p50 / p99 us | Triton req/s | p50 / p99 us "
        "| req/s servelab / Triton | p99 servelab / Triton | session req/s | p50 / p99 us "
        "| front-end p99 - session p99 |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for b, c, s, t, inproc in rows:
        ratios = (
            f"{s['rps'] / t['rps']:.2f} | {s['p99'] / t['p99']:.2f}" if t is not None else "- | -"
        )
        print(
            f"| {b} | {c} | {cell(s)} | {cell(t)} | {ratios} | {cell(inproc)} "
            f"| {s['p99'] - inproc['p99']:+.0f} us |"
        )
    if not args.triton_python:
        print("Triton not measured: give --triton-python (see this file's header)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
