"""What the INFaaS real-server tests share: fast profiling settings, inputs for the 16-wide test
MLPs, torch's own outputs to compare with, polling a condition with a bound, and the server's
decisions of one kind as rows. Imported once the torch backend is known to be usable."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

from servelab import infaas
from servelab.systems.infaas import loading

#: Profiling settings that keep registering a model quick.
FAST = {"threads": (1,), "repeats": 2, "warmup": 1}
#: Settings that keep measurement noise on a shared machine from marking instances Interfered.
QUIET = {"interference_tol": 100.0}


def x_rows(rows: int, seed: int = 0) -> np.ndarray:
    """Inputs for the test MLPs (16 columns)."""
    return np.random.default_rng(seed).uniform(-1, 1, (rows, 16)).astype(np.float32)


def torch_out(module: torch.nn.Module, x: np.ndarray) -> np.ndarray:
    with torch.no_grad():
        return module(torch.from_numpy(x)).numpy()


def wait_for(condition: Callable[[], bool], what: str, bound_s: float = 60.0) -> None:
    """Polls until the condition holds; the bound only keeps a broken server from hanging."""
    end = time.monotonic() + bound_s
    while not condition():
        if time.monotonic() > end:
            pytest.fail(f"never happened: {what}")
        time.sleep(0.02)


def decision_rows(server: infaas.InfaasServer, action: str) -> list[dict]:
    """The server's decisions whose action is ``action``, as dicts."""
    d = server.decisions()
    rows = [dict(zip(d, values, strict=True)) for values in zip(*d.values(), strict=True)]
    return [r for r in rows if r["action"] == action]


def wrap_runners(monkeypatch: pytest.MonkeyPatch, wrap: Callable[[Any, str], Any]) -> None:
    """Every executor the server loads from now on runs through ``wrap(runner, variant)``: how
    the tests inject faults, slowness and hangs into real executors."""
    real = loading.load

    def load(name: str, *args: Any, **kwargs: Any) -> Any:
        loaded = real(name, *args, **kwargs)
        loaded.runner = wrap(loaded.runner, name)
        return loaded

    monkeypatch.setattr(loading, "load", load)


def slower_profile(registry: infaas.ModelRegistry, factor: float) -> infaas.ModelRegistry:
    """The registry with every profiled latency x factor (the executors stay as fast): a slow
    variant whose saturation throughput a Python client exceeds."""
    data = registry.to_dict()
    for entry in data["profile"]["latency"]:
        if "samples_ms" in entry:
            entry["samples_ms"] = [ms * factor for ms in entry["samples_ms"]]
        else:
            entry["percentiles_ms"] = {p: ms * factor for p, ms in entry["percentiles_ms"].items()}
    return infaas.ModelRegistry.from_dict(data)
