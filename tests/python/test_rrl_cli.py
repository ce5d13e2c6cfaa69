"""`servelab rrl tune|simulate`: JSON output and one-line errors."""

import json
import subprocess
import sys

import pytest


def servelab(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "servelab.cli", *args], capture_output=True, text=True, timeout=120
    )


def test_tune_prints_both_methods_as_json():
    proc = servelab(
        "rrl",
        "tune",
        "--cores",
        "4",
        "--rate",
        "3",
        "--steps",
        "200",
        "--episode-requests",
        "50",
        "--json",
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["size"] == 64
    assert [r["method"] for r in out["runs"]] == ["rrl", "qlearning", "capes", "deeprm"]
    assert all("oracle_config" in r and "converged_step" in r for r in out["runs"])


def test_tune_on_two_processes_prints_the_same_runs():
    args = ("rrl", "tune", "--cores", "2", "--rate", "3", "--steps", "100", "--json")
    outs = [servelab(*args, "--processes", n) for n in ("1", "2")]
    assert all(p.returncode == 0 for p in outs), [p.stderr for p in outs]
    runs = [json.loads(p.stdout)["runs"] for p in outs]
    for run in (*runs[0], *runs[1]):
        del run["median_learn_us"]  # measured wall time
    assert runs[0] == runs[1]


def test_simulate_a_configuration_and_the_oracle():
    base = ("rrl", "simulate", "--cores", "4", "--rate", "3", "--episodes", "5", "--json")
    proc = servelab(*base, "--config", "2,1,2")
    assert proc.returncode == 0, proc.stderr
    one = json.loads(proc.stdout)
    assert one["config"] == "workers=2, inter_op=1, intra_op=2" and one["mean_ms"] > 0
    proc = servelab(*base, "--oracle")
    best = json.loads(proc.stdout)
    assert best["mean_ms"] <= one["mean_ms"] * 1.05  # the oracle is scored noise-free


def test_tune_text_output_names_the_oracle():
    proc = servelab(
        "rrl", "tune", "--cores", "3", "--rate", "2", "--steps", "100", "--method", "rrl"
    )
    assert proc.returncode == 0, proc.stderr
    assert "oracle's" in proc.stdout


@pytest.mark.parametrize(
    "args, message",
    [
        (("simulate", "--cores", "4", "--rate", "3", "--config", "9,1,1"), "workers=9"),
        (("simulate", "--cores", "4", "--rate", "3"), "exactly one of --config and --oracle"),
        (("tune", "--cores", "4", "--rate", "3", "--objective", "slo"), "needs slo_ms"),
        (
            ("tune", "--space", "gpu", "--cores", "4", "--rate", "3"),
            "--cores applies to --space cpu",
        ),
        (("tune", "--cores", "4", "--rate", "-3"), "--rate"),
    ],
)
def test_bad_input_is_one_line(args, message):
    proc = servelab("rrl", *args)
    assert proc.returncode == 2
    assert message in proc.stderr and proc.stderr.count("\n") == 1, proc.stderr
