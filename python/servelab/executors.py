"""Executors by name: what runs a batch on a worker of the real serving loop.

``make_executor("torchscript(path='m.pt', intra_op=1)")`` (or a name plus keywords, or a dict
``{"name": "torchscript", "path": "m.pt"}``) builds one; ``list_executors()`` lists every entry with
its typed, documented parameters. ``emulated`` (wait the profiled latency, the default) and
``constant`` (a fixed wait per batch, 0 for none) are built into ``servelab._core``; the optional
backends add theirs when their module loads (``torchscript`` from ``servelab._torch``), which
happens here on demand, so naming an executor is enough::

    ex = servelab.make_executor("torchscript", path="model.pt")
    servelab.serve("default", executor=ex)                # or executor="torchscript(path=...)"
    servelab.profile(ex, batches=[1, 8, 64], repeats=20)  # a native profile the simulator reads

See docs/executors.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from . import _core, backends

__all__ = ["ExecutorBuilder", "list_executors", "make_executor", "spec_string"]

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


def _load_backends() -> dict[str, str]:
    """Loads every usable executor backend (each adds its executors); returns why the others
    are not usable."""
    return {
        name: status.reason
        for name in backends.EXECUTOR_BACKENDS
        if not (status := backends.status(name)).usable
    }


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
