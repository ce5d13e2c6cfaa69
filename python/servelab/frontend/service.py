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
import inspect
import math
import threading
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from .codec import DTYPES, InferRequest, InferResponse, datatype_name, numpy_dtype
from .errors import FrontendError
from .live_metrics import LiveMetrics

INPUT_NAME = "INPUT0"
OUTPUT_NAME = "OUTPUT0"
VERSION = "1"
SERVER_NAME = "servelab"
# Request parameters passed to Session.submit as the query's own goals.
PER_QUERY_GOALS = ("slo_ms", "accuracy")
# The protocol extensions this front-end implements, under Triton's names.
EXTENSIONS = ["binary_tensor_data", "model_configuration", "parameters", "statistics"]


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


@dataclass(frozen=True)
class InputSpec:
    """What a model's ``INPUT0`` must be, checked before the request reaches the session: the
    data type and the dimensions of one item (-1: any), e.g. ``InputSpec("FP32", (16,))`` for
    rows of 16 features. Without one, any array of rank 2 or more goes to the session, whose
    executor checks it when its batch runs (a bad one then fails the whole batch)."""

    datatype: str
    dims: tuple[int, ...]

    def __post_init__(self) -> None:
        try:
            numpy_dtype(self.datatype, "datatype")
        except FrontendError as e:
            raise ValueError(e.message) from None
        if not all(isinstance(d, int) and (d > 0 or d == -1) for d in self.dims):
            raise ValueError(f"dims={self.dims!r} must be positive integers or -1 (any)")

    @classmethod
    def parse(cls, text: str) -> InputSpec:
        """``"FP32:16"``, ``"FP32:3x224x224"``, ``"INT64:-1"`` or ``"FP32"`` (one scalar an
        item)."""
        datatype, _, dims = text.partition(":")
        try:
            shape = tuple(int(d) for d in dims.split("x")) if dims else ()
            return cls(datatype.strip().upper(), shape)
        except ValueError as e:
            raise ValueError(
                f"input spec {text!r}: {e}; expected DATATYPE:DIMS such as FP32:16 or "
                "FP32:3x224x224"
            ) from None

    def check(self, model: str, array: np.ndarray) -> None:
        dtype = DTYPES[self.datatype]
        want = [-1, *self.dims]
        fits = array.dtype == dtype and array.ndim == len(want)
        fits = fits and all(w in (-1, g) for w, g in zip(want, array.shape, strict=True))
        if not fits:
            got = datatype_name(array.dtype) if array.dtype in DTYPES.values() else array.dtype
            raise FrontendError(
                "invalid",
                f"inputs[0] ({INPUT_NAME}): model {model!r} takes {self.datatype} of shape "
                f"{want} (items first); got {got} of shape {list(array.shape)}",
            )


class ModelService:
    """The protocol-independent front-end over one session (see the module's docstring)."""

    def __init__(
        self,
        session: Any,
        limits: Limits,
        token: str | None = None,
        inputs: dict[str, InputSpec] | None = None,
    ) -> None:
        self.session = session
        self.limits = limits
        self.token = token or None
        self.models: list[str] = list(session.apps)
        self.metrics = LiveMetrics(self.models)
        self._slo_ms = {m: float(session.app_slo_ms(m)) for m in self.models}
        try:  # the per-request goals the session's submit takes (slo_ms, accuracy)
            accepted = set(inspect.signature(session.submit).parameters)
        except (TypeError, ValueError):
            accepted = set()
        self._per_query = accepted & set(PER_QUERY_GOALS)
        self.inputs = dict(inputs or {})
        if "*" in self.inputs:
            every = self.inputs.pop("*")
            self.inputs = {m: self.inputs.get(m, every) for m in self.models}
        for m in self.inputs:
            if m not in self.models:
                raise ValueError(
                    f"inputs names model {m!r}, which is not one of the session's applications "
                    f"{self.models}"
                )
        self._lock = threading.Lock()
        self._inflight = 0
        self._idle = threading.Condition(self._lock)
        self._waiters: set[asyncio.Future[Any]] = set()  # touched on the servers' loop only
        self.reading = 0  # HTTP bodies being read (the servers' loop only)
        # Another engine sharing max_concurrent (the C++ HTTP engine): it counts ours, we count its.
        self.peer: Any = None
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

    def input_shape(self, name: str) -> tuple[str, list[int]]:
        """The data type and shape of ``name``'s INPUT0 as its metadata and config show them."""
        spec = self.inputs.get(name)
        return (spec.datatype, [-1, *spec.dims]) if spec else ("FP32", [-1, -1])

    def statistics(self, name: str = "", version: str = "") -> list[dict[str, Any]]:
        """Triton's statistics of one model, or of every model when ``name`` is empty."""
        if name:
            self.check_model(name, version)
        return [self.metrics.statistics(m) for m in ([name] if name else self.models)]

    def model_ready(self, name: str, version: str = "") -> bool:
        self.check_model(name, version)
        return self.ready()

    def model_metadata(self, name: str, version: str = "") -> dict[str, Any]:
        """Inputs and outputs are rows of items: the first dimension is the query's size, the
        rest is the model's `InputSpec` where it has one, else any (-1)."""
        self.check_model(name, version)
        datatype, shape = self.input_shape(name)
        return {
            "name": name,
            "versions": [VERSION],
            "platform": "servelab",
            "inputs": [{"name": INPUT_NAME, "datatype": datatype, "shape": shape}],
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
        spec = self.inputs.get(name)
        if spec is not None:
            spec.check(name, array)
        elif array.ndim < 2:
            raise FrontendError(
                "invalid",
                f"inputs[0] ({INPUT_NAME}).shape={list(array.shape)} must be [items, ...], rank 2 "
                "or more (one row per item)",
            )
        if array.shape[0] < 1:
            raise FrontendError(
                "invalid",
                f"inputs[0] ({INPUT_NAME}).shape={list(array.shape)}: the first dimension is the "
                "query's number of items and must be at least 1",
            )
        return array, int(array.shape[0])

    def _goals(self, request: InferRequest) -> dict[str, float]:
        """The request's own ``slo_ms`` / ``accuracy`` parameters (a FrontendError when bad)."""
        goals = {}
        for key in PER_QUERY_GOALS:
            value = request.parameters.get(key)
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise FrontendError("invalid", f"parameters.{key}={value!r} must be a number")
            if key not in self._per_query:
                raise FrontendError(
                    "invalid", f"parameters.{key}: this session takes no per-request {key}"
                )
            goals[key] = float(value)
        return goals

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
        goals = self._goals(request)
        if self.draining:
            raise FrontendError("unavailable", "the server is shutting down; no new requests")
        with self._lock:  # a place among max_concurrent, taken before submitting
            if self._inflight + self._peer_load() >= self.limits.max_concurrent:
                raise self._overloaded()
            self._inflight += 1
        self._tell_peer(1)
        # Submitted without holding the lock: the session's thread takes it to count outcomes.
        try:
            future = self.session.submit(name, inputs, size=size, **goals)
        except Exception as e:
            with self._idle:
                self._inflight -= 1
                self._idle.notify_all()
            self._tell_peer(-1)
            if isinstance(e, ValueError):  # the session's refusal of this input or size
                raise FrontendError("invalid", f"model {name!r}: {e}") from None
            if isinstance(e, RuntimeError):
                raise FrontendError("unavailable", f"the session is closed: {e}") from None
            # The front-end passes well-typed arguments: anything else is a bug of ours.
            raise FrontendError("internal", f"model {name!r}: submit failed: {e}") from None
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
            try:
                with self._idle:
                    self._inflight -= 1
                    self._idle.notify_all()
                self._tell_peer(-1)
                if outcome is not None:
                    self.metrics.answered(name, outcome, time.perf_counter() - received, size)
                else:
                    self.metrics.lost(name)
            finally:  # the client is answered whatever the counting did
                try:
                    loop.call_soon_threadsafe(deliver, outcome, exc)
                except RuntimeError:  # the loop has closed: nobody waits for it any more
                    pass

        future.add_done_callback(resolved)
        timeout = self.limits.request_timeout_s
        self._waiters.add(waiter)
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
        finally:
            self._waiters.discard(waiter)
        return self._response(name, request, outcome)

    def _overloaded(self) -> FrontendError:
        busy = self._inflight + self.reading + self._peer_load()
        return FrontendError(
            "overloaded",
            f"{busy} requests are in flight, the limit "
            f"(max_concurrent={self.limits.max_concurrent}); retry later",
        )

    def start_reading(self) -> None:
        """An HTTP body is about to be read: it counts against ``max_concurrent`` while it
        arrives, so that bodies read at once are bounded too. Call on the servers' loop; pair
        with `done_reading`."""
        if self._inflight + self.reading + self._peer_load() >= self.limits.max_concurrent:
            raise self._overloaded()
        self.reading += 1
        self._tell_peer(1)

    def done_reading(self) -> None:
        self.reading -= 1
        self._tell_peer(-1)

    def _peer_load(self) -> int:
        """The other engine's requests in flight and bodies being read."""
        return 0 if self.peer is None else int(self.peer.load())

    def _tell_peer(self, delta: int) -> None:
        if self.peer is not None:
            self.peer.add_external(delta)

    def fail_waiting(self) -> int:
        """Answers every request still waiting for its outcome with UNAVAILABLE (the server is
        stopping); their queries run on in the session and are counted when they end. Call on
        the servers' loop. Returns how many there were."""
        waiting = [w for w in self._waiters if not w.done()]
        for w in waiting:
            error = FrontendError(
                "unavailable",
                "the server stopped before this request's outcome; its query still runs in the "
                "session",
            )
            error.counted = True  # counted when its outcome comes
            w.set_exception(error)
        return len(waiting)

    def _response(self, name: str, request: InferRequest, outcome: Any) -> InferResponse:
        if outcome.status != "completed":
            reason = outcome.reason or "no reason given"
            kind = "unavailable"
            if reason.startswith("executor failed"):
                # The executor's refusal of the input this request sent (torchscript: "the input
                # submitted for query N ... is array(...)") is the client's error; others are ours.
                kind = "invalid" if f"submitted for query {outcome.id} " in reason else "internal"
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
