"""`servelab hera ...`: every subcommand with --json, and errors on one line."""

import json
import subprocess
import sys

import pytest


def run(*args):
    return subprocess.run(
        [sys.executable, "-m", "servelab", "hera", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_profile_json_lists_every_model_with_its_class():
    proc = run("profile", "--json", "--curves")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    rows = {r["model"]: r for r in out["models"]}
    assert len(rows) == 8 and rows["dlrm_b"]["scalability"] == "low"
    assert len(rows["ncf"]["workers_curve"]) == 16 and len(rows["ncf"]["ways_curve"]) == 11


def test_affinity_and_schedule_and_simulate():
    proc = run("affinity", "--models", "ncf,dien,dlrm_d,dlrm_b", "--json")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert len(out["affinity"]) == 4 and -1 <= out["pearson"] <= 1

    proc = run("schedule", "--qps", "2000", "--json")
    assert proc.returncode == 0, proc.stderr
    plans = {p["selection"]: p for p in json.loads(proc.stdout)}
    assert plans["hera"]["num_servers"] <= plans["deeprecsys"]["num_servers"]

    proc = run("simulate", "--pair", "dlrm_b", "ncf")
    assert proc.returncode == 0, proc.stderr
    assert "EMU" in proc.stdout

    proc = run("simulate", "--json")
    assert json.loads(proc.stdout)["deeprecsys"]["mean"] == 1.0

    proc = run("simulate", "--fig14", "--models", "dlrm_d,ncf", "--windows", "30", "--json")
    assert proc.returncode == 0, proc.stderr
    runs = json.loads(proc.stdout)
    assert set(runs) == {"hera", "parties"} and len(runs["hera"]["workers_a"]) == 30

    args = ("--fig14", "--managed", "--windows", "12", "--window-s", "0.25", "--json")
    proc = run("simulate", "--models", "dlrm_d,ncf", *args)
    assert proc.returncode == 0, proc.stderr
    fig14 = json.loads(proc.stdout)
    assert set(fig14) == {"hera_rmu", "parties"}
    assert all(len(r["over"]) == 2 and len(r["tail_over_sla"][0]) == 12 for r in fig14.values())

    proc = run("simulate", "--managed", "--models", "dlrm_d,ncf", "--duration-s", "3", "--json")
    assert proc.returncode == 0, proc.stderr
    managed = json.loads(proc.stdout)
    assert set(managed) == {"hera_rmu", "parties"} and managed["hera_rmu"]["emu"] > 0
    # the older scenario: a machine per worker, service times fixed at the start
    proc = run("simulate", "--managed", "--fixed-service", "--duration-s", "2", "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["parties"]["emu"] > 0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("profile", "--models", "ncf,bogus"), "no Table I model 'bogus'"),
        (("profile", "--node", "mainframe"), "node preset 'mainframe' is unknown"),
        (("schedule", "--qps", "1e9", "--max-servers", "10", "--selection", "hera"), "INFEASIBLE"),
        (("profile", "--cores", "1"), "--cores"),
    ],
)
def test_bad_input_is_one_clear_line(args, message):
    proc = run(*args)
    assert proc.returncode != 0
    assert message in proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
