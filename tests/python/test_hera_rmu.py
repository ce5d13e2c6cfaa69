"""Algorithm 3 (Hera's node resource manager) against PARTIES on a node with two models:
Fig. 14's load changes and Fig. 12's sustained loads, with the paper's numbers beside ours."""

import numpy as np
import pytest

from servelab import hera


@pytest.fixture(scope="module")
def off():
    return hera.build(["dlrm_d", "ncf", "din", "dien"])


def test_fig14_hera_holds_the_sla_where_parties_spikes(off):
    loads = hera.fig14_loads(60)
    runs = {c: hera.run_node(off, "dlrm_d", "ncf", loads, c) for c in hera.CONTROLLERS}
    v = {c: r["violations_a"] + r["violations_b"] for c, r in runs.items()}
    peak = {
        c: float(max(r["tail_over_sla_a"].max(), r["tail_over_sla_b"].max()))
        for c, r in runs.items()
    }
    print(f"\nFig. 14: windows over SLA (of 120) {v}; worst p95/SLA {peak}")
    print("paper: Hera keeps tail latency below SLA, PARTIES 'frequently exhibits sudden spikes'")
    assert v["hera"] < v["parties"]
    # After T2 (NCF jumps to 60%), Hera settles within a few windows and stays within the SLA.
    hera_tail = np.maximum(runs["hera"]["tail_over_sla_a"], runs["hera"]["tail_over_sla_b"])
    assert np.all(hera_tail[45:] <= 1.0)
    # Resources never exceed the node.
    for r in runs.values():
        assert np.all(r["workers_a"] + r["workers_b"] <= 16)
        assert np.all(r["ways_a"] + r["ways_b"] <= 11)
        assert np.all(r["ways_a"] >= 1) and np.all(r["ways_b"] >= 1)


def test_fig12_curves_are_monotone_and_hera_reaches_the_static_bound(off):
    # The window rule judges capacity (node_sim.hpp): every curve falls with DLRM(D)'s load, and
    # at DLRM(D) 50% Hera's RMU serves what the best fixed allocation of the node serves; the
    # paper's 80% (NCF) and 100% (DIN) lie beyond that bound of our contention model.
    curves = hera.max_partner_loads(off, "dlrm_d", ["ncf", "din"])
    for manager, by_partner in curves.items():
        for ys in by_partner.values():
            assert all(b <= a + 0.02 for a, b in zip(ys, ys[1:], strict=False)), (manager, ys)
    for partner in ("ncf", "din"):
        bound = hera.best_static_partner_load(off, "dlrm_d", partner, 0.5)
        y = {m: curves[m][partner][1] for m in curves}
        print(
            f"\n{partner} with DLRM(D) at 50%: Hera {y['hera']:.3f}, PARTIES {y['parties']:.3f}, "
            f"best fixed allocation {bound['partner_load']:.3f} {bound['workers']} "
            f"{bound['ways']} (paper: Hera 0.8 / 1.0)"
        )
        assert y["hera"] == pytest.approx(bound["partner_load"], abs=0.02)
        assert y["parties"] <= bound["partner_load"] + 0.01
    emu = hera.rmu_emu(off, "dlrm_d", loads=(0.4, 0.6))
    print(
        f"mean EMU with DLRM(D) co-located: Hera {emu['hera']:.2f}, "
        f"PARTIES {emu['parties']:.2f}, gain {emu['gain']:+.0%} (paper +12%)"
    )
    assert abs(emu["gain"]) < 0.05  # both reach the node's capacity at constant load


def test_same_run_twice_is_identical(off):
    loads = hera.fig14_loads(30)
    a = hera.run_node(off, "dlrm_d", "ncf", loads, "parties")
    b = hera.run_node(off, "dlrm_d", "ncf", loads, "parties")
    assert np.array_equal(a["tail_over_sla_a"], b["tail_over_sla_a"])


def test_bad_runs_are_refused(off):
    with pytest.raises(KeyError, match="controller 'pid'"):
        hera.run_node(off, "dlrm_d", "ncf", hera.fig14_loads(), "pid")
    with pytest.raises(ValueError, match="shape"):
        hera.run_node(off, "dlrm_d", "ncf", [0.1, 0.2])
    with pytest.raises(ValueError, match="finite fractions"):
        hera.run_node(off, "dlrm_d", "ncf", [[0.1, -1.0]])
    with pytest.raises(ValueError, match="exceeds the node"):
        hera.run_node(off, "dlrm_d", "ncf", [[0.1, 0.1]], workers=(10, 10))
    with pytest.raises(ValueError, match="windows=2"):
        hera.fig14_loads(2)
