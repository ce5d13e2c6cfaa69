"""The CLI's simulate/schedulers subcommands and the main job (`servelab demo`)."""

import json
import subprocess
import sys

import servelab


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "servelab", *args], capture_output=True, text=True, timeout=600
    )


def test_help_lists_the_subcommands():
    proc = _cli("--help")
    assert proc.returncode == 0
    for sub in ("info", "demo", "simulate", "serve", "schedulers", "smoke"):
        assert sub in proc.stdout


def test_simulate_json_carries_summary_and_scenario():
    proc = _cli("simulate", "default", "--scheduler", "jsq", "--seed", "3", "--json")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["scenario"]["scheduler"] == "jsq"
    assert out["scenario"]["seed"] == 3
    assert out["summary"]["queries"] == out["scenario"]["workload"]["count"]
    same = servelab.simulate("default", scheduler="jsq", seed=3).summary()
    assert out["summary"]["latency_ms"] == same["latency_ms"]


def test_simulate_missing_scenario_is_a_clear_error():
    proc = _cli("simulate", "no-such-scenario.yaml")
    assert proc.returncode == 2
    assert "no-such-scenario.yaml" in proc.stderr


def test_schedulers_lists_every_generic_policy():
    proc = _cli("schedulers", "--json")
    names = {e["name"] for e in json.loads(proc.stdout)}
    assert {"fcfs", "round_robin", "random", "jsq", "least_finish_time", "edf", "batching"} <= names


def test_main_job_writes_plots_and_a_consistent_summary(tmp_path):
    proc = _cli("demo", "--out", str(tmp_path), "--queries", "3000", "--serve-s", "1", "--json")
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert set(summary["summaries"]) == set(servelab.main_job.SCHEDULERS)
    for s in summary["summaries"].values():
        assert s["queries"] == 3000
    assert all(rate >= 0 for rate in summary["allowable_throughput"].values())
    # Heterogeneity-aware placement sustains more load than strict FCFS on this cluster.
    rates = summary["allowable_throughput"]
    assert rates["least_finish_time"] > rates["fcfs(prefer='g4dn.xlarge')"]
    assert {p.name for p in tmp_path.glob("*.png")} >= {"latency_cdf.png", "cost_vs_goodput.png"}
    assert (tmp_path / "summary.json").exists()
    assert (tmp_path / "sim_vs_serve" / "latency_cdf.png").stat().st_size > 0
