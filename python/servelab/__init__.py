"""servelab: a research framework for ML inference serving.

The C++ core lives in the private extension module ``servelab._core``; this package re-exports
its public classes. Backend-specific models (``OneDnnMlp``, ``TorchScriptModel``, ``CudaMlp``)
resolve on first use and raise ``BackendUnavailable`` with the reason when their backend is not
compiled in or not usable on this machine (see ``build_info()``).
"""

from __future__ import annotations

from typing import Any

from . import (
    _core,
    backends,
    experiments,
    kairos,
    main_job,
    profiles,
    ramsis,
    results,
    solvers,
    workload,
)
from ._core import (
    Actions,
    BatchDone,
    ClusterView,
    MlpWeights,
    Model,
    Query,
    ReferenceMlp,
    Scheduler,
    WorkerGroup,
)
from .backends import BackendUnavailable, build_info
from .experiments import QoS, allowable_throughput, sweep
from .profiles import Profile
from .results import Result
from .run import serve, simulate
from .scenario import Scenario, builtin_scenarios, load_scenario
from .schedulers import list_schedulers, make_scheduler, register_scheduler, unregister_scheduler
from .workload import list_arrival_processes, list_size_distributions

__version__: str = _core.build_info()["version"]

__all__ = [
    "Actions",
    "BackendUnavailable",
    "BatchDone",
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
    "WorkerGroup",
    "__version__",
    "allowable_throughput",
    "build_info",
    "builtin_scenarios",
    "experiments",
    "list_arrival_processes",
    "list_schedulers",
    "list_size_distributions",
    "load_scenario",
    "main_job",
    "make_scheduler",
    "profiles",
    "register_scheduler",
    "results",
    "serve",
    "simulate",
    "sweep",
    "unregister_scheduler",
    "workload",
    "kairos",
    "ramsis",
    "solvers",
]

# name -> (backend, module attribute); resolved lazily by __getattr__ below.
_BACKEND_MODELS = {
    "OneDnnMlp": "onednn",
    "TorchScriptModel": "torch",
    "CudaMlp": "cuda",
}


def __getattr__(name: str) -> Any:
    backend = _BACKEND_MODELS.get(name)
    if backend is None:
        raise AttributeError(f"module 'servelab' has no attribute {name!r}")
    return getattr(backends.require(backend), name)


def __dir__() -> list[str]:
    return sorted([*globals(), *_BACKEND_MODELS])
