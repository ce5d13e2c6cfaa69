"""Calibration of a profile to measured points, and the real node controls (core pinning,
resctrl LLC partitioning, reported unsupported where absent)."""

import os

import pytest

from servelab import hera


def test_fit_recovers_a_profile_from_its_points_within_2_percent():
    node = hera.baseline_node()
    truth = hera.model("dien", compute_ms=6.5, sparse_mb=3.0)
    points = [
        {"workers": w, "ways": k, "qps": hera.predict(node, truth, {"workers": w, "ways": k})}
        for w, k in ((1, 11), (2, 11), (4, 6), (8, 11), (16, 3))
    ]
    fit = hera.fit_profile("dien", points, node)
    print(
        f"\nfitted compute_ms {fit.profile.compute_ms:.3f} (truth 6.5), "
        f"max error {fit.max_relative_error:.2e}"
    )
    assert fit.max_relative_error < 0.02
    assert fit.profile.compute_ms == pytest.approx(6.5, rel=0.05)


def test_fit_rejects_bad_points():
    with pytest.raises(ValueError, match="no measured points"):
        hera.fit_profile("ncf", [])
    with pytest.raises(ValueError, match=r"points\[0\]"):
        hera.fit_profile("ncf", [{"workers": 1, "qps": -3}])
    with pytest.raises(ValueError, match="fields"):
        hera.fit_profile("ncf", [{"workers": 1, "qps": 3.0}], fields=("colour",))


def onednn_or_skip() -> None:
    from servelab import backends

    status = backends.status("onednn")
    if not status.usable:
        pytest.skip(f"the oneDNN backend is not usable: {status.reason}")


def test_calibration_from_the_executor_fits_the_measured_points():
    onednn_or_skip()
    node = hera.machine_node(bandwidth_mb=32)
    assert node.cores == len(os.sched_getaffinity(0))
    result = hera.calibrate_from_executor(("ncf",), node=node, repeats=3, warmup=1)
    cal = result["ncf"]
    out = cal.summary()
    print(f"\n{out}")
    assert [p["workers"] for p in cal.points] == [1, 2]
    for p in cal.points:
        assert p["qps"] == pytest.approx(p["workers"] * 1e3 / p["service_ms"])
    # The reported errors are the fitted profile's on the measured points, and the fit (least
    # squares started from the shipped Table I profile) is at least as close as that profile.
    for p, e in zip(cal.points, cal.fit.errors, strict=True):
        point = {"workers": p["workers"], "service_ms": p["service_ms"]}
        assert hera.predict(node, cal.fit.profile, point) / p["service_ms"] - 1 == pytest.approx(e)

    def squares(errors):
        return sum(e * e for e in errors)

    assert squares(cal.fit.errors) <= squares(cal.default_errors) + 1e-12


def test_calibration_from_the_executor_rejects_bad_input():
    with pytest.raises(ValueError, match="dlrm_a"):
        hera.measure_points("dlrm_a")
    with pytest.raises(ValueError, match="workers"):
        hera.measure_points("ncf", workers=[])
    with pytest.raises(ValueError, match="models"):
        hera.calibrate_from_executor("ncf", node="xeon-gold-6242")
