#!/usr/bin/env python3
"""The time a batch spends travelling: servelab's remote-worker protocol (SLRW) against the Open
Inference Protocol over gRPC, for a batch of 1 and of 64 items of 64 float32 features.

- **remote (tcp / unix)**: a serving run whose one worker group is ``remote(...)``, pointed at a
  ``servelab worker`` process hosting ``constant(latency_ms=0)`` (it does nothing), each batch
  carrying 256 bytes per item (``input_bytes_per_item``, the size of 64 float32 features) at a
  light load (each batch alone on the wire). Transport: the records' ``transport_ns``, the
  controller's round trip minus the worker's own time for the batch (received to reply ready).
- **OIP gRPC**: ``servelab frontend`` in a process of its own, serving a session of one worker
  with the same no-op executor; sequential requests with ``INPUT0`` of shape [items, 64] (float32,
  as raw contents). Transport: the client's round trip minus the server's compute, the answer's
  ``servelab_queue_us + servelab_compute_us`` (the session's queue and executor time). Two
  clients: ``tritonclient.grpc`` (what users write; it builds and reads the messages in Python)
  and a prebuilt ``ModelInferRequest`` sent on grpc's own stub (the wire and the server alone).
- **OIP gRPC, bare server**: the same stub against a grpcio server (in a process of its own,
  ``--bare-server``) whose ModelInfer parses the request and answers an empty response at once:
  the protocol's floor with Python's gRPC on both ends, without the front-end's work (its
  asyncio loop, checks, the session's submit and the thread hop back).

Neither way sends outputs back (the no-op executor writes none; the SLRW protocol's BatchReply
carries none at all). Printed: medians (and p99) in microseconds, ratios OIP / remote tcp, and
the load average before and after. Never asserted.

    python benchmarks/python/bench_transport.py                  # 2,000 batches a way and size
    python benchmarks/python/bench_transport.py --smoke          # seconds
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import servelab
from servelab.worker_process import LocalWorkers, transport_times

FEATURES = 64
BATCHES = (1, 64)


def profile_json() -> dict:
    return {
        "format": "servelab.profile",
        "version": 1,
        "hardware": {"cpu": {"price_per_hour": 0.0}},
        "models": {"noop": {}},
        "latency": [
            {"hardware": "cpu", "model": "noop", "batch": b, "samples_ms": [0.001]} for b in BATCHES
        ],
    }


def scenario(executor: str, rate: float, count: int, items: int) -> dict:
    """One worker, one application whose queries have ``items`` items each (one query a batch
    under FCFS). Plain JSON, so that the front-end's own process reads it from a file."""
    return {
        "profile": profile_json(),
        "workers": [{"hardware": "cpu", "count": 1, "executor": executor}],
        "workload": {
            "arrivals": f"poisson(rate={rate:.6g})",
            "count": count,
            "apps": [{"name": "noop", "slo_ms": 100_000, "sizes": f"constant(value={items})"}],
        },
        "scheduler": "fcfs",
        "seed": 3,
        "drain_s": 600,
    }


def remote_us(pool: LocalWorkers, items: int, count: int) -> dict[str, np.ndarray]:
    """Per batch, us: the records' transport and the log's round trip."""
    transport_times()  # empties the log
    spec = pool.spec(0, input_bytes_per_item=4 * FEATURES)
    r = servelab.serve(scenario(spec, 400.0, count, items), progress=False)
    assert r.summary()["completed"] == count, r.meta["drop_reasons"]
    t = transport_times()
    return {
        "transport": np.asarray(r.columns["transport_ns"], float) / 1e3,
        "round_trip": np.asarray(t["round_trip_ns"], float) / 1e3,
    }


def _server_us(parameters) -> float:
    """servelab_queue_us + servelab_compute_us from a gRPC answer's parameters (0 without)."""
    total = 0.0
    for key in ("servelab_queue_us", "servelab_compute_us"):
        if key in parameters:
            p = parameters[key]
            total += getattr(p, p.WhichOneof("parameter_choice"))
    return total


def bare_server() -> int:
    """A gRPC server whose ModelInfer answers at once; prints its port, serves until stdin ends."""
    from concurrent import futures

    import grpc
    from tritonclient.grpc import service_pb2, service_pb2_grpc

    class Bare(service_pb2_grpc.GRPCInferenceServiceServicer):
        def ModelInfer(self, request, context):  # noqa: N802 (the service's name)
            return service_pb2.ModelInferResponse(model_name=request.model_name)

    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    service_pb2_grpc.add_GRPCInferenceServiceServicer_to_server(Bare(), server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    print(json.dumps({"grpc": f"127.0.0.1:{port}"}), flush=True)
    sys.stdin.read()
    server.stop(grace=None)
    return 0


def oip_us(
    address: str, items: int, count: int, warmup: int, clients=("tritonclient", "stub")
) -> dict[str, dict[str, np.ndarray]]:
    """Per request, us, for the clients interleaved: the round trip and the transport."""
    import grpc
    import tritonclient.grpc as grpcclient
    from tritonclient.grpc import service_pb2, service_pb2_grpc

    x = np.random.default_rng(0).standard_normal((items, FEATURES)).astype(np.float32)
    client = grpcclient.InferenceServerClient(address)
    tensor = grpcclient.InferInput("INPUT0", list(x.shape), "FP32")
    tensor.set_data_from_numpy(x)
    channel = grpc.insecure_channel(address)
    stub = service_pb2_grpc.GRPCInferenceServiceStub(channel)
    request = service_pb2.ModelInferRequest(model_name="noop")
    request.inputs.add(name="INPUT0", datatype="FP32", shape=list(x.shape))
    request.raw_input_contents.append(x.tobytes())

    def tritonclient_call():
        return client.infer("noop", [tensor]).get_response().parameters

    def stub_call():
        return stub.ModelInfer(request).parameters

    calls = {"tritonclient": tritonclient_call, "stub": stub_call}
    out: dict[str, dict[str, list[float]]] = {
        name: {"round_trip": [], "transport": []} for name in clients
    }
    for i in range(warmup + count):
        for name in clients:
            call = calls[name]
            t0 = time.perf_counter_ns()
            params = call()
            rt = (time.perf_counter_ns() - t0) / 1e3
            if i >= warmup:
                out[name]["round_trip"].append(rt)
                out[name]["transport"].append(rt - _server_us(params))
    client.close()
    channel.close()
    return {n: {k: np.asarray(v) for k, v in d.items()} for n, d in out.items()}


def start_server(command: list[str]) -> tuple[subprocess.Popen, str]:
    """A server process that prints its addresses as a JSON line first."""
    proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    if not line:
        proc.wait(timeout=30)
        raise RuntimeError(f"{command[2:4]} exited ({proc.returncode}) before its address")
    return proc, json.loads(line)["grpc"]


def stop_server(proc: subprocess.Popen) -> None:
    proc.terminate()
    proc.communicate(timeout=60)


def oip_rows(n: int, warmup: int) -> dict[tuple[str, int], dict[str, np.ndarray]]:
    rows = {}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "noop.json"
        path.write_text(json.dumps(scenario("constant(latency_ms=0)", 1.0, 1, 1)))
        proc, address = start_server(
            [
                sys.executable,
                "-m",
                "servelab",
                "frontend",
                str(path),
                "--json",
                "--no-http",
                "--grpc-port",
                "0",
            ]  # fmt: skip
        )
        try:
            for items in BATCHES:
                both = oip_us(address, items, n, warmup)
                rows[("OIP gRPC tritonclient", items)] = both["tritonclient"]
                rows[("OIP gRPC stub", items)] = both["stub"]
        finally:
            stop_server(proc)
    proc, address = start_server([sys.executable, __file__, "--bare-server"])
    try:
        for items in BATCHES:
            rows[("OIP gRPC stub, bare server", items)] = oip_us(
                address, items, n, warmup, clients=("stub",)
            )["stub"]
    finally:
        stop_server(proc)
    return rows


def load() -> str:
    a, b, c = os.getloadavg()
    return f"load average {a:.2f} {b:.2f} {c:.2f} on {os.cpu_count()} cores"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", type=int, default=2000, help="per way and size")
    parser.add_argument("--smoke", action="store_true", help="a few batches, to check it runs")
    parser.add_argument("--bare-server", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.bare_server:
        return bare_server()
    try:
        import tritonclient.grpc  # noqa: F401
    except ImportError as e:
        print(f"skipped: the front-end's libraries are not installed ({e})")
        return 0
    n = 40 if args.smoke else args.batches
    warmup = 5 if args.smoke else 100
    print(f"transport per batch of {FEATURES} float32 features an item, {n} batches each")
    print(load())
    rows: dict[tuple[str, int], dict[str, np.ndarray]] = {}
    with LocalWorkers(1, "constant(latency_ms=0)", transport="tcp") as tcp:
        with LocalWorkers(1, "constant(latency_ms=0)") as unix:
            for items in BATCHES:
                remote_us(tcp, items, min(n, 50))  # warm-up
                rows[("remote tcp", items)] = remote_us(tcp, items, n)
                rows[("remote unix", items)] = remote_us(unix, items, n)
    rows.update(oip_rows(n, warmup))
    print(load() + " (after)")
    print()
    print("| way | batch | transport p50 | p99 | round trip p50 | transport / remote tcp |")
    print("|---|---|---|---|---|---|")
    for (way, items), v in sorted(rows.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        base = float(np.median(rows[("remote tcp", items)]["transport"]))
        med = float(np.median(v["transport"]))
        p99 = float(np.percentile(v["transport"], 99))
        rt = float(np.median(v["round_trip"]))
        print(f"| {way} | {items} | {med:.1f} us | {p99:.1f} us | {rt:.1f} us | {med / base:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
