"""The real-serving side of INFaaS's declarative API: an :class:`InfaasServer` over a
:class:`~servelab.systems.infaas.registry.ModelRegistry` runs online queries (the variant chosen
per query by the C++ getVariant) and offline jobs (folders of ``.npy`` inputs served from spare
capacity) on real executors.

::

    with infaas.InfaasServer(reg, workers={"cpu": 2}) as server:
        out = server.online_query(x, app="ranking", latency_ms=5, accuracy=0.7)
        out.outputs, out.record["variant"], out.record["reason"]
        job = server.offline_query("in/", "out/", app="ranking")
        job.wait()

Workers: each is one thread that runs one batch at a time and keeps its loaded variants. The
metadata store (C++, not thread-safe) is guarded by the server's lock; its per-worker utilisation
is the predicted seconds of work queued on the worker, as the simulated ``infaas`` policy uses.

Offline throttling: an offline job runs batches of at most its variant's ``batch_opt`` rows, and
starts a batch only when no online query is in flight on the server; an online query arriving
meanwhile waits for at most that one batch on the worker.
"""

from __future__ import annotations

import io
import math
import threading
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ... import textio
from . import loading
from .registry import ModelRegistry

#: What an online query's record holds (see ``InfaasServer.online_query``).
RECORD_KEYS = (
    "variant", "model", "app", "worker", "hardware", "kind", "reason", "rows", "batches",
    "latency_ms", "exec_ms", "load_ms", "cost_per_s",
)  # fmt: skip


@dataclass
class OnlineResult:
    """An online query's outputs and its record (``RECORD_KEYS``)."""

    outputs: np.ndarray
    record: dict[str, Any]


@dataclass
class _Worker:
    id: int
    hardware: str
    pool: ThreadPoolExecutor
    loaded: dict[str, loading.LoadedVariant] = field(default_factory=dict)
    queued_s: float = 0.0  # predicted seconds of work submitted and not finished
    pending: int = 0  # batches submitted and not finished (exact, unlike the float sum)


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


class InfaasServer:
    """Loaded variants on workers, online and offline queries; thread-safe; ``close()`` (or a
    ``with`` block) stops the offline jobs and joins the workers."""

    def __init__(self, registry: ModelRegistry, workers: Any = None) -> None:
        if not isinstance(registry, ModelRegistry):
            raise ValueError(f"registry={registry!r} must be a ModelRegistry")
        if len(registry) == 0:
            raise ValueError("registry has no variant: register_model() first")
        self._registry = registry
        self._models = registry.models
        hardware = _workers_arg(workers if workers is not None else {"cpu": 1})
        self._variants = {
            v["name"]: v for v in registry.variants() if v["hardware"] in set(hardware)
        }
        self._store = registry.metadata_store(set(hardware))
        # Imports the variants' backends now (torch takes a second), not in the first query.
        for framework in sorted({v["framework"] for v in self._variants.values()}):
            loading.unavailable(framework)
        self._workers = []
        for hw in hardware:
            wid = self._store.add_worker(hw)
            pool = ThreadPoolExecutor(1, thread_name_prefix=f"infaas-worker{wid}")
            self._workers.append(_Worker(wid, hw, pool))
        self._lock = threading.Lock()
        self._online_done = threading.Condition(self._lock)
        self._online_in_flight = 0
        self._closed = False
        self._jobs: list[OfflineJob] = []

    # --- choosing a variant ------------------------------------------------------------------

    @property
    def workers(self) -> list[dict[str, Any]]:
        """Per worker: id, hardware, loaded variants and their states, queued seconds."""
        with self._lock:
            return [
                {
                    "worker": w.id,
                    "hardware": w.hardware,
                    "queued_s": w.queued_s,
                    "loaded": {n: self._store.state(n, w.id) for n in w.loaded},
                }
                for w in self._workers
            ]

    def _choose(
        self, app: str | None, model: str | None, accuracy: float, latency_ms: float,
        cost: float | None, rows: int,
    ) -> dict[str, Any]:  # fmt: skip
        """getVariant under the lock, then the cost ceiling; the batch asked is the input's rows,
        capped at the largest batch-optimised size of the candidates (larger inputs run in
        several batches)."""
        candidates = [
            v for v in self._variants.values()
            if (app is None or v["task"] == app) and (model is None or v["model"] == model)
        ]  # fmt: skip
        if not candidates:
            what = f"app={app!r}" if app is not None else f"model={model!r}"
            raise ValueError(f"{what}: no variant runs on this server's workers")
        batch = min(rows, max(v["batch_opt"] for v in candidates))
        choice = self._store.get_variant(
            task=app, model=model, accuracy=accuracy, latency_ms=latency_ms, batch=batch
        )
        if choice["kind"] == "none":
            raise ValueError(choice["reason"])
        if cost is not None and self._variants[choice["variant"]]["cost_per_s"] > cost:
            choice = self._within_cost(choice, candidates, accuracy, latency_ms, cost, batch)
        if choice["worker"] < 0:
            choice["worker"] = self._least_utilised(self._variants[choice["variant"]]["hardware"])
        return choice

    def _within_cost(
        self, choice: dict[str, Any], candidates: list[dict[str, Any]], accuracy: float,
        latency_ms: float, cost: float, batch: int,
    ) -> dict[str, Any]:  # fmt: skip
        """getVariant has no cost goal: when its choice costs more than ``cost`` ($/s), the
        cheapest variant meeting every goal within it, else the choice with the reason."""
        picked = self._variants[choice["variant"]]

        def meets(v: dict[str, Any]) -> bool:
            ok_latency = latency_ms <= 0 or v["latency_ms"][batch - 1] <= latency_ms
            return v["batch_opt"] >= batch and v["accuracy"] >= accuracy and ok_latency

        fits = [v for v in candidates if v["cost_per_s"] <= cost and meets(v)]
        if not fits:
            return dict(
                choice,
                kind="closest",
                reason=(
                    f"no variant meets the goals within cost={cost} $/s; {picked['name']!r} "
                    f"costs {picked['cost_per_s']:.3g} $/s"
                    + (f"; {choice['reason']}" if choice["reason"] else "")
                ),
            )
        best = min(fits, key=lambda v: (v["cost_per_s"], v["latency_ms"][batch - 1], v["name"]))
        holders = [
            w.id for w in self._workers
            if best["name"] in w.loaded and self._store.state(best["name"], w.id) == "active"
        ]  # fmt: skip
        worker = (
            min(holders, key=lambda w: (self._store.utilisation(w), w))
            if holders
            else self._least_utilised(best["hardware"])
        )
        return {
            "kind": "active" if holders else "inactive",
            "variant": best["name"],
            "variant_index": self._store.variant_index(best["name"]),
            "worker": worker,
            "reason": f"getVariant's {picked['name']!r} costs more than cost={cost} $/s",
        }

    def _place(
        self, app: str | None, model: str | None, accuracy: float, latency_ms: float,
        cost: float | None, rows: int,
    ) -> tuple[dict[str, Any], dict[str, Any], _Worker]:  # fmt: skip
        """The variant and worker for a query (lock held). An Active instance whose worker
        cannot finish the query within ``latency_ms`` (queued work + the variant's latency) is
        marked Overloaded and getVariant asked again, as the simulated ``infaas`` policy does (up
        to 8 times), so a busy instance leads to a new one elsewhere (model-horizontal scaling);
        it turns Active again when its worker's queue empties."""
        for _ in range(8):
            choice = self._choose(app, model, accuracy, latency_ms, cost, rows)
            variant = self._variants[choice["variant"]]
            worker = self._workers[choice["worker"]]
            latency = variant["latency_ms"][min(rows, variant["batch_opt"]) - 1]
            late = latency_ms > 0 and worker.queued_s * 1e3 + latency > latency_ms
            if not (late and variant["name"] in worker.loaded and choice["kind"] == "active"):
                break
            self._store.set_state(variant["name"], worker.id, "overloaded")
        return choice, variant, worker

    def _least_utilised(self, hardware: str) -> int:
        live = [w for w in self._workers if w.hardware == hardware]
        return min(live, key=lambda w: (w.queued_s, w.id)).id

    # --- running -----------------------------------------------------------------------------

    def _submit(self, variant: dict[str, Any], worker: _Worker, inputs: Any, rows: int) -> Any:
        """Runs ``inputs`` on the worker's thread (loading the variant first if needed); returns
        (outputs, batches, exec seconds, load seconds). Call with the lock held."""
        predicted = variant["latency_ms"][min(rows, variant["batch_opt"]) - 1] / 1e3
        predicted *= math.ceil(rows / variant["batch_opt"])
        worker.queued_s += predicted
        worker.pending += 1
        self._store.set_utilisation(worker.id, worker.queued_s)
        source = self._models[variant["model"]]["source"]

        def work() -> tuple[np.ndarray, int, float, float]:
            load_s = 0.0
            try:
                loaded = worker.loaded.get(variant["name"])
                if loaded is None:
                    loaded = loading.load(
                        variant["name"], source, variant["framework"],
                        variant["batch_opt"], variant["threads"],
                    )  # fmt: skip
                    load_s = loaded.load_s
                    with self._lock:
                        worker.loaded[variant["name"]] = loaded
                        self._store.load(variant["name"], worker.id)
                t0 = time.perf_counter()
                out, batches = loaded.run(inputs)
                return out, batches, time.perf_counter() - t0, load_s
            finally:
                with self._lock:
                    worker.pending -= 1
                    # Exactly 0 once the queue is empty (the float sum may leave rounding).
                    worker.queued_s = (
                        max(worker.queued_s - predicted, 0.0) if worker.pending else 0.0
                    )
                    self._store.set_utilisation(worker.id, worker.queued_s)
                    if not worker.pending:  # an emptied queue: Overloaded turns Active
                        for name in worker.loaded:
                            if self._store.state(name, worker.id) == "overloaded":
                                self._store.set_state(name, worker.id, "active")

        return worker.pool.submit(work)

    def online_query(
        self,
        inputs: Any,
        *,
        app: str | None = None,
        model: str | None = None,
        latency_ms: float = 0.0,
        accuracy: float = 0.0,
        cost: float | None = None,
    ) -> OnlineResult:
        """Serves ``inputs`` now: float32 [rows, width] for a TorchScript model, (dense, sparse)
        for a recsys one. Give ``app`` with goals (``latency_ms`` per batch, 0: none;
        ``accuracy`` floor in [0, 1]; ``cost`` ceiling in $/s of the variant) or ``model`` (any
        of its variants). Unsatisfiable goals are served by the closest variant, with the
        reason in the record; an unknown app or model is a KeyError, a variant that fails to
        load a ``VariantLoadError``, inputs of the wrong shape a ValueError."""
        if (app is None) == (model is None):
            raise ValueError("online_query: give exactly one of app= and model=")
        if app is not None:
            self._registry.check_app(app)
        else:
            self._registry.check_model(model)
        accuracy = _accuracy(accuracy)
        latency_ms = _goal("latency_ms", latency_ms)
        cost = None if cost is None else _goal("cost", cost)
        names = self._registry.apps[app] if app is not None else [model]
        # Every model of an app takes the same inputs (register_model checks it).
        source = self._models[names[0]]["source"]
        inputs = loading.check_inputs(inputs, source)
        rows = int(inputs[0].shape[0]) if isinstance(inputs, tuple) else int(inputs.shape[0])

        t0 = time.perf_counter()
        with self._lock:
            if self._closed:
                raise RuntimeError("online_query: the server is closed")
            choice, variant, worker = self._place(app, model, accuracy, latency_ms, cost, rows)
            self._online_in_flight += 1
            future = self._submit(variant, worker, inputs, rows)
        try:
            out, batches, exec_s, load_s = future.result()
        finally:
            with self._lock:
                self._online_in_flight -= 1
                if self._online_in_flight == 0:
                    self._online_done.notify_all()
        record = {
            "variant": variant["name"], "model": variant["model"],
            "app": self._models[variant["model"]]["app"], "worker": worker.id,
            "hardware": worker.hardware, "kind": choice["kind"], "reason": choice["reason"],
            "rows": rows, "batches": batches, "latency_ms": (time.perf_counter() - t0) * 1e3,
            "exec_ms": exec_s * 1e3, "load_ms": load_s * 1e3,
            "cost_per_s": variant["cost_per_s"],
        }  # fmt: skip
        return OnlineResult(out, record)

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
        with ``dense`` and ``sparse`` for a recsys model) in the background from spare capacity
        (see the module's throttling rule) and writes ``output_dir/<same name>.npy``. Returns
        the job at once; ``job.wait()`` for its end."""
        if (app is None) == (model is None):
            raise ValueError("offline_query: give exactly one of app= and model=")
        if app is not None:
            self._registry.check_app(app)
        else:
            self._registry.check_model(model)
        accuracy = _accuracy(accuracy)
        folder = Path(input_dir)
        if not folder.is_dir():
            raise ValueError(f"input_dir={str(input_dir)!r} is not a folder")
        files = sorted(p for p in folder.iterdir() if p.suffix in (".npy", ".npz"))
        if not files:
            raise ValueError(f"input_dir={str(input_dir)!r} has no .npy or .npz file")
        out_dir = Path(output_dir)
        out_dir.mkdir(parents=True, exist_ok=True)
        with self._lock:
            if self._closed:
                raise RuntimeError("offline_query: the server is closed")
            rows = max(v["batch_opt"] for v in self._variants.values())  # favour batching
            choice = self._choose(app, model, accuracy, 0.0, None, rows)
            job = OfflineJob(self, choice, files, out_dir)
            self._jobs = [j for j in self._jobs if j._thread.is_alive()] + [job]
        job._thread.start()
        return job

    def _wait_for_idle(self, job: OfflineJob) -> bool:
        """Blocks until no online query is in flight (the throttling rule); False if cancelled."""
        with self._lock:
            while self._online_in_flight > 0 and not job._cancel.is_set():
                self._online_done.wait(0.05)
            return not job._cancel.is_set()

    def close(self) -> None:
        """Cancels the offline jobs still running and joins every thread (idempotent)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            jobs = list(self._jobs)
        for job in jobs:
            job.cancel()
            job._thread.join()
        for w in self._workers:
            w.pool.shutdown(wait=True)

    def __enter__(self) -> InfaasServer:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class OfflineJob:
    """A background offline job: ``status`` ("running", "done", "failed", "cancelled"),
    ``done`` / ``total`` files, ``errors`` (file -> message), ``wait()``, ``cancel()``."""

    def __init__(
        self, server: InfaasServer, choice: dict[str, Any], files: list[Path], out_dir: Path
    ) -> None:
        self._server = server
        self.variant = choice["variant"]
        self.worker = choice["worker"]
        self.reason = choice["reason"]
        self.files = files
        self.output_dir = out_dir
        self.total = len(files)
        self.done = 0
        self.batches = 0
        self.errors: dict[str, str] = {}
        self.status = "running"
        self._cancel = threading.Event()
        self._thread = threading.Thread(target=self._run, name="infaas-offline", daemon=True)

    def _read(self, path: Path, source: dict[str, Any]) -> Any:
        raw = textio.read_bytes(path, what="offline input (.npy / .npz)")
        try:
            data = np.load(io.BytesIO(raw), allow_pickle=False)
            if path.suffix == ".npz":
                data = (data["dense"], data["sparse"])
        except (ValueError, KeyError, OSError) as e:
            raise ValueError(f"{path}: not a readable numpy file ({e})") from None
        return loading.check_inputs(data, source, field=str(path))

    def _run(self) -> None:
        server = self._server
        variant = server._variants[self.variant]
        worker = server._workers[self.worker]
        source = server._models[variant["model"]]["source"]
        for path in self.files:
            if self._cancel.is_set():
                break
            try:
                inputs = self._read(path, source)
                outs = []
                n = inputs[0].shape[0] if isinstance(inputs, tuple) else inputs.shape[0]
                for first in range(0, n, variant["batch_opt"]):
                    chunk: Any = (
                        tuple(x[first : first + variant["batch_opt"]] for x in inputs)
                        if isinstance(inputs, tuple)
                        else inputs[first : first + variant["batch_opt"]]
                    )
                    if not server._wait_for_idle(self):
                        break
                    rows = len(chunk[0]) if isinstance(chunk, tuple) else len(chunk)
                    with server._lock:
                        future = server._submit(variant, worker, chunk, rows)
                    outs.append(future.result()[0])
                    self.batches += 1
                else:
                    np.save(self.output_dir / f"{path.stem}.npy", np.concatenate(outs, axis=0))
                    self.done += 1
            except (ValueError, OSError, RuntimeError, MemoryError) as e:
                self.errors[path.name] = str(e)
        if self._cancel.is_set() and self.done + len(self.errors) < self.total:
            self.status = "cancelled"
        else:
            self.status = "failed" if self.errors else "done"

    def wait(self, timeout: float | None = None) -> str:
        """Waits for the job's end (at most ``timeout`` seconds); returns its status."""
        self._thread.join(timeout)
        return self.status

    def cancel(self) -> None:
        """Stops the job after the batch under way."""
        self._cancel.set()

    def summary(self) -> dict[str, Any]:
        return {
            "status": self.status, "variant": self.variant, "worker": self.worker,
            "reason": self.reason, "done": self.done, "total": self.total,
            "batches": self.batches, "errors": dict(self.errors),
            "output_dir": str(self.output_dir),
        }  # fmt: skip

    def __repr__(self) -> str:
        return f"OfflineJob({self.status}, {self.done}/{self.total} files, {self.variant})"
