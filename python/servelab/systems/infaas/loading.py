"""Loading and running one model-variant on real executors: a TorchScript file through the
``torchscript`` executor (``servelab._torch``) or a built-in recommendation model
(``servelab.recsys``). The registry measures load time and memory with these, and the server runs
queries with them, so what was profiled is what serves.

A variant's source is a dict: ``{"kind": "torchscript", "path": ...}`` or ``{"kind": "recsys",
"model": "rm1", "scale": 0.01, "seed": 0}``; its runtime settings are the framework (which
executor / backend), the hardware, the batch-optimised size and the thread count.
"""

from __future__ import annotations

import functools
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ... import backends, recsys
from ...executors import make_executor

#: framework -> (source kind, hardware, executor backend / device). ``torchscript-frozen`` runs
#: the module after torch.jit.freeze + optimize_for_inference (a file of its own, made by
#: ``freeze``; opt-in, since it writes that file).
FRAMEWORKS = {
    "torchscript": ("torchscript", "cpu", "cpu"),
    "torchscript-frozen": ("torchscript", "cpu", "cpu"),
    "torchscript-cuda": ("torchscript", "gpu", "cuda"),
    "recsys-reference": ("recsys", "cpu", "reference"),
    "recsys-onednn": ("recsys", "cpu", "onednn"),
    "recsys-cuda": ("recsys", "gpu", "cuda"),
}


#: The most threads a variant may run with, by source kind: its executor's own cap (the
#: torchscript executor's intra_op, a recsys model's intra_op_threads). More is a typo, and
#: torch.set_num_threads would try to start them all (the process then crashes).
MAX_THREADS = {"torchscript": 4096, "recsys": 1024}


class VariantLoadError(RuntimeError):
    """A variant could not be loaded (a missing or corrupt model file, a backend not usable)."""


def _path(source: dict[str, Any], framework: str) -> str:
    return source["frozen_path"] if framework == "torchscript-frozen" else source["path"]


def _width(source: dict[str, Any]) -> str:
    # A frozen module has no parameter left to infer the width from: always given once known.
    return f", width={source['width']}" if "width" in source else ""


def executor_spec(source: dict[str, Any], framework: str, batch_opt: int, threads: int) -> str:
    """The executor spec the profiler measures for a variant (the same code path as a serve run)."""
    kind, _, device = FRAMEWORKS[framework]
    if kind == "torchscript":
        return (
            f"torchscript(path={_path(source, framework)!r}, device={device!r}, "
            f"intra_op={threads}, max_batch_items={batch_opt}{_width(source)})"
        )
    return (
        f"recsys(model={source['model']!r}, backend={device!r}, scale={source['scale']!r}, "
        f"seed={source['seed']}, intra_op_threads={threads})"
    )


def unavailable(framework: str) -> str:
    """Why the framework cannot run here ('' when it can)."""
    kind, _, device = FRAMEWORKS[framework]
    if kind == "torchscript":
        status = backends.status("torch")
        if not status.usable:
            return f"the torch backend is not usable here: {status.reason}"
        if device == "cuda" and not status.details.get("cuda_available", False):
            return "torch sees no CUDA GPU on this machine"
        return ""
    if device == "reference":
        return ""
    status = backends.status(device)
    return "" if status.usable else f"the {device} backend is not usable here: {status.reason}"


def resident_mb() -> float:
    """This process's resident set (MB) from /proc (0 where /proc is absent)."""
    try:
        with open("/proc/self/statm", encoding="ascii") as f:
            pages = int(f.read().split()[1])
    except (OSError, ValueError, IndexError):
        return 0.0
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


@dataclass
class LoadedVariant:
    """A variant loaded on one worker: ``run(inputs)`` in chunks of ``batch_opt`` rows."""

    name: str
    framework: str
    batch_opt: int
    threads: int
    runner: Any
    load_s: float

    def rows(self, inputs: Any) -> int:
        return int(inputs[0].shape[0]) if isinstance(inputs, tuple) else int(inputs.shape[0])

    def run(self, inputs: Any) -> tuple[np.ndarray, int]:
        """The outputs for ``inputs`` and the number of batches it took. Call it on the worker's
        own thread: the thread count applies to the calling thread."""
        kind = FRAMEWORKS[self.framework][0]
        n = self.rows(inputs)
        outs = []
        if kind == "torchscript":
            import torch  # loaded already by the torchscript backend

            # at::set_num_threads is per calling thread under OpenMP: each worker keeps its own.
            if torch.get_num_threads() != self.threads:
                torch.set_num_threads(self.threads)
            for first in range(0, n, self.batch_opt):
                outs.append(self.runner.forward(inputs[first : first + self.batch_opt]))
        else:
            dense, sparse = inputs
            for first in range(0, n, self.batch_opt):
                end = first + self.batch_opt
                outs.append(self.runner.run(dense[first:end], sparse[first:end], self.threads))
        return np.concatenate(outs, axis=0), len(outs)


def load(
    name: str, source: dict[str, Any], framework: str, batch_opt: int, threads: int
) -> LoadedVariant:
    """Loads the variant; VariantLoadError names it and says why it failed."""
    kind, _, device = FRAMEWORKS[framework]
    t0 = time.perf_counter()
    why = unavailable(framework)
    if why:
        raise VariantLoadError(f"variant {name!r} cannot load: {why}")
    try:
        if kind == "torchscript":
            path = _path(source, framework)
            runner = make_executor(f"torchscript(path={path!r}, device={device!r}{_width(source)})")
        else:
            runner = recsys.build(
                source["model"], backend=device, scale=source["scale"], seed=source["seed"]
            )
    except (ValueError, RuntimeError, KeyError, OSError, MemoryError) as e:
        raise VariantLoadError(f"variant {name!r} failed to load: {e}") from e
    return LoadedVariant(name, framework, batch_opt, threads, runner, time.perf_counter() - t0)


def freeze(path: str, out: Path) -> str:
    """Writes ``path``'s module frozen and optimised for inference to ``out``; '' when done, else
    why it could not be (some modules do not freeze)."""
    import torch  # the torch backend is usable once a TorchScript model was loaded

    try:
        module = torch.jit.load(path, map_location="cpu").eval()
        frozen = torch.jit.optimize_for_inference(torch.jit.freeze(module))
        torch.jit.save(frozen, str(out))
    except (RuntimeError, OSError) as e:
        return f"torch.jit.freeze / optimize_for_inference failed: {str(e).splitlines()[0]}"
    return ""


def input_shape(source: dict[str, Any]) -> tuple[int, ...]:
    """Columns per row: (width,) for TorchScript, (dense, lookups) for a recsys model."""
    if source["kind"] == "torchscript":
        return (int(source["width"]),)
    spec = recsys.spec(source["model"], source["scale"])
    return (int(spec.dense), int(spec.lookups_per_sample))


def check_inputs(inputs: Any, source: dict[str, Any], field: str = "inputs") -> Any:
    """Inputs as the model takes them: float32 [rows, width] for TorchScript, (dense float32,
    sparse int64) for a recsys model; ValueError naming the field and the shapes otherwise."""
    shape = input_shape(source)
    if source["kind"] == "torchscript":
        x = np.asarray(inputs)
        if x.ndim != 2 or x.shape[0] < 1 or x.shape[1] != shape[0]:
            # A 1-D array is refused too: one row or one column is the caller's to say.
            hint = f" (one row: reshape it to [1, {shape[0]}])" if x.shape == (shape[0],) else ""
            raise ValueError(
                f"{field} has shape {list(x.shape)}; the model takes [rows >= 1, {shape[0]}]{hint}"
            )
        if not np.issubdtype(x.dtype, np.number) or np.issubdtype(x.dtype, np.complexfloating):
            raise ValueError(f"{field} has dtype {x.dtype}; expected real numbers (float32)")
        return np.ascontiguousarray(x, dtype=np.float32)
    if not isinstance(inputs, Sequence) or isinstance(inputs, str) or len(inputs) != 2:
        raise ValueError(
            f"{field} must be (dense, sparse) arrays for recsys model {source['model']!r}"
        )
    dense = np.ascontiguousarray(inputs[0], dtype=np.float32)
    sparse = np.asarray(inputs[1])
    if dense.ndim != 2 or dense.shape[0] < 1 or dense.shape[1] != shape[0]:
        raise ValueError(
            f"{field}[0] (dense) has shape {list(dense.shape)}; expected [rows >= 1, {shape[0]}]"
        )
    if sparse.shape != (dense.shape[0], shape[1]) or not np.issubdtype(sparse.dtype, np.integer):
        raise ValueError(
            f"{field}[1] (sparse) has shape {list(sparse.shape)} dtype {sparse.dtype}; "
            f"expected integers [{dense.shape[0]}, {shape[1]}]"
        )
    sparse = np.ascontiguousarray(sparse, dtype=np.int64)
    _check_indices(sparse, source, f"{field}[1] (sparse)")
    return dense, sparse


@functools.lru_cache(maxsize=64)
def _index_limits(model: str, scale: float) -> tuple[np.ndarray, list[tuple[str, str, int]]]:
    """By sparse input column: its table's rows, and (feature, table, rows) for messages."""
    spec = recsys.spec(model, scale)
    named = [
        (f["name"], *spec.tables[f["table"]]) for f in spec.features for _ in range(f["lookups"])
    ]
    return np.array([rows for _, _, rows in named], dtype=np.int64), named


def _check_indices(sparse: np.ndarray, source: dict[str, Any], field: str) -> None:
    """ValueError naming the first index outside its table: checked before dispatch, so that a
    bad query fails alone instead of on a worker (the executor checks the same)."""
    rows, named = _index_limits(source["model"], source["scale"])
    bad = np.argwhere((sparse < 0) | (sparse >= rows))
    if len(bad):
        b, c = (int(i) for i in bad[0])
        feature, table, n = named[c]
        raise ValueError(
            f"{field}[{b}, {c}]={int(sparse[b, c])} is out of range for feature {feature!r} "
            f"(table {table!r} has {n} rows: indices 0..{n - 1})"
        )


def known_input(source: dict[str, Any]) -> Any:
    """One row of zeros, an input every variant serves (registration ran a TorchScript variant
    on zeros; index 0 is in every recsys table): it tells a broken executor from a query whose
    own inputs made the model raise."""
    shape = input_shape(source)
    if source["kind"] == "torchscript":
        return np.zeros((1, shape[0]), dtype=np.float32)
    return np.zeros((1, shape[0]), np.float32), np.zeros((1, shape[1]), np.int64)
