"""RRL's CPU performance model fitted to measurements of a real executor on this machine:
inter-op threads x intra-op threads x concurrent requests, timed by the profiler's batches; and
the fitting step alone on synthetic measurements of a known model."""

import json
import subprocess
import sys

import numpy as np
import pytest

from servelab import backends, rrl
from servelab.rrl import fit_cells

EXECUTOR = "recsys(model=rm2, backend=onednn)"


def onednn_or_skip() -> None:
    status = backends.status("onednn")
    if not status.usable:
        pytest.skip(f"the oneDNN backend is not usable: {status.reason}")


def test_fit_from_profiler_measures_every_cell_and_reports_the_fit():
    onednn_or_skip()
    fit = rrl.fit_from_profiler(EXECUTOR, threads=(1, 2), concurrency=(1, 2), batch=8, repeats=3)
    out = fit.summary()
    print("\n" + json.dumps(out, indent=1, default=float))
    cells = {(r["inter_op"], r["intra_op"], r["in_service"]) for r in out["rows"]}
    assert cells == {(a, t, k) for a in (1, 2) for t in (1, 2) for k in (1, 2)}
    assert len(out["rows"]) == 8 and all(r["measured_ms"] > 0 for r in out["rows"])
    assert all(r["samples"] == 3 * r["in_service"] for r in out["rows"])
    # The reported error is the fitted model's, recomputed here from the rows.
    ratio = np.array([r["fitted_ms"] / r["measured_ms"] for r in out["rows"]])
    assert out["rms_relative_error"] == pytest.approx(float(np.sqrt(np.mean((ratio - 1) ** 2))))
    for r in out["rows"]:
        expected = rrl.cpu_service_ms(fit.model, r["inter_op"], r["intra_op"], r["in_service"])
        assert r["fitted_ms"] == pytest.approx(expected)
    assert fit.model.cores == fit.cores and fit.model.base_ms > 0


def test_fit_from_profiler_rejects_bad_input():
    with pytest.raises(ValueError, match="threads"):
        rrl.fit_from_profiler(EXECUTOR, threads=[])
    with pytest.raises(ValueError, match="concurrency"):
        rrl.fit_from_profiler(EXECUTOR, concurrency=[0, 1])
    with pytest.raises(ValueError, match="inter_op"):
        rrl.fit_from_profiler(EXECUTOR, inter_op=(0, 1))
    with pytest.raises(ValueError, match="at least 3"):
        rrl.fit_from_profiler(EXECUTOR, threads=(1,), inter_op=(1,), concurrency=(1, 2))
    with pytest.raises(ValueError, match="batch=0"):
        rrl.fit_from_profiler(EXECUTOR, batch=0)
    with pytest.raises(ValueError, match="intra_op_threads"):
        rrl.fit_from_profiler("recsys(model=rm2, backend=reference)", batch=1)


def test_fit_command_prints_json():
    onednn_or_skip()
    proc = subprocess.run(
        [sys.executable, "-m", "servelab.cli", "rrl", "fit", "--batch", "4", "--repeats", "2",
         "--json"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert len(out["rows"]) == 8 and set(out["params"]) >= {"base_ms", "sync_ms", "inter_fraction"}
    assert {r["inter_op"] for r in out["rows"]} == {1, 2}
    assert all(r["rms_relative_error"] >= 0 for r in out["rows"])


CELLS = [(a, t, k) for k in (1, 2) for a in (1, 2) for t in (1, 2)]
TRUTH = rrl.PerfModel(
    cores=2, base_ms=6, sync_ms=0.5, intra_fraction=0.7, inter_fraction=0.3, interference=0.4
)


def test_fit_cells_recovers_known_parameters_from_synthetic_measurements():
    # The known parameters lie on the fit's grid, so noise-free cells give them back exactly.
    exact = [[rrl.cpu_service_ms(TRUTH, a, t, k)] for a, t, k in CELLS]
    fit, rows = fit_cells(CELLS, exact, cores=2)
    m = fit.model
    assert m.base_ms == pytest.approx(6) and m.sync_ms == pytest.approx(0.5)
    assert m.intra_fraction == pytest.approx(0.7) and m.inter_fraction == pytest.approx(0.3)
    assert m.interference == pytest.approx(0.4) and fit.rms_relative_error < 1e-9
    assert all(abs(r["rms_relative_error"]) < 1e-9 for r in rows)


def test_fit_cells_is_deterministic_and_reports_each_cells_rms_error():
    rng = np.random.default_rng(3)
    samples = [rrl.cpu_service_ms(TRUTH, a, t, k) * rng.lognormal(0, 0.05, 9) for a, t, k in CELLS]
    fit, rows = fit_cells(CELLS, samples, cores=2)
    again, rows_again = fit_cells(CELLS, [s.copy() for s in samples], cores=2)
    assert rows == rows_again and again.model == fit.model
    assert fit.rms_relative_error < 0.1 and fit.model.inter_fraction > 0
    for r, s in zip(rows, samples, strict=True):
        assert r["measured_ms"] == np.median(s) and r["samples"] == 9
        rms = np.sqrt(np.mean((r["fitted_ms"] / s - 1) ** 2))
        assert r["rms_relative_error"] == pytest.approx(rms)
        assert r["relative_error"] == pytest.approx(r["fitted_ms"] / r["measured_ms"] - 1)


def test_fit_cells_rejects_bad_input():
    good = [[1.0]] * len(CELLS)
    with pytest.raises(ValueError, match="8 cells but 7"):
        fit_cells(CELLS, good[:-1], cores=2)
    with pytest.raises(ValueError, match=r"cell \(1, 1, 1\)"):
        fit_cells(CELLS, [[-1.0]] + good[1:], cores=2)
    with pytest.raises(ValueError, match="inter"):
        fit_cells([(0, 1, 1)] + CELLS[1:], good, cores=2)
    with pytest.raises(ValueError, match="at least 3"):
        fit_cells([], [], cores=2)
    with pytest.raises(ValueError, match=r"cell \(1, 1\) must be"):
        fit_cells([(1, 1)] + CELLS[1:], good, cores=2)
