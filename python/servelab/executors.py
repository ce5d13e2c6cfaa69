"""Executors by name: what runs a batch on a worker of the real serving loop.

``make_executor("torchscript(path='m.pt', intra_op=1)")`` (or a name plus keywords, or a dict
``{"name": "torchscript", "path": "m.pt"}``) builds one; ``list_executors()`` lists every entry with
its typed, documented parameters. ``emulated`` (wait the profiled latency, the default) and
``constant`` (a fixed wait per batch, 0 for none) are built into ``servelab._core``; the optional
backends add theirs when their module loads (``torchscript`` from ``servelab._torch``), and
``kserve`` (batches sent to an Open Inference Protocol server, ``servelab.kserve_executor``) is
written in Python; all are added here on demand, so naming an executor is enough::

    ex = servelab.make_executor("torchscript", path="model.pt")
    servelab.serve("default", executor=ex)                # or executor="torchscript(path=...)"
    servelab.profile(ex, batches=[1, 8, 64], repeats=20)  # a native profile the simulator reads

An executor written in Python joins the same registry with ``register_executor``: its factory
returns an object with ``run(batch)`` (and, for knobs a scheduler sets at run time, a ``knobs``
list and ``set_config(key, value)``); it runs in the real serving loop under every scheduler::

    class Echo:
        def __init__(self, delay_ms: float = 0.0): ...
        def run(self, batch): ...          # batch.queries, batch.sizes, batch.inputs, ...

    servelab.register_executor("echo", Echo)
    servelab.serve("default", executor="echo(delay_ms=1)")

See docs/executors.md.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from . import _core, backends
from .schedulers import Param, _params_from_signature

__all__ = [
    "ExecutorBuilder",
    "list_executors",
    "make_executor",
    "query_inputs",
    "register_executor",
    "spec_string",
    "unregister_executor",
]

ExecutorBuilder = _core.ExecutorBuilder


def spec_string(spec: Any, field: str = "executor") -> str:
    """'name(a=1)' from a spec string or a dict ``{"name": ..., **params}``."""
    if isinstance(spec, str):
        return spec
    if isinstance(spec, Mapping) and isinstance(spec.get("name"), str):
        params = ", ".join(f"{k}={v!r}" for k, v in spec.items() if k != "name")
        return f"{spec['name']}({params})"
    raise ValueError(
        f"{field}={spec!r} is not an executor: pass a spec string such as "
        "\"torchscript(path='m.pt')\", a dict {'name': ..., **params} or make_executor()'s result"
    )


def _registered() -> set[str]:
    return {entry["name"] for entry in _core.list_executors()}


# Executors written in Python that come with servelab: each module's register() adds its entry
# when the registry is first used (the modules import nothing heavy until a run builds one).
_PYTHON_BUILTINS = ("kserve_executor",)
_python_builtins_loaded = False


def _load_python_builtins() -> None:
    global _python_builtins_loaded
    if _python_builtins_loaded:
        return
    _python_builtins_loaded = True  # first: register() comes back through register_executor
    for module in _PYTHON_BUILTINS:
        importlib.import_module(f"{__package__}.{module}").register()


def _load_backends() -> dict[str, str]:
    """Loads every usable executor backend (each adds its executors), then the built-in
    executors written in Python; returns why the backends not usable are not."""
    unusable = {
        name: status.reason
        for name in backends.EXECUTOR_BACKENDS
        if not (status := backends.status(name)).usable
    }
    _load_python_builtins()
    return unusable


def list_executors() -> list[dict[str, Any]]:
    """Every executor: name, doc, params and the module that registered it. Loads the usable
    backends first, so the list is complete."""
    _load_backends()
    return list(_core.list_executors())


def make_executor(spec: Any, **params: Any) -> ExecutorBuilder:
    """An executor from ``'name(a=1)'``, a name plus keyword parameters, or a dict.

    Unknown names raise KeyError (listing the registered executors and the backends that are not
    usable, with their reasons); bad parameters raise ValueError naming the executor, the parameter
    and the value, as do a missing model file or a width that does not fit the model.
    """
    if isinstance(spec, ExecutorBuilder):
        if params:
            raise ValueError(f"executor={spec.describe()} is already built; pass params to a spec")
        return spec
    text = spec_string(spec)
    name = text.split("(", 1)[0].strip()
    if name not in _registered():
        unusable = _load_backends()
        if name not in _registered():
            missing = "; ".join(f"{b}: {why}" for b, why in sorted(unusable.items()))
            raise KeyError(
                f"unknown executor {name!r}; registered: {', '.join(sorted(_registered()))}"
                + (f" (backends not usable here, {missing})" if missing else "")
            )
    return _core.make_executor(text, **params)


def _is_spec_name(name: str) -> bool:
    """What the spec grammar reads as a name: letters, digits, '_', '-', '.', '+'."""
    return bool(name) and all(c.isalnum() or c in "_-.+" for c in name) and name.isascii()


def register_executor(
    name: str,
    factory: Callable[..., Any],
    doc: str = "",
    params: Sequence[Param] | None = None,
) -> None:
    """Registers an executor written in Python.

    ``factory(**params)`` is called once per worker when a serving run (or ``open()``) starts and
    must return an object with ``run(batch)``: it runs the batch (``batch.queries``, ``.sizes``,
    ``.items``, ``.inputs``, ``.model_name``, ``.config``) and returns when done; an exception fails
    that batch alone (its queries end dropped with the reason ``executor failed: <spec>:
    <exception>``). Optional: ``knobs`` (the config keys it reads, which a scheduler may set with
    ``actions.set_config``) with ``set_config(key, value)``, called before a batch when a value
    changed. In a :class:`servelab.Session`, ``run(batch)`` may return the queries' outputs
    (each submitter gets its own): a list with one array per query, or one array with a row per
    item of the batch, split by the queries' sizes; None: no outputs. ``params`` declares the
    parameters (types, defaults, ranges, docs); without it they are read from the factory's
    signature, as for :func:`servelab.register_scheduler`.
    """
    if not isinstance(name, str) or not _is_spec_name(name):
        raise ValueError(
            f"name={name!r} must be a non-empty string of letters, digits, '_', '-', '.', '+'"
        )
    if not callable(factory):
        raise TypeError(f"factory={factory!r} of executor {name!r} is not callable")
    if params is not None and (
        isinstance(params, str | Param) or not all(isinstance(p, Param) for p in params)
    ):
        raise TypeError(f"params={params!r} of executor {name!r} must be a list of servelab.Param")
    declared = (
        list(params) if params is not None else _params_from_signature(name, factory, "executor")
    )
    doc = doc or (inspect.getdoc(factory) or "").split("\n")[0]
    module = getattr(factory, "__module__", None) or "__main__"
    _load_backends()  # their executors first: a Python one must not take a backend's name
    if name in _registered():
        raise ValueError(f"name={name!r}: executor {name!r} is already registered")
    _core.extend_executors(name, factory, [p.to_spec() for p in declared], doc, module)


def unregister_executor(name: str) -> None:
    """Removes an executor registered with :func:`register_executor` (KeyError for any other)."""
    _core.retract_executor(name)


def _takes_inputs(builder: ExecutorBuilder | None) -> bool:
    return isinstance(builder, _core.PythonExecutorBuilder) or hasattr(builder, "width")


def query_inputs(
    inputs: Any,
    executors: Sequence[ExecutorBuilder | None] | None,
    workers: Sequence[Mapping[str, Any]],
    count: int | None,
) -> _core.QueryInputs:
    """``serve(inputs=...)`` checked against the run before it starts: an array with one row per
    query (query q takes row q) or a callable of the query id. Executors that read float rows
    (torchscript) check the dtype and width now (a callable is asked for query 0); ValueError
    naming the worker group, its executor and models, and the value. A ``remote`` group's worker
    process is asked what its executor reads (a short connection) and checked the same way, plus
    that the inputs can be sent (numeric arrays and numpy scalars)."""
    made = inputs if isinstance(inputs, _core.QueryInputs) else _core.QueryInputs(inputs)
    if made.rows >= 0 and count is not None and made.rows < count:
        raise ValueError(
            f"inputs={made.describe()} has {made.rows} rows (one per query) "
            f"for a workload of count={count} queries"
        )
    builders = list(executors) if executors is not None else [None] * len(workers)
    # A remote group takes what its worker process hosts takes: asked now, over a connection.
    hosted = [_core.remote_hosted(b) if b is not None else None for b in builders]
    pairs = list(zip(builders, hosted, strict=True))
    if not any(_takes_inputs(b) or (h and h["inputs"] != "none") for b, h in pairs):
        named = ", ".join(
            (b.describe() + (f" -> {h['executor']}" if h else "")) if b is not None else "emulated"
            for b, h in pairs
        )
        raise ValueError(
            f"inputs= is for executors that take inputs (torchscript, executors written in "
            f"Python); this run's executors ({named}) make their own"
        )
    for i, (builder, h, group) in enumerate(zip(builders, hosted, workers, strict=True)):
        if builder is None:
            continue
        models = group.get("models")
        where = f"workers[{i}].executor={builder.describe()}"
        where += (f" -> {h['executor']}" if h else "") + (
            f" (models {', '.join(models)})" if models else ""
        )
        if hasattr(builder, "width"):
            made.check_float_rows(int(builder.width), where)
        elif h and h["inputs"] == "float_rows":
            made.check_float_rows(int(h["width"]), where)
        elif h and h["inputs"] == "arrays":
            made.check_sendable(where)
    return made
