"""RAMSIS's online scheduler and its baselines as servelab schedulers (no shared data needed).

A synthetic task: one CPU type, a fast inaccurate model ("small": 10 + 2b ms, accuracy 0.6) and a
slow accurate one ("big": 40 + 10b ms, accuracy 0.9), batches 1..16, SLO 100 ms.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import servelab
from servelab import _core, ramsis
from servelab.results import COMPLETED

SLO_MS = 100.0
WORKERS = 4


@pytest.fixture(scope="module")
def profile() -> servelab.Profile:
    p = servelab.Profile("synthetic two-model task")
    p.set_price("cpu", 0.0)
    for b in range(1, 17):
        p.set_latency("cpu", "small", b, samples_s=[(10 + 2 * b) / 1e3])
        p.set_latency("cpu", "big", b, samples_s=[(40 + 10 * b) / 1e3])
    p.set_accuracy("small", 0.6)
    p.set_accuracy("big", 0.9)
    return p


@pytest.fixture(scope="module")
def policies(profile):
    table = _core.ramsis.LatencyTable.from_profile(profile, "cpu", ["small", "big"], "p95")
    return _core.ramsis.generate_policy_set(
        table, [20.0, 100.0, 300.0], slo_ms=SLO_MS, workers=WORKERS, max_queue=16,
        max_accuracy_gap=0.0,
    )  # fmt: skip


def scenario(profile, rate: float = 100.0, count: int = 3000, **extra) -> dict:
    return {
        "profile": profile,
        "workers": [{"hardware": "cpu", "count": WORKERS}],
        "workload": {
            "arrivals": f"poisson(rate={rate})",
            "count": count,
            "apps": [{"name": "q", "slo_ms": SLO_MS}],
        },
        "decision_statistic": "p95",
        "service": "p95",
        **extra,
    }


def test_registered_with_documented_parameters():
    entries = {e["name"]: e for e in servelab.list_schedulers()}
    for name in ("ramsis", "jellyfish", "model_switching"):
        assert name in entries and entries[name]["origin"] == "c++"
    params = {p["name"]: p for p in entries["ramsis"]["params"]}
    assert {"policies", "loads", "load_qps", "window_ms", "balancer"} <= set(params)
    assert params["window_ms"]["default"] == 500.0
    assert params["balancer"]["default"] == "round_robin"
    assert params["balancer"]["choices"] == ["round_robin", "shortest_queue"]
    ms = {p["name"]: p for p in entries["model_switching"]["params"]}
    assert ms["models"]["required"]


def test_ramsis_round_robin_and_policy_models(profile, policies):
    res = servelab.simulate(scenario(profile), scheduler=ramsis.scheduler(policies), seed=3)
    res.check_consistency()
    c = res.columns
    assert (c["status"] == COMPLETED).all()
    # Round-robin: the i-th query goes to worker i mod K.
    np.testing.assert_array_equal(c["worker"], np.arange(len(c["worker"])) % WORKERS)
    names = np.array(res.meta["models"])[c["model"]]
    assert set(names) <= {"small", "big"}
    assert "big" in set(names)  # a light load leaves slack for the accurate model
    summary = ramsis.summarize(res)
    assert summary["violation_rate"] < 0.01
    assert 0.60 <= summary["accuracy_per_satisfied_query"] <= 0.90  # a fraction
    # One unit per name: the same fraction as Result.summary() gives.
    assert summary["accuracy_per_satisfied_query"] == pytest.approx(
        res.summary()["accuracy_per_satisfied_query"]
    )
    assert res.meta["scheduler"].startswith("ramsis(policies='<PolicySet>'")


def queued_at_arrival(c) -> np.ndarray:
    """(query, worker) -> queries queued at that worker when the query arrived: assigned to it
    earlier and not yet dispatched."""
    n, k = len(c["worker"]), int(c["worker"].max()) + 1
    out = np.zeros((n, k), dtype=np.int64)
    for i in range(n):
        earlier = slice(0, i)
        waiting = c["dispatch_ns"][earlier] > c["arrival_ns"][i]
        out[i] = np.bincount(c["worker"][earlier][waiting], minlength=k)
    return out


def test_ramsis_shortest_queue_first_when_its_policies_model_it(profile):
    # Appendix I: policies generated for shortest-queue-first make the scheduler send each query
    # to a worker with the fewest queued queries; round-robin policies keep i mod K.
    table = _core.ramsis.LatencyTable.from_profile(profile, "cpu", ["small", "big"], "p95")
    sqf = _core.ramsis.generate_policy_set(
        table, [20.0, 100.0, 300.0], slo_ms=SLO_MS, workers=WORKERS, max_queue=16,
        max_accuracy_gap=0.0, balancer="shortest_queue",
    )  # fmt: skip
    assert {p.balancer for p in sqf.policies} == {"shortest_queue"}
    res = servelab.simulate(scenario(profile, rate=250.0), scheduler=ramsis.scheduler(sqf), seed=3)
    res.check_consistency()
    c = res.columns
    assert (c["status"] == COMPLETED).all()
    queued = queued_at_arrival(c)
    chosen = queued[np.arange(len(queued)), c["worker"]]
    np.testing.assert_array_equal(chosen, queued.min(axis=1))
    assert (queued.max(axis=1) > 0).any()  # queues did differ: the rule was exercised
    assert not np.array_equal(c["worker"], np.arange(len(c["worker"])) % WORKERS)
    # The registered entry generates shortest-queue-first policies on request: the same records.
    named = servelab.simulate(
        scenario(profile, rate=250.0),
        scheduler="ramsis(balancer='shortest_queue', loads=[20, 100, 300])", seed=3,
    )  # fmt: skip
    assert named.meta["scheduler"] == "ramsis(policies='', load_qps=0, window_ms=500)"
    queued = queued_at_arrival(named.columns)
    chosen = queued[np.arange(len(queued)), named.columns["worker"]]
    np.testing.assert_array_equal(chosen, queued.min(axis=1))


def test_ramsis_same_seed_same_records_and_load_changes_choices(profile, policies):
    a = servelab.simulate(scenario(profile), scheduler=ramsis.scheduler(policies), seed=1)
    b = servelab.simulate(scenario(profile), scheduler=ramsis.scheduler(policies), seed=1)
    for key in a.columns:
        np.testing.assert_array_equal(a.columns[key], b.columns[key], err_msg=key)
    heavy = servelab.simulate(
        scenario(profile, rate=280.0), scheduler=ramsis.scheduler(policies), seed=1
    )
    light_acc = ramsis.summarize(a)["accuracy_per_satisfied_query"]
    heavy_acc = ramsis.summarize(heavy)["accuracy_per_satisfied_query"]
    assert heavy_acc < light_acc  # more load, less slack, faster models


def test_ramsis_from_a_json_file_and_generated_by_default(profile, policies, tmp_path):
    path = tmp_path / "set.json"
    path.write_text(policies.to_json())
    from_file = servelab.simulate(
        scenario(profile), scheduler=f"ramsis(policies='{path}', load_qps=100)", seed=2
    )
    from_object = servelab.simulate(
        scenario(profile), scheduler=ramsis.scheduler(policies, load_qps=100), seed=2
    )
    np.testing.assert_array_equal(from_file.columns["model"], from_object.columns["model"])
    generated = servelab.simulate(scenario(profile), scheduler="ramsis(loads=[20, 100, 300])")
    generated.check_consistency()
    assert generated.meta["scheduler"].startswith("ramsis(policies=''")
    assert ramsis.summarize(generated)["violation_rate"] < 0.01


def test_jellyfish_and_model_switching(profile):
    jf = servelab.simulate(scenario(profile), scheduler=ramsis.jellyfish(loads=[20, 100, 300]))
    jf.check_consistency()
    # 100 queries/s over 4 workers: 25 each -> "big" cannot sustain it within 50 ms -> "small".
    known = servelab.simulate(
        scenario(profile), scheduler=ramsis.jellyfish(load_qps=100.0, slo_ms=SLO_MS)
    )
    assert set(np.array(known.meta["models"])[known.columns["model"]]) == {"small"}
    quiet = servelab.simulate(
        scenario(profile, rate=20.0, count=300),
        scheduler=ramsis.jellyfish(load_qps=20.0, slo_ms=SLO_MS),
    )
    assert set(np.array(quiet.meta["models"])[quiet.columns["model"]]) == {"big"}
    assert ramsis.jellyfish_rule(
        profile, ["small", "big"], slo_ms=SLO_MS, load_qps=20.0, workers=WORKERS, hardware="cpu"
    ) == ("big", 1)
    ms = servelab.simulate(
        scenario(profile), scheduler=ramsis.model_switching({50: "big", 300: "small"})
    )
    ms.check_consistency()
    by_spec = servelab.simulate(
        scenario(profile), scheduler="model_switching(loads=[50, 300], models='big,small')"
    )
    np.testing.assert_array_equal(ms.columns["model"], by_spec.columns["model"])


def test_model_switching_table_is_deterministic_across_threads(profile):
    kw = dict(workers=WORKERS, slo_ms=SLO_MS, loads=[20, 150, 2000], duration_s=20, hardware="cpu")
    one = ramsis.model_switching_table(profile, ["small", "big"], threads=1, **kw)
    two = ramsis.model_switching_table(profile, ["small", "big"], threads=2, **kw)
    assert one["models"] == two["models"] == ["big", "small", "small"]
    np.testing.assert_array_equal(one["violation"], two["violation"])
    assert one["violation"].shape == (3, 2)
    assert not one["simulated"][2].any()  # nothing sustains 2000/s: no simulation needed


def test_ramsis_runs_in_the_serving_loop(profile, policies):
    real = servelab.serve(
        scenario(profile, rate=100.0, count=40), scheduler=ramsis.scheduler(policies)
    )
    assert real.meta["world"] == "serve"
    real.check_consistency()
    assert len(real) == 40


def test_twitter_style_trace_as_arrivals(tmp_path):
    path = tmp_path / "trace.txt"
    path.write_text("0 100\n10 200\n20 300\n")
    lt = ramsis.read_load_trace(path)
    assert lt.interval_s == 10.0
    per_second = lt.per_second()
    assert len(per_second) == 21 and per_second[9] == 100 and per_second[10] == 200
    assert per_second[20] == 300  # the last load holds for one second
    artifact = lt.arrivals("artifact", 30.0)
    n = len(_core.Workload(artifact, [_core.Application("q", slo_s=0.1)], horizon_s=30.0)
            .generate(seed=0)["id"])  # fmt: skip
    assert abs(n - lt.expected_queries("artifact", 30.0)) < 4 * np.sqrt(n)
    stretched = lt.arrivals("stretched", 60.0)
    assert stretched.time_scale == pytest.approx(2.0)
    assert lt.expected_queries("stretched", 60.0) == pytest.approx(200 * 60)


def test_bad_input_is_a_clear_error(profile, policies, tmp_path):
    with pytest.raises(ValueError, match="policies"):
        ramsis.scheduler(None)
    with pytest.raises(ValueError, match="neither a PolicySet"):
        ramsis.scheduler(12)
    with pytest.raises(RuntimeError, match="cannot open"):
        servelab.make_scheduler("ramsis(policies='/nonexistent/set.json')")
    with pytest.raises(ValueError, match="load_qps"):
        ramsis.scheduler(policies, load_qps=-1)
    with pytest.raises(ValueError, match="ascending"):
        ramsis.jellyfish(loads=[200, 100])
    with pytest.raises(ValueError, match="one model per load"):
        ramsis.model_switching({"loads": [1, 2], "models": ["big"]})
    with pytest.raises(KeyError):
        servelab.simulate(scenario(profile), scheduler=ramsis.model_switching({100: "nope"}))
    with pytest.raises(ValueError, match="workers"):
        ramsis.model_switching_table(profile, workers=0, slo_ms=SLO_MS, loads=[10], hardware="cpu")
    with pytest.raises(ValueError, match="slo"):
        ramsis.model_switching_table(profile, workers=1, slo_ms=0, loads=[10], hardware="cpu")
    bad = tmp_path / "bad.txt"
    bad.write_text("0 100\n10 x\n")
    with pytest.raises(ValueError, match=r"bad\.txt:2"):
        ramsis.read_load_trace(bad)
    with pytest.raises(ValueError, match="mode"):
        ramsis.read_load_trace(_ok_trace(tmp_path)).arrivals("x")
    empty = tmp_path / "policy_gen"
    empty.mkdir()
    (empty / "test_rate-0.0002_pi.json").write_text(json.dumps({"-1": 12}))
    with pytest.raises(ValueError, match="model number 12"):
        ramsis.read_policy_gen(empty, ["a", "b"])
    with pytest.raises(KeyError, match="audio"):
        ramsis.get_task("audio", tmp_path)
    with pytest.raises(FileNotFoundError, match="derived"):
        ramsis.data_dir(tmp_path)


def _ok_trace(tmp_path):
    path = tmp_path / "ok.txt"
    path.write_text("0 100\n10 200\n")
    return path


# --- policy and trace files: checked in Python, errors name the path (and line) -----------------

POLICY_READERS = [
    pytest.param(ramsis.load, id="ramsis.load"),
    pytest.param(ramsis.scheduler, id="ramsis.scheduler(path)"),
]


@pytest.mark.parametrize("read", POLICY_READERS)
def test_policy_file_errors_name_the_path(read, tmp_path):
    missing = tmp_path / "missing.json"
    with pytest.raises(FileNotFoundError, match=rf"^RAMSIS policy JSON file {missing} does not"):
        read(missing)
    with pytest.raises(IsADirectoryError, match=rf"^{tmp_path}: is a directory, expected a RAMSIS"):
        read(tmp_path)
    binary = tmp_path / "random.json"
    binary.write_bytes(bytes([0x7B, 0x0A, 0xC3, 0x28]) + bytes(range(200, 256)))
    with pytest.raises(ValueError, match=rf"^{binary}:2: not UTF-8 text \(byte 2\)"):
        read(binary)
    # 100,000 levels crashed the C++ parser: the depth is checked before it sees the text.
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(ValueError, match=rf"^{deep}:1: nesting is too deep: more than 64 levels"):
        read(deep)


def test_policy_load_names_the_file_of_a_bad_document(policies, tmp_path):
    path = tmp_path / "set.json"
    ramsis.save(policies, path)
    np.testing.assert_array_equal(ramsis.load(path).loads_qps, policies.loads_qps)
    path.write_text("{}")
    with pytest.raises(ValueError, match=rf"^{path}: "):
        ramsis.load(path)
    with pytest.raises(ValueError, match=r"^policy JSON:1: nesting is too deep"):
        ramsis.from_json("[" * 1000 + "]" * 1000)


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "1e999"])
@pytest.mark.parametrize("line", [1, 2])
def test_load_trace_non_finite_time_names_file_and_line(tmp_path, value, line):
    rows = ["0 100", "10 200", "20 300"]
    rows[line - 1] = f"{value} 100"
    path = tmp_path / "trace.txt"
    path.write_text("\n".join(rows) + "\n")
    with pytest.raises(ValueError, match=rf"^{path}:{line}: t_seconds={value} must be a finite"):
        ramsis.read_load_trace(path)


def test_policy_gen_file_errors_name_the_file(tmp_path):
    folder = tmp_path / "policy_gen"
    folder.mkdir()
    path = folder / "test_rate-0.0002_pi.json"
    path.write_text('{"-1": 1,\n "-1": 2}')
    with pytest.raises(ValueError, match=rf'^{path}:2: duplicate key "-1" in one object'):
        ramsis.read_policy_gen(folder, ["a", "b"])
    path.write_text('{"-1": "fast"}')
    with pytest.raises(ValueError, match=rf"^{path}: \"-1\"='fast' is not a model number"):
        ramsis.read_policy_gen(folder, ["a", "b"])
    path.write_text('{"-1": [1]}')
    with pytest.raises(ValueError, match=rf'^{path}: expected {{"-1": <model number>}}, got'):
        ramsis.read_policy_gen(folder, ["a", "b"])
