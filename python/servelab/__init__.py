"""servelab: a research framework for ML inference serving.

The C++ core lives in the private extension module ``servelab._core``; this package re-exports
its public classes. Backend-specific models (``OneDnnMlp``, ``TorchScriptModel``, ``CudaMlp``)
resolve on first use and raise ``BackendUnavailable`` with the reason when their backend is not
compiled in or not usable on this machine (see ``build_info()``).
"""

from __future__ import annotations

import importlib
from typing import Any

from . import _aliases, _core, backends
from ._core import (
    Actions,
    BatchDone,
    ClusterView,
    MachineGroup,
    MlpWeights,
    Model,
    Query,
    ReferenceMlp,
    Scheduler,
    WorkerGroup,
)
from .backends import BackendUnavailable, build_info

__version__: str = _core.build_info()["version"]
_aliases.install()  # servelab.kairos is servelab.systems.kairos, and so on

# Everything else loads on first use, so `import servelab` (and the CLI's start) stays fast:
# pandas alone takes a quarter of a second to import.
_LAZY_MODULES = {
    "experiments",
    "sweeps",
    "main_job",
    "metrics",
    "profiles",
    "recsys",
    "results",
    "solvers",
    "systems",
    "workload",
}
# public name -> (module, attribute)
_LAZY_NAMES = {
    "QoS": ("experiments", "QoS"),
    "allowable_throughput": ("experiments", "allowable_throughput"),
    "sweep": ("sweeps", "sweep"),
    "SweepError": ("sweeps", "SweepError"),
    "SweepInterrupted": ("sweeps", "SweepInterrupted"),
    "Profile": ("profiles", "Profile"),
    "Result": ("results", "Result"),
    "load_result": ("results", "load_result"),
    "serve": ("run", "serve"),
    "resctrl_status": ("_core", "resctrl_status"),
    "registries": ("registries", "registries"),
    "Session": ("session", "Session"),
    "Outcome": ("session", "Outcome"),
    "simulate": ("run", "simulate"),
    "reproduce": ("reproduction", "reproduce"),
    "Scenario": ("scenario", "Scenario"),
    "builtin_scenarios": ("scenario", "builtin_scenarios"),
    "load_scenario": ("scenario", "load_scenario"),
    "list_executors": ("executors", "list_executors"),
    "make_executor": ("executors", "make_executor"),
    "register_executor": ("executors", "register_executor"),
    "unregister_executor": ("executors", "unregister_executor"),
    "profile": ("profiling", "profile"),
    "profile_from_run": ("profiling", "profile_from_run"),
    "profile_colocated": ("profiling", "profile_colocated"),
    "fit_interference": ("profiling", "fit_interference"),
    "sim_vs_real": ("world_comparison", "sim_vs_real"),
    "list_schedulers": ("schedulers", "list_schedulers"),
    "make_scheduler": ("schedulers", "make_scheduler"),
    "register_scheduler": ("schedulers", "register_scheduler"),
    "unregister_scheduler": ("schedulers", "unregister_scheduler"),
    "list_arrival_processes": ("workload", "list_arrival_processes"),
    "list_size_distributions": ("workload", "list_size_distributions"),
    "list_config_models": ("_core", "list_config_models"),
    "make_config_model": ("_core", "make_config_model"),
    "list_loop_models": ("_core", "list_loop_models"),
    "make_loop_model": ("_core", "make_loop_model"),
    "list_interference_models": ("_core", "list_interference_models"),
    "make_interference_model": ("_core", "make_interference_model"),
    "Calibration": ("calibration", "Calibration"),
    "calibrate": ("calibration", "calibrate"),
    "loop_breakdown": ("calibration", "loop_breakdown"),
    "loop_stages": ("calibration", "loop_stages"),
}

__all__ = [
    "Actions",
    "BackendUnavailable",
    "BatchDone",
    "Calibration",
    "ClusterView",
    "MlpWeights",
    "Model",
    "Profile",
    "QoS",
    "Query",
    "ReferenceMlp",
    "Result",
    "Scenario",
    "Scheduler",
    "SweepError",
    "SweepInterrupted",
    "MachineGroup",
    "WorkerGroup",
    "__version__",
    "allowable_throughput",
    "build_info",
    "builtin_scenarios",
    "calibrate",
    "experiments",
    "fit_interference",
    "list_arrival_processes",
    "list_config_models",
    "list_executors",
    "list_interference_models",
    "list_loop_models",
    "list_schedulers",
    "list_size_distributions",
    "load_result",
    "load_scenario",
    "loop_breakdown",
    "loop_stages",
    "main_job",
    "metrics",
    "make_config_model",
    "make_executor",
    "make_interference_model",
    "make_loop_model",
    "make_scheduler",
    "profile",
    "profile_colocated",
    "profile_from_run",
    "profiles",
    "recsys",
    "register_executor",
    "register_scheduler",
    "registries",
    "reproduce",
    "resctrl_status",
    "results",
    "serve",
    "Session",
    "Outcome",
    "sim_vs_real",
    "simulate",
    "sweep",
    "unregister_executor",
    "unregister_scheduler",
    "workload",
    "kairos",
    "ramsis",
    "rrl",
    "hera",
    "infaas",
    "solvers",
]

# name -> (backend, module attribute); resolved lazily by __getattr__ below.
_BACKEND_MODELS = {
    "OneDnnMlp": "onednn",
    "TorchScriptModel": "torch",
    "CudaMlp": "cuda",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY_MODULES:
        value: Any = importlib.import_module(f".{name}", __name__)
    elif f"servelab.{name}" in _aliases.SYSTEMS:
        value = importlib.import_module(_aliases.SYSTEMS[f"servelab.{name}"])
    elif name in _LAZY_NAMES:
        module, attribute = _LAZY_NAMES[name]
        value = getattr(importlib.import_module(f".{module}", __name__), attribute)
    elif name in _BACKEND_MODELS:  # not cached: whether a backend is usable can change
        return getattr(backends.require(_BACKEND_MODELS[name]), name)
    else:
        raise AttributeError(f"module 'servelab' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    systems = [name.split(".")[1] for name in _aliases.SYSTEMS]
    return sorted({*globals(), *_LAZY_MODULES, *_LAZY_NAMES, *_BACKEND_MODELS, *systems})
