"""The "recsys" executor: registered by name, builds each batch's inputs from its query ids and
scores them with a real recommendation model, in the serving loop too."""

from __future__ import annotations

import numpy as np
import pytest

import servelab
from servelab.results import COMPLETED

from .conftest import skip_unless_usable

SPEC = "recsys(model='wnd', scale=0.0001)"


def test_recsys_is_listed_with_its_parameters():
    entry = next(e for e in servelab.list_executors() if e["name"] == "recsys")
    names = [p["name"] for p in entry["params"]]
    assert names[:3] == ["model", "backend", "scale"]
    assert "intra_op_threads" in names


def test_batches_run_on_the_reference_backend():
    builder = servelab.make_executor(SPEC)
    assert "model='wnd'" in builder.describe() and "backend='reference'" in builder.describe()
    executor = builder.open(seed=3)
    assert executor.knobs() == []  # the reference backend does not parallelise
    timing = executor.time_batches([2, 3], repeats=2)
    assert timing["exec_ns"].shape == (2,) and np.all(timing["exec_ns"] > 0)
    assert np.all(timing["exec_ns"] <= timing["wall_ns"])


def test_the_onednn_backend_reads_the_thread_knob():
    skip_unless_usable("onednn")
    executor = servelab.make_executor(SPEC.replace(")", ", backend='onednn')")).open()
    assert executor.knobs() == ["intra_op_threads", "inter_op_threads"]
    timing = executor.time_batches([4], repeats=2, config={"intra_op_threads": 1})
    assert np.all(timing["exec_ns"] > 0)
    # A thread team no machine has would make OpenMP abort the interpreter: refused first.
    with pytest.raises(ValueError, match=r"threads=100000 must be in \[0, 1024\]"):
        executor.time_batches([4], repeats=1, config={"intra_op_threads": 100000})


@pytest.mark.parametrize(
    ("spec", "error", "match"),
    [
        ("recsys(model='rm9')", ValueError, "rm9"),
        ("recsys(model='rm1', backend='tpu')", ValueError, "tpu"),
        ("recsys(model='rm1', scale=2)", ValueError, "scale"),
        ("recsys(model='wnd', interaction='dot', scale=0.0001)", ValueError, "dot"),
        ("recsys(model='rm1', distribution='pareto', scale=0.0001)", ValueError, "pareto"),
        ("recsys(model='rm1', intra_op_threads=100000)", ValueError, "intra_op_threads"),
    ],
)
def test_bad_specs_name_the_parameter_and_value(spec, error, match):
    with pytest.raises(error, match=match):
        servelab.make_executor(spec)


def test_the_serving_loop_runs_recsys_batches():
    workers = [{"hardware": "c5n.2xlarge", "count": 2, "models": ["rm2"]}]
    app = {"name": "rm2", "slo_ms": 500, "sizes": "uniform(low=1, high=8)"}
    scenario = {
        "profile": "example:hetero_cpu_gpu",
        "workers": workers,
        "workload": {"arrivals": "poisson(rate=200)", "count": 30, "apps": [app]},
        "drain_s": 5,
    }
    # DIN on the reference backend: cheap per item, and it exercises the behaviour sequence.
    builder = servelab.make_executor("recsys(model='din', scale=0.0001)")
    res = servelab.serve(scenario, scheduler="fcfs", executor=builder, seed=0)
    res.check_consistency()
    assert res.meta["executors"] == [builder.describe()]
    assert (res.columns["status"] == COMPLETED).all()
    assert np.all(res.columns["exec_ns"] > 0)
