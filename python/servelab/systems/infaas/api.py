"""INFaaS's declarative API as module-level functions over one process-wide registry and server
(the paper's ``register_model`` / ``online_query`` / ``offline_query``)::

    from servelab import infaas

    infaas.register_model("mlp", "mlp.pt", app="ranking", accuracy=0.8)
    out = infaas.online_query(x, app="ranking", latency_ms=5, accuracy=0.7)
    job = infaas.offline_query("in/", "out/", app="ranking")

The default server has one CPU worker (plus one GPU worker when a GPU variant is registered);
it is rebuilt when models are registered after it started (cancelling its offline jobs), and
closed at interpreter exit. For
several registries or a chosen set of workers use :class:`ModelRegistry` and
:class:`InfaasServer` directly.
"""

from __future__ import annotations

import atexit
import threading
from typing import Any

from .registry import ModelRegistry
from .server import InfaasServer, OfflineJob, OnlineResult

_lock = threading.Lock()
_registry = ModelRegistry()
_server: InfaasServer | None = None
_server_size = 0  # variants the default server was built over


def default_registry() -> ModelRegistry:
    """The registry ``register_model`` adds to."""
    return _registry


def default_server() -> InfaasServer:
    """The server ``online_query`` and ``offline_query`` use (built on first use)."""
    global _server, _server_size
    with _lock:
        if _server is None or _server_size != len(_registry):
            if _server is not None:
                _server.close()
            hardware = {v["hardware"] for v in _registry.variants()}
            workers = {hw: 1 for hw in sorted(hardware)}
            _server = InfaasServer(_registry, workers=workers)
            _server_size = len(_registry)
        return _server


def register_model(name: str, model: Any, **options: Any) -> dict[str, Any]:
    """Generates, profiles and registers ``model``'s variants in the default registry (see
    :meth:`ModelRegistry.register_model` for the options: app, task, accuracy, batches,
    threads, frameworks, repeats, warmup, prices, scale, seed, progress)."""
    with _lock:
        return _registry.register_model(name, model, **options)


def online_query(inputs: Any, **goals: Any) -> OnlineResult:
    """:meth:`InfaasServer.online_query` on the default server (app= with latency_ms=,
    accuracy=, cost=, or model=)."""
    return default_server().online_query(inputs, **goals)


def offline_query(input_dir: Any, output_dir: Any, **goals: Any) -> OfflineJob:
    """:meth:`InfaasServer.offline_query` on the default server (app= or model=, accuracy=)."""
    return default_server().offline_query(input_dir, output_dir, **goals)


def _close_default() -> None:
    if _server is not None:
        _server.close()


atexit.register(_close_default)
