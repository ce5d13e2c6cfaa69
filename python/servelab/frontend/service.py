"""What both servers answer, whatever the protocol: the session's applications as models, their
metadata and readiness, the token check, and inference through the session within the limits.

Every inference request is answered or refused: refused at once (a `FrontendError`) when it is
malformed, names an unknown model, exceeds a limit or arrives while the front-end shuts down;
otherwise submitted to the session, whose scheduler batches and places it, and answered with its
outcome (outputs, or the reason it was dropped) or, after ``request_timeout_s``, with a timeout
error. A request the client gave up on still runs to its outcome and is counted in the metrics,
and still holds its place among the ``max_concurrent`` until then, so memory stays bounded.
"""

from __future__ import annotations

import asyncio
import hmac
import math
import threading
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from .codec import InferRequest, InferResponse
from .errors import FrontendError
from .live_metrics import LiveMetrics

INPUT_NAME = "INPUT0"
OUTPUT_NAME = "OUTPUT0"
VERSION = "1"
SERVER_NAME = "servelab"
# The protocol extensions this front-end implements (the binary tensor data one, over HTTP).
EXTENSIONS = ["binary_tensor_data"]


@dataclass(frozen=True)
class Limits:
    """What one request and the front-end as a whole may take.

    ``max_body_bytes``: the largest request body (HTTP, after decompression) or message (gRPC);
    larger ones get 413 / RESOURCE_EXHAUSTED naming the limit. ``max_concurrent``: requests
    accepted and not answered yet, all models and both protocols; one more gets 503 /
    RESOURCE_EXHAUSTED. ``request_timeout_s``: the longest a request waits for its outcome (and
    an HTTP body may take to arrive); then 504 / DEADLINE_EXCEEDED."""

    max_body_bytes: int = 64 * 1024 * 1024
    max_concurrent: int = 1024
    request_timeout_s: float = 30.0

    def __post_init__(self) -> None:
        for name in ("max_body_bytes", "max_concurrent"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name}={value!r} must be a positive integer")
        t = self.request_timeout_s
        if (
            isinstance(t, bool)
            or not isinstance(t, int | float)
            or not (math.isfinite(t) and t > 0)
        ):
            raise ValueError(f"request_timeout_s={t!r} must be a positive number of seconds")


class ModelService:
    """The protocol-independent front-end over one session (see the module's docstring)."""

    def __init__(self, session: Any, limits: Limits, token: str | None = None) -> None:
        self.session = session
        self.limits = limits
        self.token = token or None
        self.models: list[str] = list(session.apps)
        self.metrics = LiveMetrics(self.models)
        self._slo_ms = {m: float(session.app_slo_ms(m)) for m in self.models}
        self._lock = threading.Lock()
        self._inflight = 0
        self._idle = threading.Condition(self._lock)
        self.draining = False

    # --- access ---------------------------------------------------------------------------------

    def check_token(self, presented: str | None) -> None:
        """``presented``: the request's ``Authorization`` value (HTTP header or gRPC metadata)."""
        if self.token is None:
            return
        expected = f"Bearer {self.token}"
        if presented is None or not hmac.compare_digest(presented.encode(), expected.encode()):
            what = "no Authorization" if presented is None else "a wrong Authorization"
            raise FrontendError(
                "unauthenticated",
                f"{what}: this server requires 'Authorization: Bearer <token>'",
            )

    # --- metadata -------------------------------------------------------------------------------

    def live(self) -> bool:
        return True

    def ready(self) -> bool:
        return not self.draining

    def server_metadata(self) -> dict[str, Any]:
        from .. import __version__  # the package's version, imported late to avoid a cycle

        return {"name": SERVER_NAME, "version": __version__, "extensions": EXTENSIONS}

    def check_model(self, name: str, version: str = "") -> None:
        if name not in self.models:
            raise FrontendError(
                "not_found",
                f"unknown model {name!r}; this server's models (the scenario's applications): "
                f"{', '.join(self.models)}",
            )
        if version not in ("", VERSION):
            raise FrontendError(
                "not_found", f"model {name!r} has no version {version!r}; its only version is 1"
            )

    def model_ready(self, name: str, version: str = "") -> bool:
        self.check_model(name, version)
        return self.ready()

    def model_metadata(self, name: str, version: str = "") -> dict[str, Any]:
        """Inputs and outputs are rows of items: the first dimension is the query's size, the
        rest is whatever the application's executor takes (the session checks it)."""
        self.check_model(name, version)
        return {
            "name": name,
            "versions": [VERSION],
            "platform": "servelab",
            "inputs": [{"name": INPUT_NAME, "datatype": "FP32", "shape": [-1, -1]}],
            "outputs": [{"name": OUTPUT_NAME, "datatype": "FP32", "shape": [-1, -1]}],
            "parameters": {"slo_ms": self._slo_ms[name]},
        }

    # --- inference ------------------------------------------------------------------------------

    def _session_inputs(self, name: str, request: InferRequest) -> tuple[np.ndarray | None, int]:
        if len(request.inputs) > 1:
            names = ", ".join(n for n, _ in request.inputs)
            raise FrontendError(
                "invalid", f"model {name!r} takes one input ({INPUT_NAME}), got {names}"
            )
        if request.outputs is not None:
            for out in request.outputs:
                if out.name != OUTPUT_NAME:
                    raise FrontendError(
                        "invalid",
                        f"model {name!r} has no output {out.name!r}; its output is {OUTPUT_NAME}",
                    )
        if not request.inputs:
            return None, 1
        input_name, array = request.inputs[0]
        if input_name != INPUT_NAME:
            raise FrontendError(
                "invalid", f"model {name!r} has no input {input_name!r}; its input is {INPUT_NAME}"
            )
        if array.ndim < 1 or array.shape[0] < 1:
            raise FrontendError(
                "invalid",
                f"inputs[0] ({INPUT_NAME}).shape={list(array.shape)}: the first dimension is the "
                "query's number of items and must be at least 1",
            )
        return array, int(array.shape[0])

    def begin_drain(self) -> None:
        """New inference requests are refused from now on (ready turns false)."""
        self.draining = True

    def wait_idle(self, timeout_s: float) -> bool:
        """Waits until no accepted request awaits its outcome; False when ``timeout_s`` passed."""
        deadline = time.monotonic() + timeout_s
        with self._idle:
            while self._inflight:
                left = deadline - time.monotonic()
                if left <= 0 or not self._idle.wait(left):
                    return self._inflight == 0
        return True

    async def infer(self, name: str, version: str, request: InferRequest) -> InferResponse:
        try:
            return await self._infer(name, version, request)
        except FrontendError as e:
            if not e.counted:  # refused before the session saw it
                model = name if name in self._slo_ms and e.kind != "timeout" else None
                self.metrics.refused(e.kind, model)
                e.counted = True
            raise

    async def _infer(self, name: str, version: str, request: InferRequest) -> InferResponse:
        received = time.perf_counter()
        self.check_model(name, version)
        inputs, size = self._session_inputs(name, request)
        if self.draining:
            raise FrontendError("unavailable", "the server is shutting down; no new requests")
        with self._lock:
            if self._inflight >= self.limits.max_concurrent:
                raise FrontendError(
                    "overloaded",
                    f"{self._inflight} requests are in flight, the limit "
                    f"(max_concurrent={self.limits.max_concurrent}); retry later",
                )
            try:
                future = self.session.submit(name, inputs, size=size)
            except ValueError as e:
                raise FrontendError("invalid", f"model {name!r}: {e}") from None
            except RuntimeError as e:
                raise FrontendError("unavailable", f"the session is closed: {e}") from None
            self._inflight += 1
        self.metrics.accepted(name)
        loop = asyncio.get_running_loop()
        waiter: asyncio.Future[Any] = loop.create_future()

        def deliver(outcome: Any, exc: BaseException | None) -> None:
            if waiter.done():  # the client left or the request timed out
                return
            if exc is not None:
                waiter.set_exception(exc)
            else:
                waiter.set_result(outcome)

        def resolved(f: Any) -> None:  # on the session's thread
            exc = f.exception()
            outcome = None if exc is not None else f.result()
            with self._idle:
                self._inflight -= 1
                self._idle.notify_all()
            if outcome is not None:
                self.metrics.answered(name, outcome, time.perf_counter() - received, size)
            else:
                self.metrics.lost(name)
            try:
                loop.call_soon_threadsafe(deliver, outcome, exc)
            except RuntimeError:  # the loop has closed: nobody waits for it any more
                pass

        future.add_done_callback(resolved)
        timeout = self.limits.request_timeout_s
        try:
            outcome = await asyncio.wait_for(waiter, timeout)
        except asyncio.TimeoutError:
            raise FrontendError(
                "timeout",
                f"model {name!r}: no outcome within request_timeout_s={timeout:g}; the query "
                "stays queued and is counted when it ends",
            ) from None
        except FrontendError:
            raise
        except Exception as e:
            error = FrontendError("internal", f"model {name!r}: the session failed: {e}")
            error.counted = True  # as a failure, by `resolved`
            raise error from None
        return self._response(name, request, outcome)

    def _response(self, name: str, request: InferRequest, outcome: Any) -> InferResponse:
        if outcome.status != "completed":
            reason = outcome.reason or "no reason given"
            kind = "internal" if reason.startswith("executor failed") else "unavailable"
            error = FrontendError(kind, f"model {name!r}: query {outcome.id} dropped: {reason}")
            error.counted = True  # as a failure, with the outcome
            raise error
        outputs = []
        if outcome.output is not None:
            outputs.append((OUTPUT_NAME, np.asarray(outcome.output)))
        params: dict[str, bool | int | float | str] = {
            "servelab_query": int(outcome.id),
            "servelab_late": bool(outcome.late),
            "servelab_worker": int(outcome.worker),
            "servelab_model": str(outcome.model),
            "servelab_queue_us": float((outcome.start_s - outcome.arrival_s) * 1e6),
            "servelab_compute_us": float((outcome.finish_s - outcome.start_s) * 1e6),
        }
        return InferResponse(name, VERSION, request.id, outputs, params)
