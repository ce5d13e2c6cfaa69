"""servelab.profile / `servelab profile`: measure an executor, write a native profile, and the
simulator runs on it."""

from __future__ import annotations

import json

import numpy as np
import pytest

import servelab
from servelab import backends, cli
from servelab.results import COMPLETED


def _simulate_on(profile: servelab.Profile, hardware: str = "cpu", model: str = "constant"):
    return servelab.simulate(
        profile=profile,
        workers=[{"hardware": hardware, "count": 2}],
        workload={
            "arrivals": "poisson(rate=100)",
            "count": 300,
            "apps": [{"name": model, "slo_ms": 100, "sizes": "uniform(low=1, high=4)"}],
        },
        scheduler="fcfs",
    )


def test_the_profile_of_an_executor_drives_the_simulator(tmp_path):
    path = tmp_path / "constant.json"
    p = servelab.profile("constant(latency_ms=2)", batches=[1, 4, 16], repeats=4, path=path)
    assert p.hardware == ["cpu"] and p.models == ["constant"]
    assert p.price("cpu") == 0.0
    for b in (1, 4, 16):
        samples = p.to_dict()["latency"][[1, 4, 16].index(b)]["samples_ms"]
        assert len(samples) == 4 and min(samples) >= 2.0
    assert servelab.profiles.load(path) == p  # written in the native format
    r = _simulate_on(p)
    c = r.columns
    done = c["status"] == COMPLETED
    assert done.all()
    # Every simulated service time is one of the profiled waits (2 ms and a little).
    service_ms = (c["finish_ns"] - c["start_ns"])[done] / 1e6
    assert np.all(service_ms >= 2.0) and np.all(service_ms < 2.0 + 5.0)


def test_profile_arguments_are_checked_naming_the_value():
    for kwargs, error, match in [
        ({"batches": [0]}, ValueError, r"batches\[0\]=0"),
        ({"batches": "1,2"}, ValueError, "batches='1,2'"),
        ({"batches": [2, 2]}, ValueError, "repeats a value"),
        ({"repeats": 0}, ValueError, "repeats=0"),
        ({"warmup": -1}, ValueError, "warmup=-1"),
        ({"measure": "cpu"}, ValueError, "measure='cpu'"),
        ({"price_per_hour": -1.0}, ValueError, "price_per_hour=-1.0"),
        ({"hardware": ""}, ValueError, "hardware=''"),
        ({"threads": [1, 2]}, ValueError, "has no 'intra_op_threads' knob"),
    ]:
        with pytest.raises(error, match=match):
            servelab.profile("constant", **kwargs)
    with pytest.raises(KeyError, match="unknown executor 'nope'"):
        servelab.profile("nope")


def test_the_command_line_writes_a_profile_and_reports_errors_in_one_line(tmp_path, capsys):
    out = tmp_path / "p.json"
    argv = ["profile", "constant(latency_ms=1)", "--batches", "1,2", "--repeats", "2"]
    assert cli.main([*argv, "--out", str(out), "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert [row["batch"] for row in printed["latency"]] == [1, 2]
    assert all(row["mean_ms"] >= 1.0 for row in printed["latency"])
    assert servelab.profiles.load(out).models == ["constant"]
    assert cli.main(["profile", "nope", "--out", str(out)]) == 2
    assert capsys.readouterr().err.startswith("servelab profile: error: unknown executor 'nope'")


@pytest.mark.skipif(not backends.status("torch").usable, reason="torch backend not usable")
def test_a_torchscript_profile_sweeps_threads_and_serves_like_it_simulates(tmp_path):
    from .torch_models import save_mlp

    path, _ = save_mlp(tmp_path)
    spec = f"torchscript(path={str(path)!r})"
    p = servelab.profile(spec, batches=[1, 8], threads=[1, 2], repeats=3, warmup=1)
    assert p.hardware == ["cpu-t1", "cpu-t2"] and p.models == ["torchscript"]
    one = servelab.profile(spec, batches=[1, 8], threads=[1], repeats=3, model="mlp")
    assert one.hardware == ["cpu"] and one.models == ["mlp"]
    r = _simulate_on(one, model="mlp")
    assert (r.columns["status"] == COMPLETED).all()
