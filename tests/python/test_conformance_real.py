"""The conformance suite with real models: every registered scheduler (Kairos and RAMSIS
included, unchanged) serves a short scenario whose batches run a tiny TorchScript MLP.

Decisions still read the profile (the embedded ``hetero_cpu_gpu``); the batches run the model,
so service times are the model's, far below the profile's. Each run: every query ends exactly
once, the records pass ``check_consistency()``, every completed query has its batch's exec time,
and the same seed gives the same workload as the emulated run. About 0.3 s of wall time each.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

import servelab
from servelab import backends
from servelab.results import COMPLETED, DROPPED

from .test_conformance import PROFILE, TWO_APPS, WORKERS, make

if not backends.status("torch").usable:
    pytest.skip(
        f"torch backend not usable: {backends.status('torch').reason}", allow_module_level=True
    )

SCHEDULERS = [e["name"] for e in servelab.list_schedulers()]
COUNT = 60


@functools.cache
def model_path(folder: str) -> str:
    from pathlib import Path

    from .torch_models import save_mlp

    return str(save_mlp(Path(folder), widths=(16, 32, 4))[0])


@pytest.fixture(scope="module")
def executor(tmp_path_factory) -> servelab.executors.ExecutorBuilder:
    path = model_path(str(tmp_path_factory.mktemp("real_conformance")))
    # One intra-op thread per worker: the workers run side by side on a small machine.
    return servelab.make_executor(f"torchscript(path={path!r}, intra_op=1)")


def scenario() -> dict:
    return {
        "profile": "example:hetero_cpu_gpu",
        "workers": WORKERS,
        "workload": {"arrivals": "poisson(rate=200)", "count": COUNT, "apps": TWO_APPS},
        "drain_s": 5,
    }


@pytest.mark.parametrize("name", SCHEDULERS)
def test_every_scheduler_serves_real_models(name, executor):
    res = servelab.serve(scenario(), scheduler=make(name), executor=executor, seed=0)
    c = res.columns
    assert len(res) == COUNT
    np.testing.assert_array_equal(c["id"], np.arange(COUNT))
    assert set(np.unique(c["status"])) <= {COMPLETED, DROPPED}
    res.check_consistency()
    assert res.meta["executors"] == [executor.describe()] * len(WORKERS)
    done = c["status"] == COMPLETED
    assert done.any(), res.meta["drop_reasons"]
    assert not any(r.startswith("executor failed") for r in res.meta["drop_reasons"])
    assert np.all(c["exec_ns"][done] > 0) and np.all(c["exec_ns"][~done] == -1)
    service = (c["finish_ns"] - c["start_ns"])[done]
    assert np.all(c["exec_ns"][done] <= service)
    # The model, not the profile, set the service times: a tiny MLP is far faster than the
    # profile's fastest batch.
    fastest_profiled = min(
        PROFILE.latency(h, m, 1, statistic="p50")
        for h in PROFILE.hardware
        for m in PROFILE.models
        if PROFILE.has_latency(h, m)
    )
    assert np.median(service) < fastest_profiled * 1e9
    # Same seed, same workload as a run on emulated executors would get.
    emulated = servelab.simulate(scenario(), scheduler=make(name), seed=0)
    for key in ("app", "size", "arrival_ns", "deadline_ns"):
        np.testing.assert_array_equal(c[key], emulated.columns[key], err_msg=key)
