"""Type stubs for servelab's LibTorch backend module (use servelab.TorchScriptModel)."""

from ._core import Model

class TorchScriptModel(Model):
    def __init__(self, path: str, device: str = "cpu") -> None: ...
    @property
    def device(self) -> str: ...

def compiled_version() -> str: ...
