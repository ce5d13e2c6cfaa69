"""RRL's GPU space as a serving policy: batch size, batch timeout and batch threads (Sec. 4.1, the
batching parameters of TF Serving), tuned while serving, in ``servelab.simulate`` and unchanged in
``servelab.serve``.

:class:`RrlBatchTuner` batches as TF Serving's batch scheduler does: a batch opens with the oldest
waiting query and closes when it holds ``batch_size`` items (the next query would not fit); a free
batch thread (one of the first ``batch_threads`` workers of each hardware type, serving one batch
at a time) takes the oldest closed batch, or else the open one once its oldest query has waited
``batch_timeout_ms``. A due batch goes on filling while every thread is busy, so timeout 0 batches
only under load. (The episode model closes a batch at its timeout whether or not a thread is
free.) A query of more than ``batch_size`` items is a batch alone. On every worker it sets, with
``set_config``:

- ``batch_knob`` (``max_batch_items``) to ``batch_size``: an executor with that knob runs a
  larger batch (a query alone) in chunks of ``batch_size`` items, TF Serving's large-batch split;
- ``thread_knob`` (``intra_op_threads``) to ``cores // batch_threads`` (at least 1): the batch
  threads share the machine's cores, as TF Serving's batch threads share one intra-op pool.

A knob name of ``""`` sets nothing, for an executor that lacks the knob (``tune_serving`` names
the executor and the knob in its notes, so a knob is never dropped unsaid). After every
``episode_requests`` completed queries the learner gets the episode's latency and applies its next
choice. No config model covers the GPU space (``rrl_cpu`` scales by thread knobs only): in the
simulator the batching and the batch threads are the policy's own decisions, which the simulator
honours, and each batch's service time is the profile's for its size.
"""

from __future__ import annotations

from collections import deque
from typing import Any

import numpy as np

from ... import _core
from .episode_learner import EpisodeLearner, learner_params
from .model import PerfModel
from .spaces import gpu_space
from .tuning import ConfigSpace, LearnerConfig

BATCH_KNOB = "max_batch_items"
THREAD_KNOB = "intra_op_threads"
GPU_KNOBS = ("batch_size", "batch_timeout_ms", "batch_threads")
MAX_CORES = 1024


def gpu_knob_values(space: ConfigSpace) -> dict[str, list[int]]:
    """The space's knobs, checked: a gpu space with exactly the three batching knobs, in range."""
    knobs = dict(space.knobs)
    if space.kind != "gpu" or set(knobs) != set(GPU_KNOBS):
        raise ValueError(
            f"space has knobs {sorted(knobs)} of kind {space.kind!r}; RrlBatchTuner needs a gpu "
            f"space with exactly {', '.join(GPU_KNOBS)}"
        )
    for name, lowest in (("batch_size", 1), ("batch_timeout_ms", 0), ("batch_threads", 1)):
        if min(knobs[name]) < lowest:
            raise ValueError(f"{name}={min(knobs[name])} must be >= {lowest}")
    return knobs


def split_batches(ids: list[int], sizes: list[int], cap: int) -> list[list[int]]:
    """Consecutive groups of at most ``cap`` items, in order; a query over ``cap`` goes alone."""
    groups: list[list[int]] = []
    items = cap + 1  # forces a first group
    for qid, size in zip(ids, sizes, strict=True):
        if items + size > cap:
            groups.append([])
            items = 0
        groups[-1].append(qid)
        items += size
    return groups


class RrlBatchTuner(EpisodeLearner):
    """Batches up to ``batch_size`` items, sends a partial batch once its oldest query has waited
    ``batch_timeout_ms``, on ``batch_threads`` workers of each hardware type, as RRL chooses per
    episode."""

    def __init__(
        self,
        space: ConfigSpace,
        *,
        cores: int = 0,
        batch_knob: str = BATCH_KNOB,
        thread_knob: str = THREAD_KNOB,
        model: PerfModel | None = None,
        method: str = "rrl",
        objective: str = "mean",
        episode_requests: int = 50,
        learner: LearnerConfig | None = None,
        seed: int = 0,
    ) -> None:
        gpu_knob_values(space)
        if isinstance(cores, bool) or not isinstance(cores, int) or cores < 0:
            raise ValueError(f"cores={cores!r} must be an integer >= 0")
        if cores > MAX_CORES:
            raise ValueError(f"cores={cores} must be at most {MAX_CORES}")
        for name, value in (("batch_knob", batch_knob), ("thread_knob", thread_knob)):
            if not isinstance(value, str):
                raise ValueError(f"{name}={value!r} must be a knob name ('' sets none)")
        if thread_knob and not cores:
            raise ValueError(f"thread_knob={thread_knob!r} needs cores >= 1 to share among threads")
        super().__init__(
            space, model=model, method=method, objective=objective,
            episode_requests=episode_requests, learner=learner, seed=seed,
        )  # fmt: skip
        self.cores = cores
        self._names = [k for k, _ in space.knobs]  # the space's order, whatever it is
        self.batch_knob, self.thread_knob = batch_knob, thread_knob
        self._batch = self._timeout_ns = self._threads = 0  # the configuration in force
        self._profile_cap = 0  # the largest batch any worker's profile covers
        self._open: list[tuple[int, int]] = []  # (query id, size), oldest first
        self._open_items = 0
        self._opened_ns = 0
        self._timer = 0  # tag of the open batch's timeout; stale tags are ignored
        self._due = False  # the open batch's oldest query has waited the timeout
        self._closed: deque[list[int]] = deque()  # batches waiting for a batch thread
        self._items: dict[int, int] = {}  # query id -> size, for queries in a batch not yet sent
        self._running: dict[int, list[int]] = {}  # worker -> the queries of its batch
        self._batch_items: list[int] = []  # items per batch sent, this episode

    def describe(self) -> str:
        return (
            f"rrl_batch_tuner(method='{self.method}', objective='{self.objective}', "
            f"episode_requests={self.episode_requests}, cores={self.cores}, "
            f"batch_knob='{self.batch_knob}', thread_knob='{self.thread_knob}')"
        )

    # --- configuration ---
    def _apply(self, view: Any, actions: Any) -> None:
        chosen = dict(zip(self._names, self.space.values(self._config), strict=True))
        batch, timeout_ms, threads = (int(chosen[k]) for k in GPU_KNOBS)
        self._timeout_ns, self._threads = timeout_ms * 1_000_000, threads
        self._batch = min(batch, self._profile_cap)  # a batch must stay within the profile
        knobs = []
        if self.batch_knob:
            knobs.append((self.batch_knob, batch))
        if self.thread_knob:
            knobs.append((self.thread_knob, max(1, self.cores // threads)))
        for w in range(view.num_workers):
            if view.status(w) == "stopped":
                continue
            for key, value in knobs:
                if view.config(w, key, 0) != value:
                    actions.set_config(w, key, value)
        # Batches formed under the previous configuration follow the new one.
        waiting = [qid for group in self._closed for qid in group]
        self._closed = deque(split_batches(waiting, [self._items[q] for q in waiting], self._batch))
        if self._open_items >= self._batch:
            self._close()
        elif self._open:
            self._start_clock(view, actions)  # the new timeout, from the same oldest query

    def on_start(self, view: Any, actions: Any) -> None:
        self._check_machine(view, "batch_threads", "batch threads (workers of one machine)")
        self._profile_cap = max(
            (view.max_batch(w, m) for w in range(view.num_workers) for m in view.models(w)),
            default=0,
        )
        self._config = self._q.choose(0)
        self._apply(view, actions)

    # --- batching ---
    def _start_clock(self, view: Any, actions: Any) -> None:
        """The open batch falls due batch_timeout_ms after its oldest query arrived."""
        deadline = self._opened_ns + self._timeout_ns
        self._timer += 1  # an earlier timer is stale now
        self._due = deadline <= view.now_ns  # timeout 0, or the loop saw the arrival late
        if not self._due:
            actions.set_timer(deadline / 1e9, self._timer)

    def _close(self) -> None:
        ids = [qid for qid, _ in self._open]
        self._closed.extend(split_batches(ids, [s for _, s in self._open], self._batch))
        self._open, self._open_items, self._due = [], 0, False
        self._timer += 1  # the open batch's timer is stale now

    def on_arrival(self, query: Any, view: Any, actions: Any) -> None:
        self._arrivals += 1
        if query.size > self._profile_cap:
            actions.drop(
                query.id,
                f"size {query.size} is beyond every worker's profile ({self._profile_cap})",
            )
            return
        if self._open and self._open_items + query.size > self._batch:
            self._close()  # full: the query would not fit
        self._open.append((query.id, query.size))
        self._open_items += query.size
        self._items[query.id] = query.size
        if len(self._open) == 1:
            self._opened_ns = query.arrival_ns
            self._start_clock(view, actions)
        if self._open_items >= self._batch:
            self._close()
        self._send(view, actions)

    def on_timer(self, tag: int, view: Any, actions: Any) -> None:
        if tag == self._timer:
            self._due = True
            self._send(view, actions)

    def _send(self, view: Any, actions: Any) -> None:
        """Free batch threads take the closed batches, oldest first, then the open batch if it is
        due; until a thread is free a due batch goes on filling (TF Serving's batch scheduler)."""
        while True:
            if not self._closed and self._open and self._due:
                if self._thread_for(self._open_items, view) is None:
                    return
                self._close()
            if not self._closed:
                return
            group = self._closed[0]
            items = sum(self._items[q] for q in group)
            target = self._thread_for(items, view)
            if target is None:
                return
            self._closed.popleft()
            for q in group:
                del self._items[q]
            actions.dispatch(target[0], target[1], group)
            self._running[target[0]] = group
            self._batch_items.append(items)

    def _thread_for(self, items: int, view: Any) -> tuple[int, int] | None:
        for worker in view.idle_workers():  # ascending ids
            if self._position(view, worker) >= self._threads:
                continue  # beyond this machine's batch threads
            for model in view.models(worker):
                if items <= view.max_batch(worker, model):
                    return worker, model
        return None

    def on_worker_ready(self, worker: int, view: Any, actions: Any) -> None:
        self._send(view, actions)

    # --- learning ---
    def on_batch_done(self, done: Any, view: Any, actions: Any) -> None:
        for qid in self._running.pop(done.worker, []):  # done.queries is only a count
            self._latencies.append((done.finish_s - view.query(qid).arrival_s) * 1e3)
        self._end_episode_if_due(view, actions)
        self._send(view, actions)

    def _episode_extras(self) -> dict[str, Any]:
        items = float(np.mean(self._batch_items)) if self._batch_items else 0.0
        self._batch_items = []
        return {"mean_batch_items": items}


REGISTERED_NAME = "rrl_batch_tuner"


def _from_params(
    max_batch: int, batch_step: int, max_timeout_ms: int, timeout_step_ms: int, max_threads: int,
    cores: int, batch_knob: str, thread_knob: str, method: str, objective: str,
    episode_requests: int, radius: float, seed: int, estimator: str = "eigen",
) -> RrlBatchTuner:  # fmt: skip
    space = gpu_space(max_batch=max_batch, batch_step=batch_step, max_timeout_ms=max_timeout_ms,
                      timeout_step_ms=timeout_step_ms, max_threads=max_threads)  # fmt: skip
    return RrlBatchTuner(space, cores=cores, batch_knob=batch_knob, thread_knob=thread_knob,
                         method=method, objective=objective, episode_requests=episode_requests,
                         learner=LearnerConfig(radius=radius, estimator=estimator),
                         seed=seed)  # fmt: skip


def register_batch_tuner() -> str:
    """Registers :class:`RrlBatchTuner` as the scheduler ``rrl_batch_tuner`` (once per process):
    ``"rrl_batch_tuner(max_batch=32, max_threads=2, cores=2)"`` tunes the GPU space of
    :func:`~servelab.rrl.gpu_space` with those bounds. Returns the name."""
    from ...schedulers import Param, register_scheduler  # on use: keeps servelab.rrl light

    if REGISTERED_NAME in {e["name"] for e in _core.list_schedulers()}:
        return REGISTERED_NAME
    register_scheduler(
        REGISTERED_NAME,
        _from_params,
        doc="RRL tuning batch size, batch timeout and batch threads while serving",
        params=[
            Param("max_batch", int, 64, "largest batch_size, items", 1, 1e6),
            Param("batch_step", int, 8, "batch_size step", 1, 1e6),
            Param("max_timeout_ms", int, 50, "largest batch_timeout_ms", 0, 1e6),
            Param("timeout_step_ms", int, 5, "batch_timeout_ms step", 1, 1e6),
            Param("max_threads", int, 2, "largest batch_threads (workers of one machine)", 1, 64),
            Param("cores", int, 2, "cores the batch threads share (thread_knob)", 1, MAX_CORES),
            Param("batch_knob", str, BATCH_KNOB, "knob set to batch_size ('' none)"),
            Param("thread_knob", str, THREAD_KNOB, "knob set to cores // batch_threads ('' none)"),
            *learner_params(),
        ],
    )  # fmt: skip
    return REGISTERED_NAME
