"""The loop closed: profile an executor, simulate on the profile, serve for real, compare.

The constant executor (a fixed wait per batch) keeps the real runs short and their latencies
predictable; the recsys executor runs a real model. Accuracy figures at 30-70% utilisation are
measured by ``servelab sim-vs-real`` and reported in docs/executors.md, not asserted here: the
tests check the plumbing and that nothing is lost or inconsistent.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys

import pytest

import servelab
from servelab.world_comparison import sim_vs_real

CONSTANT = "constant(latency_ms=2)"


@pytest.fixture(scope="module")
def comparison():
    return sim_vs_real(
        CONSTANT, workers=2, utilisation=0.3, queries=200, repeats=5, warmup=1,
        profile_from="batches",
    )  # fmt: skip


def test_both_worlds_serve_every_query_of_the_same_scenario(comparison):
    sim, real = comparison.simulated, comparison.measured
    assert len(sim) == len(real) == 200
    assert sim.summary()["completed"] == real.summary()["completed"] == 200
    # The same seed: the same arrivals in both worlds.
    assert (
        sim.to_pandas()["arrival_ns"].to_numpy() == real.to_pandas()["arrival_ns"].to_numpy()
    ).all()
    sim.check_consistency()
    real.check_consistency()


def test_the_simulator_runs_on_the_measured_profile(comparison):
    profiled = comparison.profile.latency("cpu", "model", 1, statistic="mean")
    assert profiled >= 2e-3  # the constant executor waits 2 ms per batch
    table = comparison.table()
    assert table.loc["service mean (ms)", "simulated"] == pytest.approx(profiled * 1e3, rel=0.05)
    assert comparison.rate_qps == pytest.approx(0.3 * 2 / profiled)


def test_the_table_compares_percentiles_and_throughput(comparison):
    table = comparison.table()
    assert list(table.columns) == ["simulated", "measured", "error"]
    assert {"latency p50 (ms)", "latency p99 (ms)", "throughput (q/s)"} <= set(table.index)
    for metric, row in table.iterrows():
        assert row["simulated"] > 0 and row["measured"] > 0, metric
        assert row["error"] == pytest.approx(row["simulated"] / row["measured"] - 1), metric
    # A fixed 2 ms wait at 30% load: the measured median is the same wait plus the loop's own
    # microseconds, whatever else the machine runs (a loose bound, not a timing target).
    assert abs(table.loc["latency p50 (ms)", "error"]) < 0.5


def test_plot_cdf_draws_both_worlds(comparison):
    import matplotlib

    matplotlib.use("Agg")
    ax = comparison.plot_cdf()
    assert [line.get_label() for line in ax.get_lines()] == ["simulated", "measured"]


def test_a_real_model_closes_the_loop():
    c = sim_vs_real(
        "recsys(model='ncf')", workers=1, utilisation=0.3, queries=100, size=4, repeats=5
    )
    assert c.measured.summary()["completed"] == 100
    assert c.measured.meta["executors"] == [c.executor]
    assert not math.isnan(c.table().loc["latency p50 (ms)", "error"])


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"utilisation": 1.0}, "utilisation=1.0"),
        ({"utilisation": 0}, "utilisation=0"),
        ({"workers": 0}, "workers=0"),
        ({"queries": -1}, "queries=-1"),
        ({"size": 2.5}, "size=2.5"),
    ],
)
def test_bad_arguments_name_the_field(kwargs, match):
    with pytest.raises(ValueError, match=match):
        sim_vs_real(CONSTANT, **kwargs)


def test_an_unknown_executor_is_a_key_error():
    with pytest.raises(KeyError, match="no_such_executor"):
        sim_vs_real("no_such_executor()")


def test_the_command_prints_json_per_utilisation():
    out = subprocess.run(
        [sys.executable, "-m", "servelab", "sim-vs-real", CONSTANT, "--utilisation", "0.3", "0.5",
         "--queries", "100", "--repeats", "3", "--json"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    runs = json.loads(out.stdout)
    assert [r["utilisation"] for r in runs] == [0.3, 0.5]
    assert runs[1]["rate_qps"] == pytest.approx(runs[0]["rate_qps"] * 0.5 / 0.3)
    metrics = [row["metric"] for row in runs[0]["table"]]
    assert "latency p99 (ms)" in metrics


def test_the_command_refuses_a_full_utilisation():
    out = subprocess.run(
        [sys.executable, "-m", "servelab", "sim-vs-real", CONSTANT, "--utilisation", "1.2"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert out.returncode == 2 and "1.2" in out.stderr and "between 0 and 1" in out.stderr


def test_the_package_exports_it():
    assert servelab.sim_vs_real is sim_vs_real


def test_the_command_predicts_other_loads_from_one_calibration():
    out = subprocess.run(
        [sys.executable, "-m", "servelab", "sim-vs-real", CONSTANT, "--utilisation", "0.3", "0.6",
         "--calibrate-at", "0.5", "--queries", "80", "--repeats", "3", "--json"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    runs = json.loads(out.stdout)
    assert [r["utilisation"] for r in runs] == [0.3, 0.6]
    for r in runs:
        served = {row["metric"]: row for row in r["table"]}["latency p50 (ms)"]
        assert served["simulated"] > 0 and served["measured"] > 0
