"""servelab.ramsis: the per-worker MDP builder, policies, policy sets, JSON and bad input."""

import json
import math
import sys
from pathlib import Path

import numpy as np
import pytest

import servelab
from servelab import ramsis

from .shared_data import shared_path

sys.path.insert(0, str(Path(__file__).parents[2] / "benchmarks" / "python"))
import reference_ramsis  # noqa: E402

MS = 1e-3


def small_table(models=("fast", "medium", "slow")):
    spec = {"fast": (4, 2.5, 0.60), "medium": (9, 4, 0.75), "slow": (17, 7, 0.85)}
    lat = np.array(
        [[(spec[m][0] + spec[m][1] * (b - 1)) * MS for b in range(1, 9)] for m in models]
    )
    return ramsis.LatencyTable(list(models), [spec[m][2] for m in models], lat)


SMALL = {"slo_ms": 40.0, "load_qps": 300.0, "workers": 3, "max_queue": 6, "intervals": 10}


def row_sums(mdp):
    sums = np.add.reduceat(mdp.probability, mdp.pair_begin[:-1])
    return sums


@pytest.fixture(scope="module")
def image():
    return ramsis.image_task(shared_path("ramsis"))


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"prune": 0.0},
        {"discretisation": "md"},
        {"batching": "variable"},
        {"discretisation": "md", "batching": "variable", "prune": 0.0},
        {"balancer": "shortest_queue"},
        {"arrivals": "erlang", "shape": 3},
    ],
    ids=["fld", "exact", "md", "variable", "md-variable-exact", "sqf", "erlang3"],
)
def test_rows_sum_to_one(options):
    mdp = ramsis.build_mdp(small_table(), **SMALL, **options)
    assert mdp.num_states == (SMALL["max_queue"] + 1) * mdp.num_levels + 1
    np.testing.assert_allclose(row_sums(mdp), 1.0, rtol=0, atol=1e-12)
    assert (mdp.probability > 0).all() and (mdp.probability <= 1 + 1e-15).all()
    assert mdp.mdp.num_pairs == mdp.num_pairs
    # every queue state has an action; the empty states only wait
    counts = np.diff(mdp.state_begin)
    assert (counts >= 1).all()
    assert (mdp.pair_model[mdp.state_begin[: mdp.num_levels]] == -1).all()


def test_same_mdp_and_policy_as_the_numpy_reference():
    lat = np.rint(small_table().latency_s * 1e9).astype(np.int64)
    acc = np.array(small_table().accuracy)
    for options in ({}, {"discretisation": "md", "batching": "variable"}):
        for prune in (0.0, 1e-12):
            mdp = ramsis.build_mdp(small_table(), **SMALL, prune=prune, **options)
            ref_mdp, choice, g = reference_ramsis.generate(
                lat, acc, slo_ns=40_000_000, load_qps=300, workers=3, max_queue=6, intervals=10,
                prune=prune, **options,
            )  # fmt: skip
            assert ref_mdp.P.shape == (mdp.num_pairs, mdp.num_states)
            ours = np.zeros(ref_mdp.P.shape)
            for a in range(mdp.num_pairs):
                lo, hi = mdp.pair_begin[a], mdp.pair_begin[a + 1]
                ours[a, mdp.next_state[lo:hi]] = mdp.probability[lo:hi]
            np.testing.assert_allclose(ours, ref_mdp.P.toarray(), rtol=0, atol=1e-13)
            np.testing.assert_array_equal(mdp.pair_model, ref_mdp.pair_model)
            np.testing.assert_allclose(mdp.reward, ref_mdp.reward, rtol=1e-15)
            policy = ramsis.solve(small_table(), **SMALL, prune=prune, **options)
            np.testing.assert_array_equal(mdp.choice_of(policy), choice)
            assert policy.expected_violation == pytest.approx(g["violation"], rel=1e-9, abs=1e-15)


def test_artifact_image_counts(image):
    assert image.models == ramsis.IMAGE_MODELS  # the Pareto front of the 26 models
    mdp = ramsis.build_mdp(image, slo_ms=150, load_qps=2000, workers=60)
    assert (mdp.num_states, mdp.num_pairs) == (3334, 3979)
    np.testing.assert_allclose(row_sums(mdp), 1.0, rtol=0, atol=1e-12)
    text = ramsis.text_task(shared_path("ramsis"))
    assert text.models == ramsis.TEXT_MODELS


def test_solve_decide_and_policy_table():
    p = ramsis.solve(small_table(), **SMALL)
    assert 0.6 <= p.expected_accuracy <= 0.85
    assert 0 <= p.expected_violation <= 0.01 and p.feasible
    assert p.decide(0, 10.0) == (None, 0)
    model, batch = p.decide(3, 39.0)
    assert model in p.models and batch == 3
    model, batch = p.decide(50, 0.0)  # beyond N: the full-queue state's action
    assert model == "fast" and batch == SMALL["max_queue"] + 1
    # a slack below every model's latency: the fastest model (the default action)
    assert p.decide(2, 0.5)[0] == "fast"
    t = ramsis.policy_table(p)
    assert t["model"].shape == (SMALL["max_queue"] + 1, p.num_levels)
    assert (t["model"][0] == -1).all()
    # larger slack never picks a less accurate model in this small, monotone case at n = 1
    row = t["model"][1]
    assert (np.diff(row) >= 0).all()


def test_json_round_trip(tmp_path):
    p = ramsis.solve(small_table(), **SMALL)
    text = ramsis.to_json(p)
    doc = json.loads(text)
    assert doc["format"] == "servelab.ramsis.worker_policy" and doc["slo_ns"] == 40_000_000
    q = ramsis.from_json(text)
    assert q.to_json() == text
    np.testing.assert_array_equal(q.action_model, p.action_model)
    s = ramsis.policy_set(
        small_table(), slo_ms=40, workers=3, loads=[200, 400], max_queue=6, intervals=10
    )
    path = ramsis.save(s, tmp_path / "set.json")
    s2 = ramsis.load(path)
    assert isinstance(s2, ramsis.PolicySet) and s2.to_json() == s.to_json()
    bad = dict(doc)
    del bad["action_model"]
    with pytest.raises(ValueError, match="action_model"):
        ramsis.from_json(json.dumps(bad))
    bad = dict(doc, action_model=doc["action_model"][:-1])
    with pytest.raises(ValueError, match="action tables"):
        ramsis.from_json(json.dumps(bad))
    with pytest.raises(ValueError, match="policy JSON"):
        ramsis.from_json("{not json")


def test_policy_set_refines_and_looks_up():
    s = ramsis.policy_set(
        small_table(), slo_ms=40, workers=3, loads=[100, 600], max_queue=6, intervals=10
    )
    loads = s.loads_qps
    assert loads[0] == 100 and loads[-1] == 600 and len(loads) > 2
    assert (np.diff(loads) > 0).all()
    acc = np.array([p.expected_accuracy for p in s.policies])
    feasible = np.array([p.feasible for p in s.policies])
    gaps = np.abs(np.diff(acc))
    both_infeasible = ~feasible[:-1] & ~feasible[1:]
    steps_left = np.diff(loads) >= 2 * 10.0
    assert ((gaps < 0.01) | both_infeasible | ~steps_left).all()
    assert s.lookup(100).load_qps == 100
    assert s.lookup(101).load_qps == loads[1]
    assert s.lookup(1e9).load_qps == 600  # above the grid: the highest
    assert s.lookup(1).load_qps == 100
    unrefined = ramsis.policy_set(
        small_table(),
        slo_ms=40,
        workers=3,
        loads=[600, 100],
        max_accuracy_gap=0,
        max_queue=6,
        intervals=10,
    )
    np.testing.assert_array_equal(unrefined.loads_qps, [100, 600])
    threaded = ramsis.policy_set(
        small_table(), slo_ms=40, workers=3, loads=[100, 600], threads=2, max_queue=6, intervals=10
    )
    assert threaded.to_json() == s.to_json()  # deterministic whatever the thread count


def test_from_a_profile():
    prof = servelab.Profile("test")
    prof.add_hardware("cpu")
    table = small_table()
    for i, m in enumerate(table.models):
        for b in range(1, 9):
            prof.set_latency("cpu", m, b, samples_s=[float(table.latency_s[i, b - 1])])
        prof.set_accuracy(m, table.accuracy[i])
    p1 = ramsis.solve(prof, "cpu", table.models, **SMALL)
    p2 = ramsis.solve(table, **SMALL)
    assert p1.to_json() == p2.to_json()
    with pytest.raises(ValueError, match="models"):
        ramsis.solve(prof, "cpu", None, **SMALL)
    # a gap: batch 1 not profiled
    gap = servelab.Profile("gap")
    gap.add_hardware("cpu")
    for b in (2, 3, 4):
        gap.set_latency("cpu", "m", b, samples_s=[0.01 * b])
    gap.set_accuracy("m", 0.7)
    with pytest.raises(ValueError, match="batch 1"):
        ramsis.solve(gap, "cpu", ["m"], **SMALL)


def test_bad_input_is_a_clear_error():
    t = small_table()
    with pytest.raises(ValueError, match=r"slo=3 ms is below every model's batch-1 latency"):
        ramsis.solve(t, **{**SMALL, "slo_ms": 3})
    with pytest.raises(ValueError, match="intervals"):
        ramsis.build_mdp(t, **{**SMALL, "intervals": 0})
    for load in (0, -5, math.nan, math.inf):
        with pytest.raises(ValueError, match="load_qps"):
            ramsis.build_mdp(t, **{**SMALL, "load_qps": load})
    with pytest.raises(ValueError, match="workers"):
        ramsis.build_mdp(t, **{**SMALL, "workers": 0})
    with pytest.raises(ValueError, match="slo_ms"):
        ramsis.build_mdp(t, **{**SMALL, "slo_ms": -1})
    with pytest.raises(ValueError, match="discretisation"):
        ramsis.build_mdp(t, **SMALL, discretisation="fixed")
    with pytest.raises(ValueError, match="shape"):
        ramsis.build_mdp(t, **SMALL, arrivals="gamma", shape=0.5)
    with pytest.raises(TypeError, match="unknown option"):
        ramsis.build_mdp(t, **SMALL, interval=10)
    with pytest.raises(ValueError, match="models is empty"):
        ramsis.LatencyTable([], [], np.zeros((0, 4)))
    with pytest.raises(ValueError, match="models is empty"):
        t.select([])
    with pytest.raises(KeyError, match="nope"):
        t.select(["nope"])
    with pytest.raises(ValueError, match="gap"):
        ramsis.LatencyTable.from_rows(["a"], [0.5], ["a", "a"], [1, 3], [0.01, 0.03])
    with pytest.raises(ValueError, match="finite"):
        ramsis.LatencyTable(["a"], [0.5], np.array([[0.01, np.nan]]))
    with pytest.raises(ValueError, match="loads"):
        ramsis.policy_set(t, slo_ms=40, workers=3, loads=[])
    with pytest.raises(ValueError, match="loads"):
        ramsis.policy_set(t, slo_ms=40, workers=3, loads=[100, -1])


def test_unservable_load_is_flagged_infeasible():
    p = ramsis.solve(small_table(), **{**SMALL, "load_qps": 5000})
    assert not p.feasible
    assert p.expected_violation > 0.5
    assert math.isfinite(p.expected_accuracy)
    assert "INFEASIBLE" in repr(p)


def test_plot_policy():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    p = ramsis.solve(small_table(), **SMALL)
    ax = ramsis.plot_policy(p, annotate_batch=True)
    assert ax.get_xlabel().startswith("slack")
    s = ramsis.policy_set(
        small_table(), slo_ms=40, workers=3, loads=[100, 300], max_queue=6, intervals=10
    )
    assert ramsis.plot_policy_set(s).get_xlabel().startswith("load")
    with pytest.raises(ValueError, match="lookup"):
        ramsis.plot_policy(s)


def test_table_from_the_artifact_profiles_matches_the_derived_table():
    profiles = pytest.importorskip("servelab.profiles")
    data = shared_path("ramsis")
    models = list(ramsis.IMAGE_MODELS)
    prof = profiles.import_ramsis(data, tasks=["image_cloud_cpu"], models=models)
    # the raw profiles stop at batch 8 for the largest model: a gap unless filled
    with pytest.raises(ValueError, match="max_queue=32"):
        ramsis.build_mdp(prof, "cloud_cpu", models, slo_ms=150, load_qps=2000, workers=60)
    table = ramsis.latency_table(prof, "cloud_cpu", models, fill="ols", max_batch=32)
    derived = ramsis.image_task(data).table
    np.testing.assert_allclose(table.latency_s, derived.latency_s, rtol=1e-6)
    with pytest.raises(ValueError, match="fill"):
        ramsis.latency_table(prof, "cloud_cpu", models, max_batch=32)


def test_policy_benchmark_smoke():
    """The generation benchmark, small: servelab against the numpy reference, same policy."""
    import subprocess

    script = Path(__file__).parents[2] / "benchmarks" / "python" / "bench_ramsis_policy.py"
    proc = subprocess.run(
        [sys.executable, str(script), "--smoke"], capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "ratio" in proc.stdout and "same action in every state: True" in proc.stdout
