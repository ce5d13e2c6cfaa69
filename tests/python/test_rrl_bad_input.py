"""RRL's degenerate and bad inputs, each from Python and from the command line: an empty space is
an error and a one-configuration space an explicit result for every method; a region radius
that is negative, nan or infinite is refused (0 is point-based Q-learning, which `tune` reaches
as method "qlearning" and `region_sweep` as radius 0); an SLO no configuration meets is an
explicit result (the fastest configuration, flagged) in the oracle and in every tuner; a
configuration the executor rejects stops a real run before it starts, naming the knob and value.
Every error's message names the field and the value."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

import servelab
from servelab import rrl

ONE = [("workers", [2]), ("inter_op", [1]), ("intra_op", [2])]


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "servelab.cli", "rrl", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


def assert_cli_error(proc: subprocess.CompletedProcess, *fragments: str) -> None:
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stderr.count("\n") == 1, proc.stderr  # one line, no traceback
    for fragment in fragments:
        assert fragment in proc.stderr, proc.stderr


# --- empty and degenerate spaces ---------------------------------------------------------------


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: rrl.ConfigSpace("cpu", []), "cpu configuration space has no knobs"),
        (lambda: rrl.ConfigSpace("cpu", [("workers", [])]), "knob workers has no values"),
        (lambda: rrl.cpu_space(0), "cores=0"),
        (lambda: rrl.cpu_space(4, max_workers=-1), "max_workers=-1"),
        (lambda: rrl.gpu_space(max_batch=0), "max_batch=0"),
    ],
)
def test_an_empty_space_is_refused_from_python(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_an_empty_space_is_refused_from_the_cli():
    assert_cli_error(cli("tune", "--cores", "0", "--rate", "2"), "--cores", "got 0")


@pytest.mark.parametrize("method", rrl.METHODS)
def test_a_one_configuration_space_is_an_explicit_result_for_every_method(method):
    run = rrl.tune(rrl.ConfigSpace("cpu", ONE), "poisson(rate=2)", method, steps=60,
                   model=rrl.PerfModel(cores=4))  # fmt: skip
    s = run.summary()
    assert run.converged_step == 0 and set(run.columns["config"]) == {0}
    assert s["final_config"] == s["oracle_config"] == "workers=2, inter_op=1, intra_op=2"
    assert s["final_ratio"] == 1.0 and s["mean_regret_ms"] == 0.0


def test_a_one_configuration_space_is_an_explicit_result_from_the_cli():
    proc = cli("tune", "--cores", "1", "--rate", "2", "--steps", "60", "--json")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["size"] == 1 and len(out["runs"]) == len(rrl.METHODS)
    for run in out["runs"]:
        assert run["converged_step"] == 0 and run["final_ratio"] == 1.0, run["method"]


# --- the region radius -------------------------------------------------------------------------

BAD_RADII = [-1.0, -0.5, float("nan"), float("inf")]


@pytest.mark.parametrize("radius", BAD_RADII)
def test_a_bad_radius_is_refused_by_tune_the_learner_and_the_space(radius):
    space = rrl.cpu_space(2)
    text = f"radius={radius:g}"
    with pytest.raises(ValueError, match=text):
        rrl.tune(space, "poisson(rate=2)", steps=5, learner={"radius": radius})
    with pytest.raises(ValueError, match=text):
        rrl.QLearner(space, {"cores": 2}, learner={"radius": radius})
    with pytest.raises(ValueError, match=text):
        space.region_sizes(radius)


@pytest.mark.parametrize("radius", BAD_RADII)
def test_a_bad_radius_is_refused_by_the_sweep_and_the_serving_policy(radius):
    with pytest.raises(ValueError, match=f"radii: {radius!r}"):
        rrl.region_sweep(rrl.cpu_space(2), "poisson(rate=2)", radii=[1, radius], steps=5)
    rrl.register_tuner()
    with pytest.raises(ValueError, match=f"rrl_tuner: radius={radius:g}"):
        servelab.make_scheduler("rrl_tuner", radius=radius)


def test_radius_zero_is_point_based_learning():
    space = rrl.cpu_space(2)
    # tune: regions of radius 0 are what method "qlearning" learns; the message says so
    with pytest.raises(ValueError, match=r"radius=0 must be positive.*method 'qlearning'"):
        rrl.tune(space, "poisson(rate=2)", "rrl", steps=5, learner={"radius": 0.0})
    assert (space.region_sizes(0.0) == 1).all()  # every region holds only its centre
    kw = {"steps": 80, "model": rrl.PerfModel(cores=2), "oracle_episodes": 4}
    sweep = rrl.region_sweep(space, "poisson(rate=2)", radii=[0], seeds=[1], **kw)
    point = rrl.tune(space, "poisson(rate=2)", "qlearning", seed=1, **kw)
    assert sweep.region_size[0] == 1.0
    assert sweep.converged_step[0] == point.converged_step
    assert sweep.mean_regret_ms[0] == point.summary()["mean_regret_ms"]


@pytest.mark.parametrize(
    "radius, message",
    [("0", "must be a positive number, got 0"), ("-1", "got -1"), ("nan", "got nan"),
     ("inf", "got inf")],
)  # fmt: skip
def test_a_bad_radius_is_refused_from_the_cli(radius, message):
    proc = cli("tune", "--cores", "2", "--rate", "2", "--radius", radius)
    assert_cli_error(proc, "--radius", message)


# --- an SLO no configuration meets -------------------------------------------------------------


def test_the_oracle_flags_an_slo_no_configuration_meets_and_returns_the_fastest():
    space = rrl.cpu_space(3)
    model = rrl.PerfModel(cores=3)
    episodes = rrl.draw_episodes("poisson(rate=3)", 1, 200, seed=4)
    p95 = rrl.surface(space, episodes, model=model, objective="p95")
    best = rrl.oracle(space, episodes, model=model, objective="slo", slo_ms=float(p95.min()) / 2)
    assert best["feasible"] is False
    assert best["config"] == int(np.argmin(p95))  # one episode: its p95 is the pooled p95
    met = rrl.oracle(space, episodes, model=model, objective="slo", slo_ms=float(p95.max()))
    assert met["feasible"] is True


@pytest.mark.parametrize("method", rrl.METHODS)
def test_every_tuner_reports_an_slo_no_configuration_meets(method):
    run = rrl.tune(rrl.cpu_space(2), "poisson(rate=2)", method, objective="slo", slo_ms=1.0,
                   steps=60, model=rrl.PerfModel(cores=2))  # fmt: skip
    s = run.summary()
    assert s["slo_feasible"] is False and s["violation_rate"] == 1.0
    assert s["note"].startswith("no configuration meets slo_ms=1: the oracle is the fastest")
    assert s["oracle_config"] == run.oracle["describe"]


def test_an_slo_no_configuration_meets_is_explicit_from_the_cli():
    proc = cli("tune", "--cores", "2", "--rate", "2", "--steps", "60", "--objective", "slo",
               "--slo-ms", "1", "--json")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    runs = json.loads(proc.stdout)["runs"]
    assert [r["method"] for r in runs] == list(rrl.METHODS)
    assert all(r["slo_feasible"] is False and "no configuration meets" in r["note"] for r in runs)
    proc = cli("simulate", "--cores", "2", "--rate", "2", "--episodes", "3", "--oracle",
               "--objective", "slo", "--slo-ms", "1", "--json")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["oracle"]["feasible"] is False
    proc = cli("simulate", "--cores", "2", "--rate", "2", "--episodes", "3", "--oracle",
               "--objective", "slo", "--slo-ms", "1")  # fmt: skip
    assert "no configuration meets slo_ms=1" in proc.stdout


@pytest.mark.parametrize("slo", ["0", "-5", "nan"])
def test_a_bad_slo_is_refused_from_the_cli(slo):
    proc = cli("tune", "--cores", "2", "--rate", "2", "--objective", "slo", "--slo-ms", slo)
    assert_cli_error(proc, "--slo-ms", f"got {slo}")


# --- a configuration the executor rejects ------------------------------------------------------

BOUNDED = "rrl_test_two_threads"


class TwoThreads:
    """An executor with an intra_op_threads knob that refuses more than two threads."""

    knobs = ("intra_op_threads", "inter_op_threads")

    def set_config(self, key: str, value: int) -> None:
        if value > 2:
            raise ValueError(f"{key}={value} must be in 1..2")

    def run(self, batch) -> None:
        pass


@pytest.fixture
def bounded_executor():
    servelab.register_executor(BOUNDED, TwoThreads, doc="refuses more than two threads")
    yield BOUNDED
    servelab.unregister_executor(BOUNDED)


def test_a_configuration_the_executor_rejects_stops_a_real_run(bounded_executor):
    with pytest.raises(ValueError, match=r"rejects intra_op_threads=3: .*intra_op_threads=3"):
        rrl.tune_executor(bounded_executor, threads=[1, 2, 3], episodes=2, batch=1)
    with pytest.raises(ValueError, match=r"rejects intra_op_threads=4"):
        rrl.tune_serving(bounded_executor, cores=4, episodes=1, episode_requests=2, batch=1)
    run = rrl.tune_executor(bounded_executor, threads=[1, 2], episodes=2, batch=1, final_repeats=2)
    assert run.best_threads in (1, 2)  # within the executor's bound the run goes ahead


def test_a_configuration_the_executor_rejects_is_one_line_from_the_cli():
    if not servelab.backends.status("onednn").usable:
        pytest.skip("the oneDNN backend is not usable")
    proc = cli("fit", "--threads", "1,2", "--inter-op", "1,300", "--concurrency", "1",
               "--repeats", "1")  # fmt: skip
    assert_cli_error(proc, "inter_op_threads=300 must be in 1..256")
