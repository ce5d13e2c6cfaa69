"""Serving on a GPU: several workers, each with its own CUDA stream (torchscript) or sharing one
device model (recsys on the cuda backend), through the real loop, with the user's rows and with
seeded inputs. Skipped, with the reason, where no GPU is usable.
"""

from __future__ import annotations

import numpy as np
import pytest

import servelab
from servelab import backends
from servelab.results import COMPLETED, DROPPED

from .conftest import skip_unless_usable

pytestmark = pytest.mark.gpu


def _cuda_torch():
    skip_unless_usable("torch")
    import torch  # noqa: PLC0415  (only where the torch backend is usable)

    if not torch.cuda.is_available():
        pytest.skip("no CUDA GPU usable by torch (CPU only)")
    return torch


def _scenario(executor: str, workers: int, count: int, rate: float, hardware="gpu") -> dict:
    profile = servelab.profiles.from_dict(
        {
            "format": "servelab.profile",
            "version": 1,
            "hardware": {hardware: {"price_per_hour": 1.0}},
            "models": {"m": {}},
            "latency": [
                {"hardware": hardware, "model": "m", "batch": b, "samples_ms": [0.5 + b / 64]}
                for b in (1, 8, 32)
            ],
        }
    )
    return {
        "profile": profile,
        "workers": [{"hardware": hardware, "count": workers, "executor": executor}],
        "workload": {
            "arrivals": f"poisson(rate={rate})",
            "count": count,
            "apps": [{"name": "m", "slo_ms": 500, "sizes": "uniform(low=1, high=8)"}],
        },
        "drain_s": 20,
    }


def _marker_mlp(torch, folder) -> str:
    """A TorchScript MLP (width 16) that raises when its input holds the value 7."""

    class RejectsSeven(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.body = torch.nn.Sequential(
                torch.nn.Linear(16, 64), torch.nn.ReLU(), torch.nn.Linear(64, 4)
            )

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            if bool((x == 7.0).any()):
                raise RuntimeError("saw the marker 7")
            return self.body(x)

    path = folder / "marker.pt"
    torch.jit.save(torch.jit.script(RejectsSeven().eval()), str(path))
    return f"torchscript(path={str(path)!r}, device='cuda')"


@pytest.mark.parametrize("workers", [1, 4])
def test_torchscript_on_cuda_serves_every_query_with_the_users_rows(tmp_path, workers):
    torch = _cuda_torch()
    spec = _marker_mlp(torch, tmp_path)
    rows = np.full((400, 16), 0.25, dtype=np.float32)
    rows[[17, 250]] = 7.0  # only the batches holding these two queries may fail
    r = servelab.serve(
        _scenario(spec, workers, 400, 2000), scheduler="fcfs", inputs=rows, seed=workers
    )
    r.check_consistency()
    c = r.columns
    dropped = c["status"] == DROPPED
    assert {17, 250} <= set(c["id"][dropped].tolist())
    assert np.all((c["status"] == COMPLETED) | dropped)
    # One query per batch at most besides the marked ones can share their fate; the rest served.
    assert (c["status"] == COMPLETED).sum() >= 400 - 2 * 8
    assert np.all(c["exec_ns"][c["status"] == COMPLETED] > 0)
    assert set(c["worker"][c["status"] == COMPLETED].tolist()) <= set(range(workers))


def test_torchscript_on_cuda_matches_torch_for_many_batches(tmp_path):
    torch = _cuda_torch()
    spec = _marker_mlp(torch, tmp_path)
    executor = servelab.make_executor(spec)
    module = torch.jit.load(str(tmp_path / "marker.pt")).cuda()
    for sizes in ([1], [3, 5], [64] * 4, [1000]):
        x = executor.inputs(sizes, seed=len(sizes))
        with torch.inference_mode():
            expected = module(torch.from_numpy(x).cuda()).cpu().numpy()
        np.testing.assert_allclose(executor.forward(x), expected, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("model", ["rm2", "wnd", "din"])
def test_recsys_on_cuda_serves_from_several_workers(model):
    skip_unless_usable("cuda")
    spec = f"recsys(model='{model}', backend='cuda', scale=0.001)"
    r = servelab.serve(_scenario(spec, 3, 300, 1500), scheduler="fcfs", seed=1)
    r.check_consistency()
    c = r.columns
    assert np.all(c["status"] == COMPLETED), r.meta.get("drop_reasons")
    assert np.all(c["exec_ns"] > 0)
    assert len(set(c["worker"].tolist())) > 1


def test_recsys_cuda_scores_equal_the_reference_backend_under_concurrency():
    skip_unless_usable("cuda")
    import concurrent.futures  # noqa: PLC0415

    from servelab import recsys  # noqa: PLC0415

    gpu = recsys.build("rm1", backend="cuda", scale=0.001, seed=4)
    ref = recsys.build("rm1", backend="reference", scale=0.001, seed=4)
    batches = [gpu.inputs(np.arange(b) + 100 * b, seed=b) for b in (1, 7, 64, 300) * 4]
    # Four threads call the one device model at once, as the serving loop's workers do.
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        outs = list(pool.map(lambda io: gpu.run(*io), batches))
    for (dense, sparse), got in zip(batches, outs, strict=True):
        np.testing.assert_allclose(got, ref.run(dense, sparse), rtol=1e-4, atol=1e-5)


def test_cuda_status_names_the_device():
    skip_unless_usable("cuda")
    details = backends.status("cuda").details
    assert details["device_count"] >= 1 and details["compute_capability"] >= 90, details
