"""Plots draw on the given Axes (Agg backend, nothing shown) and save_all writes PNG files."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib.axes import Axes  # noqa: E402

from servelab import plotting  # noqa: E402

from .fake_results import MS, fifo_result, make_result  # noqa: E402


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


@pytest.fixture(scope="module")
def runs():
    return {
        "one worker": fifo_result(n=3000, rate_qps=80, workers=1, seed=1),
        "three workers": fifo_result(n=3000, rate_qps=80, workers=3, max_batch=2, seed=2),
    }


def tiny():
    arrival = np.array([0, 10, 20, 30, 40]) * MS
    finish = np.array([5, 25, 45, 150, 41]) * MS
    start = np.array([0, 10, 25, 45, -1]) * MS
    return make_result(arrival, finish, start_ns=start, status=[0, 0, 0, 0, 1])


def test_latency_cdf_tops_out_at_the_completed_fraction():
    ax = plotting.latency_cdf(tiny())
    assert isinstance(ax, Axes)
    curve, slo = ax.get_lines()
    assert curve.get_ydata()[-1] == pytest.approx(4 / 5)  # one of five queries was dropped
    np.testing.assert_allclose(curve.get_xdata(), [5, 15, 25, 120])
    assert slo.get_xdata()[0] == pytest.approx(100.0)  # the app's SLO
    assert ax.get_xlabel() == "latency (ms)"


def test_latency_cdf_of_several_runs_on_a_given_axes(runs):
    _, given = plt.subplots()
    ax = plotting.latency_cdf(runs, given, log_x=True, slo_ms=30, max_points=500)
    assert ax is given and ax.get_xscale() == "log"
    lines = ax.get_lines()
    assert len(lines) == 3  # two runs, one SLO line
    assert len(lines[0].get_xdata()) <= 500
    assert [t.get_text() for t in ax.get_legend().get_texts()] == [*runs, "SLO"]


def test_throughput_and_violations_over_time(runs):
    ax = plotting.throughput_and_violations_over_time(runs, window_s=5.0)
    assert isinstance(ax, Axes) and isinstance(ax.right_ax, Axes)
    assert len(ax.get_lines()) == 4 and len(ax.right_ax.get_lines()) == 2
    throughput = ax.get_lines()[0].get_ydata()
    expected = runs["one worker"].timeseries(window_s=5.0)["throughput_qps"].to_numpy()
    np.testing.assert_allclose(throughput, expected)


def test_utilisation_timeline_draws_one_bar_per_batch(runs):
    result = runs["three workers"]
    ax = plotting.utilisation_timeline(result)
    bars = sum(len(c.get_paths()) for c in ax.collections)
    assert bars == len(result.batches())
    assert [t.get_text() for t in ax.get_yticklabels()] == ["0 (cpu)", "1 (gpu)", "2 (cpu)"]
    assert "merged" not in ax.get_title()


def test_utilisation_timeline_bins_many_batches(runs):
    result = runs["one worker"]
    ax = plotting.utilisation_timeline(result, max_batches=100, bins=50)
    bars = sum(len(c.get_paths()) for c in ax.collections)
    assert bars == 50 < len(result.batches())
    assert "utilisation per" in ax.get_title()
    zoomed = plotting.utilisation_timeline(result, start_s=1.0, end_s=2.0)
    assert zoomed.get_xlim() == (1.0, 2.0)


def test_busy_fraction_adds_up_to_busy_time(runs):
    result = runs["three workers"]
    edges, fraction = plotting.busy_fraction(result, bins=64)
    assert fraction.shape == (3, 64) and len(edges) == 65
    assert fraction.min() >= 0 and fraction.max() <= 1 + 1e-12
    busy_s = (fraction * np.diff(edges)).sum(axis=1)
    np.testing.assert_allclose(busy_s, result.workers["busy_ns"] / 1e9, rtol=1e-9)
    # One batch [10, 30) ms in bins of 20 ms: half of bin 0, half of bin 1.
    arrival = np.array([10]) * MS
    one = make_result(arrival, arrival + 20 * MS, duration_ns=40 * MS)
    np.testing.assert_allclose(plotting.busy_fraction(one, bins=2)[1], [[0.5, 0.5]])
    with pytest.raises(ValueError, match="bins=0 must be an integer >= 1"):
        plotting.busy_fraction(one, bins=0)


def test_cost_vs_goodput_has_one_point_per_run(runs):
    ax = plotting.cost_vs_goodput(runs)
    assert len(ax.collections) == 2
    x, y = ax.collections[0].get_offsets()[0]
    summary = runs["one worker"].summary()
    assert (x, y) == pytest.approx((summary["cost_per_1k_queries"], summary["goodput_qps"]))
    total = plotting.cost_vs_goodput(runs, cost="total")
    assert total.collections[1].get_offsets()[0][0] == pytest.approx(
        runs["three workers"].summary()["cost_dollars"]
    )


def test_save_all_writes_non_empty_pngs(runs, tmp_path):
    paths = plotting.save_all(runs, tmp_path / "figures", window_s=5.0)
    names = sorted(p.name for p in paths)
    assert names == [
        "cost_vs_goodput.png",
        "latency_cdf.png",
        "throughput_and_violations.png",
        "utilisation_one_worker.png",
        "utilisation_three_workers.png",
    ]
    for path in paths:
        assert path.is_file() and path.stat().st_size > 1000
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert plt.get_fignums() == []  # save_all closes what it opens


def test_lists_are_labelled_by_scheduler():
    a, b = fifo_result(n=100, workers=1), fifo_result(n=100, workers=1, seed=3)
    assert list(plotting.labelled([a, b])) == ["fifo(workers=1)", "fifo(workers=1) #1"]


def test_bad_plot_arguments():
    with pytest.raises(ValueError, match="results is empty"):
        plotting.latency_cdf({})
    with pytest.raises(ValueError, match=r"results\['x'\] is a int, not a Result"):
        plotting.latency_cdf({"x": 3})
    with pytest.raises(ValueError, match=r"cost='hourly' must be 'per_1k' or 'total'"):
        plotting.cost_vs_goodput(tiny(), cost="hourly")
    with pytest.raises(ValueError, match=r"end_s=1.0 must be after start_s=2.0"):
        plotting.utilisation_timeline(tiny(), start_s=2.0, end_s=1.0)
    with pytest.raises(ValueError, match="result must be a Result, got list"):
        plotting.utilisation_timeline([tiny()])
