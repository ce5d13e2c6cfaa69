"""RAMSIS's experiment harness: every run is a servelab Scenario that replays in both worlds.

A synthetic task (no shared data needed): a fast inaccurate model ("small": 10 + 2b ms, accuracy
0.6) and a slow accurate one ("big": 40 + 10b ms, accuracy 0.9), batches 1..32, SLO 100 ms.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import servelab
from servelab import _core, ramsis
from servelab.ramsis.cache import BoundedCache, stored_file

SLO_MS = 100.0
WORKERS = 4
LOADS = [20.0, 100.0, 300.0]


@pytest.fixture(scope="module")
def task() -> ramsis.TaskData:
    p = servelab.Profile("synthetic two-model task")
    p.set_price("cloud_cpu", 0.0)
    for b in range(1, 33):
        p.set_latency("cloud_cpu", "small", b, samples_s=[(10 + 2 * b) / 1e3])
        p.set_latency("cloud_cpu", "big", b, samples_s=[(40 + 10 * b) / 1e3])
    p.set_accuracy("small", 0.6)
    p.set_accuracy("big", 0.9)
    table = _core.ramsis.LatencyTable.from_profile(p, "cloud_cpu", ["small", "big"], "p95")
    return ramsis.TaskData("q", ("small", "big"), table, p, (SLO_MS,), 95)


@pytest.fixture
def trace_file(tmp_path):
    path = tmp_path / "trace.txt"
    path.write_text("0 40\n2 200\n4 120\n")
    return path


def same_records(a: servelab.Result, b: servelab.Result) -> None:
    assert set(a.columns) == set(b.columns)
    for key in a.columns:
        np.testing.assert_array_equal(a.columns[key], b.columns[key], err_msg=key)


def test_a_run_replays_from_its_scenario_in_both_worlds(task, tmp_path):
    run = ramsis.run_experiment(
        task, "ramsis", WORKERS, load=100.0, duration_s=5, seed=4, cache_dir=tmp_path
    )
    scenario = run.result.meta["scenario"]
    assert scenario is run.scenario
    assert scenario["scheduler"].startswith(f"ramsis(policies='{tmp_path}")
    assert scenario["profile"].startswith(str(tmp_path))
    assert scenario["workload"]["arrivals"] == {"name": "poisson", "rate": 100.0}
    # Plain data: through a JSON file (`servelab simulate run.json`), the same records again.
    path = tmp_path / "run.json"
    path.write_text(json.dumps(scenario))
    again = servelab.simulate(path)
    same_records(run.result, again)
    assert again.meta["scheduler"] == run.result.meta["scheduler"]
    # The same scenario in the serving loop, on a workload small enough to wait for.
    tiny = {"arrivals": "poisson(rate=100)", "count": 40, "apps": [{"name": "q", "slo_ms": SLO_MS}]}
    real = servelab.serve(scenario, workload=tiny)
    assert real.meta["world"] == "serve"
    real.check_consistency()
    assert len(real) == 40
    sim = servelab.simulate(scenario, workload=tiny)
    assert set(np.array(sim.meta["models"])[sim.columns["model"]]) <= {"small", "big"}


def test_shortest_queue_first_end_to_end(task, tmp_path):
    # balancer= reaches the policies (generated for shortest-queue-first, written to the file the
    # scenario names) and so the scheduler: the runs differ from round-robin's i mod K, and the
    # scenario replays them.
    runs = {
        b: ramsis.run_experiment(
            task,
            "ramsis",
            WORKERS,
            load=250.0,
            duration_s=5,
            seed=4,
            cache_dir=tmp_path,
            balancer=b,
        )  # fmt: skip
        for b in ("round_robin", "shortest_queue")
    }
    for b, run in runs.items():
        path = run.scenario["scheduler"].split("'")[1]
        assert json.loads(Path(path).read_text())["policies"][0]["balancer"] == b
        same_records(run.result, servelab.simulate(run.scenario))
    workers = {b: run.result.columns["worker"] for b, run in runs.items()}
    order = np.arange(len(workers["round_robin"])) % WORKERS
    np.testing.assert_array_equal(workers["round_robin"], order)
    assert not np.array_equal(workers["shortest_queue"], order[: len(workers["shortest_queue"])])
    assert runs["shortest_queue"].summary["violation_rate"] < 0.01
    with pytest.raises(ValueError, match="balancer"):
        ramsis.run_experiment(
            task, "ramsis", WORKERS, load=250.0, duration_s=1, cache_dir=tmp_path, balancer="nope"
        )


@pytest.mark.parametrize("method", ["ramsis", "jellyfish", "model_switching"])
def test_every_method_on_a_trace_is_a_replayable_scenario(task, trace_file, tmp_path, method):
    run = ramsis.run_experiment(
        task, method, WORKERS, trace=trace_file, duration_s=8, loads=LOADS, ms_duration_s=5,
        cache_dir=tmp_path,
    )  # fmt: skip
    arrivals = run.scenario["workload"]["arrivals"]
    assert arrivals["name"] == "piecewise_rate" and arrivals["repeat"] is True
    assert arrivals["rates"][:3] == [40.0, 40.0, 200.0]  # one rate per second (the artifact's)
    assert run.trace == "trace.txt (artifact)" and run.method == method
    same_records(run.result, servelab.simulate(run.scenario))
    stretched = ramsis.experiment_scenario(
        task, "jellyfish", WORKERS, trace=trace_file, duration_s=12, trace_mode="stretched"
    )
    assert stretched.workload["arrivals"]["time_scale"] == pytest.approx(2.0)


def test_the_scenario_runs_the_schedulers_the_objects_would(task, tmp_path):
    """The harness's spec strings build the same schedulers as the scheduler objects."""
    policies = ramsis.ramsis_policies(task, slo_ms=SLO_MS, workers=WORKERS, loads=LOADS)
    for spec, obj in [
        (ramsis.ramsis_spec(policies, cache_dir=tmp_path), ramsis.scheduler(policies)),
        (ramsis.jellyfish_spec(loads=LOADS), ramsis.jellyfish(loads=LOADS)),
        (
            ramsis.model_switching_spec({20: "big", 300: "small"}),
            ramsis.model_switching({20: "big", 300: "small"}),
        ),
    ]:
        by_spec = ramsis.run_experiment(task, spec, WORKERS, load=150.0, duration_s=4, seed=1)
        by_object = ramsis.run_experiment(task, obj, WORKERS, load=150.0, duration_s=4, seed=1)
        same_records(by_spec.result, by_object.result)
        assert by_spec.method == by_spec.result.meta["scheduler"]


def test_summary_extends_result_summary_in_fractions(task, tmp_path):
    run = ramsis.run_experiment(
        task, "ramsis", WORKERS, load=250.0, duration_s=5, cache_dir=tmp_path
    )
    base = run.result.summary()
    assert {k: run.summary[k] for k in base} == base
    assert set(run.summary) - set(base) == {"violation_rate", "mean_batch", "sim_seconds"}
    c = run.result.columns
    served = c["status"] == 0
    late = (served & (c["finish_ns"] > c["deadline_ns"])).sum()
    assert run.summary["violation_rate"] == late / served.sum()
    assert 0.6 <= run.summary["accuracy_per_satisfied_query"] <= 0.9  # a fraction
    assert run.summary["mean_batch"] >= 1
    row = run.row()
    assert set(row) >= {"method", "workers", "load_qps", "violation_rate", "slo_violation_rate"}
    assert all(not isinstance(v, dict | list) for v in row.values())  # flat, for tables


def test_policy_files_are_named_by_their_content(task, tmp_path):
    policies = ramsis.ramsis_policies(task, slo_ms=SLO_MS, workers=WORKERS, loads=LOADS)
    path = ramsis.policy_file(policies, cache_dir=tmp_path)
    assert path.parent == tmp_path and path.read_text() == policies.to_json()
    assert ramsis.policy_file(policies, cache_dir=tmp_path) == path  # same content, same file
    other = ramsis.ramsis_policies(task, slo_ms=SLO_MS, workers=WORKERS, loads=LOADS[:2])
    assert ramsis.policy_file(other, cache_dir=tmp_path) != path
    # made once per configuration (keyed by value: an equal task shares it)
    twin = ramsis.TaskData(task.name, task.models, task.table, task.profile, task.slos_ms, 95)
    assert twin.digest == task.digest
    assert ramsis.ramsis_policies(twin, slo_ms=SLO_MS, workers=WORKERS, loads=LOADS) is policies
    # a given file is named as it is, after the same checks as any policy file
    spec = ramsis.ramsis_spec(path, load_qps=100)
    assert spec == f"ramsis(policies='{path}', load_qps=100.0, window_ms=500.0)"
    with pytest.raises(FileNotFoundError, match="missing.json"):
        ramsis.ramsis_spec(tmp_path / "missing.json")


def test_cache_helpers(tmp_path):
    first = stored_file('{"a": 1}', kind="x", cache_dir=tmp_path)
    assert first.name.startswith("x-") and first.read_text() == '{"a": 1}'
    assert stored_file('{"a": 1}', kind="x", cache_dir=tmp_path) == first
    assert not list(tmp_path.glob(".*.tmp"))  # no temporary file left behind
    cache = BoundedCache(maxsize=2)
    made = []
    for key in ("a", "b", "a", "c", "b"):
        cache.get(key, lambda key=key: made.append(key) or key.upper())
    assert made == ["a", "b", "c", "b"] and len(cache) == 2  # "b" was the least recently used


def test_bad_experiments_are_clear_errors(task, tmp_path):
    with pytest.raises(ValueError, match="exactly one of load"):
        ramsis.run_experiment(task, "ramsis", WORKERS)
    with pytest.raises(ValueError, match="workers"):
        ramsis.run_experiment(task, "ramsis", 0, load=10.0)
    with pytest.raises(KeyError, match="nope"):
        ramsis.method_spec("nope", task, workers=WORKERS, slo_ms=SLO_MS, load=10.0)
    with pytest.raises(ValueError, match="one model per load"):
        ramsis.model_switching_spec({"loads": [1, 2], "models": ["big"]})
    quoted = tmp_path / 'it\'s "quoted".json'
    quoted.write_text("{}")
    with pytest.raises(ValueError, match="both quote characters"):
        ramsis.ramsis_spec(quoted)
