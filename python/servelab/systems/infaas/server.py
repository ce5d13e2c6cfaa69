"""The real-serving side of INFaaS's declarative API: an :class:`InfaasServer` over a
:class:`~servelab.systems.infaas.registry.ModelRegistry` runs online queries (the variant chosen
per query by the C++ getVariant) and offline jobs (folders of ``.npy`` inputs served from spare
capacity) on real executors, and a monitor thread scales the variants as the load changes.

::

    with infaas.InfaasServer(reg, workers={"cpu": 2}) as server:
        out = server.online_query(x, app="ranking", latency_ms=5, accuracy=0.7)
        out.outputs, out.record["variant"], out.record["reason"]
        job = server.offline_query("in/", "out/", app="ranking")
        job.wait()
        server.decisions()  # what the monitor decided, as columns

Workers: each is one thread that runs one batch at a time from its own queue (online queries
ahead of offline batches) and keeps its loaded variants. The metadata store (C++, not
thread-safe) is guarded by the server's lock; its per-worker utilisation is the predicted seconds
of work queued on the worker, as the simulated ``infaas`` policy uses.

The monitor (every ``period_s``; ``server_autoscaler.py``) measures each instance's batches
against the profile's p99 (Interfered, Sec. 4.1), its served rate against its saturation
throughput (Overloaded), runs the simulated policy's Model-Autoscaler decision (the C++
``application_problem`` + ``plan_scaling``, Sec. 4.2.2) on each application's measured load, and
records every decision in :meth:`InfaasServer.decisions`.

Lost workers: a query whose own inputs make the executor raise (a ValueError, or an exception
while the worker still serves a known-good input) fails alone with a ValueError; a worker whose
executor raised otherwise on ``lost_after`` batches in a row, or whose thread died, is marked
lost: it leaves the metadata store (getVariant no longer sees it) and its queued queries are
re-dispatched to the other workers. A query that failed on a worker is re-dispatched
too; one that cannot be served anywhere raises :class:`ServingError` naming each failure. With
``batch_timeout_ms``, a worker whose batch runs longer is lost the same way and its stuck thread
abandoned (``server_watchdog.py``).

VM-Autoscaler (Sec. 4.2.3, ``server_vm.py``): with ``max_workers`` above the initial workers, the
monitor starts a worker (usable after ``startup_s``) when the paper's rules ask for one and
stops the ones it started once idle for ``idle_s``; an Interfered instance migrates to another
worker (``server_autoscaler.py``).

Offline throttling (Sec. 4.2.3, 6.3.2): an offline job runs batches of at most its variant's
``batch_opt`` rows, and starts one only while the server's online utilisation (the predicted
seconds of online work submitted over the last ``period_s``, over the live workers) is at most
``offline_util`` (40 %) and no online batch of that window exceeded its profiled p99 by more than
``interference_tol``; each pause and resume is a decision.
"""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from collections.abc import Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ... import _core
from . import loading
from .registry import ModelRegistry
from .server_autoscaler import Autoscaler
from .server_monitor import DECISION_COLUMNS, DecisionLog, LoadMeter, ServerSettings
from .server_offline import OfflineJob
from .server_vm import VmAutoscaler, start_up
from .server_watchdog import check_hung

__all__ = ["DECISION_COLUMNS", "RECORD_KEYS", "InfaasServer", "OfflineJob", "OnlineResult"]

#: What an online query's record holds (see ``InfaasServer.online_query``).
RECORD_KEYS = (
    "variant", "model", "app", "worker", "hardware", "kind", "reason", "rows", "batches",
    "latency_ms", "exec_ms", "load_ms", "cost_per_s",
)  # fmt: skip

#: A query is tried on at most this many workers before it fails with every reason.
MAX_TRIES = 3


class ServingError(RuntimeError):
    """A query no live worker could serve (each worker's failure is in the message)."""


@dataclass
class OnlineResult:
    """An online query's outputs and its record (``RECORD_KEYS``)."""

    outputs: np.ndarray
    record: dict[str, Any]


@dataclass
class _Task:
    """One unit of a worker's queue: an online query, an offline batch, an autoscaler load or a
    monitoring probe (one row, measuring an Interfered instance)."""

    kind: str  # "online", "offline", "load", "probe"
    variant: dict[str, Any]
    inputs: Any
    rows: int
    predicted_s: float
    future: Future = field(default_factory=Future)
    goals: tuple | None = None  # online: (app, model, accuracy, latency_ms, cost)
    choice: dict[str, Any] | None = None
    tried: list[int] = field(default_factory=list)  # workers it failed on
    errors: list[str] = field(default_factory=list)


@dataclass
class _Worker:
    id: int
    hardware: str
    wake: threading.Condition
    thread: threading.Thread | None = None
    queue: deque[_Task] = field(default_factory=deque)
    running: _Task | None = None
    loaded: dict[str, loading.LoadedVariant] = field(default_factory=dict)
    queued_s: float = 0.0  # predicted seconds of work submitted and not finished
    pending: int = 0  # tasks submitted and not finished (exact, unlike the float sum)
    lost: str = ""  # why the worker is lost ('' while live)
    failures: int = 0  # batches failed in a row
    warm: set[str] = field(default_factory=set)  # variants past their first (warm-up) batch
    retiring: set[str] = field(default_factory=set)  # left the store; unloaded once unused
    busy_s: float = 0.0  # measured seconds of batches in the current period
    utilisation: float = 0.0  # busy share of the last period
    # This period's online and probe batches by variant: [measured s, profiled p99 s, batches].
    stats: dict[str, list[float]] = field(default_factory=dict)
    served_rows: dict[str, int] = field(default_factory=dict)  # online rows, this period
    last_used: dict[str, float] = field(default_factory=dict)  # variant -> last batch end
    starting: bool = False  # started by the VM-Autoscaler, not usable before its start-up ends
    stopped: str = ""  # why the VM-Autoscaler stopped it ('' while not)
    hung: bool = False  # its thread is stuck in an executor and abandoned (not joined)
    batch: tuple[_Task, float] | None = None  # the running batch and its perf_counter start
    active_at: float = 0.0  # when a task last left it (server time)
    # Executor seconds since window_t0 (perf_counter): the VM-Autoscaler's utilisation window.
    busy_window_s: float = 0.0
    window_t0: float = field(default_factory=time.perf_counter)

    @property
    def live(self) -> bool:
        return not (self.lost or self.stopped or self.starting)

    @property
    def status(self) -> str:
        if self.lost:
            return "lost"
        return "stopped" if self.stopped else "starting" if self.starting else "live"

    def uses(self, name: str) -> bool:
        """Whether a queued or running task needs the variant."""
        running = self.running is not None and self.running.variant["name"] == name
        return running or any(t.variant["name"] == name for t in self.queue)


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


def _output_dir(inputs: Path, output_dir: str | Path) -> Path:
    """The offline outputs' folder, made; ValueError when it is not a folder, or when it and
    the inputs' folder are one or hold each other (symlinks resolved): outputs named after the
    inputs would overwrite them, or be read as inputs."""
    out = Path(output_dir)
    src, dst = inputs.resolve(), out.resolve()
    if src == dst or src in dst.parents or dst in src.parents:
        how = "is" if src == dst else "is inside" if src in dst.parents else "holds"
        raise ValueError(
            f"output_dir={str(output_dir)!r} {how} input_dir={str(inputs)!r} ({dst}): its "
            "outputs would overwrite the inputs or be read as inputs; give a separate folder"
        )
    if out.exists() and not out.is_dir():
        raise ValueError(f"output_dir={str(output_dir)!r} is a file, not a folder")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise ValueError(f"output_dir={str(output_dir)!r} cannot be made: {e}") from e
    return out


def _chunks(rows: int, batch_opt: int) -> list[int]:
    """Rows of each batch when ``rows`` run in batches of at most ``batch_opt``."""
    return [min(batch_opt, rows - first) for first in range(0, rows, batch_opt)]


class InfaasServer:
    """Loaded variants on workers, online and offline queries, the periodic monitor;
    thread-safe; ``close()`` (or a ``with`` block) stops the offline jobs and the monitor and
    joins every thread.

    ``period_s`` (default 1 s, as the simulated policy's ``autoscale_s``): the monitor's period;
    ``slack`` (1.05): the Model-Autoscaler's slack-threshold; ``load_window_s`` (5 s): the load is
    the mean items/s over this window; ``offline_util`` (0.4): offline batches pause above this
    online utilisation; ``interference_tol`` (0.1): an instance whose batches over a period take
    longer than the profile's p99 x (1 + tol), and ``interference_floor_ms`` (0.25) more per batch,
    while co-located is Interfered; ``lost_after`` (3):
    failed batches in a row that mark a worker lost; ``autoscale`` (True): False keeps the
    monitoring (states, lost workers) without scaling, migrating or unloading.

    The VM-Autoscaler (``server_vm.py``, the simulated policy's parameters): ``max_workers``
    (None: the initial workers, i.e. off) caps the live workers; ``startup_s`` (20 s) before a new
    worker is usable; ``poll_s`` (2 s) between evaluations of its rules; ``threshold`` (0.8) of
    utilisation and of workers holding an Overloaded instance; ``idle_s`` (60 s) idle before a
    worker it started stops. ``batch_timeout_ms`` (None: off): a batch running longer marks its
    worker lost and its queries move (``server_watchdog.py``). ``autoscaler`` ('greedy'): the
    Model-Autoscaler's solver, as the simulated policy's (``'ilp'``: Sec. 4.2.1's exact program;
    its decisions are then recorded as ``ilp``).
    """

    def __init__(
        self,
        registry: ModelRegistry,
        workers: Any = None,
        *,
        period_s: float = 1.0,
        slack: float = 1.05,
        load_window_s: float = 5.0,
        offline_util: float = 0.4,
        interference_tol: float = 0.1,
        interference_floor_ms: float = 0.25,
        lost_after: int = 3,
        autoscale: bool = True,
        max_workers: int | None = None,
        startup_s: float = 20.0,
        poll_s: float = 2.0,
        threshold: float = 0.8,
        idle_s: float = 60.0,
        batch_timeout_ms: float | None = None,
        autoscaler: str = "greedy",
    ) -> None:
        if not isinstance(registry, ModelRegistry):
            raise ValueError(f"registry={registry!r} must be a ModelRegistry")
        if len(registry) == 0:
            raise ValueError("registry has no variant: register_model() first")
        self.settings = ServerSettings(
            period_s=period_s,
            slack=slack,
            load_window_s=load_window_s,
            offline_util=offline_util,
            interference_tol=interference_tol,
            interference_floor_ms=interference_floor_ms,
            lost_after=lost_after,
            autoscale=autoscale,
            max_workers=max_workers,
            startup_s=startup_s,
            poll_s=poll_s,
            threshold=threshold,
            idle_s=idle_s,
            batch_timeout_ms=batch_timeout_ms,
            autoscaler=autoscaler,
        )
        self._registry = registry
        self._models = registry.models
        hardware = _workers_arg(workers if workers is not None else {"cpu": 1})
        runs_on = {v["hardware"] for v in registry.variants()}
        for hw in sorted(set(hardware) - runs_on):  # such a worker would never serve anything
            raise ValueError(
                f"workers: no registered variant runs on hardware {hw!r} (they run on "
                f"{sorted(runs_on)}; registry.skipped says why a variant was not made)"
            )
        self._variants = {
            v["name"]: v for v in registry.variants() if v["hardware"] in set(hardware)
        }
        # The profile's p99 by batch: what a measured batch is compared with (as the policy does).
        self._p99 = {
            v["architecture"]: list(v["latency_ms"])
            for v in _core.infaas.variants_from_profile(registry.profile(), "p99")
        }
        self._store = registry.metadata_store(set(hardware))
        # Imports the variants' backends now (torch takes a second), not in the first query.
        for framework in sorted({v["framework"] for v in self._variants.values()}):
            loading.unavailable(framework)
        self._lock = threading.Lock()
        self._online_done = threading.Condition(self._lock)
        self._workers: list[_Worker] = []
        for hw in hardware:
            w = _Worker(self._store.add_worker(hw), hw, threading.Condition(self._lock))
            self._workers.append(w)
        self._online_in_flight = 0
        self._closed = False  # no new query
        self._closing = False  # worker threads leave once their queue is empty
        self._jobs: list[OfflineJob] = []
        self._t0 = time.monotonic()
        self._log = DecisionLog()
        s = self.settings
        self._meter = LoadMeter(math.ceil(s.load_window_s / s.period_s - 1e-9), s.period_s)
        self._goals: dict[str, list[float]] = {}  # app -> [accuracy floor, tightest SLO ms]
        self._online_work: deque[tuple[float, float]] = deque()  # (submitted, predicted s)
        self._slow_online_at = -math.inf  # last online batch over its profile
        self._offline_paused = False
        self._autoscaler = Autoscaler(self)
        self._vm = VmAutoscaler(self)
        self._stop = threading.Event()
        for w in self._workers:
            w.thread = threading.Thread(
                target=self._worker_main, args=(w,), name=f"infaas-worker{w.id}", daemon=True
            )
            w.thread.start()
        self._monitor = threading.Thread(target=self._monitor_main, name="infaas-monitor")
        self._monitor.daemon = True
        self._monitor.start()

    # --- state ---------------------------------------------------------------------------------

    def _now(self) -> float:
        return time.monotonic() - self._t0

    def _decide(self, action: str, variant: str, worker: int, reason: str) -> None:
        """Records a decision (lock held)."""
        self._log.add(self._now(), action, variant, worker, reason)

    def decisions(self) -> dict[str, Any]:
        """Every decision so far, as columns (``DECISION_COLUMNS``): ``time_s`` since the server
        started, ``action`` ('replicate', 'upgrade', 'downgrade', 'unload', 'migrate',
        'overloaded', 'interfered', 'active', 'lost', 'redispatch', 'discarded', 'add_worker',
        'worker_ready', 'remove_worker', 'offline_pause', 'offline_resume'),
        ``variant`` ('' for a worker's decision), ``worker`` (-1 for the server's), ``reason``."""
        with self._lock:
            return self._log.columns()

    @property
    def workers(self) -> list[dict[str, Any]]:
        """Per worker: id, hardware, status ('live', 'starting', 'stopped', 'lost'), loaded
        variants and their states, queued seconds, the busy share of the last period, and why it
        is lost ('' while not) or stopped."""
        with self._lock:
            return [
                {
                    "worker": w.id,
                    "hardware": w.hardware,
                    "status": w.status,
                    "stopped": w.stopped,
                    "queued_s": w.queued_s,
                    "utilisation": w.utilisation,
                    "lost": w.lost,
                    "loaded": {
                        n: self._store.state(n, w.id) if w.live else "inactive"
                        for n in w.loaded
                        if n not in w.retiring
                    },
                }
                for w in self._workers
            ]

    def _live(self, hardware: str | None = None) -> list[_Worker]:
        return [w for w in self._workers if w.live and hardware in (None, w.hardware)]

    # --- choosing a variant ------------------------------------------------------------------

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
            w.id for w in self._live()
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
        to 8 times), so a busy instance gives way to a new one elsewhere (model-horizontal scaling);
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

    def _least_utilised(self, hardware: str, exclude: Sequence[int] = ()) -> int:
        live = [w for w in self._live(hardware) if w.id not in exclude]
        if not live:
            # The live ones were all excluded (the query failed there); only the lost have a why.
            failed = [f"worker {w.id}" for w in self._live(hardware)]
            lost = [
                f"worker {w.id}: {w.lost}"
                for w in self._workers
                if w.lost and w.hardware == hardware
            ]
            raise ServingError(
                f"no {'other ' if failed else ''}live {hardware} worker can serve it"
                + (f" (it failed on {', '.join(failed)})" if failed else "")
                + (f" (lost: {'; '.join(lost)})" if lost else "")
            )
        return min(live, key=lambda w: (w.queued_s, w.id)).id

    # --- the worker threads ------------------------------------------------------------------

    def _predicted_s(self, variant: dict[str, Any], rows: int) -> float:
        return sum(variant["latency_ms"][r - 1] for r in _chunks(rows, variant["batch_opt"])) / 1e3

    def _enqueue(self, worker: _Worker, task: _Task) -> None:
        """Queues the task on the worker (lock held): an online query ahead of the offline
        batches, loads and probes, which keep their order."""
        name = task.variant["name"]
        if name in worker.retiring and task.kind in ("online", "offline"):
            # getVariant placed a query on an instance being retired: it stays, back in the store.
            worker.retiring.discard(name)
            if self._store.state(name, worker.id) == "inactive":
                self._store.load(name, worker.id)
        worker.queued_s += task.predicted_s
        worker.pending += 1
        self._store.set_utilisation(worker.id, worker.queued_s)
        if task.kind == "online":
            at = next((i for i, t in enumerate(worker.queue) if t.kind != "online"), None)
            if at is not None:
                worker.queue.insert(at, task)
                worker.wake.notify()
                return
        worker.queue.append(task)
        worker.wake.notify()

    def _finished(self, worker: _Worker, task: _Task) -> None:
        """The task left the worker (done, failed or moved; lock held)."""
        worker.pending -= 1
        worker.active_at = self._now()
        # Exactly 0 once the queue is empty (the float sum may leave rounding).
        worker.queued_s = max(worker.queued_s - task.predicted_s, 0.0) if worker.pending else 0.0
        if worker.live:
            self._store.set_utilisation(worker.id, worker.queued_s)
        if not worker.pending and worker.live:  # an emptied queue: Overloaded turns Active
            for name in worker.loaded:
                if self._store.state(name, worker.id) == "overloaded":
                    self._store.set_state(name, worker.id, "active")
        self._drop_retired(worker)

    def _drop_retired(self, worker: _Worker) -> None:
        """Retired instances no queued task needs leave the worker (lock held)."""
        for name in [n for n in worker.retiring if not worker.uses(n)]:
            worker.retiring.discard(name)
            worker.loaded.pop(name, None)
            worker.warm.discard(name)

    def _worker_main(self, worker: _Worker) -> None:
        """The worker's thread; an exception escaping it (its thread dying) loses the worker."""
        try:
            if worker.starting and not start_up(self, worker):
                return
            while True:
                with self._lock:  # one acquisition: the last task's end and the next's start
                    worker.running = None
                    self._drop_retired(worker)
                    while not (worker.queue or self._closing or worker.lost or worker.stopped):
                        worker.wake.wait()
                    if worker.lost or worker.stopped or not worker.queue:
                        return
                    task = worker.queue.popleft()
                    worker.running = task
                self._execute(worker, task)
        except BaseException as e:  # noqa: BLE001  (the worker is lost, its queries moved)
            with self._lock:
                task, worker.running = worker.running, None
                self._lose(worker, f"its thread died: {type(e).__name__}: {e}")
                if task is not None and not task.future.done():
                    self._finished(worker, task)
                    task.tried.append(worker.id)
                    task.errors.append(f"worker {worker.id}: {type(e).__name__}: {e}")
                    self._redispatch(task)

    def _load(self, worker: _Worker, variant: dict[str, Any]) -> tuple[Any, float]:
        """The worker's instance of the variant, loaded now when missing (on its thread)."""
        name = variant["name"]
        loaded = worker.loaded.get(name)  # only this thread adds; the lock guards removals
        if loaded is not None:
            return loaded, 0.0
        source = self._models[variant["model"]]["source"]
        loaded = loading.load(
            name, source, variant["framework"], variant["batch_opt"], variant["threads"]
        )
        with self._lock:
            worker.loaded[name] = loaded
            worker.warm.discard(name)
            worker.last_used[name] = self._now()
            if worker.live and self._store.state(name, worker.id) == "inactive":
                self._store.load(name, worker.id)
        return loaded, loaded.load_s

    def _execute(self, worker: _Worker, task: _Task) -> None:
        try:
            loaded, load_s = self._load(worker, task.variant)
        except loading.VariantLoadError as e:
            with self._lock:
                self._finished(worker, task)
                if task.kind == "load":
                    self._autoscaler.load_failed(worker, task, str(e))
            task.future.set_exception(e)
            return
        if task.kind == "load":
            with self._lock:
                self._finished(worker, task)
                self._autoscaler.loaded(worker, task)
            task.future.set_result(None)
            return
        t0 = time.perf_counter()
        worker.batch = (task, t0)  # what the hung-executor watchdog reads
        try:
            out, batches = loaded.run(task.inputs)
        except Exception as e:  # noqa: BLE001  (the query's inputs or the worker: see below)
            # Executors reject bad inputs with ValueError; for anything else, the worker is at
            # fault only if it fails a known-good input too (still timed by the watchdog).
            input_fault = task.kind != "probe" and (
                isinstance(e, ValueError) or self._serves_known_input(loaded, task.variant)
            )
            with self._lock:
                worker.batch = None
                if not self._abandoned(worker, task, time.perf_counter() - t0):
                    worker.busy_window_s += time.perf_counter() - max(t0, worker.window_t0)
                    if input_fault:
                        self._input_failed(worker, task, e)
                    else:
                        self._batch_failed(worker, task, f"{type(e).__name__}: {e}")
            return
        t1 = time.perf_counter()
        exec_s = t1 - t0
        with self._lock:
            worker.batch = None
            if self._abandoned(worker, task, exec_s):
                return
            worker.busy_window_s += t1 - max(t0, worker.window_t0)
            worker.failures = 0
            self._measure(worker, task, exec_s)
            self._finished(worker, task)
        task.future.set_result((out, batches, exec_s, load_s, worker.id))

    def _abandoned(self, worker: _Worker, task: _Task, took_s: float) -> bool:
        """Whether the watchdog gave the task up while it ran (its query was re-dispatched):
        then its late result is discarded (lock held)."""
        if worker.running is task:
            return False
        self._decide(
            "discarded", task.variant["name"], worker.id,
            f"its {task.kind} batch returned after {took_s:.3g} s, once its worker was lost",
        )  # fmt: skip
        return True

    def _measure(self, worker: _Worker, task: _Task, exec_s: float) -> None:
        """Monitoring of one finished task (lock held). The first batch after a load warms the
        executor up and is not compared with the profile (the profiler drops it too)."""
        name = task.variant["name"]
        now = self._now()
        worker.last_used[name] = now
        if task.kind != "probe":
            worker.busy_s += exec_s
        if task.kind == "offline":
            return
        if task.kind == "online":
            worker.served_rows[name] = worker.served_rows.get(name, 0) + task.rows
        if name not in worker.warm:
            worker.warm.add(name)
            return
        chunks = _chunks(task.rows, task.variant["batch_opt"])
        p99 = self._p99.get(name, task.variant["latency_ms"])
        profiled_s = sum(p99[r - 1] for r in chunks) / 1e3
        stats = worker.stats.setdefault(name, [0.0, 0.0, 0])
        stats[0] += exec_s
        stats[1] += profiled_s
        stats[2] += len(chunks)
        if task.kind == "online" and self._slower_than_profile(exec_s, profiled_s, len(chunks)):
            self._slow_online_at = now

    def _slower_than_profile(self, took_s: float, profiled_s: float, batches: int) -> bool:
        """Whether ``batches`` that took ``took_s`` against ``profiled_s`` ran slower than the
        profile by both the tolerance and the floor (see ``ServerSettings``)."""
        s = self.settings
        excess_ms = (took_s - profiled_s) * 1e3 / max(batches, 1)
        return (
            took_s > profiled_s * (1 + s.interference_tol) and excess_ms > s.interference_floor_ms
        )

    def _serves_known_input(self, loaded: loading.LoadedVariant, variant: dict[str, Any]) -> bool:
        """Whether the executor still serves ``loading.known_input`` (on the worker's thread)."""
        try:
            loaded.run(loading.known_input(self._models[variant["model"]]["source"]))
        except Exception:  # noqa: BLE001  (any failure: the executor is broken)
            return False
        return True

    def _input_failed(self, worker: _Worker, task: _Task, error: Exception) -> None:
        """The model raised on the task's own inputs while its worker serves others (lock
        held): that query alone fails, with a ValueError naming the variant and the cause; the
        worker is not at fault, so its failures in a row end and nothing is re-dispatched."""
        self._finished(worker, task)
        worker.failures = 0
        what = "query" if task.kind == "online" else "batch"
        failure = ValueError(
            f"{task.kind} {what} of {task.rows} rows not served: variant "
            f"{task.variant['name']!r} on worker {worker.id} raised on its inputs "
            f"({type(error).__name__}: {error}); the inputs are at fault, not the worker, which "
            "goes on serving"
        )
        failure.__cause__ = error
        task.future.set_exception(failure)

    def _batch_failed(self, worker: _Worker, task: _Task, why: str) -> None:
        """An executor raised on the task (lock held): the worker is lost after ``lost_after``
        failures in a row; the task moves to another worker."""
        self._finished(worker, task)
        worker.failures += 1
        task.tried.append(worker.id)
        task.errors.append(f"worker {worker.id}: {why}")
        if worker.failures >= self.settings.lost_after:
            self._lose(worker, f"its executor raised on {worker.failures} batches in a row: {why}")
        self._redispatch(task)

    def _lose(self, worker: _Worker, reason: str) -> None:
        """Marks the worker lost (lock held): it leaves the store and its queue moves."""
        if worker.lost:
            return
        joined = not (worker.starting or worker.stopped)  # in the metadata store
        worker.lost, worker.starting = reason, False
        if joined:
            self._store.remove_worker(worker.id)
        self._decide("lost", "", worker.id, reason)
        self._autoscaler.worker_lost(worker)
        moved = list(worker.queue)
        worker.queue.clear()
        for task in moved:
            self._finished(worker, task)
            task.errors.append(f"worker {worker.id} was lost: {reason}")
            task.tried.append(worker.id)
            self._redispatch(task)
        worker.retiring.update(worker.loaded)
        self._drop_retired(worker)
        worker.wake.notify_all()

    def _redispatch(self, task: _Task) -> None:
        """Queues a task that failed (or whose worker was lost) on another live worker (lock
        held): an online query asks getVariant again (the lost workers have left the store), an
        offline batch keeps its variant; after ``MAX_TRIES`` workers, or with none left, the
        query fails with every reason."""
        if task.kind in ("load", "probe"):  # the lost worker's loads were dropped with it
            task.future.cancel()
            return
        try:
            if self._closing:  # the other workers may have left already
                raise ServingError("the server is closing")
            if len(task.tried) >= MAX_TRIES:
                raise ServingError(f"tried on {MAX_TRIES} workers")
            variant = task.variant
            if task.kind == "online":
                app, model, accuracy, latency_ms, cost = task.goals
                choice = self._choose(app, model, accuracy, latency_ms, cost, task.rows)
                variant = self._variants[choice["variant"]]
                if choice["worker"] in task.tried:
                    choice["worker"] = self._least_utilised(variant["hardware"], task.tried)
                choice["reason"] = "; ".join(
                    filter(None, [choice["reason"], f"re-dispatched after {task.errors[-1]}"])
                )
                task.choice = choice
                target = self._workers[choice["worker"]]
            else:
                target = self._workers[self._least_utilised(variant["hardware"], task.tried)]
        except (ServingError, ValueError) as e:  # ValueError: getVariant found no variant
            task.future.set_exception(
                ServingError(
                    f"{task.kind} query of {task.rows} rows not served: "
                    + "; ".join(task.errors)
                    + f"; {e}"
                )
            )
            return
        task.variant = variant
        task.predicted_s = self._predicted_s(variant, task.rows)
        self._decide("redispatch", variant["name"], target.id, task.errors[-1])
        self._enqueue(target, task)

    # --- the monitor ---------------------------------------------------------------------------

    def _monitor_main(self) -> None:
        s = self.settings
        # The watchdog looks more often than the period when the timeout is shorter.
        step = (
            s.period_s if s.batch_timeout_ms is None else min(s.period_s, s.batch_timeout_ms / 2e3)
        )
        next_tick = time.monotonic() + s.period_s
        while not self._stop.wait(max(0.0, min(step, next_tick - time.monotonic()))):
            with self._lock:
                if self._closed:
                    return
                check_hung(self)
                if time.monotonic() < next_tick:
                    continue
                next_tick += s.period_s
                if next_tick < time.monotonic():  # far behind (a long pause): start afresh
                    next_tick = time.monotonic() + s.period_s
                for w in self._live():
                    if w.thread is not None and not w.thread.is_alive():
                        self._lose(w, "its thread ended")
                self._meter.close_period()
                now = self._now()
                self._autoscaler.tick(now)
                self._vm.tick(now)

    # --- online ------------------------------------------------------------------------------

    def _note_online(self, variant: dict[str, Any], goals: tuple, rows: int) -> None:
        """An online query's goals, items and predicted work for the monitor (lock held)."""
        _, model, accuracy, latency_ms, _ = goals
        app = variant["task"]
        floor, slo = self._goals.setdefault(app, [0.0, math.inf])
        self._goals[app] = [
            max(floor, accuracy if model is None else 0.0),
            min(slo, latency_ms) if latency_ms > 0 else slo,
        ]
        self._meter.add(app, rows)
        self._online_work.append((self._now(), self._predicted_s(variant, rows)))

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
        load a ``VariantLoadError``, inputs of the wrong shape (or out of a recsys table, or that
        make the model raise) a ValueError, a query no live worker could serve a
        ``ServingError`` naming each failure."""
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
        goals = (app, model, accuracy, latency_ms, cost)
        with self._lock:
            if self._closed:
                raise RuntimeError("online_query: the server is closed")
            choice, variant, worker = self._place(app, model, accuracy, latency_ms, cost, rows)
            predicted = self._predicted_s(variant, rows)
            task = _Task("online", variant, inputs, rows, predicted, goals=goals, choice=choice)
            self._note_online(variant, goals, rows)
            self._online_in_flight += 1
            self._enqueue(worker, task)
        try:
            out, batches, exec_s, load_s, worker_id = task.future.result()
        finally:
            with self._lock:
                self._online_in_flight -= 1
                if self._online_in_flight == 0:
                    self._online_done.notify_all()
        variant, choice = task.variant, task.choice
        record = {
            "variant": variant["name"], "model": variant["model"],
            "app": self._models[variant["model"]]["app"], "worker": worker_id,
            "hardware": self._workers[worker_id].hardware, "kind": choice["kind"],
            "reason": choice["reason"], "rows": rows, "batches": batches,
            "latency_ms": (time.perf_counter() - t0) * 1e3, "exec_ms": exec_s * 1e3,
            "load_ms": load_s * 1e3, "cost_per_s": variant["cost_per_s"],
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
        out_dir = _output_dir(folder, output_dir)
        with self._lock:
            if self._closed:
                raise RuntimeError("offline_query: the server is closed")
            rows = max(v["batch_opt"] for v in self._variants.values())  # favour batching
            choice = self._choose(app, model, accuracy, 0.0, None, rows)
            job = OfflineJob(self, choice, files, out_dir)
            self._jobs = [j for j in self._jobs if j._thread.is_alive()] + [job]
        job._thread.start()
        return job

    def _offline_throttle(self) -> str:
        """Why offline work must wait now ('' when it may run; lock held)."""
        s = self.settings
        now = self._now()
        while self._online_work and self._online_work[0][0] < now - s.period_s:
            self._online_work.popleft()
        live = len(self._live())
        util = sum(p for _, p in self._online_work) / (s.period_s * max(live, 1))
        if util > s.offline_util:
            return (
                f"online utilisation {util:.0%} (predicted work over the last {s.period_s:g} s "
                f"on {live} workers) > offline_util={s.offline_util:g}"
            )
        if now - self._slow_online_at < s.period_s:
            return (
                "an online batch exceeded its profiled p99 by more than "
                f"interference_tol={s.interference_tol:g} in the last {s.period_s:g} s"
            )
        return ""

    def _offline_turn(self, job: OfflineJob) -> bool:
        """Blocks while offline work is throttled; False if the job was cancelled."""
        with self._lock:
            while not job._cancel.is_set():
                why = self._offline_throttle()
                if not why:
                    if self._offline_paused:
                        self._offline_paused = False
                        self._decide("offline_resume", job.variant, job.worker, "")
                    return True
                if not self._offline_paused:
                    self._offline_paused = True
                    self._decide("offline_pause", job.variant, job.worker, why)
                self._online_done.wait(min(0.05, self.settings.period_s / 4))
            return False

    def _submit_offline(self, job: OfflineJob, chunk: Any, rows: int) -> Future:
        """Queues one offline batch on the job's worker, or the least-utilised live one of its
        hardware once that worker is lost (lock held)."""
        variant = self._variants[job.variant]
        if not self._workers[job.worker].live:
            job.worker = self._least_utilised(variant["hardware"])
        task = _Task("offline", variant, chunk, rows, self._predicted_s(variant, rows))
        self._enqueue(self._workers[job.worker], task)
        return task.future

    def close(self) -> None:
        """Cancels the offline jobs still running, stops the monitor and joins every thread
        (idempotent); queries already queued are served first."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            jobs = list(self._jobs)
        for job in jobs:
            job.cancel()
            job._thread.join()
        self._stop.set()
        self._monitor.join()
        with self._lock:
            self._closing = True
            for w in self._workers:
                w.wake.notify_all()
        timeout_ms = self.settings.batch_timeout_ms
        for w in self._workers:
            # A hung thread is abandoned (a daemon); one that hangs now is found here.
            while w.thread is not None and not w.hung and w.thread.is_alive():
                w.thread.join(None if timeout_ms is None else timeout_ms / 2e3)
                with self._lock:
                    check_hung(self)

    def __enter__(self) -> InfaasServer:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
