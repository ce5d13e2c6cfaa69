"""``servelab frontend SCENARIO``: serve a scenario's applications over the Open Inference Protocol
(HTTP/REST and gRPC) until Ctrl-C or SIGTERM, then close the session and print its summary.

Declared here with no import of the front-end's libraries (they load when the command runs).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
from typing import Any

from ..cli_types import int_in_range, positive_float, positive_int, random_seed

TOKEN_ENV = "SERVELAB_FRONTEND_TOKEN"
port = int_in_range(0, 65535, "a port number (0: any free port)")


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "frontend",
        help="serve a scenario's applications to clients over the Open Inference Protocol "
        "(HTTP/REST and gRPC, as Triton and KServe speak it)",
    )
    p.add_argument("scenario", help="path to a scenario file, or a built-in name (e.g. default)")
    p.add_argument("--http-port", type=port, default=8000, help="HTTP/REST port (default 8000)")
    p.add_argument("--grpc-port", type=port, default=8001, help="gRPC port (default 8001)")
    p.add_argument("--no-http", action="store_true", help="serve gRPC only")
    p.add_argument("--no-grpc", action="store_true", help="serve HTTP only")
    p.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to bind (default 127.0.0.1); other than loopback only with --allow-remote",
    )
    p.add_argument(
        "--allow-remote",
        action="store_true",
        help="allow --host to be an address other than loopback (set a token too)",
    )
    p.add_argument(
        "--token",
        help=f"require 'Authorization: Bearer TOKEN' on every request (default: ${TOKEN_ENV}, "
        "which keeps the token out of the process list)",
    )
    p.add_argument(
        "--input",
        action="append",
        metavar="[APP=]DTYPE:DIMS",
        help="what an application's INPUT0 must be, per item, e.g. FP32:16 (every application) "
        "or mlp=FP32:16; checked before the session (a bad input otherwise fails its whole "
        "batch) and shown in the model's metadata; repeatable",
    )
    p.add_argument("--executor", help="what runs the batches, e.g. \"torchscript(path='m.pt')\"")
    p.add_argument("--scheduler", help="override the scenario's scheduler, e.g. 'batching'")
    p.add_argument("--seed", type=random_seed, help="override the scenario's seed")
    p.add_argument(
        "--batch-timeout-ms",
        type=positive_float,
        help="drop a batch that has not returned after this long (default: no limit)",
    )
    p.add_argument(
        "--max-body-mb",
        type=positive_float,
        default=64.0,
        help="largest request body / gRPC message in MiB (default 64); larger: 413",
    )
    p.add_argument(
        "--max-concurrent",
        type=positive_int,
        default=1024,
        help="requests in flight, all models and both protocols (default 1024); more: 503",
    )
    p.add_argument(
        "--request-timeout-s",
        type=positive_float,
        default=30.0,
        help="longest wait for a body or an outcome (default 30); then 504",
    )
    p.add_argument(
        "--http-engine",
        choices=("python", "cpp"),
        default="python",
        help="what serves HTTP/REST: python (aiohttp, the default) or cpp (the C++ engine over the "
        "session's serving loop: the same answers, no interpreter on the inference path)",
    )
    p.add_argument("--json", action="store_true", help="print the addresses and summary as JSON")
    p.set_defaults(run=run, inputs=("scenario",))


def _print(args: argparse.Namespace, text: str, data: dict[str, Any]) -> None:
    print(json.dumps(data) if args.json else text, flush=True)


def run(args: argparse.Namespace) -> int:
    # The front-end's libraries and the session load here, not at `servelab --help`.
    from .. import Session
    from ..scenario import load_scenario
    from .server import Frontend, is_loopback
    from .service import InputSpec, Limits

    if args.no_http and args.no_grpc:
        raise ValueError("--no-http with --no-grpc leaves nothing to serve")
    if not is_loopback(args.host) and not args.allow_remote:
        raise ValueError(
            f"--host {args.host} is not a loopback address: pass --allow-remote to serve other "
            f"addresses (and set --token or ${TOKEN_ENV})"
        )
    token = args.token if args.token is not None else os.environ.get(TOKEN_ENV) or None
    limits = Limits(
        max_body_bytes=max(1, int(args.max_body_mb * 1024 * 1024)),
        max_concurrent=args.max_concurrent,
        request_timeout_s=args.request_timeout_s,
    )
    specs: dict[str, InputSpec] = {}
    for text in args.input or ():
        app, _, spec = text.rpartition("=")
        specs[app or "*"] = InputSpec.parse(spec)
    scenario = load_scenario(args.scenario)
    overrides: dict[str, Any] = {}
    if args.scheduler:
        overrides["scheduler"] = args.scheduler
    if args.seed is not None:
        overrides["seed"] = args.seed
    if args.executor:
        overrides["executor"] = args.executor
    if args.batch_timeout_ms is not None:
        overrides["batch_timeout_ms"] = args.batch_timeout_ms

    stop = threading.Event()

    def on_signal(signum: int, _frame: Any) -> None:
        stop.set()

    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        with Session(scenario, **overrides) as session:
            frontend = Frontend(
                session,
                host=args.host,
                http_port=None if args.no_http else args.http_port,
                grpc_port=None if args.no_grpc else args.grpc_port,
                allow_remote=args.allow_remote,
                token=token,
                limits=limits,
                inputs=specs,
                http_engine=args.http_engine,
            ).start()
            try:
                where = {
                    "http": frontend.http_url if frontend.http_port is not None else None,
                    "grpc": frontend.grpc_address if frontend.grpc_port is not None else None,
                    "models": list(session.apps),
                    "token": token is not None,
                }
                served = ", ".join(
                    f"{label} {where[k]}"
                    for k, label in (("http", "HTTP"), ("grpc", "gRPC"))
                    if where[k]
                )
                _print(
                    args,
                    f"servelab frontend: {scenario.name or args.scenario}: models "
                    f"{', '.join(session.apps)}; {served}"
                    + ("; token required" if token else "")
                    + " (Ctrl-C to stop)",
                    where,
                )
                if args.allow_remote and token is None:
                    print(
                        "servelab frontend: warning: serving other addresses without a token",
                        file=sys.stderr,
                    )
                while not stop.wait(0.5):
                    pass
                # New requests refused; those in flight get their outcomes: the session answers
                # every outstanding query (served or dropped) while the servers still run.
                frontend.drain(grace_s=0)
                result = session.close()
            finally:
                frontend.stop()
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
    summary = result.summary()
    if args.json:
        print(json.dumps({"summary": summary}, default=float))
        return 0
    line = (
        f"served: queries {summary['queries']}, completed {summary['completed']}, "
        f"dropped {summary['dropped']}"
    )
    lat = summary.get("latency_ms") or {}
    if summary["completed"] and lat.get("p50") is not None:
        line += f"; latency ms p50 {lat['p50']:.2f}, p99 {lat['p99']:.2f}"
    if summary["queries"] and summary.get("slo_violation_rate") is not None:
        line += f"; SLO violations {100 * summary['slo_violation_rate']:.2f}%"
    print(line)
    return 0
