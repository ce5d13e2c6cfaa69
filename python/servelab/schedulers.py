"""Schedulers by name: one registry (the C++ catalogue) for built-in and Python policies.

``make_scheduler("fcfs(prefer='g4dn.xlarge')")`` or ``make_scheduler("edf", drop_late=True)``
builds one; ``list_schedulers()`` lists every entry with its typed parameters. A Python policy
(a subclass of :class:`servelab.Scheduler`) joins with ``register_scheduler``: its parameters are
declared (or read from the factory's annotated signature), then parsed by the same spec grammar,
type-checked, range-checked and documented like a C++ policy's, so ``"mine(flag=true)"`` works in
scenarios, the CLI and the conformance suite like ``"fcfs(prefer=gpu)"``.
"""

from __future__ import annotations

import collections.abc
import inspect
import typing
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from . import _core

__all__ = [
    "Param",
    "list_schedulers",
    "make_scheduler",
    "register_scheduler",
    "unregister_scheduler",
]

_REQUIRED = inspect.Parameter.empty


@dataclass(frozen=True)
class Param:
    """A declared parameter of a Python policy (the C++ ParamSpec).

    ``type`` is bool, int, float, str or list[float]; ``default`` absent means required; ``min``,
    ``max`` (numbers, and each element of a list) and ``choices`` (strings) are checked on every
    value a user passes.
    """

    name: str
    type: Any
    default: Any = _REQUIRED
    doc: str = ""
    min: float | None = None
    max: float | None = None
    min_exclusive: bool = False
    choices: Sequence[str] = field(default_factory=tuple)

    def to_spec(self) -> dict[str, Any]:
        spec: dict[str, Any] = {
            "name": self.name,
            "type": _type_name(self.type, self.name),
            "doc": self.doc,
            "min": self.min,
            "max": self.max,
            "min_exclusive": self.min_exclusive,
            "choices": list(self.choices),
        }
        if self.default is not _REQUIRED:
            spec["default"] = self.default
        return spec


# Python annotation -> the registry's type name.
_TYPE_NAMES = {bool: "bool", int: "int", float: "float", str: "str"}


def _type_name(annotation: Any, name: str) -> str:
    if isinstance(annotation, str):  # `from __future__ import annotations` leaves strings
        text = annotation.replace(" ", "")
        by_text = {"bool": "bool", "int": "int", "float": "float", "str": "str"}
        if text in by_text:
            return by_text[text]
        if text in ("list[float]", "Sequence[float]", "typing.Sequence[float]"):
            return "list of float"
    if annotation in _TYPE_NAMES:
        return _TYPE_NAMES[annotation]
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin in (list, collections.abc.Sequence) and args in ((float,), (int,)):
        return "list of float"
    raise TypeError(
        f"parameter {name!r}: type {annotation!r} is not one of bool, int, float, str, list[float]"
    )


def _params_from_signature(
    name: str, factory: Callable[..., Any], kind: str = "scheduler"
) -> list[Param]:
    """Parameters read from the factory's signature (annotations, else the default's type)."""
    try:
        signature = inspect.signature(factory)
    except (TypeError, ValueError):  # e.g. a pybind11 class: its __init__ has no Python signature
        return []
    params = []
    for p in signature.parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        annotation = p.annotation
        if annotation is _REQUIRED:
            if p.default is _REQUIRED or p.default is None:
                raise TypeError(
                    f"{kind} {name!r}: parameter {p.name!r} needs a type annotation "
                    "(bool, int, float, str or list[float]) or pass params=[Param(...)]"
                )
            annotation = type(p.default)
        default = list(p.default) if isinstance(p.default, tuple) else p.default
        params.append(Param(p.name, annotation, default))
    return params


def register_scheduler(
    name: str,
    factory: Callable[..., _core.Scheduler],
    doc: str = "",
    params: Sequence[Param] | None = None,
) -> None:
    """Registers a Python policy: ``factory(**params)`` must return a fresh Scheduler per run.

    ``params`` declares the parameters (types, defaults, ranges, docs); without it they are read
    from the factory's signature, whose parameters must then be annotated or have defaults.
    """
    if not name or not isinstance(name, str):
        raise ValueError(f"name={name!r} must be a non-empty string")
    if not callable(factory):
        raise TypeError(f"factory={factory!r} of scheduler {name!r} is not callable")
    declared = list(params) if params is not None else _params_from_signature(name, factory)
    doc = doc or (inspect.getdoc(factory) or "").split("\n")[0]
    _core.extend_schedulers(name, factory, [p.to_spec() for p in declared], doc)


def unregister_scheduler(name: str) -> None:
    """Removes a Python-registered policy (KeyError if it is built in or unknown)."""
    _core.retract_scheduler(name)


_SYSTEMS_JOINED = False


def _join_systems_policies() -> None:
    """The systems' policies written in Python (RRL's ``rrl_tuner`` and ``rrl_batch_tuner``) join
    the registry the first time it is listed or used, so that they are there like the C++ ones
    without anyone calling their register functions (imported then, not by ``import servelab``).
    Once per process: an unregistered one stays unregistered."""
    global _SYSTEMS_JOINED
    if _SYSTEMS_JOINED:
        return
    _SYSTEMS_JOINED = True
    from .systems.rrl import schedulers as rrl_schedulers

    rrl_schedulers.register()


def list_schedulers() -> list[dict[str, Any]]:
    """Every scheduler (built-in and Python-registered, the systems' Python policies included):
    name, doc, params and origin."""
    _join_systems_policies()
    return list(_core.list_schedulers())


def make_scheduler(spec: str, **params: Any) -> _core.Scheduler:
    """A fresh scheduler from 'name(a=1)' or a name plus keyword parameters."""
    _join_systems_policies()
    return _core.make_scheduler(spec, **params)
