"""The real server's periodic monitor and Model-Autoscaler (INFaaS Sec. 4.1, 4.2.2), run by the
server's monitor thread every ``period_s`` with the server's lock held.

Each period:

- states (Fig. 4): an instance whose batches over the period took longer than the profile's p99
  by more than ``interference_tol`` (and ``interference_floor_ms`` per batch) while co-located
  (another instance is loaded on the server's workers, which share one host) turns Interfered;
  getVariant then avoids it, so a probe (one row) measures it in the next period and it turns
  Active once a period's batches run within the profile. Mitigation (Sec. 4.1): its variant is
  loaded on the least-loaded other live worker of its hardware that does not hold it (a worker
  runs one batch at a time, so "other cores" are another worker), and the Interfered instance
  leaves once the new one is ready; with no such worker, the VM-Autoscaler's rule 2 may add one.
  An instance that served at least its saturation throughput turns Overloaded, and Active again
  once below it with its worker's queue empty.
- scaling, per application with online queries: the simulated ``infaas`` policy's decision, the
  C++ ``application_problem`` (its variants meeting the accuracy floor, N_v from the store's live
  instances, the load = items/s over ``load_window_s`` + the queued backlog over that window,
  slack = load x (slack-threshold - 1)) and ``plan_scaling`` (the Sec. 4.2.2 greedy: replicate or
  upgrade at once; remove or downgrade once proposed for the removed variants' load latency T_v).
  A new instance is loaded on its worker's thread (in queue order) and joins the store when
  ready; the instances it replaces then leave. A removed instance must also have been idle for
  its T_v. Instances of an application with no online query are unloaded once idle for T_v
  unless an offline job uses them. A plan that needs more workers than exist (``needs_vm``, or
  a new instance no worker can take) asks the VM-Autoscaler (``server_vm.py``) for one.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from ... import _core
from . import loading

if TYPE_CHECKING:
    from .server import InfaasServer, _Task, _Worker

#: The SLO (ms) of an application whose queries gave no latency goal: any variant meets it.
NO_SLO_MS = 1e9


class Autoscaler:
    """The monitor's per-period work on an :class:`InfaasServer` (all calls with its lock held)."""

    def __init__(self, server: InfaasServer) -> None:
        self._server = server
        # (variant, worker) -> the load under way: app, strategy, the instances it replaces.
        self._pending: dict[tuple[str, int], dict[str, Any]] = {}
        self._down_since: dict[str, float] = {}  # app -> since when a scale-down is proposed

    # --- one period ------------------------------------------------------------------------------

    def tick(self, now: float) -> None:
        srv = self._server
        period = srv.settings.period_s
        stats, served = {}, {}
        for w in srv._live():
            w.utilisation = w.busy_s / period
            w.busy_s = 0.0
            stats[w.id], w.stats = w.stats, {}
            served[w.id], w.served_rows = w.served_rows, {}
        self._states(stats, served)
        if srv.settings.autoscale:
            srv._vm.needs_vm = ""
            self._migrate()
            for app in sorted(srv._goals):
                self._scale(app, now)
            self._unload_unused(now)

    def _instances(self) -> list[tuple[_Worker, str]]:
        srv = self._server
        return [
            (w, name)
            for w in srv._live()
            for name in sorted(w.loaded)
            if name not in w.retiring and srv._store.state(name, w.id) != "inactive"
        ]

    def _states(self, stats: dict[int, dict], served: dict[int, dict]) -> None:
        srv, store = self._server, self._server._store
        tol = srv.settings.interference_tol
        instances = self._instances()
        for w, name in instances:
            state = store.state(name, w.id)
            measured = stats[w.id].get(name)
            if measured and measured[2] > 0:
                took, profiled, batches = measured
                ratio = took / profiled if profiled > 0 else math.inf
                slower = srv._slower_than_profile(took, profiled, batches)
                if slower and len(instances) > 1 and state != "interfered":
                    store.set_state(name, w.id, "interfered")
                    srv._decide(
                        "interfered", name, w.id,
                        f"{batches} batches took {took * 1e3 / batches:.3g} ms each, x{ratio:.2f} "
                        f"the profile's p99 (> 1 + interference_tol={tol:g}), co-located with "
                        f"{len(instances) - 1} instance(s)",
                    )  # fmt: skip
                    continue
                if not slower and state == "interfered":
                    store.set_state(name, w.id, "active")
                    srv._decide("active", name, w.id, f"back within its profile (x{ratio:.2f})")
                    continue
            elif state == "interfered" and not w.uses(name):
                self._probe(w, name)
            if state == "interfered":
                continue
            rate = served[w.id].get(name, 0) / srv.settings.period_s
            saturation = srv._variants[name]["saturation_qps"]
            if state == "active" and rate >= saturation:
                store.set_state(name, w.id, "overloaded")
                srv._decide(
                    "overloaded", name, w.id,
                    f"served {rate:.3g} items/s >= its saturation {saturation:.3g} items/s",
                )  # fmt: skip
            elif state == "overloaded" and rate < saturation and not w.pending:
                store.set_state(name, w.id, "active")

    def _probe(self, worker: _Worker, name: str) -> None:
        """Queues one row of zeros on an Interfered instance: the measurement getVariant's
        queries no longer give it."""
        from .server import _Task

        srv = self._server
        variant = srv._variants[name]
        source = srv._models[variant["model"]]["source"]
        shape = loading.input_shape(source)
        inputs: Any = (
            np.zeros((1, shape[0]), dtype=np.float32)
            if source["kind"] == "torchscript"
            else (np.zeros((1, shape[0]), np.float32), np.zeros((1, shape[1]), np.int64))
        )
        # No predicted time: one row is not work getVariant should steer queries away from.
        srv._enqueue(worker, _Task("probe", variant, inputs, 1, 0.0))

    # --- scaling -------------------------------------------------------------------------------

    def _scale(self, app: str, now: float) -> None:
        srv, s = self._server, self._server.settings
        floor, slo = srv._goals[app]
        backlog = sum(
            t.rows
            for w in srv._live()
            for t in w.queue
            if t.kind == "online" and t.variant["task"] == app
        )
        load = srv._meter.qps(app) + backlog / s.load_window_s
        slo_ms = slo if math.isfinite(slo) else NO_SLO_MS
        problem = _core.infaas.application_problem(srv._store, app, floor, slo_ms, load, s.slack)
        if problem is None:
            return
        pending = [name for (name, _), p in self._pending.items() if p["app"] == app]
        for name in pending:
            _count_pending(problem, name)
        plan = _core.infaas.plan_scaling(problem, s.autoscaler, loads_under_way=bool(pending))
        if plan["status"] == "needs_vm":
            srv._vm.needs_vm = _wanted_hardware(srv, problem) or srv._vm.needs_vm
        if not plan["feasible"] or (pending and not plan["replicas_only"]):
            return
        if not any(plan["delta"]):
            self._down_since.pop(app, None)
            return
        if plan["scale_down"]:
            since = self._down_since.setdefault(app, now)
            wait = max(problem["load_s"][i] for i, d in enumerate(plan["delta"]) if d < 0)
            if now - since < wait:
                return
        if self._apply(app, problem, plan, load, now):
            self._down_since.pop(app, None)

    def _apply(
        self, app: str, problem: dict[str, Any], plan: dict[str, Any], load: float, now: float
    ) -> bool:
        """Applies the plan; whether anything changed."""
        srv, store = self._server, self._server._store
        names, delta, strategy = problem["names"], plan["delta"], plan["strategy"]
        capacity = sum(
            q * n for q, n in zip(problem["saturation_qps"], problem["running"], strict=True)
        )
        reason = (
            f"{strategy}: load {load:.3g} items/s x slack {srv.settings.slack:g} vs capacity "
            f"{capacity:.3g} items/s of {sum(problem['running'])} instance(s)"
            + (" (more workers needed)" if plan["status"] == "needs_vm" else "")
        )
        removed: list[tuple[str, _Worker]] = []
        for i, d in enumerate(delta):
            holders = [
                w for w in srv._live()
                if names[i] in w.loaded and names[i] not in w.retiring
                and store.state(names[i], w.id) != "inactive"
                and (names[i], w.id) not in self._pending
            ]  # fmt: skip
            holders.sort(key=lambda w: (w.last_used.get(names[i], 0.0), w.queued_s, w.id))
            removed += [(names[i], w) for w in holders[: max(-d, 0)]]
        placed = False
        for i, d in enumerate(delta):
            for _ in range(max(d, 0)):
                target = self._target(names[i], names, removed)
                if target is None:
                    break
                self._load(app, names[i], target, [] if placed else removed, strategy)
                srv._decide(strategy, names[i], target.id, reason)
                placed = True
        if placed:
            return True
        if any(d > 0 for d in delta):
            # No worker can take the new instance: the old ones keep serving and the
            # VM-Autoscaler is asked for a worker (Sec. 4.2.2 (d)), as the simulated policy does.
            srv._vm.needs_vm = next(
                srv._variants[names[i]]["hardware"] for i in reversed(range(len(delta)))
                if delta[i] > 0
            )  # fmt: skip
            return False
        changed = False
        for name, w in removed:
            idle = now - w.last_used.get(name, 0.0)
            load_s = srv._variants[name]["load_s"]
            if w.uses(name) or idle < load_s:
                continue
            self._retire(w, name)
            srv._decide(
                "unload", name, w.id,
                f"{reason}; idle {idle:.3g} s >= its load latency {load_s:.3g} s",
            )  # fmt: skip
            changed = True
        return changed

    def _migrate(self) -> None:
        """Each Interfered instance not yet moving leaves at once when another worker holds the
        variant in a better state (getVariant sends its queries there already), else it is
        loaded on the least-loaded other live worker of its hardware without it (no load under
        way there) and leaves once that instance is ready."""
        srv, store = self._server, self._server._store
        moving = {
            (old, w.id)
            for p in self._pending.values()
            if p["strategy"] == "migrate"
            for old, w in p["replaced"]
        }
        for w, name in self._instances():
            if store.state(name, w.id) != "interfered" or (name, w.id) in moving:
                continue
            hardware = srv._variants[name]["hardware"]
            holder = next(
                (
                    t for t in srv._live(hardware)
                    if t is not w and name in t.loaded and name not in t.retiring
                    and store.state(name, t.id) in ("active", "overloaded")
                ),
                None,
            )  # fmt: skip
            if holder is not None:
                srv._decide(
                    "migrate", name, holder.id,
                    f"Interfered on worker {w.id}: worker {holder.id} holds it "
                    f"{store.state(name, holder.id)} already",
                )  # fmt: skip
                self._retire(w, name)
                srv._decide("unload", name, w.id, f"migrate: served by worker {holder.id}")
                continue
            busy = {wid for _, wid in self._pending}
            targets = [
                t for t in srv._live(hardware)
                if t is not w and t.id not in busy and name not in t.loaded
                and store.state(name, t.id) == "inactive"
            ]  # fmt: skip
            if not targets:
                continue  # the VM-Autoscaler's rule 2 may add a worker
            target = min(targets, key=lambda t: (t.queued_s, t.id))
            self._load(srv._variants[name]["task"], name, target, [(name, w)], "migrate")
            srv._decide(
                "migrate", name, target.id,
                f"Interfered on worker {w.id}: loaded on the least-loaded {hardware} worker "
                f"without it ({target.queued_s:.3g} s queued); worker {w.id}'s instance leaves "
                "once it is ready",
            )  # fmt: skip

    def _target(
        self, name: str, candidates: list[str], removed: list[tuple[str, _Worker]]
    ) -> _Worker | None:
        """The worker for a new instance: a live one of its hardware without it and without a
        load under way, one holding no other candidate (or only ones leaving) first, then the
        least utilised."""
        srv, store = self._server, self._server._store
        busy = {wid for _, wid in self._pending}
        leaving = {(n, w.id) for n, w in removed}
        best = None
        for w in srv._live(srv._variants[name]["hardware"]):
            if w.id in busy or name in w.loaded or store.state(name, w.id) != "inactive":
                continue
            others = [
                n for n in candidates
                if n in w.loaded and n not in w.retiring and (n, w.id) not in leaving
            ]  # fmt: skip
            key = (bool(others), store.utilisation(w.id), w.id)
            if best is None or key < best[0]:
                best = (key, w)
        return None if best is None else best[1]

    def _load(self, app: str, name: str, worker: _Worker, replaced: list, strategy: str) -> None:
        from .server import _Task

        srv = self._server
        variant = srv._variants[name]
        self._pending[(name, worker.id)] = {
            "app": app, "strategy": strategy, "replaced": list(replaced),
        }  # fmt: skip
        srv._enqueue(worker, _Task("load", variant, None, 0, variant["load_s"]))

    def _retire(self, worker: _Worker, name: str) -> None:
        """The instance leaves the store now and the worker once no queued task needs it."""
        store = self._server._store
        if store.state(name, worker.id) != "inactive":
            store.unload(name, worker.id)
        if worker.uses(name):
            worker.retiring.add(name)
        else:
            worker.loaded.pop(name, None)
            worker.warm.discard(name)

    def _unload_unused(self, now: float) -> None:
        """Instances of applications without online queries, idle for their load latency and
        not used by a running offline job, leave."""
        srv = self._server
        offline = {j.variant for j in srv._jobs if j.status == "running"}
        for w, name in self._instances():
            variant = srv._variants[name]
            if variant["task"] in srv._goals or name in offline or w.uses(name):
                continue
            idle = now - w.last_used.get(name, 0.0)
            if idle >= variant["load_s"] and (name, w.id) not in self._pending:
                self._retire(w, name)
                srv._decide(
                    "unload", name, w.id,
                    f"no online query for app {variant['task']!r}; idle {idle:.3g} s >= its "
                    f"load latency {variant['load_s']:.3g} s",
                )  # fmt: skip

    # --- callbacks from the worker threads -------------------------------------------------------

    def loaded(self, worker: _Worker, task: _Task) -> None:
        """A scaling load finished (the instance joined the store): what it replaces leaves."""
        name = task.variant["name"]
        entry = self._pending.pop((name, worker.id), None)
        if entry is None:
            return
        for old, w in entry["replaced"]:
            if w.live and old in w.loaded and (old, w.id) != (name, worker.id):
                self._retire(w, old)
                self._server._decide(
                    "unload", old, w.id,
                    f"{entry['strategy']}: replaced by {name!r} on worker {worker.id}",
                )  # fmt: skip

    def load_failed(self, worker: _Worker | None, task: _Task, why: str) -> None:
        name = task.variant["name"]
        for key in [k for k in self._pending if k[0] == name]:
            if worker is None or key[1] == worker.id:
                del self._pending[key]
                self._server._decide("load_failed", name, key[1], why)

    def worker_lost(self, worker: _Worker) -> None:
        for key in [k for k in self._pending if k[1] == worker.id]:
            del self._pending[key]


def _wanted_hardware(srv: InfaasServer, problem: dict[str, Any]) -> str:
    """The hardware of the highest-throughput variant meeting the SLO ('' if none), as the
    simulated policy asks its VM-Autoscaler for."""
    best = None
    for i in range(len(problem["names"])):
        if problem["latency_ms"][i] > problem["slo_ms"]:
            continue
        if best is None or problem["saturation_qps"][i] > problem["saturation_qps"][best]:
            best = i
    return "" if best is None else srv._variants[problem["names"][best]]["hardware"]


def _count_pending(problem: dict[str, Any], name: str) -> None:
    """A load under way counts as running (and in its hardware's capacity), as the policy does."""
    if name not in problem["names"]:
        return
    i = problem["names"].index(name)
    problem["running"][i] += 1
    for t, row in enumerate(problem["requirement"]):
        if row[i] > 0:
            held = sum(r * n for r, n in zip(row, problem["running"], strict=True))
            problem["capacity"][t] = max(problem["capacity"][t], held)
