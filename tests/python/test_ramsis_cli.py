"""`servelab ramsis policy | evaluate | simulate`, with --json (reads ../shared/data/ramsis)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import servelab
from servelab import _core
from servelab.cli import main

from .cli_errors import run_main, run_process
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
    # Each row carries the scenario that replays its run (`servelab simulate row.json`).
    replay = servelab.simulate(trace["scenario"])
    assert replay.meta["scheduler"] == trace["scheduler"]
    assert replay.summary()["queries"] == trace["queries"]
    assert main(["ramsis", "simulate", "--data", data, "--load", "1000", "--duration-s", "5"]) == 0
    assert "accuracy %" in capsys.readouterr().out
    (sqf,) = run_json(capsys, "simulate", "--data", data, "--workers", "60", "--load", "2000",
                      "--duration-s", "5", "--balancer", "shortest_queue")  # fmt: skip
    policies = json.loads(Path(sqf["scheduler"].split("'")[1]).read_text(encoding="utf-8"))
    assert {p["balancer"] for p in policies["policies"]} == {"shortest_queue"}


def test_bad_arguments_are_reported(capsys, data, tmp_path):
    assert main(["ramsis", "simulate", "--data", data]) == 2
    assert "exactly one of --load and --trace" in capsys.readouterr().err
    assert main(["ramsis", "simulate", "--data", str(tmp_path), "--load", "10"]) == 2
    assert "derived" in capsys.readouterr().err
    assert main(["ramsis", "policy", "--data", data, "--slo-ms", "5", "--load", "100"]) == 2
    assert "error" in capsys.readouterr().err
    assert main(["ramsis", "policy", "--data", data, "--loads", "1:x"]) == 2
    assert "argument --loads: loads='1:x'" in capsys.readouterr().err


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


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["policy", "--workers", "0"], "argument --workers: must be a positive integer, got 0"),
        (["policy", "--workers", str(2**31)], "argument --workers: must be at most 2147483647"),
        (["policy", "--load", "-5"], "argument --load: must be a positive number, got -5"),
        (["policy", "--load", "inf"], "argument --load: must be a finite number, got inf"),
        (["policy", "--slo-ms", "0"], "argument --slo-ms: must be a positive number, got 0"),
        (["policy", "--intervals", "0"], "argument --intervals: must be a positive integer"),
        (["policy", "--max-gap", "-1"], "argument --max-gap: must be a non-negative number"),
        (["policy", "--loads", "100,-5"], "argument --loads: loads='100,-5': give"),
        (["policy", "--loads", "1:1e9:1"], "1000000000 loads, more than 10000"),
        (["policy", "--loads", "5:1:1"], "argument --loads: loads='5:1:1': no load in it"),
        (["evaluate", "--duration-s", "0"], "argument --duration-s: must be a positive number"),
        (["evaluate", "--seed", "-1"], "argument --seed: must be a non-negative integer, got -1"),
        (["simulate", "--threads", "0"], "argument --threads: must be a positive integer, got 0"),
        (["simulate", "--duration-s", "-3"], "argument --duration-s: must be a positive number"),
        (["simulate", "--seed", "-2"], "argument --seed: must be a non-negative integer, got -2"),
    ],
)
def test_bad_numbers_are_refused_by_the_parser(capsys, argv, expected):
    run_main(capsys, ["ramsis", *argv], expected)


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["policy", "--load", "100", "--max-gap", "1"], "--max-gap needs --loads"),
        (["policy", "--load", "100", "--discretisation", "md", "--intervals", "50"],
         "--intervals cannot be combined with --discretisation md"),
        (["evaluate", "--load", "100", "--seed", "3"], "--seed needs --simulate"),
        (["evaluate", "--load", "100", "--duration-s", "5"], "--duration-s needs --simulate"),
        (["evaluate", "--load", "100", "--cache-dir", "c"], "--cache-dir needs --simulate"),
        (["simulate", "--load", "100", "--trace-mode", "stretched"], "--trace-mode needs --trace"),
        (["simulate", "--load", "100", "--method", "jellyfish", "--policies", "set.json"],
         "--policies cannot be combined with --method jellyfish"),
        (["simulate", "--load", "100", "--method", "jellyfish", "--balancer", "shortest_queue"],
         "--balancer cannot be combined with --method jellyfish"),
        (["simulate", "--load", "100", "--policies", "set.json", "--balancer", "round_robin"],
         "--balancer cannot be combined with --policies"),
    ],
)  # fmt: skip
def test_options_that_would_be_ignored_are_refused(capsys, data, argv, expected):
    run_main(capsys, ["ramsis", *argv, "--data", data], expected)


def test_policy_file_errors_name_the_file_and_the_reason(capsys, data, tmp_path):
    evaluate = ["ramsis", "evaluate", "--data", data, "--load", "1000", "--policy"]
    missing = tmp_path / "missing.json"
    line = run_main(capsys, [*evaluate, str(missing)], str(missing))
    assert re.search("no such file|does not exist", line, flags=re.I), line
    assert not line.endswith("error: 2")  # the errno alone
    run_main(capsys, [*evaluate, str(tmp_path)], str(tmp_path), "directory")
    binary = tmp_path / "binary.json"
    binary.write_bytes(b"\x00\xff\xfe" * 100)
    assert "utf-8" in run_main(capsys, [*evaluate, str(binary)], str(binary)).lower()
    simulate = ["ramsis", "simulate", "--data", data, "--load", "1000", "--policies"]
    run_main(capsys, [*simulate, str(missing)], str(missing))


def test_deeply_nested_policies_are_one_line(data, tmp_path):
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    argv = ["ramsis", "evaluate", "--data", data, "--load", "1000", "--policy", str(deep)]
    assert "deep" in run_process(argv, str(deep))
    argv = ["ramsis", "simulate", "--data", data, "--load", "1000", "--policies", str(deep)]
    assert "deep" in run_process(argv, str(deep))


def test_an_unwritable_out_path_names_the_path_and_the_reason(capsys, data, tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    out = blocker / "policy.json"
    argv = ["ramsis", "policy", "--data", data, "--load", "2000", "--out", str(out)]
    run_main(capsys, argv, f"{out}: Not a directory")
