"""The real-serving side of INFaaS's declarative API: an :class:`InfaasServer` over a
:class:`~servelab.systems.infaas.registry.ModelRegistry` is one :class:`servelab.Session` running
the registered C++ ``infaas`` policy, whose workers serve the registry's variants.

::

    with infaas.InfaasServer(reg, workers={"cpu": 2}) as server:
        out = server.online_query(x, app="ranking", latency_ms=5, accuracy=0.7)
        out.outputs, out.record["variant"], out.record["kind"]
        job = server.offline_query("in/", "out/", app="ranking")
        job.wait()

What runs where. The C++ policy makes every decision the simulator's ``infaas`` makes: per query
getVariant with the query's own latency and accuracy goals (Active > new instance > closest,
Overloaded and Interfered instances), the periodic Model-Autoscaler, offline queries from spare
capacity, the VM-Autoscaler (``max_workers``); the serving loop runs batches, loads and unloads
variants, adds and removes workers, and with ``batch_timeout_ms`` takes a hung worker out. This
module keeps the API: goals and inputs checked, inputs larger than every variant's batch split
into several queries, outputs and a record per query; ``server_plan`` maps the registry to the
session, ``server_executor`` runs the variants, ``server_offline`` the offline files.
"""

from __future__ import annotations

import itertools
import math
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ...executors import register_executor, unregister_executor
from ...session import Outcome, Session
from . import loading, server_plan
from .registry import ModelRegistry
from .server_executor import Observations, VariantExecutor, pack
from .server_offline import OfflineJob
from .server_settings import ServerSettings

__all__ = ["DECISION_COLUMNS", "RECORD_KEYS", "InfaasServer", "OfflineJob", "OnlineResult"]

#: What an online query's record holds (see ``InfaasServer.online_query``).
RECORD_KEYS = (
    "variant", "model", "app", "worker", "hardware", "kind", "reason", "rows", "batches",
    "latency_ms", "exec_ms", "load_ms", "cost_per_s",
)  # fmt: skip

#: What ``InfaasServer.decisions()`` returns, one list (or array) per column.
DECISION_COLUMNS = ("time_s", "action", "variant", "worker", "reason")

_names = itertools.count()  # each server registers its own executor name


class ServingError(RuntimeError):
    """A query the session did not serve (dropped: the reason is in the message)."""


@dataclass
class OnlineResult:
    """An online query's outputs and its record (``RECORD_KEYS``)."""

    outputs: np.ndarray
    record: dict[str, Any]


def _goal(field_name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"{field_name}={value!r} must be a finite number >= 0")
    if value < 0:
        raise ValueError(f"{field_name}={value!r} must be >= 0")
    return float(value)


def _accuracy(value: Any) -> float:
    value = _goal("accuracy", value)
    if value > 1:
        raise ValueError(f"accuracy={value!r} must be in [0, 1]")
    return value


def _workers_arg(workers: Any) -> list[str]:
    if isinstance(workers, Mapping):
        out = []
        for hw, n in workers.items():
            if isinstance(n, bool) or not isinstance(n, int) or n < 0:
                raise ValueError(f"workers[{hw!r}]={n!r} must be an integer >= 0")
            out += [hw] * n
    elif isinstance(workers, Sequence) and not isinstance(workers, str):
        out = list(workers)
    else:
        raise ValueError(f"workers={workers!r} must be {{hardware: count}} or a list of hardware")
    if not out:
        raise ValueError(f"workers={workers!r} has no worker")
    for hw in out:
        if hw not in ("cpu", "gpu"):
            raise ValueError(f"workers: hardware {hw!r} must be 'cpu' or 'gpu'")
    return out


def _rows(inputs: Any) -> int:
    return int(inputs[0].shape[0]) if isinstance(inputs, tuple) else int(inputs.shape[0])


def _slice(inputs: Any, first: int, end: int) -> Any:
    if isinstance(inputs, tuple):
        return tuple(x[first:end] for x in inputs)
    return inputs[first:end]


class InfaasServer:
    """The registry's variants served by the ``infaas`` policy on one session; thread-safe;
    ``close()`` (or a ``with`` block) cancels the offline jobs and ends the session.

    ``workers``: ``{hardware: count}`` or a list of hardware ('cpu', 'gpu'); default one CPU
    worker. The policy's parameters (``server_settings.ServerSettings``): ``period_s`` (1 s, the
    Model-Autoscaler's ``autoscale_s``), ``slack`` (1.05), ``load_window_s`` (5 s),
    ``offline_util`` (0.4), ``interference_tol`` (0.1), ``interference_floor_ms`` (0.25),
    ``autoscale`` (True; False: per-query scaling only), ``autoscaler`` ('greedy' or 'ilp'),
    the VM-Autoscaler's ``max_workers`` (None: off), ``startup_s`` (20), ``poll_s`` (2),
    ``threshold`` (0.8), ``idle_s`` (60); and the serving loop's ``batch_timeout_ms`` (None: off).
    """

    def __init__(self, registry: ModelRegistry, workers: Any = None, **settings: Any) -> None:
        if not isinstance(registry, ModelRegistry):
            raise ValueError(f"registry={registry!r} must be a ModelRegistry")
        if len(registry) == 0:
            raise ValueError("registry has no variant: register_model() first")
        self.settings = ServerSettings(**settings)
        hardware = _workers_arg(workers if workers is not None else {"cpu": 1})
        runs_on = {v["hardware"] for v in registry.variants()}
        for hw in sorted(set(hardware) - runs_on):  # such a worker would never serve anything
            raise ValueError(
                f"workers: no registered variant runs on hardware {hw!r} (they run on "
                f"{sorted(runs_on)}; registry.skipped says why a variant was not made)"
            )
        self._registry = registry
        self._models = registry.models
        self._hardware = hardware
        self._variants = {v["name"]: v for v in registry.variants() if v["hardware"] in hardware}
        # Imports the variants' backends now (torch takes a second), not in the first query.
        for framework in sorted({v["framework"] for v in self._variants.values()}):
            loading.unavailable(framework)
        self._plan = server_plan.plan(registry, hardware)
        self.scheduler = self.settings.scheduler(
            self._plan.app_models, self._plan.offline_apps, len(hardware)
        )
        by_alias = {a: self._variants[n] for a, n in self._plan.variant_of.items()}
        sources = {m: d["source"] for m, d in self._models.items()}
        self._seen = Observations(time.perf_counter(), by_alias, sources)
        self._executor = f"infaas_server_{next(_names)}"
        seen = self._seen
        register_executor(
            self._executor, lambda: VariantExecutor(seen), doc="an INFaaS server's variants"
        )
        try:
            self._session = Session(
                self._plan.scenario(),
                executor=self._executor,
                scheduler=self.scheduler,
                batch_timeout_ms=self.settings.batch_timeout_ms,
            )
        except BaseException:
            unregister_executor(self._executor)
            raise
        self._seen.t0 = time.perf_counter()  # the session's clock starts about now
        self._lock = threading.Lock()
        self._dropped: list[tuple[float, str, str, int, str]] = []
        self._jobs: list[OfflineJob] = []
        self._closed = False

    # --- what it serves ----------------------------------------------------------------------

    def _candidates(self, app: str | None, model: str | None) -> list[dict[str, Any]]:
        out = [
            v for v in self._variants.values()
            if (app is None or self._models[v["model"]]["app"] == app)
            and (model is None or v["model"] == model)
        ]  # fmt: skip
        if not out:
            what = f"app={app!r}" if app is not None else f"model={model!r}"
            raise ValueError(f"{what}: no variant runs on this server's workers")
        return out

    def _check(self, app: str | None, model: str | None, what: str) -> None:
        if (app is None) == (model is None):
            raise ValueError(f"{what}: give exactly one of app= and model=")
        if app is not None:
            self._registry.check_app(app)
        else:
            self._registry.check_model(model)

    def _submit(self, session_app: str, inputs: Any, slo_ms: float | None, accuracy: float) -> Any:
        with self._lock:
            if self._closed:
                raise RuntimeError("the server is closed")
        return self._session.submit(session_app, pack(inputs), slo_ms=slo_ms, accuracy=accuracy)

    def _settle(self, outcome: Outcome, rows: int, what: str) -> tuple[Exception | None, float]:
        """Why a query was not served (None when it was), as the exception to raise, and the
        load its batch waited for (s)."""
        load_s, error = self._seen.take(outcome.id)
        return self._failure(outcome, rows, what, error), load_s

    def _failure(self, outcome: Outcome, rows: int, what: str, error: str) -> Exception | None:
        variant = self._plan.variant_of.get(outcome.model, outcome.model)
        if error:  # its own inputs made the model raise; the worker served the others
            return ValueError(
                f"{what} of {rows} rows not served: variant {variant!r} on worker "
                f"{outcome.worker} raised on its inputs ({error}); the inputs are at fault, "
                "not the worker, which goes on serving"
            )
        if outcome.completed:
            return None
        with self._lock:
            self._dropped.append(
                (outcome.arrival_s, "dropped", variant, outcome.worker, outcome.reason)
            )
        if "VariantLoadError" in outcome.reason:
            return loading.VariantLoadError(outcome.reason.split("VariantLoadError: ", 1)[-1])
        return ServingError(f"{what} of {rows} rows not served: {outcome.reason}")

    # --- online ------------------------------------------------------------------------------

    def online_query(
        self,
        inputs: Any,
        *,
        app: str | None = None,
        model: str | None = None,
        latency_ms: float = 0.0,
        accuracy: float = 0.0,
    ) -> OnlineResult:
        """Serves ``inputs`` now: float32 [rows, width] for a TorchScript model, (dense, sparse)
        for a recsys one. Give ``app`` with goals (``latency_ms``, 0: none; ``accuracy`` floor
        in [0, 1]) or ``model`` (any of its variants, with the same goals). The policy picks the
        variant (unsatisfiable goals: the closest one, ``kind`` 'closest' with the reason).
        Inputs with more rows than the largest batch of the candidates are split into queries
        of that many rows. An unknown app or model is a KeyError; inputs of the wrong shape (or
        that make the model raise) a ValueError; a variant that fails to load a
        ``VariantLoadError``; a query the session dropped a ``ServingError`` with the reason."""
        self._check(app, model, "online_query")
        accuracy = _accuracy(accuracy)
        latency_ms = _goal("latency_ms", latency_ms)
        candidates = self._candidates(app, model)
        names = self._registry.apps[app] if app is not None else [model]
        inputs = loading.check_inputs(inputs, self._models[names[0]]["source"])
        rows = _rows(inputs)
        step = max(v["batch_opt"] for v in candidates)
        t0 = time.perf_counter()
        futures = [
            self._submit(
                server_plan.online_app(app, model),
                _slice(inputs, first, first + step),
                latency_ms or None,
                accuracy,
            )
            for first in range(0, rows, step)
        ]
        outcomes = [f.result() for f in futures]
        settled = [self._settle(o, rows, "online query") for o in outcomes]
        for failure, _ in settled:
            if failure is not None:
                raise failure
        latency = (time.perf_counter() - t0) * 1e3
        first = outcomes[0]
        variant = self._variants[self._plan.variant_of[first.model]]
        load_s = max(s for _, s in settled)
        kind, reason = _kind(variant, candidates, accuracy, latency_ms, min(rows, step), load_s)
        record = {
            "variant": variant["name"], "model": variant["model"],
            "app": self._models[variant["model"]]["app"], "worker": first.worker,
            "hardware": variant["hardware"], "kind": kind, "reason": reason, "rows": rows,
            "batches": len(outcomes), "latency_ms": latency,
            "exec_ms": (max(o.finish_s for o in outcomes) - min(o.start_s for o in outcomes)) * 1e3,
            "load_ms": load_s * 1e3, "cost_per_s": variant["cost_per_s"],
        }  # fmt: skip
        return OnlineResult(np.concatenate([o.output for o in outcomes], axis=0), record)

    # --- offline -----------------------------------------------------------------------------

    def offline_query(
        self,
        input_dir: str | Path,
        output_dir: str | Path,
        *,
        app: str | None = None,
        model: str | None = None,
        accuracy: float = 0.0,
    ) -> OfflineJob:
        """Serves every ``*.npy`` file of ``input_dir`` (a [rows, width] array each; ``*.npz``
        with ``dense`` and ``sparse`` for a recsys model) in the background as the policy's
        offline queries (spare capacity, Sec. 4.2.3) and writes ``output_dir/<same name>.npy``.
        Returns the job at once; ``job.wait()`` for its end. An accuracy no candidate reaches is
        a ValueError (offline work is never served by a closer variant: it would wait forever)."""
        self._check(app, model, "offline_query")
        accuracy = _accuracy(accuracy)
        candidates = self._candidates(app, model)
        best = max(v["accuracy"] for v in candidates)
        if accuracy > best:
            raise ValueError(
                f"accuracy={accuracy!r}: no variant reaches it (the most accurate has {best:g})"
            )
        names = self._registry.apps[app] if app is not None else [model]
        # Queries no larger than every acceptable variant's limit: any of them can serve it.
        step = min(v["batch_opt"] for v in candidates if v["accuracy"] >= accuracy)
        job = OfflineJob(
            input_dir,
            output_dir,
            self._models[names[0]]["source"],
            step,
            lambda chunk: self._submit(
                server_plan.offline_app(app, model), chunk, None, accuracy
            ),  # fmt: skip
            lambda outcome, rows: self._settle(outcome, rows, "offline batch")[0],
        )
        with self._lock:
            if self._closed:
                raise RuntimeError("offline_query: the server is closed")
            self._jobs = [j for j in self._jobs if j.status == "running"] + [job]
        job.start()
        return job

    # --- what the policy did -----------------------------------------------------------------

    def decisions(self) -> dict[str, Any]:
        """What is visible of the policy's decisions, as columns (``DECISION_COLUMNS``):
        ``load`` (a variant's first batch on a worker: the policy loaded it there; the reason
        gives the executor's load time), ``add_worker`` (a worker beyond the initial ones
        served its first batch: the VM-Autoscaler started it) and ``dropped`` (a query the
        session dropped, with the reason). ``time_s`` is on the session's clock."""
        with self._seen.lock:
            loads = [
                (at, worker, name, load_s)
                for worker, by in self._seen.loaded.items()
                for name, (at, load_s) in by.items()
            ]
        rows = [
            (at, "load", name, worker, f"loaded in {load_s:.3g} s by its first batch")
            for at, worker, name, load_s in loads
        ]
        first: dict[int, float] = {}
        for at, worker, _, _ in loads:
            first[worker] = min(first.get(worker, at), at)
        rows += [
            (at, "add_worker", "", w, "beyond the initial workers: the VM-Autoscaler's")
            for w, at in first.items()
            if w >= len(self._hardware)
        ]
        with self._lock:
            rows += self._dropped
        rows.sort(key=lambda r: r[0])
        time_s, action, variant, worker, reason = zip(*rows, strict=True) if rows else ([],) * 5
        return {
            "time_s": np.asarray(time_s, dtype=np.float64),
            "action": list(action),
            "variant": list(variant),
            "worker": np.asarray(worker, dtype=np.int64),
            "reason": list(reason),
        }

    @property
    def workers(self) -> list[dict[str, Any]]:
        """Per worker seen so far: id, hardware and the variants its executor loaded (name ->
        load seconds). The policy's instance states are its own (not reported)."""
        with self._seen.lock:
            ids = range(max([len(self._hardware) - 1, *self._seen.loaded]) + 1)
            return [
                {
                    "worker": w,
                    "hardware": self._hardware[w]
                    if w < len(self._hardware)
                    else self._seen.hardware.get(w, ""),
                    "loaded": {n: s for n, (_, s) in self._seen.loaded.get(w, {}).items()},
                }
                for w in ids
            ]

    @property
    def result(self) -> Any:
        """The session's Result (every query's record) once closed; None before."""
        return self._session.result

    def close(self) -> None:
        """Cancels the offline jobs still running and ends the session once every submitted
        query is answered (idempotent)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            jobs = list(self._jobs)
        for job in jobs:
            job.cancel()
        try:
            self._session.close()
        finally:
            for job in jobs:
                job.wait()
            unregister_executor(self._executor)

    def __enter__(self) -> InfaasServer:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _kind(
    variant: dict[str, Any], candidates: list[dict[str, Any]], accuracy: float,
    latency_ms: float, batch: int, load_s: float,
) -> tuple[str, str]:  # fmt: skip
    """getVariant's kind as the caller can tell it: 'closest' when no candidate meets the goals
    (with what the chosen one misses), 'inactive' when the query's batch loaded the variant on
    its worker (a new instance), else 'active'."""

    def latency(v: dict[str, Any]) -> float:
        return v["latency_ms"][min(batch, v["batch_opt"]) - 1]

    def meets(v: dict[str, Any]) -> bool:
        ok_latency = latency_ms <= 0 or latency(v) <= latency_ms
        return v["accuracy"] >= accuracy and v["batch_opt"] >= batch and ok_latency

    if not any(meets(v) for v in candidates):
        missed = []
        if variant["accuracy"] < accuracy:
            missed.append(f"accuracy >= {accuracy:g} (it has {variant['accuracy']:g})")
        if latency_ms > 0 and latency(variant) > latency_ms:
            missed.append(f"latency <= {latency_ms:g} ms (it takes {latency(variant):.3g} ms)")
        return "closest", (
            f"no variant meets the goals; {variant['name']!r} is the closest"
            + (f": it misses {' and '.join(missed)}" if missed else "")
        )
    return ("inactive" if load_s > 0 else "active"), ""
