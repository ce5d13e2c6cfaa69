"""RRL's CPU performance model fitted to measurements of a real executor on this machine:
intra-op threads x concurrent requests, timed by the profiler's batches."""

import json
import subprocess
import sys

import numpy as np
import pytest

from servelab import backends, rrl

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
    cells = {(r["intra_op"], r["in_service"]) for r in out["rows"]}
    assert cells == {(1, 1), (2, 1), (1, 2), (2, 2)}
    assert all(r["inter_op"] == 1 and r["measured_ms"] > 0 for r in out["rows"])
    # The reported error is the fitted model's, recomputed here from the rows.
    ratio = np.array([r["fitted_ms"] / r["measured_ms"] for r in out["rows"]])
    assert out["rms_relative_error"] == pytest.approx(float(np.sqrt(np.mean((ratio - 1) ** 2))))
    for r in out["rows"]:
        expected = rrl.cpu_service_ms(fit.model, 1, r["intra_op"], r["in_service"])
        assert r["fitted_ms"] == pytest.approx(expected)
    assert fit.model.cores == fit.cores and fit.model.base_ms > 0


def test_fit_from_profiler_rejects_bad_input():
    with pytest.raises(ValueError, match="threads"):
        rrl.fit_from_profiler(EXECUTOR, threads=[])
    with pytest.raises(ValueError, match="concurrency"):
        rrl.fit_from_profiler(EXECUTOR, concurrency=[0, 1])
    with pytest.raises(ValueError, match="at least 3"):
        rrl.fit_from_profiler(EXECUTOR, threads=(1,), concurrency=(1, 2))
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
    assert len(out["rows"]) == 4 and set(out["params"]) >= {"base_ms", "sync_ms"}
