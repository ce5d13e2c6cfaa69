"""An Open Inference Protocol front-end (HTTP/REST and gRPC, as KServe v2 and Triton speak it) over
an in-process `servelab.Session`: the scenario's applications are the models, and every request
goes through the session's scheduler (batching, SLOs, model selection)::

    import servelab
    from servelab.frontend import Frontend, Limits

    with servelab.Session("default") as s, Frontend(s, http_port=8000, grpc_port=8001):
        ...  # tritonclient, curl or any KServe v2 client on 127.0.0.1

or from the command line: ``servelab frontend SCENARIO --http-port 8000 --grpc-port 8001``.
See docs/frontend.md.

| Name | Module | Job |
|---|---|---|
| `Frontend` | `server` | both servers on a thread of their own, bound to loopback by default |
| `Limits` | `service` | body size, requests in flight, request timeout |
| `InputSpec` | `service` | a model's input data type and item shape, checked before the session |
| `ModelService` | `service` | the protocol-independent answers: metadata, readiness, inference |
| `FrontendError` | `errors` | a refusal and its HTTP status / gRPC code |
| (codec) | `codec` | protocol tensors (JSON, binary extension, protobuf) <-> numpy |
| `LiveMetrics` | `live_metrics` | Prometheus counters under Triton's names, at /metrics |
| (C++ HTTP engine) | `cpp_engine` | ``http_engine="cpp"``: HTTP/REST served in C++ |
| (CLI) | `cli` | ``servelab frontend`` |

Needs the front-end's libraries (aiohttp, grpcio, tritonclient[grpc] for the service's protobuf
messages): ``pip install servelab[frontend]``.
"""

from __future__ import annotations

import importlib
from typing import Any

# The public names and their modules, imported on first use so that `servelab --help` (which
# declares `servelab frontend` through .cli) needs none of the front-end's libraries.
_EXPORTS = {
    "Frontend": "server",
    "FrontendError": "errors",
    "InputSpec": "service",
    "Limits": "service",
    "LiveMetrics": "live_metrics",
    "ModelService": "service",
}

__all__ = sorted(_EXPORTS)


def _require() -> None:
    try:
        import aiohttp  # noqa: F401
        import grpc  # noqa: F401
        import tritonclient.grpc.service_pb2  # noqa: F401
    except ImportError as e:
        raise ImportError(
            f"servelab.frontend needs aiohttp, grpcio and tritonclient[grpc] ({e}): "
            "pip install 'servelab[frontend]'"
        ) from e


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'servelab.frontend' has no attribute {name!r}")
    _require()
    value = getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
    globals()[name] = value
    return value
