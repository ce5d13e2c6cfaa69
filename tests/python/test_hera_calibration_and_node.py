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


def test_resctrl_is_reported_never_faked(tmp_path):
    status = hera.resctrl_status(tmp_path / "absent")
    assert not status.supported and "does not exist" in status.reason
    with pytest.raises(RuntimeError, match="unsupported on this machine"):
        hera.set_llc_ways("model_a", 0, 4, root=tmp_path / "absent")
    # A resctrl tree as the kernel lays it out: the schemata gets the ways' mask.
    root = tmp_path / "resctrl"
    (root / "info" / "L3").mkdir(parents=True)
    (root / "info" / "L3" / "cbm_mask").write_text("7ff\n")
    (root / "schemata").write_text("L3:0=7ff;1=7ff\n")
    status = hera.resctrl_status(root)
    assert status.supported and status.ways == 11
    group = hera.set_llc_ways("ncf", 4, 3, root=root)
    assert (group / "schemata").read_text() == "L3:0=70;1=70\n"
    with pytest.raises(ValueError, match="do not fit in 11 ways"):
        hera.ways_mask(10, 2, 11)


def test_pinning_to_cores_of_this_machine():
    before = os.sched_getaffinity(0)
    try:
        core = min(before)
        assert hera.pin_to_cores([core]) == {core}
    finally:
        os.sched_setaffinity(0, before)
    with pytest.raises(ValueError, match="not cores of this machine"):
        hera.pin_to_cores([10**6])


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
