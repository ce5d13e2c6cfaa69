"""What this machine measures of Hera's contention model: the cache-miss curve against the LLC's
capacity and the QPS within the SLA on the oneDNN executors, and the fits to them. The machine is
shared, so the tests check the measurements' structure and the fits' arithmetic, not speeds."""

import numpy as np
import pytest

from servelab import backends, hera
from servelab.systems.hera import sla_fit


def test_the_miss_curve_fit_recovers_a_known_capacity_share():
    ratios = (0.1, 0.25, 0.5, 1.0, 2.0, 4.0)
    points = [{"ratio": r, "miss": float(np.exp(-0.4 / r))} for r in ratios]
    fit = sla_fit.fit_miss_curve(points)
    assert fit["alpha"] == pytest.approx(0.4, rel=1e-4)
    assert fit["fitted_max_error"] < 1e-6 < fit["model_max_error"]
    with pytest.raises(ValueError, match="need at least 3"):
        sla_fit.fit_miss_curve(points[:2])


def test_the_measured_miss_curve_spans_cache_to_memory():
    points = sla_fit.measure_miss_curve(8.0, accesses=1 << 16, repeats=2)
    sizes = [p["working_set_mb"] for p in points]
    assert sizes == sorted(sizes) and len(points) == 7
    assert points[0]["miss"] == 0.0 and points[-1]["miss"] == 1.0
    fit = sla_fit.fit_miss_curve(points)
    miss = np.array([p["miss"] for p in points])
    ratio = np.array([p["ratio"] for p in points])

    def sse(alpha):
        return float(np.sum((np.exp(-alpha / ratio) - miss) ** 2))

    print(f"\nmiss curve {[round(m, 2) for m in miss]}; fit {fit}")
    assert sse(fit["alpha"]) <= sse(1.0) + 1e-12  # least squares: never worse than alpha = 1
    with pytest.raises(ValueError, match="increasing"):
        sla_fit.measure_miss_curve(8.0, ratios=(1.0, 0.5, 2.0))


def test_the_sla_qps_fit_recovers_the_profile_that_made_the_points():
    node = hera.baseline_node()
    truth = hera.model("ncf", compute_ms=1.3)
    measured = []
    for workers in (1, 2, 4):
        point = {"workers": workers}
        service = hera.predict(node, truth, dict(point, service_ms=1.0))
        qps = hera.predict(node, truth, point)
        measured.append(
            {"model": "ncf", "workers": workers, "service_ms": service, "qps": qps, "sla_ms": 5.0}
        )
    out = sla_fit.fit_sla_qps("ncf", measured, node)
    # The latency bound on each point's own service time is the model's QPS.
    assert max(abs(e) for e in out["predicted_errors"]) < 1e-6
    assert out["compute_ms"] == pytest.approx(1.3, rel=1e-3)
    assert out["fit"].max_relative_error < 1e-3
    with pytest.raises(ValueError, match="met sla_ms=5.0 at no rate here"):
        sla_fit.fit_sla_qps("ncf", [dict(measured[0], qps=0.0)], node)
    with pytest.raises(ValueError, match="one query took 6.00 ms >= sla_ms=5.0"):
        sla_fit.fit_sla_qps("ncf", [dict(measured[0], service_ms=6.0)], node)


def test_measuring_qps_within_the_sla_bisects_the_rate():
    status = backends.status("onednn")
    if not status.usable:
        pytest.skip(f"the oneDNN backend is not usable: {status.reason}")
    with pytest.raises(ValueError, match="has no recsys executor"):
        sla_fit.measure_sla_qps("dlrm_b")
    m = sla_fit.measure_sla_qps("ncf", sla_ms=2000.0, seconds=0.5, steps=3)
    print(f"\n{m}")
    rates = [t["rate"] for t in m["tried"]]
    assert len(rates) == 3 and rates[0] > 0
    met = [t["rate"] for t in m["tried"] if t["p95_ms"] <= m["sla_ms"]]
    assert m["qps"] == (max(met) if met else 0.0)
