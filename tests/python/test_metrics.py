"""Prometheus metrics of a run under Triton's names: read back with Prometheus's own client
parser, counted against the records, cumulative in time, the same names in both worlds."""

from __future__ import annotations

import numpy as np
import pytest
from prometheus_client.parser import text_string_to_metric_families

import servelab
from servelab.metrics import exposition
from servelab.results import COMPLETED

TRITON = {
    "nv_inference_request_success",
    "nv_inference_request_failure",
    "nv_inference_count",
    "nv_inference_exec_count",
    "nv_inference_request_duration_us",
    "nv_inference_queue_duration_us",
    "nv_inference_compute_infer_duration_us",
}


def _scenario(count=400, rate=60.0):
    return {
        "profile": "example:hetero_cpu_gpu",
        "workers": [{"hardware": "g4dn.xlarge", "count": 1, "models": ["rm2", "wnd"]}],
        "workload": {
            "arrivals": f"poisson(rate={rate})",
            "count": count,
            "apps": [
                {"name": "rm2", "slo_ms": 100, "sizes": "kairos_mix()", "share": 0.6},
                {"name": "wnd", "slo_ms": 50, "sizes": "uniform(low=1, high=50)", "share": 0.4},
            ],
        },
        "scheduler": "batching",
        "drain_s": 0.2,
    }


def _parse(text: str) -> dict[str, dict[tuple, float]]:
    out: dict[str, dict[tuple, float]] = {}
    for family in text_string_to_metric_families(text):
        out[family.name] = {tuple(sorted(s.labels.items())): s.value for s in family.samples}
    return out


def _by_model(metrics, name, model):
    return metrics[name][(("model", model), ("version", "1"))]


def test_counters_match_the_records_at_the_end_of_the_run():
    r = servelab.simulate(_scenario(rate=200.0))  # overloaded: drops and late queries
    m = _parse(exposition(r))
    assert TRITON <= set(m)
    c = r.columns
    for a, name in enumerate(["rm2", "wnd"]):
        mine = c["app"] == a
        done = mine & (c["status"] == COMPLETED)
        assert _by_model(m, "nv_inference_request_success", name) == done.sum()
        assert _by_model(m, "nv_inference_request_failure", name) == (mine & ~done).sum()
        assert _by_model(m, "nv_inference_count", name) == c["size"][done].sum()
        queue_us = ((c["start_ns"] - c["arrival_ns"])[done] / 1e3).sum()
        assert _by_model(m, "nv_inference_queue_duration_us", name) == pytest.approx(queue_us)
        late = done & (c["finish_ns"] > c["deadline_ns"])
        assert _by_model(m, "servelab_slo_violations", name) == late.sum() + (mine & ~done).sum()
    executions = sum(m["nv_inference_exec_count"].values())
    assert executions == len(r.batches())
    assert (mine & ~done).sum() > 0  # the case does fail some


def test_a_scrape_mid_run_sees_counters_grow_and_the_queue_at_that_moment():
    r = servelab.simulate(_scenario(rate=120.0))
    end_s = r.meta["duration_ns"] / 1e9
    previous = None
    for at in np.linspace(0, end_s, 7):
        m = _parse(exposition(r, at_s=float(at)))
        success = sum(m["nv_inference_request_success"].values())
        if previous is not None:
            assert success >= previous
        previous = success
        for value in m["servelab_worker_utilisation"].values():
            assert 0.0 <= value <= 1.0 + 1e-9
    c = r.columns
    at_ns = int(end_s * 1e9 / 2)
    waiting = (c["arrival_ns"] <= at_ns) & ~((c["start_ns"] >= 0) & (c["start_ns"] <= at_ns))
    waiting &= ~((c["status"] != COMPLETED) & (c["finish_ns"] <= at_ns))
    m = _parse(exposition(r, at_s=at_ns / 1e9))
    assert sum(m["servelab_queue_length"].values()) == waiting.sum()


def test_served_and_simulated_runs_expose_the_same_names():
    sc = _scenario(count=40, rate=80.0)
    sim = _parse(exposition(servelab.simulate(sc)))
    real = _parse(exposition(servelab.serve(sc)))
    assert set(sim) == set(real)
    assert {k for f in sim.values() for k in f} == {k for f in real.values() for k in f}


@pytest.mark.parametrize("at_s", [-1, float("nan"), float("inf"), "5", True])
def test_a_bad_scrape_time_is_refused_naming_it(at_s):
    r = servelab.simulate(_scenario(count=20))
    with pytest.raises(ValueError, match="at_s="):
        exposition(r, at_s=at_s)


def test_a_streamed_run_is_refused_with_the_reason():
    sc = {**_scenario(count=50), "records": "none"}
    with pytest.raises(ValueError, match="streamed run"):
        exposition(servelab.simulate(sc))
