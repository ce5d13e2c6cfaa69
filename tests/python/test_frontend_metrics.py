"""The front-end's live /metrics: Triton's names, read back with Prometheus's own parser, counting
what the clients were answered (successes, failures, items, refusals by reason), with the pending
gauges back at zero once every request is answered."""

from __future__ import annotations

import http.client

import numpy as np
import pytest

pytest.importorskip("tritonclient.http")

import tritonclient.http as httpclient  # noqa: E402
from prometheus_client.parser import text_string_to_metric_families  # noqa: E402
from tritonclient.utils import InferenceServerException  # noqa: E402

from .frontend_support import WIDTH, FakeSession, grpc_client, http_client, started  # noqa: E402

TRITON = {
    "nv_inference_request_success",
    "nv_inference_request_failure",
    "nv_inference_count",
    "nv_inference_exec_count",
    "nv_inference_request_duration_us",
    "nv_inference_queue_duration_us",
    "nv_inference_compute_infer_duration_us",
    "nv_inference_pending_request_count",
}


def scrape(frontend):
    conn = http.client.HTTPConnection("127.0.0.1", frontend.http_port, timeout=10)
    conn.request("GET", "/metrics")
    r = conn.getresponse()
    assert r.status == 200 and r.getheader("Content-Type").startswith("text/plain")
    text = r.read().decode()
    conn.close()
    out = {}
    for family in text_string_to_metric_families(text):
        out[family.name] = (
            family.type,
            {tuple(sorted(s.labels.items())): s.value for s in family.samples},
        )
    return out


def per_model(m, name, model):
    return m[name][1][(("model", model), ("version", "1"))]


def test_counters_follow_the_answers_of_both_protocols():
    session = FakeSession(drop_app="wnd")
    frontend = started(session)
    try:
        x = np.ones((3, WIDTH), np.float32)
        h, g = http_client(frontend), grpc_client(frontend)
        for _ in range(2):
            i = httpclient.InferInput("INPUT0", [3, WIDTH], "FP32")
            i.set_data_from_numpy(x)
            h.infer("rm2", [i])
        import tritonclient.grpc as grpcclient

        gi = grpcclient.InferInput("INPUT0", [3, WIDTH], "FP32")
        gi.set_data_from_numpy(x)
        g.infer("rm2", [gi])
        with pytest.raises(InferenceServerException):
            g.infer("wnd", [gi])  # dropped by the session
        bad = grpcclient.InferInput("INPUT0", [1, 2], "FP32")
        bad.set_data_from_numpy(np.ones((1, 2), np.float32))
        with pytest.raises(InferenceServerException):
            g.infer("rm2", [bad])  # refused: wrong width
        with pytest.raises(InferenceServerException):
            h.infer("nope", [i])  # refused: unknown model
        m = scrape(frontend)
        assert TRITON <= set(m)
        for name in TRITON - {"nv_inference_pending_request_count"}:
            assert m[name][0] == "counter", name
        assert per_model(m, "nv_inference_request_success", "rm2") == 3
        assert per_model(m, "nv_inference_count", "rm2") == 9
        assert per_model(m, "nv_inference_request_failure", "rm2") == 1  # the wrong width
        assert per_model(m, "nv_inference_request_failure", "wnd") == 1  # the drop
        assert per_model(m, "servelab_slo_violations", "wnd") == 1
        assert 1 <= per_model(m, "nv_inference_exec_count", "rm2") <= 3
        assert per_model(m, "nv_inference_request_duration_us", "rm2") > 0
        assert per_model(m, "nv_inference_queue_duration_us", "rm2") >= 0
        for model in ("rm2", "wnd"):
            assert per_model(m, "nv_inference_pending_request_count", model) == 0
            assert per_model(m, "servelab_queue_length", model) == 0
        refused = m["servelab_frontend_refused"][1]
        assert refused[(("reason", "invalid"),)] == 1
        assert refused[(("reason", "not_found"),)] == 1
        util = m["servelab_worker_utilisation"][1]
        assert util and all(0 <= v <= 1 for v in util.values())
        assert m["servelab_frontend_inflight"][1][()] == 0
        # Triton's statistics extension reads the same counters, over both protocols.
        (stats,) = h.get_inference_statistics("rm2")["model_stats"]
        assert stats["inference_count"] == 9 and stats["execution_count"] >= 1
        infer = stats["inference_stats"]
        assert infer["success"]["count"] == 3 and infer["fail"]["count"] == 1
        assert infer["success"]["ns"] > 0 and infer["compute_infer"]["count"] == 3
        every = g.get_inference_statistics(as_json=True)["model_stats"]
        assert [e["name"] for e in every] == ["rm2", "wnd"]
        assert every[1]["inference_stats"]["fail"]["count"] == "1"  # int64 as JSON text
        with pytest.raises(InferenceServerException, match="unknown model 'nope'"):
            g.get_inference_statistics("nope")
    finally:
        frontend.stop(grace_s=0)
        session.close()
