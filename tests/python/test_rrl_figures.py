"""The figures the notebook draws beyond convergence and regret: the CCDF of the chosen episodes'
latency under an SLO (Fig. 14 style) and the p95 and resource share over time under the SLO
objective (Fig. 15 style); and the per-episode resource share they plot."""

from __future__ import annotations

import numpy as np
import pytest

from servelab import rrl

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

SLO_MS = 400.0


@pytest.fixture(scope="module")
def slo_runs():
    space = rrl.cpu_space(3)
    kw = {"steps": 120, "model": rrl.PerfModel(cores=3), "oracle_episodes": 4}
    return rrl.compare_methods(space, "poisson(rate=3)", ("rrl", "capes"), objective="slo",
                               slo_ms=SLO_MS, **kw)  # fmt: skip


def test_resource_share_is_the_chosen_configurations_share(slo_runs):
    run = slo_runs["rrl"][0]
    shares = run.resource_share()
    assert shares.shape == (run.steps,)
    for config, share in zip(run.columns["config"][:20], shares[:20], strict=True):
        workers, inter, intra = run.space.values(int(config))
        assert share == pytest.approx(min(1.0, workers * inter * intra / 3))
    # the summary's tail: the convergence window of 50 episodes (more than a tenth of 120)
    assert shares[-50:].mean() == pytest.approx(run.summary()["tail_resource_share"])


def test_latency_ccdf_draws_one_curve_per_method_and_the_slo(slo_runs):
    ax = rrl.plot_latency_ccdf(slo_runs, slo_ms=SLO_MS)
    lines = ax.get_lines()
    assert [line.get_label() for line in lines] == ["rrl", "capes", f"SLO {SLO_MS:.0f} ms"]
    x, y = lines[0].get_data()
    assert np.all(np.diff(x) >= 0) and y[0] == 1.0 and np.all(np.diff(y) <= 0)
    assert ax.get_xscale() == ax.get_yscale() == "log"
    plt.close("all")


def test_slo_resources_draws_latency_and_share_over_time(slo_runs):
    top, bottom = rrl.plot_slo_resources(slo_runs, slo_ms=SLO_MS, window=10)
    assert [line.get_label() for line in top.get_lines()] == ["rrl", "capes", "SLO"]
    share = bottom.get_lines()[0].get_ydata()
    assert share.size == slo_runs["rrl"][0].steps - 9  # moving average of 10
    assert np.all((share > 0) & (share <= 1))
    plt.close("all")
