"""A scenario names a trace file instead of listing its points: `replay` (arrival timestamps)
and `piecewise_rate` ('t rate' lines) take a `path`, relative to the scenario file's folder,
and a Result's meta keeps the path, not the points."""

import json

import numpy as np
import pytest

import servelab

SCENARIO = """
profile: example:hetero_cpu_gpu
workers:
  - {hardware: g4dn.xlarge, count: 1}
  - {hardware: c5n.2xlarge, count: 2}
workload:
  arrivals: ARRIVALS
  count: 100000  # more than the trace holds: it ends with the trace
  apps:
    - {name: rm2, slo_ms: 350, sizes: kairos_mix}
scheduler: jsq
"""


def write_trace(folder, times_s) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    lines = ["timestamp_ms"] + [f"{1000 * t:.3f}" for t in times_s]
    (folder / "arrivals.csv").write_text("\n".join(lines) + "\n")


def scenario_file(folder, arrivals: str):
    path = folder / "scenario.yaml"
    path.write_text(SCENARIO.replace("ARRIVALS", arrivals))
    return path


@pytest.fixture
def times():
    return np.cumsum(np.random.default_rng(3).exponential(1 / 40, size=2000))


@pytest.mark.parametrize(
    "arrivals",
    ["{name: replay, path: traces/arrivals.csv, unit: ms}",
     "\"replay(path='traces/arrivals.csv', unit='ms')\""],
    ids=["dict", "spec string"],
)  # fmt: skip
def test_a_replay_trace_file_relative_to_the_scenario(tmp_path, monkeypatch, times, arrivals):
    write_trace(tmp_path / "exp" / "traces", times)
    path = scenario_file(tmp_path / "exp", arrivals)
    monkeypatch.chdir(tmp_path)  # not the scenario's folder: the path is the file's
    r = servelab.simulate(str(path))
    assert len(r) == len(times)
    np.testing.assert_allclose(np.sort(r.columns["arrival_ns"]) / 1e9, times, atol=1e-6)
    kept = r.meta["scenario"]["workload"]["arrivals"]
    expected = str((tmp_path / "exp" / "traces" / "arrivals.csv").resolve())
    assert kept == {"name": "replay", "path": expected, "unit": "ms"}
    assert len(json.dumps(r.meta["scenario"])) < 1000  # the path, not 2,000 points
    # meta replays the run from anywhere
    monkeypatch.chdir(tmp_path / "exp")
    again = servelab.simulate(r.meta["scenario"])
    np.testing.assert_array_equal(again.columns["finish_ns"], r.columns["finish_ns"])


def test_the_same_points_inline_give_the_same_run(tmp_path, times):
    write_trace(tmp_path, times)
    from_file = servelab.simulate(
        str(scenario_file(tmp_path, "{name: replay, path: arrivals.csv, unit: ms}"))
    )
    points = (np.round(times * 1000, 3) / 1000).tolist()  # as the file writes them, in seconds
    inline = json.dumps({"name": "replay", "timestamps_s": points})
    inline_run = servelab.simulate(str(scenario_file(tmp_path, inline)))
    np.testing.assert_array_equal(from_file.columns["arrival_ns"], inline_run.columns["arrival_ns"])
    np.testing.assert_array_equal(from_file.columns["finish_ns"], inline_run.columns["finish_ns"])


def test_a_rate_trace_file_and_per_application_arrivals(tmp_path):
    (tmp_path / "rates.txt").write_text("0 20\n10 60\n20 30\n")
    scenario = {
        "profile": "example:hetero_cpu_gpu",
        "workers": [{"hardware": "g4dn.xlarge", "count": 2}],
        "workload": {
            "horizon_s": 30,
            "apps": [
                {"name": "a", "slo_ms": 350,
                 "arrivals": {"name": "piecewise_rate", "path": "rates.txt", "time_scale": 1.0}},
                {"name": "b", "slo_ms": 350, "arrivals": "poisson(rate=5)"},
            ],
        },
    }  # fmt: skip
    sc = servelab.Scenario.from_dict(scenario, folder=tmp_path)
    r = servelab.simulate(sc)
    per_app = r.summary(by="app")
    assert 800 < per_app["a"]["queries"] < 1400  # about 20*10 + 60*10 + 30*10 = 1100
    kept = r.meta["scenario"]["workload"]["apps"][0]["arrivals"]
    assert kept["path"] == str((tmp_path / "rates.txt").resolve())


def test_trace_file_errors_name_the_key(tmp_path, times):
    write_trace(tmp_path, times)
    missing = scenario_file(tmp_path, "{name: replay, path: nowhere.csv}")
    with pytest.raises(ValueError, match=r"workload\.arrivals\.path='nowhere\.csv' is not a file"):
        servelab.load_scenario(missing)
    both = scenario_file(tmp_path, "{name: replay, path: arrivals.csv, timestamps_s: [1, 2]}")
    with pytest.raises(KeyError, match="unknown key 'timestamps_s'.*replaces the inline list"):
        servelab.load_scenario(both)
    unit = scenario_file(tmp_path, "{name: replay, path: arrivals.csv, unit: hours}")
    with pytest.raises(ValueError, match=r"workload\.arrivals\.unit='hours' must be one of"):
        servelab.load_scenario(unit)
    (tmp_path / "bad.csv").write_text("0.5\n0.25\n")  # goes back in time
    bad = scenario_file(tmp_path, "{name: replay, path: bad.csv}")
    with pytest.raises(ValueError, match=r"workload\.arrivals: .*bad\.csv"):
        servelab.simulate(str(bad))
