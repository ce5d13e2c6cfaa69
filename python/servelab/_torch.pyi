"""Type stubs for servelab's LibTorch backend module (use servelab.TorchScriptModel, or
servelab.make_executor("torchscript(path=...)"))."""

import numpy as np
import numpy.typing as npt

from ._core import ExecutorBuilder, Model

class TorchScriptModel(Model):
    def __init__(self, path: str, device: str = "cpu") -> None: ...
    @property
    def device(self) -> str: ...

class TorchScriptExecutor(ExecutorBuilder):
    @property
    def width(self) -> int: ...
    @property
    def device(self) -> str: ...
    def inputs(
        self, sizes: list[int], first_query: int = 0, seed: int = 0
    ) -> npt.NDArray[np.float32]: ...
    def forward(self, input: npt.ArrayLike) -> npt.NDArray[np.float32]: ...

def compiled_version() -> str: ...
