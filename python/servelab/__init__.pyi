from typing import Any

from . import backends as backends
from ._core import MlpWeights as MlpWeights
from ._core import Model as Model
from ._core import OneDnnMlp as OneDnnMlp
from ._core import ReferenceMlp as ReferenceMlp
from ._cuda import CudaMlp as CudaMlp
from ._torch import TorchScriptModel as TorchScriptModel
from .backends import BackendUnavailable as BackendUnavailable
from .backends import build_info as build_info

__version__: str

def __getattr__(name: str) -> Any: ...
