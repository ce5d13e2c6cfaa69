"""Algorithm 2 and the cluster baselines: targets met, determinism, infeasible inputs."""

import numpy as np
import pytest

import servelab
from servelab import hera


@pytest.fixture(scope="module")
def off():
    return hera.build()


@pytest.mark.parametrize("selection", hera.SELECTIONS)
def test_every_policy_meets_every_target(off, selection):
    target = hera.targets_for(off, 3000.0)
    plan = hera.schedule(off, target, selection, seed=4)
    assert plan.feasible, plan.reason
    for name, qps in target.items():
        assert plan.serviced[name] >= qps
    if selection == "deeprecsys":
        assert plan.emu == pytest.approx(1.0) and all(s["b"] is None for s in plan.servers)
    if selection in ("hera", "hera_random"):  # never a (high, high) pair
        high = set(off.high_models)
        assert not any(s["a"] in high and s["b"] in high for s in plan.servers)


def test_hera_pairs_each_low_model_with_its_best_unmet_high_partner(off):
    plan = hera.schedule(off, hera.targets_for(off, 3000.0), "hera")
    first = plan.servers[0]
    low = first["a"]
    assert low == off.low_models[0]
    i = off.index(low)
    best = max(off.high_models, key=lambda h: off.affinity[i, off.index(h)])
    assert first["b"] == best


def test_same_seed_same_plan_and_seeds_differ(off):
    target = hera.targets_for(off, 5000.0)
    a = hera.schedule(off, target, "random", seed=11)
    b = hera.schedule(off, target, "random", seed=11)
    assert a.servers == b.servers
    others = [hera.schedule(off, target, "random", seed=s).servers for s in range(5)]
    assert any(o != a.servers for o in others)


def test_target_no_cluster_size_meets_is_an_infeasible_plan(off):
    plan = hera.schedule(off, hera.targets_for(off, 1e6), "hera", max_servers=50)
    assert not plan.feasible
    assert "max_servers=50" in plan.reason and "'dlrm_b'" in plan.reason
    with pytest.raises(ValueError, match="level=1000000.0"):
        hera.servers_needed(off, [1e6], max_servers=50, selections=("hera",))


def test_bad_targets_are_named(off):
    with pytest.raises(KeyError, match="not profiled: bogus"):
        hera.schedule(off, {"bogus": 1.0})
    with pytest.raises(ValueError, match="ncf=-1"):
        hera.schedule(off, {"ncf": -1})
    with pytest.raises(ValueError, match="3 entries for 8 models"):
        hera.schedule(off, [1, 2, 3])
    with pytest.raises(KeyError, match="selection 'best'"):
        hera.schedule(off, {"ncf": 1.0}, "best")
    with pytest.raises(ValueError, match="low_share=2"):
        hera.targets_for(off, 10.0, low_share=2)


def test_a_model_no_server_can_host_is_named():
    core = servelab._core.hera
    plan = core.schedule_cluster(
        [0.0, 10.0], [False, True], np.ones((2, 2)), np.zeros((2, 2)), [5.0, 5.0]
    )
    assert not plan["feasible"] and "model 0 has target_qps=5" in plan["reason"]
    with pytest.raises(ValueError, match=r"affinity must have shape \(2, 2\)"):
        core.schedule_cluster(
            [1.0, 10.0], [False, True], np.ones((3, 3)), np.zeros((2, 2)), [5.0, 5.0]
        )


def test_leftover_low_models_pair_with_each_other_once_no_high_partner_is_short(off):
    """Skewed targets (Fig. 16): once every high model's target is met, a low model shares a
    node with the other low model still short (only (high, high) pairs are ruled out), never
    with a high model already served."""
    target = hera.targets_for(off, 4000.0, low_share=0.9)
    plan = hera.schedule(off, target, "hera")
    low = set(off.low_models)
    low_low = [s for s in plan.servers if s["a"] in low and s["b"] in low]
    assert low_low and all(s["emu"] >= 1.0 for s in low_low)
    first = plan.servers.index(low_low[0])
    served = {s["b"] for s in plan.servers[:first] if s["b"] not in low}
    assert served == set(off.high_models)  # the high partners came first, all of them


def test_low_pair_below_one_server_of_load_runs_alone():
    """Two low models whose pair would serve less than one server's worth (EMU < 1) run alone,
    so Hera's servers never fall below 100% EMU."""
    core = servelab._core.hera
    pair_qps = np.array([[0.0, 40.0], [40.0, 0.0]])  # EMU of the pair 0.8
    plan = core.schedule_cluster(
        [100.0, 100.0], [False, False], np.ones((2, 2)), pair_qps, [150.0, 150.0]
    )
    assert list(plan["model_b"]) == [-1] * 4
    pair_qps = np.array([[0.0, 60.0], [60.0, 0.0]])  # EMU 1.2: paired
    plan = core.schedule_cluster(
        [100.0, 100.0], [False, False], np.ones((2, 2)), pair_qps, [150.0, 150.0]
    )
    assert list(plan["model_b"]) == [1, 1, 1]
