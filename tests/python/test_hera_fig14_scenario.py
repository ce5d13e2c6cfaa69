"""Hera's Fig. 14 as a Scenario: DLRM(D) and NCF on one node with opposite load moves, each
application with its own arrival process, managed by the registered hera_rmu and parties
schedulers in servelab.simulate (and once in servelab.serve)."""

import numpy as np
import pytest

import servelab
from servelab import hera

# Reduced size: 30 windows of 0.25 s (T1 at window 10, T2 at 20), about 80,000 queries per manager.
WINDOWS, WINDOW_S = 30, 0.25


@pytest.fixture(scope="module")
def off():
    return hera.build(["dlrm_d", "ncf"])


def test_each_model_arrives_at_its_own_fig14_rate(off):
    scenario = hera.fig14_scenario(off, windows=WINDOWS, window_s=WINDOW_S)
    assert "arrivals" not in scenario.workload
    assert scenario.scheduler.startswith("hera_rmu(models='dlrm_d,ncf', cores=16")
    result = servelab.simulate(scenario)
    c = result.columns
    loads = hera.fig14_loads(WINDOWS)
    window = c["arrival_ns"] // round(WINDOW_S * 1e9)
    for app, model in enumerate(("dlrm_d", "ncf")):
        for segment in (range(10, 20), range(20, 30)):  # constant loads between T1, T2, the end
            expected = loads[segment[0], app] * off.isolated_qps(model) * WINDOW_S * len(segment)
            got = np.count_nonzero((c["app"] == app) & np.isin(window, segment))
            assert abs(got - expected) <= 4 * np.sqrt(expected), (model, segment, got, expected)


def test_hera_holds_the_sla_after_each_load_change_and_parties_spikes(off):
    runs = hera.run_fig14(off, windows=WINDOWS, window_s=WINDOW_S, settle_windows=3)
    node = {c: hera.run_node(off, "dlrm_d", "ncf", hera.fig14_loads(), c) for c in hera.CONTROLLERS}
    print(f"\nFig. 14, windows over the SLA (DLRM(D), NCF) of {WINDOWS} x {WINDOW_S} s:")
    for manager, controller in (("hera_rmu", "hera"), ("parties", "parties")):
        r, n = runs[manager], node[controller]
        print(
            f"  {manager:9s} paper: {hera.PAPER_FIG14[manager]:20s} scenario: {r['over']} "
            f"(settled {r['over_settled']})  run_node (60 x 1 s): "
            f"[{n['violations_a']}, {n['violations_b']}]"
        )
    hera_run, parties = runs["hera_rmu"], runs["parties"]
    assert hera_run["over_settled"] == [0, 0]
    assert sum(parties["over_settled"]) > 0
    assert sum(parties["over"]) > sum(hera_run["over"])
    # Every query of both runs completed: the managers never starve a model for good.
    for r in runs.values():
        assert np.all(r["result"].columns["finish_ns"] >= 0)
    again = hera.run_fig14(off, windows=WINDOWS, window_s=WINDOW_S, settle_windows=3)
    np.testing.assert_array_equal(again["parties"]["tails"], parties["tails"])


def test_the_same_scenario_runs_in_the_real_serving_loop(off):
    """The emulated executor waits the profiled latency; 2% of the loads keep it to ~60 queries."""
    scenario = hera.fig14_scenario(off, windows=3, window_s=0.5, scale=0.02)
    real = servelab.serve(scenario, spin_us=0)
    sim = servelab.simulate(scenario)
    np.testing.assert_array_equal(real.columns["arrival_ns"], sim.columns["arrival_ns"])
    np.testing.assert_array_equal(real.columns["app"], sim.columns["app"])
    done = np.count_nonzero(real.columns["finish_ns"] >= 0)
    assert done + real.summary()["dropped"] == real.summary()["queries"] > 0


def test_bad_arguments_are_refused(off):
    with pytest.raises(KeyError, match="manager 'pid'"):
        hera.fig14_scenario(off, manager="pid")
    with pytest.raises(ValueError, match="window_s=0"):
        hera.fig14_scenario(off, window_s=0)
    with pytest.raises(ValueError, match="scale=-1"):
        hera.fig14_scenario(off, scale=-1)
    with pytest.raises(ValueError, match="windows=2"):
        hera.fig14_scenario(off, windows=2)
    with pytest.raises(ValueError, match="settle_windows=10"):
        hera.run_fig14(off, windows=WINDOWS, settle_windows=10)
