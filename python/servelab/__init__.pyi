# The package's public names for type checkers: what __init__.py exports, plus the backend
# models it resolves lazily through __getattr__.
from typing import Any

from . import backends as backends
from . import experiments as experiments
from . import kairos as kairos
from . import main_job as main_job
from . import profiles as profiles
from . import ramsis as ramsis
from . import recsys as recsys
from . import results as results
from . import rrl as rrl
from . import solvers as solvers
from . import sweeps as sweeps
from . import workload as workload
from ._core import Actions as Actions
from ._core import BatchDone as BatchDone
from ._core import ClusterView as ClusterView
from ._core import MlpWeights as MlpWeights
from ._core import Model as Model
from ._core import OneDnnMlp as OneDnnMlp
from ._core import Query as Query
from ._core import ReferenceMlp as ReferenceMlp
from ._core import Scheduler as Scheduler
from ._core import WorkerGroup as WorkerGroup
from ._core import list_config_models as list_config_models
from ._core import list_loop_models as list_loop_models
from ._core import make_config_model as make_config_model
from ._core import make_loop_model as make_loop_model
from ._core import resctrl_status as resctrl_status
from ._cuda import CudaMlp as CudaMlp
from ._torch import TorchScriptModel as TorchScriptModel
from .backends import BackendUnavailable as BackendUnavailable
from .backends import build_info as build_info
from .calibration import Calibration as Calibration
from .calibration import calibrate as calibrate
from .calibration import loop_breakdown as loop_breakdown
from .calibration import loop_stages as loop_stages
from .executors import list_executors as list_executors
from .executors import make_executor as make_executor
from .executors import register_executor as register_executor
from .executors import unregister_executor as unregister_executor
from .experiments import QoS as QoS
from .experiments import allowable_throughput as allowable_throughput
from .profiles import Profile as Profile
from .profiling import profile as profile
from .profiling import profile_from_run as profile_from_run
from .registries import registries as registries
from .reproduction import reproduce as reproduce
from .results import Result as Result
from .results import load_result as load_result
from .run import serve as serve
from .run import simulate as simulate
from .scenario import Scenario as Scenario
from .scenario import builtin_scenarios as builtin_scenarios
from .scenario import load_scenario as load_scenario
from .schedulers import list_schedulers as list_schedulers
from .schedulers import make_scheduler as make_scheduler
from .schedulers import register_scheduler as register_scheduler
from .schedulers import unregister_scheduler as unregister_scheduler
from .session import Outcome as Outcome
from .session import Session as Session
from .sweeps import SweepError as SweepError
from .sweeps import SweepInterrupted as SweepInterrupted
from .sweeps import sweep as sweep
from .workload import list_arrival_processes as list_arrival_processes
from .workload import list_size_distributions as list_size_distributions
from .world_comparison import sim_vs_real as sim_vs_real

__version__: str

def __getattr__(name: str) -> Any: ...
