"""servelab.rrl: spaces, the performance model and its fit, workloads, episodes, the oracle and
tuning runs, and every kind of bad input (a clear exception naming the field)."""

import os
import signal
import threading
import time

import numpy as np
import pytest

import servelab
from servelab import rrl, workload

from .gil import ticks_during
from .shared_data import shared_path


def test_short_name_is_the_systems_package():
    assert servelab.rrl is rrl
    assert "rrl" in servelab.systems.SYSTEMS


def test_cpu_space_spans_threads_up_to_the_cores():
    space = rrl.cpu_space(4)
    assert space.size == 64 and space.dims == 3
    assert [name for name, _ in space.knobs] == ["workers", "inter_op", "intra_op"]
    c = space.index_of([2, 1, 4])
    assert space.values(c) == [2, 1, 4]
    assert space.describe(c) == "workers=2, inter_op=1, intra_op=4"
    assert rrl.cpu_space().size == rrl.machine_cores() ** 3  # bounds from this machine
    sizes = space.region_sizes(1.0)
    assert sizes.min() == 4 and sizes.max() == 7  # corners and interior points, nearest neighbours


def test_gpu_space_has_the_batching_knobs():
    space = rrl.gpu_space(
        max_batch=32, batch_step=8, max_timeout_ms=10, timeout_step_ms=5, max_threads=2
    )
    assert space.knobs == [("batch_size", [1, 8, 16, 24, 32]), ("batch_timeout_ms", [0, 5, 10]),
                           ("batch_threads", [1, 2])]  # fmt: skip


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: rrl.cpu_space(0), "cores=0"),
        (lambda: rrl.ConfigSpace("cpu", []), "no knobs"),
        (lambda: rrl.ConfigSpace("cpu", [("workers", [])]), "workers has no values"),
        (lambda: rrl.ConfigSpace("cpu", [("workers", [2, 1])]), "workers: values"),
        (lambda: rrl.cpu_space(4).index_of([9, 1, 1]), "workers=9"),
        (lambda: rrl.gpu_space(max_threads=0), "max_threads=0"),
    ],
)
def test_bad_spaces_are_refused(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_the_model_rewards_parallelism_until_threads_exceed_cores():
    m = rrl.PerfModel(cores=8)
    assert rrl.cpu_service_ms(m, 1, 4) < rrl.cpu_service_ms(m, 1, 1)
    assert rrl.cpu_service_ms(m, 1, 8, in_service=4) > rrl.cpu_service_ms(m, 1, 2, in_service=4)
    assert rrl.gpu_service_ms(m, 32) / 32 < rrl.gpu_service_ms(m, 1)
    with pytest.raises(ValueError, match="base_ms=-1"):
        rrl.cpu_service_ms(m.replace(base_ms=-1), 1, 1)
    with pytest.raises(ValueError, match="intra_fraction"):
        rrl.tune(rrl.cpu_space(2), "poisson(rate=1)", model=m.replace(intra_fraction=2.0), steps=5)


def test_fit_recovers_the_model_from_measurements():
    truth = rrl.PerfModel(
        cores=8, base_ms=300, intra_fraction=0.85, inter_fraction=0.3, interference=0.4, sync_ms=0.2
    )
    rows = [(a, b, k) for a in (1, 2, 4) for b in (1, 2, 4, 8) for k in (1, 2, 4)]
    inter, intra, conc = (np.array(x) for x in zip(*rows, strict=True))
    measured = [rrl.cpu_service_ms(truth, a, b, k) for a, b, k in rows]
    fit = rrl.fit_cpu_model(inter, intra, conc, measured, cores=8)
    assert fit.rms_relative_error < 0.01
    assert fit.model.base_ms == pytest.approx(300, rel=0.02)
    assert fit.model.intra_fraction == pytest.approx(0.85)
    with pytest.raises(ValueError, match="latency_ms"):
        rrl.fit_cpu_model(inter, intra, conc, measured[:-1], cores=8)


def test_dynamic_and_spiky_are_registered_arrival_processes():
    names = {
        p["name"] if isinstance(p, dict) else p.name for p in workload.list_arrival_processes()
    }
    assert {"dynamic_poisson", "spiky"} <= names
    for name in ("dynamic", "spiky"):
        times = rrl.workload(name, 50.0).generate(seed=2, horizon_s=4000.0)
        assert len(times) / 4000 == pytest.approx(50, rel=0.12), name
    with pytest.raises(ValueError, match="spread"):
        rrl.workload("dynamic", 10.0, spread=1.0)
    with pytest.raises(KeyError, match="wiki"):
        rrl.workload("wiki", 10.0)


def test_the_artifact_trace_replays_at_the_asked_rate():
    data = shared_path("rrl")
    gaps = rrl.read_trace_gaps(data)
    assert gaps.size == 100 and gaps.mean() == pytest.approx(0.00708, rel=0.01)
    trace = rrl.workload("trace", 14.0, data=data)
    assert trace.mean_rate == pytest.approx(14.0)
    times = trace.generate(seed=0, count=1000)
    assert np.all(np.diff(times) >= 0) and times.size == 1000  # replayed cyclically


def test_episodes_oracle_and_surface_agree():
    space = rrl.cpu_space(4)
    model = rrl.PerfModel(cores=4)
    episodes = rrl.draw_episodes("poisson(rate=4)", 5, 100, seed=1)
    assert episodes.shape == (5, 100) and np.all(episodes[:, 0] == 0)
    surf = rrl.surface(space, episodes, model=model)
    best = rrl.oracle(space, episodes, model=model)
    assert best["config"] == int(np.argmin(surf)) and best["metric_ms"] == pytest.approx(surf.min())
    one = rrl.episode(space, best["config"], episodes[0], model=model)
    assert one["p95_ms"] >= one["mean_ms"] > 0
    noisy = rrl.episode(space, best["config"], episodes[0], model=model, seed=3)
    assert noisy["mean_ms"] != one["mean_ms"]


def test_same_seed_same_run():
    space = rrl.cpu_space(4)
    kwargs = {"steps": 300, "model": rrl.PerfModel(cores=4), "oracle_episodes": 5}
    a = rrl.tune(space, "poisson(rate=4)", "rrl", seed=5, **kwargs)
    b = rrl.tune(space, "poisson(rate=4)", "rrl", seed=5, **kwargs)
    for key, column in a.columns.items():
        if key != "learn_ns":
            np.testing.assert_array_equal(column, b.columns[key], err_msg=key)
    c = rrl.tune(space, "poisson(rate=4)", "rrl", seed=6, **kwargs)
    assert not np.array_equal(a.columns["config"], c.columns["config"])
    frame = a.to_frame()
    assert len(frame) == 300 and {"step", "chosen_ms", "oracle_ms"} <= set(frame.columns)


def test_an_slo_no_configuration_meets_is_an_explicit_result():
    space = rrl.cpu_space(2)
    run = rrl.tune(
        space,
        "poisson(rate=2)",
        objective="slo",
        slo_ms=1.0,
        steps=50,
        model=rrl.PerfModel(cores=2),
    )
    s = run.summary()
    assert s["slo_feasible"] is False and "no configuration meets slo_ms=1" in s["note"]
    assert s["violation_rate"] == 1.0


def test_the_slo_objective_finds_the_smallest_share_that_meets_it():
    space = rrl.cpu_space(4)
    model = rrl.PerfModel(cores=4)
    episodes = rrl.draw_episodes("poisson(rate=2)", 10, 200, seed=0)
    surf = rrl.surface(space, episodes, model=model, objective="p95")
    slo = float(np.percentile(surf, 30))
    best = rrl.oracle(space, episodes, model=model, objective="slo", slo_ms=slo)
    assert best["feasible"]
    workers, inter, intra = best["values"]
    share = min(1, workers * inter * intra / 4)
    feasible = [min(1, np.prod(space.values(c)) / 4) for c in range(space.size) if surf[c] <= slo]
    assert share <= min(feasible) + 1e-12


def test_a_degenerate_space_converges_at_once():
    space = rrl.ConfigSpace("cpu", [("workers", [2]), ("inter_op", [1]), ("intra_op", [2])])
    run = rrl.tune(space, "poisson(rate=2)", "rrl", steps=60, model=rrl.PerfModel(cores=4))
    assert run.converged_step == 0 and set(run.columns["config"]) == {0}


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"method": "dqn"}, ValueError, "method='dqn'"),
        ({"learner": {"radius": 0.0}}, ValueError, "radius=0"),
        ({"learner": {"radius": -1.0}}, ValueError, "radius=-1"),
        ({"learner": {"radious": 1.0}}, KeyError, "radious"),
        ({"learner": {"beta": float("nan")}}, ValueError, "beta=nan"),
        ({"learner": {"gamma": 1.0}}, ValueError, "gamma=1"),
        ({"objective": "slo"}, ValueError, "needs slo_ms"),
        ({"objective": "mean", "slo_ms": 5.0}, ValueError, "slo_ms=5.0"),
        ({"objective": "fast"}, ValueError, "objective='fast'"),
        ({"steps": 0}, ValueError, "steps=0"),
        ({"episode_requests": 1}, ValueError, "episode_requests=1"),
        ({"seed": -1}, ValueError, "seed=-1"),
    ],
)
def test_bad_tuning_input_names_the_field(kwargs, error, match):
    args = {"steps": 10, "model": rrl.PerfModel(cores=2), **kwargs}
    method = args.pop("method", "rrl")
    with pytest.raises(error, match=match):
        rrl.tune(rrl.cpu_space(2), "poisson(rate=2)", method, **args)


def test_a_trace_that_ends_too_early_is_refused():
    finite = workload.Replay.from_gaps(np.full(50, 0.1))
    with pytest.raises(ValueError, match="ended after 50 arrivals"):
        rrl.tune(rrl.cpu_space(2), finite, steps=5, model=rrl.PerfModel(cores=2))


def test_a_space_without_the_cpu_knobs_is_refused():
    space = rrl.ConfigSpace("cpu", [("threads", [1, 2])])
    with pytest.raises(ValueError, match="no knob workers"):
        rrl.tune(space, "poisson(rate=2)", steps=5)


def test_the_estimator_learns_and_the_learner_steps():
    f = rrl.LatencyEstimator(2, seed=1)
    assert f.parameters == 2 * 256 + 256 + 256 * 64 + 64 + 64 + 1
    rng = np.random.default_rng(0)
    for _ in range(2000):
        x = rng.random(2)
        f.observe(list(x), float(50 * np.exp(2 * x[0])))
    assert f.predict_ms([0.9, 0.5]) / f.predict_ms([0.1, 0.5]) == pytest.approx(
        np.exp(1.6), rel=0.25
    )
    learner = rrl.QLearner(rrl.cpu_space(4), {"cores": 4}, learner={"radius": 1.0}, seed=0)
    assert learner.mean_region_size > 1
    c = learner.step(0, 2.0, 120.0)
    assert learner.q(0, c) == pytest.approx(np.log1p(120.0))


def test_a_long_tuning_run_releases_the_gil_and_stops_on_ctrl_c():
    space = rrl.cpu_space(8)
    model = rrl.PerfModel(cores=8)
    assert ticks_during(lambda: rrl.tune(space, "poisson(rate=7)", steps=1500, model=model)) > 10
    timer = threading.Timer(0.2, os.kill, args=(os.getpid(), signal.SIGINT))
    start = time.monotonic()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            rrl.tune(space, "poisson(rate=7)", steps=20_000, model=model)
    finally:
        timer.cancel()
    assert time.monotonic() - start < 5.0
