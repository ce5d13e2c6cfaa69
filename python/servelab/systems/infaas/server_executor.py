"""The executor every worker of an INFaaS server runs: it serves whichever variant the policy
dispatched (``batch.model_name``, a profile model of ``server_plan``), loading it on the worker's
first batch of it (``loading.load``) and keeping it, and returns the outputs row by row.

A batch's queries run together. When the model raises, a known-good input tells whose fault it
is: if the executor still serves one row of zeros, each query is run alone and only those whose
own inputs fail are answered without output (their error kept for the caller); otherwise the
batch fails and its queries are dropped with the reason (the worker is at fault).

Per query, ``Observations`` keeps what the caller's record needs and the policy does not report:
the load it waited for and its input's error. Per worker: the variants it loaded, and when.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import loading


def pack(inputs: Any) -> np.ndarray:
    """One array per query for the session: a recsys (dense, sparse) pair side by side as float64
    (indices were checked against their tables, far below 2**53: exact)."""
    if isinstance(inputs, tuple):
        return np.concatenate([inputs[0].astype(np.float64), inputs[1].astype(np.float64)], axis=1)
    return inputs


def unpack(packed: np.ndarray, source: dict[str, Any]) -> Any:
    if source["kind"] == "torchscript":
        return packed
    dense = loading.input_shape(source)[0]
    return (
        np.ascontiguousarray(packed[:, :dense], dtype=np.float32),
        np.ascontiguousarray(packed[:, dense:], dtype=np.int64),
    )


@dataclass
class Observations:
    """What the server's executors saw, shared by them and the server (thread-safe)."""

    t0: float  # perf_counter at the session's start
    variants: dict[str, dict[str, Any]]  # profile model -> the registry's variant
    sources: dict[str, dict[str, Any]]  # model -> its source
    lock: threading.Lock = field(default_factory=threading.Lock)
    load_s: dict[int, float] = field(default_factory=dict)  # query id -> load it waited for
    errors: dict[int, str] = field(default_factory=dict)  # query id -> its input's error
    # worker -> {variant: (loaded at, s since t0; load seconds)}
    loaded: dict[int, dict[str, tuple[float, float]]] = field(default_factory=dict)
    hardware: dict[int, str] = field(default_factory=dict)  # worker -> its hardware

    def take(self, query: int) -> tuple[float, str]:
        """The load a query waited for and its input's error ('' when none), once."""
        with self.lock:
            return self.load_s.pop(query, 0.0), self.errors.pop(query, "")


class VariantExecutor:
    """One worker's executor (see the module)."""

    def __init__(self, seen: Observations) -> None:
        self._seen = seen
        self._loaded: dict[str, loading.LoadedVariant] = {}

    def _load(self, variant: dict[str, Any], worker: int) -> tuple[loading.LoadedVariant, float]:
        name = variant["name"]
        if name in self._loaded:
            return self._loaded[name], 0.0
        source = self._seen.sources[variant["model"]]
        loaded = loading.load(
            name, source, variant["framework"], variant["batch_opt"], variant["threads"]
        )
        self._loaded[name] = loaded
        with self._seen.lock:
            at = time.perf_counter() - self._seen.t0
            self._seen.loaded.setdefault(worker, {})[name] = (at, loaded.load_s)
            self._seen.hardware[worker] = variant["hardware"]
        return loaded, loaded.load_s

    def run(self, batch: Any) -> list[np.ndarray]:
        variant = self._seen.variants[batch.model_name]
        source = self._seen.sources[variant["model"]]
        loaded, load_s = self._load(variant, int(batch.worker))
        queries = [int(q) for q in batch.queries]
        inputs = [unpack(np.asarray(x), source) for x in batch.inputs]
        if load_s > 0:
            with self._seen.lock:
                self._seen.load_s.update(dict.fromkeys(queries, load_s))
        try:
            out, _ = loaded.run(_joined(inputs))
        except Exception as e:  # noqa: BLE001  (the inputs or the worker: see below)
            if not isinstance(e, ValueError) and not _serves(loaded, source):
                raise  # the worker is at fault: the batch fails, its queries are dropped
            return self._one_by_one(loaded, queries, inputs)
        return _split(out, [loading.LoadedVariant.rows(loaded, x) for x in inputs])

    def _one_by_one(
        self, loaded: loading.LoadedVariant, queries: list[int], inputs: list[Any]
    ) -> list[np.ndarray]:
        """Each query alone: one whose own inputs fail gets no rows and its error."""
        outs = []
        for query, x in zip(queries, inputs, strict=True):
            try:
                outs.append(loaded.run(x)[0])
            except Exception as e:  # noqa: BLE001  (this query's inputs, the worker serves)
                with self._seen.lock:
                    self._seen.errors[query] = f"{type(e).__name__}: {e}"
                outs.append(np.zeros((0,), np.float32))
        return outs


def _joined(inputs: list[Any]) -> Any:
    if len(inputs) == 1:
        return inputs[0]
    if isinstance(inputs[0], tuple):
        return tuple(np.concatenate([x[i] for x in inputs], axis=0) for i in range(2))
    return np.concatenate(inputs, axis=0)


def _split(out: np.ndarray, rows: list[int]) -> list[np.ndarray]:
    return np.split(out, np.cumsum(rows)[:-1], axis=0)


def _serves(loaded: loading.LoadedVariant, source: dict[str, Any]) -> bool:
    """Whether the executor still serves ``loading.known_input`` (one row of zeros)."""
    try:
        loaded.run(loading.known_input(source))
    except Exception:  # noqa: BLE001  (any failure: the executor is broken)
        return False
    return True
