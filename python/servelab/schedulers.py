"""Schedulers by name: the C++ registry plus policies registered from Python.

``make_scheduler("fcfs(prefer='g4dn.xlarge')")`` or ``make_scheduler("edf", drop_late=True)``
builds one; ``list_schedulers()`` lists every entry with its typed parameters. A Python policy
(a subclass of :class:`servelab.Scheduler`) joins with ``register_scheduler``; it then works in
scenarios, the CLI and the conformance suite like a built-in one.
"""

from __future__ import annotations

import ast
import inspect
from collections.abc import Callable
from typing import Any

from . import _core

_PYTHON_SCHEDULERS: dict[str, tuple[Callable[..., _core.Scheduler], str]] = {}


def register_scheduler(name: str, factory: Callable[..., _core.Scheduler], doc: str = "") -> None:
    """Registers a Python policy: `factory(**params)` must return a fresh Scheduler per run."""
    if not name or not isinstance(name, str):
        raise ValueError(f"name={name!r} must be a non-empty string")
    builtin = {e["name"] for e in _core.list_schedulers()}
    if name in builtin or name in _PYTHON_SCHEDULERS:
        raise ValueError(f"scheduler {name!r} is already registered")
    _PYTHON_SCHEDULERS[name] = (factory, doc or (inspect.getdoc(factory) or "").split("\n")[0])


def unregister_scheduler(name: str) -> None:
    """Removes a Python-registered policy (KeyError if it is not one)."""
    if name not in _PYTHON_SCHEDULERS:
        raise KeyError(f"{name!r} is not a scheduler registered from Python")
    del _PYTHON_SCHEDULERS[name]


def _python_params(factory: Callable[..., Any]) -> list[dict[str, Any]]:
    try:
        signature = inspect.signature(factory)
    except (TypeError, ValueError):  # e.g. a pybind11 class: its __init__ has no Python signature
        return []
    params = []
    for p in signature.parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        required = p.default is inspect.Parameter.empty
        params.append(
            {
                "name": p.name,
                "type": getattr(p.annotation, "__name__", str(p.annotation))
                if p.annotation
                else "",
                "required": required,
                "default": None if required else p.default,
                "doc": "",
            }
        )
    return params


def list_schedulers() -> list[dict[str, Any]]:
    """Every scheduler (built-in and Python-registered): name, doc, params, and where it lives."""
    out = [dict(e, origin="c++") for e in _core.list_schedulers()]
    for name, (factory, doc) in _PYTHON_SCHEDULERS.items():
        out.append(
            {"name": name, "doc": doc, "params": _python_params(factory), "origin": "python"}
        )
    return sorted(out, key=lambda e: e["name"])


def make_scheduler(spec: str, **params: Any) -> _core.Scheduler:
    """A fresh scheduler from 'name(a=1)' or a name plus keyword parameters."""
    name = spec.split("(", 1)[0].strip()
    if name in _PYTHON_SCHEDULERS:
        factory, _ = _PYTHON_SCHEDULERS[name]
        spec_params = _parse_call(spec) if "(" in spec else {}
        both = sorted(set(spec_params) & set(params))
        if both:
            raise ValueError(f"parameter {both[0]!r} is given in the spec and as a keyword")
        given = {**spec_params, **params}
        _check_python_params(name, factory, given)
        scheduler = factory(**given)
        if not isinstance(scheduler, _core.Scheduler):
            raise TypeError(f"the factory of {name!r} returned {scheduler!r}, not a Scheduler")
        return scheduler
    return _core.make_scheduler(spec, **params)


def _parse_call(spec: str) -> dict[str, Any]:
    """The keyword arguments of 'name(a=1, b="x")' (literals only)."""
    try:
        call = ast.parse(spec.strip(), mode="eval").body
        if not isinstance(call, ast.Call) or call.args:
            raise ValueError
        return {k.arg: ast.literal_eval(k.value) for k in call.keywords if k.arg}
    except (SyntaxError, ValueError):
        raise ValueError(
            f"scheduler spec {spec!r} must look like name(a=1, b='x') with literal values"
        ) from None


def _check_python_params(name: str, factory: Callable[..., Any], given: dict[str, Any]) -> None:
    """KeyError naming the scheduler for a parameter its factory does not take."""
    try:
        accepted = list(inspect.signature(factory).parameters.values())
    except (TypeError, ValueError):
        accepted = []  # a Scheduler subclass without its own __init__ takes no parameters
    if any(p.kind == p.VAR_KEYWORD for p in accepted):
        return
    names = [p.name for p in accepted if p.kind != p.VAR_POSITIONAL]
    for key in given:
        if key not in names:
            known = ", ".join(names) or "(none)"
            raise KeyError(f"{name} has no parameter {key!r}; its parameters are: {known}")
