"""The episode model that the tuning experiments (``tune``, ``compare_methods``,
``region_sweep`` and the fidelity tables) run on agrees with ``servelab.simulate``: the same
episode, served by RrlTuner held at one configuration in the simulator, with service times from
the ``rrl_cpu`` config model, gives the same latencies, for every configuration of the CPU spaces
of 2 and 4 cores and a sample of the 8-core space, at light, moderate and overloading rates and on
the RRL workloads. So the oracle found on either is the same configuration.

Whole tuning runs agree too: ``tune_simulated`` (every episode served by the simulator) makes the
same choices as ``tune`` step for step, for every method (RRL, point-based Q-learning, the
CAPES-like and DeepRM-like tuners) and every objective (mean, p95, the SLO with minimum
resources, met or not), and the experiment functions take ``world="simulate"``.
The figures and fidelity tables keep the episode model for speed (printed: one simulated episode
costs milliseconds of Python callbacks, the episode model microseconds; a 1,500-step run on 512
configurations replays about 6,000 episodes and searches 5,120 for the oracle). The GPU space has
no config model in the simulator and is not covered."""

from __future__ import annotations

import time

import numpy as np
import pytest

from servelab import rrl

# cores -> base_ms (one request alone on one thread; 1e3 / base_ms requests/s is its capacity)
MACHINES = {2: 50.0, 4: 400.0, 8: 400.0}
# The episode model rounds nothing; the simulator rounds each service time to the nanosecond.
RTOL = 1e-7


def configs(space: rrl.ConfigSpace) -> range:
    return range(space.size) if space.size <= 64 else range(0, space.size, 23)


def arrivals(name: str, rate: float):
    if name == "poisson":
        return f"poisson(rate={rate!r})"
    params = {"dynamic": {"period_s": 5.0}, "spiky": {"step_s": 2.0}}[name]
    return rrl.workload(name, rate, **params)


CASES = [
    (cores, load, name)
    for cores in MACHINES
    for load in (0.5, 2.0, 6.0)  # x one single-threaded worker's capacity
    for name in ("poisson", "dynamic", "spiky")
    if name == "poisson" or load == 2.0
]


@pytest.mark.parametrize(("cores", "load", "workload"), CASES)
def test_episode_model_and_simulator_give_the_same_latencies(cores, load, workload):
    model = rrl.PerfModel(cores=cores, base_ms=MACHINES[cores], noise_cv=0.0)
    space = rrl.cpu_space(cores)
    rate = load * 1e3 / model.base_ms
    episode = rrl.draw_episodes(arrivals(workload, rate), 1, 200, seed=cores)[0]
    for c in configs(space):
        ours = rrl.episode(space, c, episode, model=model)
        sim = rrl.episode_in_simulator(space, c, episode, model=model)
        assert sim["mean_ms"] == pytest.approx(ours["mean_ms"], rel=RTOL), space.describe(c)
        assert sim["p95_ms"] == pytest.approx(ours["p95_ms"], rel=RTOL), space.describe(c)
        assert sim["result"].summary()["completed"] == episode.size


@pytest.mark.parametrize("cores", [2, 4])
def test_the_oracle_is_the_same_configuration_in_both(cores):
    model = rrl.PerfModel(cores=cores, base_ms=MACHINES[cores], noise_cv=0.0)
    space = rrl.cpu_space(cores)
    rate = 2.0 * 1e3 / model.base_ms
    episodes = rrl.draw_episodes(f"poisson(rate={rate!r})", 3, 200, seed=5)
    started = time.perf_counter()
    sim = np.array(
        [
            np.mean(
                [rrl.episode_in_simulator(space, c, e, model=model)["mean_ms"] for e in episodes]
            )
            for c in range(space.size)
        ]
    )
    sim_s = time.perf_counter() - started
    started = time.perf_counter()
    ours = rrl.surface(space, episodes, model=model)
    ours_s = time.perf_counter() - started
    np.testing.assert_allclose(sim, ours, rtol=RTOL)
    oracle = rrl.oracle(space, episodes, model=model)
    assert oracle["config"] == int(np.argmin(sim))
    print(f"\n{space.size} configurations x {len(episodes)} episodes: simulator {sim_s:.3f} s, "
          f"episode model {ours_s * 1e3:.2f} ms ({sim_s / max(ours_s, 1e-9):.0f}x)")  # fmt: skip


# (cores, base_ms, requests/s, steps): a light and a loaded 8-configuration space, and 64
# configurations where the learners take a few dozen steps to converge.
RUNS = [(2, 50.0, 30.0, 150), (2, 50.0, 45.0, 150), (4, 400.0, 3.5, 200)]


@pytest.mark.parametrize("method", ["rrl", "qlearning"])
@pytest.mark.parametrize(("cores", "base_ms", "rate", "steps"), RUNS)
def test_whole_tuning_runs_make_the_same_choices_in_both(cores, base_ms, rate, steps, method):
    model = rrl.PerfModel(cores=cores, base_ms=base_ms, noise_cv=0.0)
    space = rrl.cpu_space(cores)
    kw = {"steps": steps, "episode_requests": 50, "model": model, "oracle_episodes": 5, "seed": 3}
    ours = rrl.tune(space, f"poisson(rate={rate})", method, **kw)
    sim = rrl.tune_simulated(space, f"poisson(rate={rate})", method, **kw)
    for key in ("config", "greedy", "state", "rate_qps"):
        np.testing.assert_array_equal(sim.columns[key], ours.columns[key], err_msg=key)
    for key in ("metric_ms", "chosen_ms", "greedy_ms", "oracle_ms", "cost", "oracle_cost"):
        np.testing.assert_allclose(sim.columns[key], ours.columns[key], rtol=RTOL, err_msg=key)
    assert sim.converged_step == ours.converged_step
    assert sim.oracle["config"] == ours.oracle["config"]
    assert sim.summary()["final_ratio"] == pytest.approx(ours.summary()["final_ratio"], rel=RTOL)


def assert_same_run(ours: rrl.TuningRun, sim: rrl.TuningRun) -> None:
    for key in ("config", "greedy", "state", "rate_qps"):
        np.testing.assert_array_equal(sim.columns[key], ours.columns[key], err_msg=key)
    for key in ("metric_ms", "chosen_ms", "greedy_ms", "oracle_ms", "cost", "greedy_cost",
                "oracle_cost"):  # fmt: skip
        np.testing.assert_allclose(sim.columns[key], ours.columns[key], rtol=RTOL, err_msg=key)
    assert sim.converged_step == ours.converged_step
    assert sim.oracle["config"] == ours.oracle["config"]
    assert sim.oracle["feasible"] == ours.oracle["feasible"]


SLO_KW = {"steps": 100, "episode_requests": 50, "oracle_episodes": 4, "seed": 2}


@pytest.mark.parametrize("method", ["capes", "deeprm"])
def test_the_deep_rl_baselines_make_the_same_choices_in_both(method):
    model = rrl.PerfModel(cores=2, base_ms=50.0, noise_cv=0.0)
    kw = {**SLO_KW, "model": model}
    args = (rrl.cpu_space(2), "poisson(rate=45.0)", method)
    assert_same_run(rrl.tune(*args, **kw), rrl.tune_simulated(*args, **kw))


@pytest.mark.parametrize("method", rrl.METHODS)
@pytest.mark.parametrize("meetable", [True, False])
def test_the_slo_objective_makes_the_same_choices_in_both(method, meetable):
    """The least resources that meet an SLO (met by some configurations, or by none: then the
    oracle is the fastest configuration, flagged), served by the simulator or the episode model."""
    model = rrl.PerfModel(cores=2, base_ms=50.0, noise_cv=0.0)
    space = rrl.cpu_space(2)
    arrivals = "poisson(rate=30.0)"
    p95 = rrl.surface(space, rrl.draw_episodes(arrivals, 4, 50, seed=2), model=model,
                      objective="p95")  # fmt: skip
    slo = float(np.median(p95)) if meetable else float(p95.min()) / 2
    kw = {**SLO_KW, "model": model, "objective": "slo", "slo_ms": slo}
    ours = rrl.tune(space, arrivals, method, **kw)
    sim = rrl.tune_simulated(space, arrivals, method, **kw)
    assert_same_run(ours, sim)
    assert sim.oracle["feasible"] is meetable
    summary = sim.summary()
    assert summary["slo_feasible"] is meetable and summary["slo_ms"] == slo
    if not meetable:
        assert f"no configuration meets slo_ms={slo:g}" in summary["note"]
        assert summary["violation_rate"] == 1.0


def test_experiment_functions_run_through_the_simulator_too():
    model = rrl.PerfModel(cores=2, base_ms=50.0, noise_cv=0.0)
    kw = {"steps": 100, "episode_requests": 30, "model": model, "oracle_episodes": 4}
    frames = [
        rrl.region_sweep(rrl.cpu_space(2), "poisson(rate=40)", (0, 1, 2), seeds=(0, 1),
                         world=world, **kw)
        for world in ("episodes", "simulate")
    ]  # fmt: skip
    np.testing.assert_array_equal(frames[0].converged_step, frames[1].converged_step)
    np.testing.assert_allclose(frames[0].mean_regret_ms, frames[1].mean_regret_ms, rtol=RTOL)
    with pytest.raises(ValueError, match="world='moon'"):
        rrl.compare_methods(rrl.cpu_space(2), "poisson(rate=40)", world="moon", **kw)


def test_bad_input_names_the_field():
    space = rrl.cpu_space(2)
    with pytest.raises(ValueError, match="config=8"):
        rrl.episode_in_simulator(space, 8, [0.0, 1.0])
    with pytest.raises(ValueError, match="arrivals_ms"):
        rrl.episode_in_simulator(space, 0, [])
    with pytest.raises(ValueError, match="arrivals_ms"):
        rrl.episode_in_simulator(space, 0, [2.0, 1.0])
    with pytest.raises(ValueError, match="cpu space"):
        rrl.episode_in_simulator(rrl.gpu_space(), 0, [0.0])
    with pytest.raises(ValueError, match="noise_cv=0.1"):
        rrl.tune_simulated(space, "poisson(rate=3)", model=rrl.PerfModel(cores=2))
    model = rrl.PerfModel(cores=2, noise_cv=0.0)
    with pytest.raises(ValueError, match="method='dqn'"):
        rrl.tune_simulated(space, "poisson(rate=3)", "dqn", model=model)
    with pytest.raises(ValueError, match="needs slo_ms"):
        rrl.tune_simulated(space, "poisson(rate=3)", objective="slo", model=model)
    with pytest.raises(ValueError, match="slo_ms=-1"):
        rrl.tune_simulated(space, "poisson(rate=3)", objective="slo", slo_ms=-1, model=model)
