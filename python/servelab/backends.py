"""Optional backends: what was compiled in, and what is usable in this process now.

Each optional library has its own extension module, loaded on first use: ``servelab._onednn``
(libdnnl), ``servelab._lp`` (COIN-OR CBC/CLP, behind servelab.solvers.lp and Kairos's fluid
bound), ``servelab._torch`` (torch's libraries) and ``servelab._cuda`` (cuBLAS, a CUDA driver).
So ``import servelab`` needs none of them, and a missing runtime library is reported as the
reason a backend is not usable. The LibTorch module is only loaded against the torch it was
built for.
"""

from __future__ import annotations

import functools
import importlib
from dataclasses import asdict, dataclass, field
from types import ModuleType
from typing import Any

from . import _core


class BackendUnavailable(RuntimeError):
    """An optional backend was asked for but is not compiled in or not usable here."""


@dataclass(frozen=True)
class BackendStatus:
    name: str
    compiled: bool
    compiled_version: str | None
    usable: bool
    reason: str  # why it is not usable; empty when usable
    details: dict[str, Any] = field(default_factory=dict)


def _compiled(name: str) -> dict[str, Any]:
    return _core.build_info()["backends"][name]


def _not_compiled(info: dict[str, Any]) -> str:
    """The reason configure gave for leaving a backend out."""
    return f"not compiled: {info.get('why_off') or 'not found at build time'}"


def _import_extension(name: str) -> tuple[ModuleType | None, str]:
    """servelab.<name>, or None and why it does not load (e.g. a runtime library is missing)."""
    try:
        return importlib.import_module(f"servelab.{name}"), ""
    except ImportError as e:
        return None, f"servelab.{name} does not load: {e}"


@functools.cache
def _load_onednn() -> tuple[ModuleType | None, str, dict[str, Any]]:
    info = _compiled("onednn")
    if not info["compiled"]:
        return None, _not_compiled(info), {}
    module, reason = _import_extension("_onednn")
    if module is None:
        return None, f"{reason} (Debian: apt-get install libdnnl2)", {}
    return module, "", {"runtime_version": module.runtime_version()}


@functools.cache
def _load_lp() -> tuple[ModuleType | None, str, dict[str, Any]]:
    module, reason = _import_extension("_lp")
    if module is None:
        return None, f"{reason} (Debian: apt-get install coinor-libcbc3)", {}
    return module, "", {}


@functools.cache
def _load_torch() -> tuple[ModuleType | None, str, dict[str, Any]]:
    info = _compiled("torch")
    if not info["compiled"]:
        return None, _not_compiled(info), {}
    try:
        import torch  # loads torch's libraries first, so _torch binds to the very same ones
    except ImportError as e:
        return None, f"torch is not installed ({e})", {}
    details = {"runtime_version": torch.__version__}
    if torch.__version__ != info["version"]:
        return (
            None,
            f"servelab was built against torch {info['version']} but torch {torch.__version__} "
            "is installed; rebuild servelab",
            details,
        )
    module = importlib.import_module("servelab._torch")
    details["cuda_available"] = bool(torch.cuda.is_available())
    return module, "", details


@functools.cache
def _load_cuda() -> tuple[ModuleType | None, str, dict[str, Any]]:
    info = _compiled("cuda")
    if not info["compiled"]:
        return None, _not_compiled(info), {}
    try:
        module = importlib.import_module("servelab._cuda")
    except ImportError as e:  # e.g. cuBLAS missing on this machine
        return None, f"the CUDA module does not load: {e}", {}
    status = dict(module.status())
    if status["device_count"] > 0:
        return module, "", status
    if status["driver_version"] == 0:
        reason = "no CUDA driver on this machine (CPU only)"
    else:
        reason = status["reason"] or "no CUDA device"
    return None, reason, status


# The executor backends build_info() reports (each may add executors to the registry when it
# loads), and every module loader require() knows.
EXECUTOR_BACKENDS = ("onednn", "torch", "cuda")
_EXECUTOR_BACKENDS = EXECUTOR_BACKENDS
_LOADERS = {"onednn": _load_onednn, "lp": _load_lp, "torch": _load_torch, "cuda": _load_cuda}


def status(name: str) -> BackendStatus:
    """The status of one backend: ``"onednn"``, ``"torch"`` or ``"cuda"``."""
    if name not in _EXECUTOR_BACKENDS:
        raise KeyError(f"backend={name!r} is unknown; choose one of {sorted(_EXECUTOR_BACKENDS)}")
    info = _compiled(name)
    module, reason, details = _LOADERS[name]()
    if name == "cuda":
        details = {"architectures": info.get("architectures"), **details}
    usable = module is not None
    return BackendStatus(name, info["compiled"], info["version"], usable, reason, details)


def require(name: str) -> ModuleType:
    """The extension module of a usable backend, or BackendUnavailable saying why not."""
    if name not in _LOADERS:
        raise KeyError(f"backend={name!r} has no separate module; choose one of {sorted(_LOADERS)}")
    module, reason, _ = _LOADERS[name]()
    if module is None:
        raise BackendUnavailable(f"the {name} backend is not usable: {reason}")
    return module


def build_info() -> dict[str, Any]:
    """What servelab was compiled with and which backends are usable now.

    Returns a dict with ``version``, ``compiler``, ``build_type``, ``cxx_standard`` and
    ``backends``: for each of onednn, torch and cuda a dict with ``compiled``,
    ``compiled_version``, ``usable``, ``reason`` (empty when usable) and backend details
    (runtime versions, GPU count and name); ``lp_solver``: the LP/MILP libraries behind
    servelab.solvers.lp ("" when servelab was built without one).
    """
    info = _core.build_info()
    info["backends"] = {name: _as_dict(status(name)) for name in _EXECUTOR_BACKENDS}
    info["lp_solver"] = _lp_solver()
    return info


def _lp_solver() -> str:
    module, reason, _ = _load_lp()
    if module is None:
        return f"not usable: {reason}"
    return str(module.lp_backend_version())


def _as_dict(s: BackendStatus) -> dict[str, Any]:
    d = asdict(s)
    del d["name"]
    return d
