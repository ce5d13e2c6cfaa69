"""Hera's node managers as registered schedulers (hera_rmu, parties) in servelab.simulate: two
applications on one node, the manager adding and removing workers and setting LLC ways."""

import numpy as np
import pytest

import servelab
from servelab import hera


@pytest.fixture(scope="module")
def off():
    return hera.build(["dlrm_d", "ncf"])


def test_managers_are_registered():
    names = {s["name"] for s in servelab.list_schedulers()}
    assert {"hera_rmu", "parties"} <= names
    with pytest.raises(ValueError, match="must name 2 models"):
        servelab.make_scheduler("hera_rmu(models='ncf')")
    with pytest.raises(KeyError, match="no Table I model 'bogus'"):
        servelab.make_scheduler("hera_rmu(tables='ncf,bogus')")


@pytest.mark.parametrize("manager", hera.MANAGERS)
def test_every_query_ends_once_and_the_manager_resizes(off, manager):
    scenario = hera.node_scenario(off, "dlrm_d", "ncf", 0.3, 0.3, manager, duration_s=6.0)
    result = servelab.simulate(scenario)
    cols = result.columns
    ids = np.asarray(cols["id"])
    assert len(np.unique(ids)) == len(ids)
    finished = np.asarray(cols["finish_ns"])
    done = finished >= 0
    assert np.all(finished[done] >= np.asarray(cols["arrival_ns"])[done])
    # At 30% load the manager gives back some of the 8 + 8 cores it started with.
    late = np.asarray(cols["arrival_ns"]) > 3e9
    used_late = np.unique(np.asarray(cols["worker"])[late & done])
    print(f"\n{manager}: workers serving after 3 s: {len(used_late)} (started with 16)")
    assert len(used_late) < 16
    again = servelab.simulate(scenario)
    assert np.array_equal(np.asarray(again.columns["finish_ns"]), finished)


def test_hera_rmu_meets_the_sla_at_moderate_load(off):
    runs = hera.run_managed(off, "dlrm_d", "ncf", 0.5, 0.4, duration_s=10.0)
    for manager, r in runs.items():
        rates = {app: m["slo_violation_rate"] for app, m in r["by_app"].items()}
        print(f"\n{manager}: SLO violation rate by model {rates}")
    hera_rates = runs["hera_rmu"]["by_app"]
    assert hera_rates["dlrm_d"]["slo_violation_rate"] < 0.05
    assert hera_rates["ncf"]["slo_violation_rate"] < 0.05
    parties = runs["parties"]["by_app"]
    for app in ("dlrm_d", "ncf"):
        assert hera_rates[app]["slo_violation_rate"] <= parties[app]["slo_violation_rate"]
    assert runs["hera_rmu"]["emu"] == pytest.approx(
        sum(hera_rates[m]["goodput_qps"] / off.isolated_qps(m) for m in ("dlrm_d", "ncf"))
    )


def test_the_same_scenario_runs_in_the_real_serving_loop(off):
    """The emulated executor waits the profiled latency; the decisions are the policy's own."""
    scenario = hera.node_scenario(off, "dlrm_d", "ncf", 0.05, 0.01, duration_s=1.5, monitor_s=0.5)
    real = servelab.serve(scenario, spin_us=0)
    sim = servelab.simulate(scenario)
    assert real.summary()["queries"] == sim.summary()["queries"]
    status = np.asarray(real.columns["finish_ns"])
    dropped = real.summary()["dropped"]
    assert np.count_nonzero(status >= 0) + dropped == real.summary()["queries"]


def test_bad_scenarios_are_refused(off):
    with pytest.raises(KeyError, match="manager 'pid'"):
        hera.node_scenario(off, "dlrm_d", "ncf", 0.3, 0.3, "pid")
    with pytest.raises(ValueError, match="load_b=0"):
        hera.node_scenario(off, "dlrm_d", "ncf", 0.3, 0)
