"""The front-end's HTTP/REST engine in C++ (``http_engine="cpp"``): the same routes and answers as
the aiohttp engine (`http_server`), served by ``_core.HttpEngine`` on threads of its own, each
inference submitted to the C++ serving session directly, without the interpreter.

From Python it takes, at start, what its answers depend on: the limits, the token, the input specs
and the session's float-row width. The routes that read the live metrics (``/metrics`` and the
statistics) are forwarded here (`CppHttpEngine.forward`, on the engine's forwarding thread); the
engine's own counters join the `LiveMetrics` that render them, so one scrape covers both engines.
"""

from __future__ import annotations

import json
import weakref
from typing import Any
from urllib.parse import unquote

from .errors import FrontendError
from .service import ModelService

# Threads running the engine's io_context: enough to overlap parsing with writing on a small
# machine; the session's loop has a thread of its own.
DEFAULT_THREADS = 2


def supports(session: Any) -> bool:
    """True when ``session`` is a servelab.Session (its C++ serving loop can take the engine)."""
    return hasattr(getattr(session, "_core", None), "start_http_engine")


def _weak_forward(engine: CppHttpEngine) -> Any:
    """``engine.forward`` without a reference to it: the C++ engine holds this function, which a
    bound method would make a cycle the garbage collector cannot see."""
    method = weakref.WeakMethod(engine.forward)

    def forward(verb: str, target: str) -> tuple[int, str, bytes]:
        bound = method()
        if bound is None:
            return 503, "application/json", b'{"error": "the server is stopping"}'
        return bound(verb, target)

    return forward


class CppHttpEngine:
    """The C++ engine over ``service``'s session, bound to ``host``:``port`` (0: any free port;
    the bound one is `port`). OSError when the address cannot be bound."""

    def __init__(self, service: ModelService, host: str, port: int, threads: int = DEFAULT_THREADS):
        from .. import __version__

        self.service = service
        session = service.session
        if not supports(session):
            raise ValueError(
                f"http_engine='cpp' serves a servelab.Session (its C++ serving loop); got "
                f"{type(session).__name__}"
            )
        limits = service.limits
        self._engine = session._core.start_http_engine(
            host=host,
            port=port,
            threads=threads,
            token=service.token,
            max_body_bytes=limits.max_body_bytes,
            max_concurrent=limits.max_concurrent,
            request_timeout_s=float(limits.request_timeout_s),
            inputs={m: (s.datatype, list(s.dims)) for m, s in service.inputs.items()},
            # The width servelab.Session checks at submit, checked by the engine instead.
            float_width=getattr(session, "_width", None),
            server_version=__version__,
            forward=_weak_forward(self),
        )
        self.port: int = self._engine.port
        service.metrics.add_source(self._engine.counters)
        # One max_concurrent for both engines: each counts the other's requests.
        service.peer = self._engine

    def forward(self, method: str, target: str) -> tuple[int, str, bytes]:
        """The answer to a route the engine forwards: ``/metrics`` and the statistics."""
        path = target.partition("?")[0]
        try:
            if path == "/metrics":
                return 200, "text/plain; charset=utf-8", self.service.metrics.text().encode()
            # /v2/models/stats, /v2/models/{m}/stats, /v2/models/{m}/versions/{v}/stats
            parts = path.split("/")
            name = unquote(parts[3]) if len(parts) > 4 else ""
            version = unquote(parts[5]) if len(parts) > 6 else ""
            stats = self.service.statistics(name, version)
            return 200, "application/json", json.dumps({"model_stats": stats}).encode()
        except FrontendError as e:
            self.service.metrics.refused(e.kind)
            return e.http_status, "application/json", json.dumps({"error": e.message}).encode()

    def drain(self) -> None:
        self._engine.drain()

    def wait_idle(self, timeout_s: float) -> bool:
        return bool(self._engine.wait_idle(max(timeout_s, 0.0)))

    def stop(self, grace_s: float) -> None:
        """Waits up to ``grace_s`` for the requests in flight, answers those still waiting with
        503 and closes."""
        self._engine.stop(max(grace_s, 0.0))

    def inflight(self) -> int:
        return int(self._engine.inflight())

    def reading(self) -> int:
        return int(self._engine.reading())
