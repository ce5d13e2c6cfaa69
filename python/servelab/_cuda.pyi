"""Type stubs for servelab's CUDA backend module (use servelab.CudaMlp)."""

from typing import Any

from ._core import MlpWeights, Model

def status() -> dict[str, Any]: ...

class CudaMlp(Model):
    def __init__(self, weights: MlpWeights, device: int = 0) -> None: ...
