import json
import subprocess
import sys

import servelab


def test_build_info_reports_every_backend():
    info = servelab.build_info()
    assert info["version"] == servelab.__version__
    assert info["cxx_standard"] >= 202002
    assert set(info["backends"]) == {"onednn", "torch", "cuda"}
    for name, b in info["backends"].items():
        assert set(b) >= {"compiled", "compiled_version", "usable", "reason", "details"}, name
        assert b["usable"] == (b["reason"] == ""), name
        if not b["compiled"]:
            assert not b["usable"]
    assert info["lp_solver"] == servelab.solvers.lp.backend_version()


def test_developer_build_has_the_lp_solver():
    # requirements/apt.txt installs CBC/CLP, so a developer build must have found them.
    assert servelab.build_info()["lp_solver"].startswith("cbc ")


def test_developer_build_compiles_every_backend():
    # The README's setup installs oneDNN, torch and nvcc + cuBLAS, so all three must be compiled in.
    compiled = {name: b["compiled"] for name, b in servelab.build_info()["backends"].items()}
    assert compiled == {"onednn": True, "torch": True, "cuda": True}


def test_cuda_reports_architectures_hopper_with_ptx():
    cuda = servelab.build_info()["backends"]["cuda"]
    assert cuda["details"]["architectures"] == "90"  # CMake's "90" is sm_90 SASS + compute_90 PTX


def test_cli_info_json_matches_build_info():
    out = subprocess.run(
        [sys.executable, "-m", "servelab", "info", "--json"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert json.loads(out) == servelab.build_info()


def test_cli_smoke_json_runs_backend_smoke_work():
    proc = subprocess.run(
        [sys.executable, "-m", "servelab", "smoke", "--json", "--batch", "8"],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["failed"] == []
    by_backend = {r["backend"]: r for r in report["smoke"]}
    for name, b in report["build_info"]["backends"].items():
        assert by_backend[name]["ran"] == b["usable"], name
        if b["usable"]:
            assert by_backend[name]["max_abs_error"] <= 1e-4


def test_cli_rejects_bad_batch():
    proc = subprocess.run(
        [sys.executable, "-m", "servelab", "smoke", "--batch", "0"], capture_output=True, text=True
    )
    assert proc.returncode == 2
    assert "must be a positive integer, got 0" in proc.stderr
