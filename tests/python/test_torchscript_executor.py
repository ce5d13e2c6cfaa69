"""The "torchscript" executor: a TorchScript file served by the real loop, outputs checked against
torch in Python, knobs, and every kind of bad input named in a clear Python exception.

The CUDA tests skip with the reason when no GPU is usable.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

import servelab
from servelab import backends
from servelab.results import COMPLETED, DROPPED

if not backends.status("torch").usable:
    pytest.skip(
        f"torch backend not usable: {backends.status('torch').reason}", allow_module_level=True
    )

import torch  # noqa: E402  (only once the backend is known to be usable)

from .torch_models import save_failing, save_mlp  # noqa: E402

MS = 1_000_000


def _spec(path, **params) -> str:
    extra = "".join(f", {k}={v!r}" for k, v in params.items())
    return f"torchscript(path={str(path)!r}{extra})"


def _profile(hardware: str = "cpu", model: str = "m", ms: float = 2.0) -> servelab.Profile:
    return servelab.profiles.from_dict(
        {
            "format": "servelab.profile",
            "version": 1,
            "hardware": {hardware: {"price_per_hour": 1.0}},
            "models": {model: {}},
            "latency": [
                {"hardware": hardware, "model": model, "batch": b, "samples_ms": [ms * (1 + b / 8)]}
                for b in (1, 8, 32)
            ],
        }
    )


def _scenario(executor: str, count: int = 60, rate: float = 300, workers: int = 2) -> dict:
    return {
        "profile": _profile(),
        "workers": [{"hardware": "cpu", "count": workers, "executor": executor}],
        "workload": {
            "arrivals": f"poisson(rate={rate})",
            "count": count,
            "apps": [{"name": "m", "slo_ms": 200, "sizes": "uniform(low=1, high=4)"}],
        },
        "drain_s": 10,
    }


@pytest.fixture
def mlp(tmp_path):
    return save_mlp(tmp_path)


def test_torchscript_is_registered_by_the_torch_module_with_typed_params():
    entry = next(e for e in servelab.list_executors() if e["name"] == "torchscript")
    assert entry["module"] == "servelab._torch"
    params = {p["name"]: p for p in entry["params"]}
    assert params["path"]["required"] and params["path"]["type"] == "str"
    assert params["device"]["default"] == "cpu"
    assert params["intra_op"]["type"] == "int" and params["intra_op"]["min"] == 0
    assert {"inter_op", "width", "max_batch_items"} <= set(params)


@pytest.mark.parametrize("sizes", [[1], [3, 1, 2], [1] * 17])
def test_outputs_match_torch_on_the_executors_own_inputs(mlp, sizes):
    path, module = mlp
    ex = servelab.make_executor(_spec(path, intra_op=1))
    assert ex.width == 16 and ex.device == "cpu"
    x = ex.inputs(sizes, first_query=10, seed=4)
    assert x.shape == (sum(sizes), 16) and x.dtype == np.float32
    assert np.all((x >= -1) & (x < 1))
    with torch.inference_mode():
        expected = module(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(ex.forward(x), expected, rtol=1e-6, atol=1e-6)


def test_each_querys_input_depends_only_on_the_seed_and_its_id(mlp):
    ex = servelab.make_executor(_spec(mlp[0]))
    a = ex.inputs([2, 1, 3], first_query=5, seed=1)
    np.testing.assert_array_equal(a, ex.inputs([2, 1, 3], first_query=5, seed=1))
    # Query 6 alone is the same row, whatever batch it sits in.
    np.testing.assert_array_equal(a[2:3], ex.inputs([1], first_query=6, seed=1))
    assert not np.array_equal(a, ex.inputs([2, 1, 3], first_query=5, seed=2))


def test_real_models_serve_and_record_their_exec_time(mlp):
    r = servelab.serve(_scenario(_spec(mlp[0], intra_op=1)), scheduler="fcfs", seed=3)
    r.check_consistency()
    c = r.columns
    done = c["status"] == COMPLETED
    assert done.sum() == len(r)
    # exec_ns is the forward pass alone: positive and within the batch's service time.
    service = c["finish_ns"] - c["start_ns"]
    assert np.all(c["exec_ns"] > 0) and np.all(c["exec_ns"] <= service)
    assert r.meta["executors"][0].startswith(f"torchscript(path={str(mlp[0])!r}")


def test_a_failing_batch_drops_its_queries_with_the_reason_and_the_rest_are_served(tmp_path):
    path = save_failing(tmp_path, max_rows=2)
    threads_before = len(os.listdir("/proc/self/task")) if os.path.isdir("/proc/self/task") else 0
    # Sizes 1..4: queries of more than 2 items fail, smaller ones are served.
    r = servelab.serve(_scenario(_spec(path)), scheduler="fcfs")
    r.check_consistency()
    c = r.columns
    reasons = r.meta["drop_reasons"]
    failed = [i for i, why in enumerate(reasons) if why.startswith("executor failed: torchscript(")]
    assert failed, reasons
    why = reasons[failed[0]]
    assert str(path) in why and "over the limit" in why
    dropped = c["status"] == DROPPED
    assert np.all(c["size"][dropped] > 2)
    assert np.all(c["size"][~dropped] <= 2) and (~dropped).sum() > 0
    if threads_before:
        assert len(os.listdir("/proc/self/task")) <= threads_before + 1  # worker threads joined


def test_max_batch_items_knob_runs_big_batches_in_chunks(tmp_path):
    path = save_failing(tmp_path, max_rows=2)
    sc = _scenario(_spec(path))
    sc["workers"][0]["config"] = {"max_batch_items": 2}
    r = servelab.serve(sc, scheduler="fcfs")
    assert np.all(r.columns["status"] == COMPLETED)
    ex = servelab.make_executor(_spec(path, max_batch_items=1)).open()
    assert set(ex.knobs()) == {"intra_op_threads", "max_batch_items"}
    assert ex.time_batches([1] * 6, repeats=2)["exec_ns"].shape == (2,)
    with pytest.raises(RuntimeError, match="batch of 6 rows is over the limit"):
        ex.time_batches([1] * 6, config={"max_batch_items": 0})  # the knob overrides the param


def test_bad_files_widths_and_devices_raise_naming_the_executor_and_value(tmp_path, mlp):
    path = mlp[0]
    missing = tmp_path / "missing.pt"
    with pytest.raises(ValueError, match=rf"torchscript\(path=.*: path='{missing}' is not a file"):
        servelab.make_executor(_spec(missing))
    corrupt = tmp_path / "corrupt.pt"
    corrupt.write_bytes(b"not a zip archive at all")
    with pytest.raises(ValueError, match="could not be loaded as TorchScript"):
        servelab.make_executor(_spec(corrupt))
    with pytest.raises(
        ValueError, match=r"width=7 does not fit the model: .*shapes cannot be multiplied"
    ):
        servelab.make_executor(_spec(path, width=7))
    with pytest.raises(ValueError, match="device='tpu' is not a torch device"):
        servelab.make_executor(_spec(path, device="tpu"))
    with pytest.raises(ValueError, match="torchscript: intra_op=-1"):
        servelab.make_executor(_spec(path, intra_op=-1))
    with pytest.raises(ValueError, match=r"input has shape \[2, 3\]; expected \[rows >= 1, 16\]"):
        servelab.make_executor(_spec(path)).forward(np.zeros((2, 3), np.float32))


def test_cuda_without_a_gpu_is_a_clear_error(mlp):
    if torch.cuda.is_available():
        pytest.skip("a CUDA GPU is present: the error path cannot be shown here")
    with pytest.raises(ValueError, match="device='cuda' but this torch sees no CUDA GPU"):
        servelab.make_executor(_spec(mlp[0], device="cuda"))


def test_a_batch_too_large_for_memory_is_a_memory_error(mlp):
    ex = servelab.make_executor(_spec(mlp[0])).open()
    with pytest.raises(MemoryError, match=r"torchscript\(path=.*a batch of 2147483647 items"):
        ex.time_batches([2**31 - 1])
    with pytest.raises(MemoryError, match="sizes summing to 2147483647"):
        servelab.make_executor(_spec(mlp[0])).inputs([2**31 - 1])


@pytest.mark.gpu
def test_outputs_match_torch_on_cuda(mlp):
    if not torch.cuda.is_available():
        pytest.skip("no CUDA GPU usable by torch (CPU only)")
    path, module = mlp
    ex = servelab.make_executor(_spec(path, device="cuda"))
    x = ex.inputs([4, 1, 3], seed=2)
    with torch.inference_mode():
        expected = module.cuda()(torch.from_numpy(x).cuda()).cpu().numpy()
    np.testing.assert_allclose(ex.forward(x), expected, rtol=1e-4, atol=1e-5)
    timed = ex.open().time_batches([1] * 8, repeats=3, warmup=1)
    assert np.all(timed["exec_ns"] > 0)
    r = servelab.serve(_scenario(_spec(path, device="cuda")), scheduler="fcfs")
    assert np.all(r.columns["status"] == COMPLETED)
