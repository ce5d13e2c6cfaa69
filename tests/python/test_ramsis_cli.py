"""`servelab ramsis policy | evaluate | simulate`, with --json (reads ../shared/data/ramsis)."""

from __future__ import annotations

import json

import pytest

from servelab import _core
from servelab.cli import main

from .shared_data import shared_path


@pytest.fixture(scope="module")
def data() -> str:
    return str(shared_path("ramsis"))


def run_json(capsys, *argv: str):
    assert main(["ramsis", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_policy_one_load_and_a_set(capsys, data, tmp_path):
    out = tmp_path / "policy.json"
    one = run_json(capsys, "policy", "--data", data, "--workers", "60", "--load", "2000",
                   "--out", str(out))  # fmt: skip
    assert one["models"][0] == "shufflenet_v2_x0_5" and len(one["models"]) == 9
    (row,) = one["policies"]
    assert row["feasible"] and row["expected_violation"] < 0.01
    assert 0.7 < row["expected_accuracy"] < 0.8
    policy = _core.ramsis.WorkerPolicy.from_json(out.read_text())
    assert policy.load_qps == 2000.0
    grid = run_json(capsys, "policy", "--data", data, "--task", "text", "--workers", "20",
                    "--loads", "400:1200:400")  # fmt: skip
    assert [p["load_qps"] for p in grid["policies"]] == [400.0, 800.0, 1200.0]
    assert grid["slo_ms"] == 100.0


def test_evaluate_expectation_next_to_simulation(capsys, data, tmp_path):
    out = tmp_path / "policy.json"
    run_json(capsys, "policy", "--data", data, "--load", "1600", "--out", str(out))
    res = run_json(capsys, "evaluate", "--data", data, "--load", "1600", "--policy", str(out),
                   "--simulate", "--duration-s", "20")  # fmt: skip
    assert res["expected_violation"] < 0.01
    # Fig. 7: at a satisfiable load, simulation follows the expectation closely.
    assert abs(res["expected_accuracy"] - res["simulated_accuracy"]) < 0.01


def test_simulate_all_methods_at_a_constant_load_and_on_the_trace(capsys, data):
    rows = run_json(capsys, "simulate", "--data", data, "--method", "all", "--workers", "60",
                    "--load", "2000", "--duration-s", "10")  # fmt: skip
    by = {r["method"]: r for r in rows}
    assert set(by) == {"ramsis", "jellyfish", "model_switching"}
    assert all(r["violation_rate"] < 0.01 for r in rows)
    assert (
        by["ramsis"]["accuracy_per_satisfied_query"]
        > by["jellyfish"]["accuracy_per_satisfied_query"]
    )
    (trace,) = run_json(capsys, "simulate", "--data", data, "--method", "jellyfish",
                        "--workers", "70", "--trace", "--duration-s", "20")  # fmt: skip
    assert trace["trace"].endswith("(artifact)") and trace["queries"] > 30_000
    assert main(["ramsis", "simulate", "--data", data, "--load", "1000", "--duration-s", "5"]) == 0
    assert "accuracy %" in capsys.readouterr().out


def test_bad_arguments_are_reported(capsys, data, tmp_path):
    assert main(["ramsis", "simulate", "--data", data]) == 2
    assert "exactly one of --load and --trace" in capsys.readouterr().err
    assert main(["ramsis", "simulate", "--data", str(tmp_path), "--load", "10"]) == 2
    assert "derived" in capsys.readouterr().err
    assert main(["ramsis", "policy", "--data", data, "--slo-ms", "5", "--load", "100"]) == 2
    assert "error" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["ramsis", "policy", "--data", data, "--loads", "1:x"])


def test_simulation_benchmark_smoke(data):
    """The RAMSIS simulator benchmark at small size (30 s of the trace)."""
    import subprocess
    import sys
    from pathlib import Path

    bench = Path(__file__).parents[2] / "benchmarks" / "python" / "bench_ramsis_sim.py"
    proc = subprocess.run(
        [sys.executable, str(bench), "--smoke", "--data", data],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "ratio vs the artifact's 6 min" in proc.stdout and "RAMSIS / fcfs" in proc.stdout
