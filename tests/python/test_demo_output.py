"""What the main job and `servelab smoke` show a new user: plots whose legends leave the data
visible, and sentences that say what a number means."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402

import servelab  # noqa: E402
from servelab import plotting  # noqa: E402
from servelab.cli import _speed_vs_reference  # noqa: E402
from servelab.experiments import AllowableThroughput, Evaluation  # noqa: E402
from servelab.main_job import _allowable_text  # noqa: E402

WORKLOAD = {"arrivals": "poisson(rate=45)", "count": 500,
            "apps": [{"name": "rm2", "slo_ms": 350, "sizes": "kairos_mix"}]}  # fmt: skip


def test_a_scheduler_that_fails_at_every_rate_says_so():
    failed = AllowableThroughput(
        rate=0.0, feasible=False, converged=False, bracket=(0.0, 11.25),
        evaluations=[Evaluation(11.25, False, ({},))],
    )  # fmt: skip
    assert _allowable_text(failed) == "fails the QoS at the lowest rate tried (11.2 queries/s)"
    found = AllowableThroughput(
        rate=40.0, feasible=True, converged=True, bracket=(40.0, 40.5),
        evaluations=[Evaluation(20.0, True, ({},)), Evaluation(40.0, True, ({},))],
    )  # fmt: skip
    assert _allowable_text(found) == "   40.0 queries/s  (2 rates tried)"


def test_speed_against_the_reference_reads_the_right_way_round():
    assert _speed_vs_reference(2.0) == "2.0x as fast as the reference"
    assert _speed_vs_reference(0.8) == "1.25x slower than the reference (0.80x as fast)"


def test_the_throughput_legend_is_outside_the_data():
    runs = {s: servelab.simulate("default", scheduler=s, workload=WORKLOAD) for s in ("jsq", "edf")}
    fig, ax = plt.subplots(figsize=(8, 4.5))
    try:
        plotting.throughput_and_violations_over_time(runs, ax, window_s=2.0)
        fig.tight_layout()
        fig.canvas.draw()
        legend = ax.get_legend().get_window_extent()
        assert legend.x0 > ax.get_window_extent().x1  # right of the plotting area
        assert legend.x1 <= fig.bbox.x1 + 1  # and inside the figure
        labels = [t.get_text() for t in ax.get_legend().get_texts()]
        assert labels[:2] == ["jsq", "edf"] and "SLO violations (right)" in labels
    finally:
        plt.close(fig)


def test_the_saved_latency_cdf_has_a_log_axis():
    runs = {"jsq": servelab.simulate("default", scheduler="jsq", workload=WORKLOAD)}
    ax = plotting.latency_cdf(runs, log_x=True)
    try:
        assert ax.get_xscale() == "log" and "log" in ax.get_xlabel()
    finally:
        plt.close(ax.figure)
