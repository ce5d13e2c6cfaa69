"""servelab.hera's offline side: the node and model profiles, the contention model, worker
scalability, the affinity table (Algorithm 1) and bad input."""

import math

import numpy as np
import pytest

import servelab
from servelab import hera

ALL = ["dlrm_a", "dlrm_b", "dlrm_c", "dlrm_d", "ncf", "dien", "din", "wnd"]


@pytest.fixture(scope="module")
def off():
    return hera.build()


def test_table1_models_and_baseline_node():
    names = [m.name for m in hera.table1_models()]
    assert names == ALL
    node = hera.baseline_node()
    assert (node.cores, node.llc_ways, node.llc_mb, node.mem_bandwidth_gbs) == (16, 11, 22.0, 128.0)
    assert node.mem_capacity_gb == pytest.approx(192 * 2**30 / 1e9, rel=1e-4)  # 192 GiB
    b = hera.model("dlrm_b")
    assert b.memory_gb == pytest.approx(25.0005) and b.sla_ms == 400
    assert hera.model("ncf").sla_ms == 5


def test_short_name_is_the_system_package():
    import servelab.systems.hera as real

    assert servelab.hera is real


def test_profiles_follow_the_paper_shapes(off):
    # Fig. 6: DLRM(B) out of memory beyond 8 workers; DLRM(D) flattens; the others keep scaling.
    b = off.workers_curve("dlrm_b")
    assert b[7] == pytest.approx(1.0) and np.all(b[8:] == 0)
    d = off.workers_curve("dlrm_d")
    assert d[15] / d[11] - 1 < 0.15
    for name in ("ncf", "dien", "din", "wnd", "dlrm_c"):
        c = off.workers_curve(name)
        assert c[15] / c[11] - 1 > 0.25, name
        assert np.all(np.diff(c) > 0), name
    # Fig. 7: memory-bound DLRM(D) barely cares about ways, the cache-sensitive NCF does.
    assert off.ways_curve("dlrm_d")[0] > 0.9
    assert off.ways_curve("ncf")[0] < 0.6
    for name in ALL:
        assert np.all(np.diff(off.ways_curve(name)) >= -1e-9), name


def test_scalability_classes_and_slope_threshold(off):
    assert off.low_models == ["dlrm_b", "dlrm_d"]
    slopes = {s["name"]: s["slope"] for s in off.scalability}
    assert slopes["dlrm_b"] == 0.0 and slopes["dlrm_d"] < 0.5 < slopes["ncf"]
    # The threshold is a parameter: a very strict one makes DLRM(A) low too.
    strict = hera.build(threshold=1.02)
    assert "dlrm_a" in strict.low_models


def test_affinity_table_is_algorithm_1(off):
    a = off.affinity
    assert a.shape == (8, 8)
    assert np.allclose(a, a.T) and np.all((a > 0) & (a <= 1))
    # Recompute one entry from the lookup tables, as Algorithm 1 writes it.
    i, j = off.index("ncf"), off.index("dlrm_d")
    ta, tb = off.tables[i], off.tables[j]
    qa, qb = ta.qps[ta.half_workers], tb.qps[tb.half_workers]
    k = off.node.llc_ways
    llc = max((qa[w] / qa[k] + qb[k - w] / qb[k]) / 2 for w in range(1, k))
    bw = ta.bandwidth[ta.half_workers, k] + tb.bandwidth[tb.half_workers, k]
    dram = min(off.node.mem_bandwidth_gbs / bw, 1.0)
    assert a[i, j] == pytest.approx(min(llc, dram), rel=1e-12)


def test_affinity_matrix_from_plain_tables():
    q = np.array([[0, 0.5, 0.8, 1.0], [0, 0.9, 0.95, 1.0]])
    m = servelab._core.hera.affinity_matrix(q, [10.0, 100.0], 128.0)
    assert m[0, 1] == pytest.approx(min((0.8 + 0.9) / 2, 128 / 110))
    with pytest.raises(ValueError, match="bandwidth_gbs has 1 entries"):
        servelab._core.hera.affinity_matrix(q, [10.0], 128.0)


def test_pearson_between_affinity_and_contention_model(off):
    r = off.pearson()
    print(f"\nPearson(affinity, co-located QPS): ours {r:.3f}, paper 0.95")
    assert r > 0.8


def test_contention_model_co_location_and_memory():
    node = hera.baseline_node()
    ncf, d = hera.model("ncf"), hera.model("dlrm_d")
    alone = servelab._core.hera.evaluate(node, [(d, 8, 5)])
    both = servelab._core.hera.evaluate(node, [(d, 8, 5), (ncf, 8, 6)])
    assert both["bandwidth_utilisation"] >= alone["bandwidth_utilisation"]
    assert both["tenants"][0]["qps"] <= alone["tenants"][0]["qps"]
    with pytest.raises(ValueError, match=r"out of memory: 9 x dlrm_b"):
        servelab._core.hera.evaluate(node, [(hera.model("dlrm_b"), 9, 11)])
    with pytest.raises(ValueError, match="exceed the node's cores=16"):
        servelab._core.hera.evaluate(node, [(d, 10, 5), (ncf, 10, 6)])
    assert servelab._core.hera.latency_bounded_qps(4, 6.0, 5.0) == 0.0


def test_colocated_qps_for_any_allocation(off):
    both = off.colocated("dlrm_d", 8, 2, "ncf", 8, 9)
    alone = off.tables[off.index("ncf")].qps[8, 9]
    assert 0 < both["tenants"][1]["qps"] <= alone * (1 + 1e-9)
    with pytest.raises(ValueError, match="out of memory"):
        off.colocated("dlrm_b", 8, 5, "dien", 8, 6)


def test_same_input_same_tables():
    a, b = hera.build(["ncf", "dlrm_d", "dien"]), hera.build(["ncf", "dlrm_d", "dien"])
    assert np.array_equal(a.affinity, b.affinity)
    assert np.array_equal(a.tables[0].qps, b.tables[0].qps)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"cores": 0}, ValueError, "cores=0"),
        ({"llc_ways": 2.5}, ValueError, "llc_ways=2.5 must be an integer"),
        ({"mem_bandwidth_gbs": float("nan")}, ValueError, "mem_bandwidth_gbs=nan"),
        ({"core_bandwidth_gbs": 500.0}, ValueError, "core_bandwidth_gbs=500"),
        ({"dram": 1}, KeyError, "unknown field 'dram'"),
    ],
)
def test_inconsistent_node_is_refused(kwargs, error, match):
    with pytest.raises(error, match=match):
        hera.node(**kwargs)


def test_bad_models_are_named():
    with pytest.raises(KeyError, match="no Table I model 'dlrm_z'"):
        hera.model("dlrm_z")
    with pytest.raises(ValueError, match="model 'ncf': sla_ms=-1"):
        hera.model("ncf", sla_ms=-1)
    with pytest.raises(ValueError, match="model 'huge': one worker needs memory_gb=500"):
        hera.build(
            [
                {
                    **{f: getattr(hera.model("ncf"), f) for f in hera.specs.MODEL_FIELDS},
                    "name": "huge",
                    "memory_gb": 500,
                }
            ]
        )
    with pytest.raises(ValueError, match="model 'slow': cannot meet sla_ms=5"):
        hera.build([hera.model("ncf"), hera.model(hera.model("ncf"), name="slow", compute_ms=50.0)])
    with pytest.raises(ValueError, match="names repeat: ncf"):
        hera.build(["ncf", "ncf"])
    with pytest.raises(ValueError, match="threshold=0"):
        hera.build(["ncf"], threshold=0)
    with pytest.raises(KeyError, match="model 'nope' is not profiled"):
        hera.build(["ncf"]).pair("ncf", "nope")


def test_summary_rows(off):
    rows = {r["model"]: r for r in off.summary()}
    assert rows["dlrm_b"]["max_workers"] == 8 and rows["dlrm_b"]["scalability"] == "low"
    for r in rows.values():
        assert 0 < r["latency_ms"] < r["sla_ms"]
        assert math.isfinite(r["isolated_qps"]) and r["isolated_qps"] > 0
