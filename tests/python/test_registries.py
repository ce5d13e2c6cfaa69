"""servelab.registries() and `servelab registries`: every registry listed in one place, the
implementations optional modules add with the module each came from."""

from __future__ import annotations

import json
import subprocess
import sys

import servelab
from servelab import backends

EXPECTED = {
    "schedulers", "executors", "arrival_processes", "size_distributions", "config_models",
    "loop_models", "interference_models", "search_methods", "estimator_backends",
    "scaling_solvers", "recsys_backends",
}  # fmt: skip


def test_every_registry_is_listed_with_its_entries():
    tables = servelab.registries()
    assert set(tables) == EXPECTED
    names = {k: {e["name"] for e in v} for k, v in tables.items()}
    assert {"fcfs", "kairos", "ramsis", "hera_rmu", "infaas", "rrl_tuner"} <= names["schedulers"]
    assert {"emulated", "remote"} <= names["executors"]
    assert "poisson" in names["arrival_processes"] and "rrl_cpu" in names["config_models"]
    assert {"none", "hera_contention"} <= names["interference_models"]
    # The built-in implementations of the plugin tables, each from _core.
    for table, builtin in (
        ("estimator_backends", "eigen"),
        ("scaling_solvers", "greedy"),
        ("recsys_backends", "reference"),
    ):
        origins = {e["name"]: e["origin"] for e in tables[table]}
        assert origins[builtin] == "servelab._core", table


def test_optional_modules_name_themselves_as_origin():
    tables = servelab.registries()
    origins = {k: {e["name"]: e.get("origin") for e in v} for k, v in tables.items()}
    lp_usable = bool(servelab.build_info().get("lp_solver"))
    if lp_usable:
        backends.require("lp")
        solvers = {e["name"]: e["origin"] for e in servelab.registries()["scaling_solvers"]}
        assert solvers["ilp"] == "servelab._lp"
    if backends.status("onednn").usable:
        backends.require("onednn")
        loaded = {e["name"]: e["origin"] for e in servelab.registries()["recsys_backends"]}
        assert loaded["onednn"] == "servelab._onednn"
    if backends.status("torch").usable:
        backends.require("torch")
        estimators = {e["name"]: e["origin"] for e in servelab.registries()["estimator_backends"]}
        assert estimators["libtorch"] == "servelab._torch"
    assert origins["scaling_solvers"]["greedy"] == "servelab._core"


def test_the_command_prints_them():
    out = subprocess.run(
        [sys.executable, "-m", "servelab", "registries", "--json"],
        capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    assert set(json.loads(out.stdout)) == EXPECTED
    text = subprocess.run(
        [sys.executable, "-m", "servelab", "registries"],
        capture_output=True, text=True, timeout=120, check=True,
    ).stdout  # fmt: skip
    assert "== scaling_solvers" in text and "greedy  [servelab._core]" in text
