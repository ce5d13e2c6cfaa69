"""The real server's VM-Autoscaler (INFaaS Sec. 4.2.3), the simulated ``infaas`` policy's
``scale_vms`` on worker threads: run by the monitor every ``poll_s`` with the server's lock held.

- Scale down: a worker it started, with nothing queued or running for ``idle_s``, stops (its
  instances leave the metadata store); the initial workers stay.
- Scale up, one start at a time and while fewer than ``max_workers`` workers are live: (1) every
  live worker of a hardware type is over ``threshold`` utilisation, (2) every instance on a
  hardware type is Interfered, (3) more than ``threshold`` of the live workers hold an Overloaded
  instance (the hardware type with the most of them), else (4) the Model-Autoscaler's plan
  needed more workers than exist (``needs_vm``). The first rule that holds names the hardware.
- A new worker stands for a VM: its thread waits ``startup_s`` before it joins the store, so
  nothing is placed on it before then.

A worker's utilisation is the larger of the share of the time since the last evaluation its
executors ran (the running batch included) and its queued predicted seconds over ``poll_s``, at
most 1 (the simulated policy has only the latter; a real executor can be slower than its
profile, which the measurement sees).
"""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .server import InfaasServer, _Worker


class VmAutoscaler:
    """Starts and stops an :class:`InfaasServer`'s workers (calls with its lock held)."""

    def __init__(self, server: InfaasServer) -> None:
        self._server = server
        self._initial = len(server._workers)  # workers with a smaller id are never stopped
        s = server.settings
        self.max_workers = self._initial if s.max_workers is None else s.max_workers
        if self.max_workers < self._initial:
            raise ValueError(
                f"max_workers={s.max_workers!r} must be >= the {self._initial} initial workers"
            )
        self._polled_at = 0.0
        self.needs_vm = ""  # hardware the Model-Autoscaler could not fit this period ('': none)

    def tick(self, now: float) -> None:
        srv, s = self._server, self._server.settings
        if not s.autoscale or self.max_workers == self._initial:
            return
        if now - self._polled_at < s.poll_s - 1e-9:
            return
        self._polled_at = now
        clock = time.perf_counter()
        util = {
            w.id: min(1.0, max(_busy_share(w, clock), w.queued_s / s.poll_s)) for w in srv._live()
        }
        for w in srv._workers[self._initial :]:
            idle = now - w.active_at
            if w.live and not w.pending and w.running is None and idle >= s.idle_s:
                self._stop(w, f"idle {idle:.3g} s with nothing queued >= idle_s={s.idle_s:g}")
        if any(w.starting for w in srv._workers):
            return  # one start at a time
        live = srv._live()
        if len(live) >= self.max_workers:
            return
        hardware, reason = self._rule(live, util)
        if hardware:
            self._start(hardware, reason, now)

    def _rule(self, live: list[_Worker], util: dict[int, float]) -> tuple[str, str]:
        """The hardware to add a worker of and the rule that asks for it ('', '': none)."""
        srv, s = self._server, self._server.settings
        store = srv._store
        by_hw: dict[str, list[_Worker]] = {}
        for w in live:
            by_hw.setdefault(w.hardware, []).append(w)
        for hw in sorted(by_hw):  # rule 1
            utils = [util[w.id] for w in by_hw[hw]]
            if all(u > s.threshold for u in utils):
                shown = ", ".join(f"{u:.0%}" for u in utils)
                return hw, (
                    f"rule 1: every live {hw} worker is over threshold={s.threshold:g} "
                    f"utilisation ({shown})"
                )
        for hw in sorted(by_hw):  # rule 2
            states = [
                store.state(n, w.id) for w in by_hw[hw] for n in w.loaded if n not in w.retiring
            ]
            states = [x for x in states if x != "inactive"]
            if states and all(x == "interfered" for x in states):
                return hw, f"rule 2: every instance on {hw} ({len(states)}) is Interfered"
        overloaded: dict[str, int] = {}
        for w in live:
            if any(store.state(n, w.id) == "overloaded" for n in w.loaded):
                overloaded[w.hardware] = overloaded.get(w.hardware, 0) + 1
        if sum(overloaded.values()) > s.threshold * len(live):  # rule 3
            hw = min(overloaded, key=lambda h: (-overloaded[h], h))
            return hw, (
                f"rule 3: {sum(overloaded.values())} of {len(live)} live workers hold an "
                f"Overloaded instance (> threshold={s.threshold:g})"
            )
        if self.needs_vm:  # Sec. 4.2.2 (d)
            return self.needs_vm, (
                f"needs_vm: the Model-Autoscaler's plan needs another {self.needs_vm} worker"
            )
        return "", ""

    def _start(self, hardware: str, reason: str, now: float) -> None:
        from .server import _Worker

        srv = self._server
        w = _Worker(len(srv._workers), hardware, threading.Condition(srv._lock))
        w.starting, w.active_at = True, now
        srv._workers.append(w)
        srv._decide(
            "add_worker", "", w.id, f"{reason}; usable after startup_s={srv.settings.startup_s:g}"
        )
        w.thread = threading.Thread(
            target=srv._worker_main, args=(w,), name=f"infaas-worker{w.id}", daemon=True
        )
        w.thread.start()

    def _stop(self, worker: _Worker, reason: str) -> None:
        srv = self._server
        worker.stopped = reason
        srv._store.remove_worker(worker.id)  # its instances leave with it
        srv._autoscaler.worker_lost(worker)
        worker.retiring.update(worker.loaded)
        srv._drop_retired(worker)
        srv._decide("remove_worker", "", worker.id, reason)
        worker.wake.notify_all()


def _busy_share(worker: _Worker, now: float) -> float:
    """The share of the time since the worker's window began that its executors ran; starts a
    new window."""
    batch = worker.batch
    running = now - max(batch[1], worker.window_t0) if batch is not None else 0.0
    share = (worker.busy_window_s + running) / max(now - worker.window_t0, 1e-9)
    # The running batch's part in this window is counted now; its end adds only what follows.
    worker.busy_window_s, worker.window_t0 = 0.0, now
    return share


def start_up(server: InfaasServer, worker: _Worker) -> bool:
    """On a new worker's thread: waits ``startup_s`` (the VM's start), then joins the metadata
    store; False if the server closed meanwhile."""
    with server._lock:
        worker.wake.wait_for(lambda: server._closing, timeout=server.settings.startup_s)
        if server._closing:
            worker.starting = False
            worker.stopped = "the server closed while it started"
            return False
        wid = server._store.add_worker(worker.hardware)
        worker.starting = False
        if wid != worker.id:  # one start at a time keeps the store's ids and the list's in step
            server._store.remove_worker(wid)
            worker.stopped = f"it joined the metadata store as worker {wid}, not {worker.id}"
            server._decide("remove_worker", "", worker.id, worker.stopped)
            return False
        worker.active_at, worker.window_t0 = server._now(), time.perf_counter()
        server._decide("worker_ready", "", worker.id, "its start-up is over")
    return True
