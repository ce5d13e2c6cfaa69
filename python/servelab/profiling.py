"""The profiler: measures an executor over batch sizes (and thread counts) and writes a native
servelab profile, the file the simulator reads::

    p = servelab.profile("torchscript(path='m.pt')", batches=[1, 8, 64], repeats=20, path="m.json")
    servelab.simulate(profile=p, workers=[{"hardware": "cpu", "count": 2}], ...)

Every (thread count, batch size) cell runs ``warmup`` untimed batches, then ``repeats`` timed ones,
each with fresh query ids (fresh inputs), in C++ with the GIL released; Ctrl-C stops it between
batches with a KeyboardInterrupt. The samples of each cell become one latency entry
(``samples_ms``) of the profile.
"""

from __future__ import annotations

import math
import os
import platform
from collections.abc import Sequence
from typing import Any

from . import profiles
from .executors import make_executor
from .textio import output_file

__all__ = ["profile", "profile_from_run"]

# What a sample is: run()'s wall time, as the serving loop sees a batch (inputs made and the
# model run), or the executor's own measure (the model alone, when it reports one).
MEASURES = ("wall", "exec")
# The knob a thread sweep sets (ClusterView config / set_config).
THREADS_KNOB = "intra_op_threads"
# What this process holds per query of a timed batch besides the executor's own memory: the
# Python list of sizes and its C++ copy.
_SIZES_BYTES_PER_QUERY = 8 + 4


def _positive_ints(name: str, values: Any) -> list[int]:
    if isinstance(values, int) and not isinstance(values, bool):
        values = [values]
    if isinstance(values, str) or not isinstance(values, Sequence) or not values:
        raise ValueError(f"{name}={values!r} must be a non-empty list of positive integers")
    for i, v in enumerate(values):
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise ValueError(f"{name}[{i}]={v!r} must be a positive integer")
    if len(set(values)) != len(values):
        raise ValueError(f"{name}={list(values)!r} repeats a value")
    return list(values)


def _count(name: str, value: Any, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"{name}={value!r} must be an integer >= {minimum}")
    return value


def profile(
    executor: Any,
    batches: Sequence[int] = (1, 2, 4, 8, 16, 32),
    *,
    threads: Sequence[int] | None = None,
    repeats: int = 10,
    warmup: int = 2,
    hardware: str = "cpu",
    model: str | None = None,
    price_per_hour: float = 0.0,
    measure: str = "wall",
    seed: int = 0,
    path: str | os.PathLike[str] | None = None,
    progress: bool = False,
) -> profiles.Profile:
    """Measures ``executor`` (a spec, dict or :func:`servelab.make_executor` result) and returns
    a :class:`servelab.profiles.Profile` with one latency entry per batch size.

    - ``batches``: batch sizes (queries of one item each).
    - ``threads``: intra-op thread counts to sweep (the executor's ``intra_op_threads`` knob); each
      count becomes a hardware type ``"<hardware>-t<n>"`` when there are several.
    - ``repeats`` timed and ``warmup`` untimed batches per cell; ``measure``: ``"wall"`` (run()'s
      wall time, what a serving run's service time is) or ``"exec"`` (the executor's own measure).
    - ``hardware`` and ``model`` (default: the executor's name) name the profile's entries;
      ``price_per_hour`` ($/h, 0 by default) is the hardware's price, which runs need;
      ``path`` also saves the profile (native JSON); ``progress`` shows a tqdm bar.
    """
    batches = _positive_ints("batches", batches)
    thread_counts: list[int | None] = (
        [None] if threads is None else list(_positive_ints("threads", threads))
    )
    repeats = _count("repeats", repeats, 1)
    warmup = _count("warmup", warmup, 0)
    if measure not in MEASURES:
        raise ValueError(f"measure={measure!r} must be one of {', '.join(MEASURES)}")
    if not isinstance(hardware, str) or not hardware:
        raise ValueError(f"hardware={hardware!r} must be a non-empty name")
    if model is not None and (not isinstance(model, str) or not model):
        raise ValueError(f"model={model!r} must be a non-empty name (None: the executor's name)")
    # Before measuring: a path that cannot be written would lose the measurement.
    out = None if path is None else output_file(path, field="path")
    if (
        isinstance(price_per_hour, bool)
        or not isinstance(price_per_hour, int | float)
        or not (math.isfinite(price_per_hour) and price_per_hour >= 0)
    ):
        raise ValueError(f"price_per_hour={price_per_hour!r} must be a finite number >= 0")
    builder = make_executor(executor)
    name = builder.describe().split("(", 1)[0]
    model = model or name
    session = builder.open(seed=seed)
    for i, b in enumerate(batches):  # before the first batch is made
        session.check_batch_memory(
            b, caller_bytes=_SIZES_BYTES_PER_QUERY, given=f"batches[{i}]={b}", field="batches"
        )
    if threads is not None and THREADS_KNOB not in session.knobs():
        raise ValueError(
            f"threads={list(threads)!r}: executor {builder.describe()} has no "
            f"{THREADS_KNOB!r} knob "
            f"(its knobs: {', '.join(session.knobs()) or 'none'})"
        )

    from tqdm.auto import tqdm  # here, not at import: keeps `import servelab` and the CLI fast

    entries = []
    hardware_names = []
    with tqdm(
        total=len(batches) * len(thread_counts), desc=f"profile {name}", disable=not progress
    ) as bar:
        for t in thread_counts:
            hw = hardware if t is None or len(thread_counts) == 1 else f"{hardware}-t{t}"
            hardware_names.append(hw)
            config = {} if t is None else {THREADS_KNOB: t}
            for b in batches:
                timed = session.time_batches([1] * b, repeats=repeats, warmup=warmup, config=config)
                samples = timed[f"{measure}_ns"]
                # A sample of 0 ns (an executor faster than the clock) is not a valid latency.
                entries.append(
                    {
                        "hardware": hw,
                        "model": model,
                        "batch": b,
                        "samples_ms": [max(int(ns), 1) / 1e6 for ns in samples],
                    }
                )
                bar.update(1)
    hw_info = {"price_per_hour": float(price_per_hour)}
    machine = platform.node() or "this machine"
    result = profiles.Profile.from_dict(
        {
            "format": "servelab.profile",
            "version": 1,
            "source": f"servelab.profile({builder.describe()}) on {machine}",
            "description": f"{measure} time per batch, {repeats} repeats after {warmup} warm-ups",
            "hardware": {hw: dict(hw_info) for hw in hardware_names},
            "models": {model: {}},
            "latency": entries,
        }
    )
    if out is not None:
        profiles.save(result, out)
    return result


def profile_from_run(
    result: Any,
    base: profiles.Profile | None = None,
    *,
    min_samples: int = 5,
    service_ns: Any = None,
) -> profiles.Profile:
    """A profile whose latencies are the service times a serving run measured (``finish - start``
    of each completed batch, one sample per batch), keyed by the worker's hardware, the model and
    the batch's items: profiling *at the load* the run had, where a back-to-back profile misses
    how caches, clocks and the operating system treat a worker that idles between batches.

    ``base`` (optional) supplies everything else: prices, accuracies, memory, and the latency of
    every (hardware, model, batch) the run saw fewer than ``min_samples`` times; without it,
    hardware prices are 0 and only the run's batches are profiled. ``service_ns`` (optional):
    the batches' times to use instead, one per row of ``result.batches()`` (``servelab.calibrate``
    passes them with the co-runners' slowdown taken out).
    """
    import numpy as np

    min_samples = _count("min_samples", min_samples, 1)
    if getattr(result, "meta", {}).get("world") != "serve":
        raise ValueError(
            f"result={result!r} is not a serving run (meta['world'] is "
            f"{getattr(result, 'meta', {}).get('world')!r}): its service times were not measured"
        )
    batches = result.batches()
    times = (batches["finish_ns"] - batches["start_ns"]).to_numpy()
    if service_ns is not None:
        times = np.asarray(service_ns)
        if times.shape != (len(batches),):
            raise ValueError(
                f"service_ns has shape {times.shape}: it needs one time per batch ({len(batches)})"
            )
    hw_of_worker = result.workers["hardware"]
    keys = zip(
        hw_of_worker[batches["worker"].to_numpy()].tolist(),
        batches["model"].tolist(),
        batches["items"].tolist(),
        times.tolist(),
        strict=True,
    )
    samples: dict[tuple[str, str, int], list[float]] = {}
    for hw, model, items, ns in keys:
        key = (result.meta["hardware"][hw], result.meta["models"][model], int(items))
        samples.setdefault(key, []).append(max(int(round(ns)), 1) / 1e6)
    measured = {k: v for k, v in samples.items() if len(v) >= min_samples}
    if not measured:
        raise ValueError(
            f"the run has no (hardware, model, batch) with min_samples={min_samples} completed "
            f"batches ({sum(len(v) for v in samples.values())} batches in all)"
        )
    data = (
        profiles.to_dict(base)
        if base is not None
        else {"format": profiles.FORMAT, "version": 1, "hardware": {}, "models": {}, "latency": []}
    )
    data["latency"] = [
        e for e in data["latency"] if (e["hardware"], e["model"], int(e["batch"])) not in measured
    ]
    for (hw, model, items), ms in sorted(measured.items()):
        data["hardware"].setdefault(hw, {"price_per_hour": 0.0})
        data["models"].setdefault(model, {})
        data["latency"].append({"hardware": hw, "model": model, "batch": items, "samples_ms": ms})
    data["description"] = f"service times measured in a serving run ({len(batches)} batches)"
    return profiles.Profile.from_dict(data)
