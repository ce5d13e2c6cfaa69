"""Each backend's smoke work: the same MLP run by a backend and by a reference, compared.

Used by ``servelab demo`` (the main job at this stage), the build-check notebook and the tests.
Every check returns a plain dict, so the CLI can print it or emit it as JSON.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from . import backends
from ._core import MlpWeights, ReferenceMlp

# The dense MLP of a DLRM-style recommendation model (input 256, hidden 512 and 256, output 64).
DEFAULT_WIDTHS = (256, 512, 256, 64)
TOLERANCE = 1e-4  # max abs difference from the reference allowed for float32 backends


def _best_time(fn: Callable[[], Any], repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def _skipped(name: str, reason: str) -> dict[str, Any]:
    return {"backend": name, "ran": False, "passed": None, "reason": reason}


def _compare(
    name: str, got: np.ndarray, expected: np.ndarray, against: str, **extra: Any
) -> dict[str, Any]:
    error = float(np.max(np.abs(got - expected)))
    return {
        "backend": name,
        "ran": True,
        "passed": bool(error <= TOLERANCE),
        "against": against,
        "max_abs_error": error,
        "output_shape": list(got.shape),
        **extra,
    }


def random_batch(batch: int, width: int, seed: int = 0) -> np.ndarray:
    """A reproducible float32 [batch, width] input."""
    return np.random.default_rng(seed).standard_normal((batch, width), dtype=np.float32)


def scripted_torch_mlp(weights: MlpWeights) -> Any:
    """The same MLP as a scripted torch.nn.Sequential (Linear, ReLU, ..., Linear)."""
    import torch

    layers: list[torch.nn.Module] = []
    for i, (w, b) in enumerate(weights.layers):
        linear = torch.nn.Linear(w.shape[1], w.shape[0])
        with torch.no_grad():
            linear.weight.copy_(torch.from_numpy(w))
            linear.bias.copy_(torch.from_numpy(b))
        layers.append(linear)
        if i + 1 < len(weights.layers):
            layers.append(torch.nn.ReLU())
    return torch.jit.script(torch.nn.Sequential(*layers).eval())


def check_onednn(
    batch: int = 64, widths: tuple[int, ...] = DEFAULT_WIDTHS, seed: int = 0
) -> dict[str, Any]:
    """oneDNN inner-product MLP vs the C++ reference MLP, plus their speed ratio."""
    status = backends.status("onednn")
    if not status.usable:
        return _skipped("onednn", status.reason)
    OneDnnMlp = backends.require("onednn").OneDnnMlp  # noqa: N806 (a class)

    weights = MlpWeights.random(list(widths), seed)
    x = random_batch(batch, widths[0], seed)
    onednn, reference = OneDnnMlp(weights), ReferenceMlp(weights)
    got, expected = onednn(x), reference(x)
    speedup = _best_time(lambda: reference(x), 3) / _best_time(lambda: onednn(x), 10)
    return _compare(
        "onednn", got, expected, "ReferenceMlp (C++ loops)", speedup_vs_reference=speedup
    )


def check_torch(
    batch: int = 64, widths: tuple[int, ...] = DEFAULT_WIDTHS, seed: int = 0
) -> dict[str, Any]:
    """A TorchScript module saved from Python, loaded and run by C++ on a numpy batch, vs torch."""
    status = backends.status("torch")
    if not status.usable:
        return _skipped("torch", status.reason)
    import torch

    from . import TorchScriptModel

    module = scripted_torch_mlp(MlpWeights.random(list(widths), seed))
    x = random_batch(batch, widths[0], seed)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "mlp.pt"
        torch.jit.save(module, str(path))
        model = TorchScriptModel(str(path), "cpu")
    with torch.inference_mode():
        expected = module(torch.from_numpy(x)).numpy()
    return _compare("torch", model(x), expected, f"torch {torch.__version__} in Python")


def check_cuda(
    batch: int = 64, widths: tuple[int, ...] = DEFAULT_WIDTHS, seed: int = 0
) -> dict[str, Any]:
    """cuBLAS + servelab's bias/ReLU kernel on the GPU vs the C++ reference MLP."""
    status = backends.status("cuda")
    if not status.usable:
        return _skipped("cuda", status.reason)
    from . import CudaMlp

    weights = MlpWeights.random(list(widths), seed)
    x = random_batch(batch, widths[0], seed)
    got = CudaMlp(weights)(x)
    device = status.details.get("device_name", "")
    return _compare(
        "cuda", got, ReferenceMlp(weights)(x), "ReferenceMlp (C++ loops)", device=device
    )


def run_all(batch: int = 64) -> list[dict[str, Any]]:
    return [check_onednn(batch), check_torch(batch), check_cuda(batch)]
