"""RRL's claims against our simulated experiments, with the paper's numbers printed beside ours.

Same surface for every method: the CPU space of an 8-core machine (512 configurations) on the
performance model, Inception-v3-like, at 7 requests/s (the paper's Fig. 4 load scaled to 8 cores).
Paper (SC'19): radius 1 converges 5x faster than Q-learning (Fig. 11), near-optimal 8x faster than
DeepRM and CAPES; convergence time falls with the region size while the distance from the optimum
grows (Fig. 11). We check: RRL converges in fewer steps than point-based Q-learning; steps against
radius fall then rise again (a U-shape, the right side once the estimation error exceeds the 10%
tolerance); RRL's regret to the oracle flattens and stays below point-based Q-learning's; and the
same on the artifact's trace, the spiky and the dynamic workload.
"""

import functools

import numpy as np
import pytest

from servelab import rrl

from .shared_data import shared_path

CORES, RATE, STEPS = 8, 7.0, 1500
SEEDS = (0, 1, 2, 3, 4)
SPACE = rrl.cpu_space(CORES)
MODEL = rrl.PerfModel(cores=CORES)
COMMON = {"steps": STEPS, "model": MODEL, "oracle_episodes": 10}


@functools.cache
def sweep():
    return rrl.region_sweep(
        SPACE, f"poisson(rate={RATE})", (0, 1, 1.5, 2, 3, 5), seeds=SEEDS, **COMMON
    )


def mean_steps(table):
    """Expected steps to converge per radius; a run that never converges counts in full."""
    return table.groupby("radius")["steps_to_converge"].mean()


def test_rrl_converges_in_fewer_steps_than_point_based_q_learning():
    table = sweep()
    steps = mean_steps(table)
    print("\n" + rrl.format_region_sweep(table))
    speedup = steps[0.0] / steps[1.0]
    print(f"ours: radius 1 converges {speedup:.2f}x faster (mean over {len(SEEDS)} seeds); "
          f"paper: {rrl.PAPER['speedup_vs_qlearning_region_1']:.0f}x")  # fmt: skip
    assert steps[1.0] < steps[0.0]
    # Point-based learning needs every configuration measured once: |C| steps, less what the median
    # criterion's window (50 episodes) looks ahead.
    assert (table[table.radius == 0].steps_to_converge >= SPACE.size - 50).all()


def test_convergence_against_region_size_is_u_shaped():
    steps = mean_steps(sweep())
    print("\nmean steps to converge per radius:", {r: int(s) for r, s in steps.items()})
    fastest = steps.idxmin()
    assert 0 < fastest < steps.index.max()  # regions help, up to a point
    assert steps.iloc[-1] > steps[fastest]  # the largest region is slower again
    ratio = sweep().groupby("radius")["final_ratio"].mean()
    print("final latency / oracle per radius:", {r: round(x, 3) for r, x in ratio.items()})
    assert ratio.iloc[-1] > ratio[1.0]  # ... because it settles further from the optimum


def regret_runs(arrivals):
    return rrl.compare_methods(SPACE, arrivals, ("rrl", "qlearning"), seeds=SEEDS[:3], **COMMON)


def check_regret(name, runs):
    table = rrl.regret_table(runs)
    print(f"\n== {name}\n" + rrl.format_comparison(table))
    rrl_regret = np.mean([r.regret()[-1] for r in runs["rrl"]])
    q_regret = np.mean([r.regret()[-1] for r in runs["qlearning"]])
    print(
        f"cumulative regret to the oracle: rrl {rrl_regret / 1e3:.0f} s, "
        f"point-based {q_regret / 1e3:.0f} s"
    )
    assert rrl_regret < q_regret
    for run in runs["rrl"]:
        per_episode = np.diff(run.regret(), prepend=0.0)
        first, last = per_episode[: STEPS // 4].mean(), per_episode[-STEPS // 4 :].mean()
        assert last < first / 2, "RRL's regret does not flatten"
    return table


def test_regret_against_the_oracle_on_a_steady_load():
    table = check_regret("poisson", regret_runs(f"poisson(rate={RATE})"))
    final = table[table.method == "rrl"].final_ratio
    assert final.median() < 1.15


def test_regret_on_the_artifact_trace():
    trace = rrl.workload("trace", RATE, data=shared_path("rrl"))
    check_regret("artifact trace", regret_runs(trace))


@pytest.mark.parametrize("name", ["spiky", "dynamic"])
def test_regret_on_the_papers_workloads(name):
    params = {"spiky": {"step_s": 30.0}, "dynamic": {"period_s": 300.0}}[name]
    check_regret(name, regret_runs(rrl.workload(name, RATE, **params)))


def test_gpu_space_rrl_converges_faster_too():
    """Fig. 5's setting: the GPU space (792 configurations) at 61 requests/s."""
    space = rrl.gpu_space()
    runs = rrl.compare_methods(
        space, "poisson(rate=61)", seeds=(0, 1), steps=STEPS, oracle_episodes=10
    )
    print("\n== GPU, Poisson at 61 requests/s\n" + rrl.format_comparison(rrl.regret_table(runs)))
    for r, q in zip(runs["rrl"], runs["qlearning"], strict=True):
        assert 0 <= r.converged_step < q.converged_step
        assert r.summary()["final_ratio"] < 1.1


@functools.cache
def deep_rl_runs(workload_name, **kwargs):
    arrivals = {
        "poisson": f"poisson(rate={RATE})",
        "dynamic": rrl.workload("dynamic", RATE, period_s=300.0),
    }[workload_name]
    methods = ("rrl", "capes", "deeprm")
    return rrl.compare_methods(SPACE, arrivals, methods, seeds=SEEDS[:3], **COMMON, **kwargs)


@pytest.mark.parametrize("name", ["poisson", "dynamic"])
def test_rrl_latency_at_or_below_the_deep_rl_baselines_after_convergence(name):
    """Sec. 6.3-6.4; after convergence: the last tenth of the run."""
    table = rrl.regret_table(deep_rl_runs(name))
    print(f"\n== {name}: RRL against the deep-RL baselines\n" + rrl.format_comparison(table))
    tail = table.groupby("method")["tail_chosen_latency_ms"].mean()
    print("mean latency in the last tenth, ms:", {m: round(x, 1) for m, x in tail.items()})
    for baseline in ("capes", "deeprm"):
        assert tail["rrl"] <= tail[baseline], baseline


def test_rrl_slo_violations_at_or_below_the_deep_rl_baselines():
    """Sec. 6.5: a strict p95 SLO, here 1.5x the best configuration's p95 on a steady load. The
    paper counts violations over the whole run (Fig. 14); after convergence we count those of the
    learned policy itself (the greedy configuration), as exploration is each method's own cost."""
    episodes = rrl.draw_episodes(f"poisson(rate={RATE})", 10, 200, seed=0)
    slo_ms = 1.5 * float(rrl.surface(SPACE, episodes, model=MODEL, objective="p95").min())
    table = rrl.regret_table(deep_rl_runs("poisson", objective="slo", slo_ms=slo_ms))
    print(f"\n== SLO {slo_ms:.0f} ms (p95)\n" + rrl.format_comparison(table))
    by = table.groupby("method")[["violation_rate", "tail_greedy_violation_rate"]].mean()
    print(by.round(3).to_string())
    for baseline in ("capes", "deeprm"):
        assert by.loc["rrl", "violation_rate"] <= by.loc[baseline, "violation_rate"], baseline
        assert (
            by.loc["rrl", "tail_greedy_violation_rate"]
            <= by.loc[baseline, "tail_greedy_violation_rate"]
        ), baseline


# ---- the same claims across core counts and loads the paper did not plot ----------------------
# (cores, requests/s): 6, 8 and 12 cores (216, 512 and 1,728 configurations), light to heavy load
# (8 cores at 8.5 requests/s is 1.2x the common setting's 7). Where they stop holding, measured and
# left out here (docs/rrl.md): 8 cores at 10 requests/s, where radius 1 converges slower than
# point-based learning, and 4 cores (64 configurations), which point-based learning sweeps in a
# few dozen steps anyway.
SWEEP = [(6, 2.5), (6, 5.25), (8, 2.0), (8, 5.0), (8, 8.5), (12, 10.5)]
SWEEP_IDS = [f"{c}cores-{r}qps" for c, r in SWEEP]


def sweep_setting(cores: int) -> dict:
    return {"steps": STEPS, "model": rrl.PerfModel(cores=cores), "oracle_episodes": 10}


@pytest.mark.parametrize(("cores", "rate"), SWEEP, ids=SWEEP_IDS)
def test_faster_convergence_and_the_u_shape_hold_across_loads_and_cores(cores, rate):
    table = rrl.region_sweep(
        rrl.cpu_space(cores), f"poisson(rate={rate})", (0, 1, 2, 5), seeds=SEEDS,
        **sweep_setting(cores),
    )  # fmt: skip
    steps = mean_steps(table)
    ratio = table.groupby("radius")["final_ratio"].mean()
    print(f"\n{cores} cores, {rate} requests/s: mean steps per radius",
          {r: int(s) for r, s in steps.items()}, "final / oracle",
          {r: round(x, 3) for r, x in ratio.items()})  # fmt: skip
    assert steps[1.0] < steps[0.0]  # RRL converges in fewer steps than point-based learning
    fastest = steps.idxmin()
    assert 0 < fastest < steps.index.max() and steps.iloc[-1] > steps[fastest]  # the U-shape
    assert ratio.iloc[-1] > ratio[1.0]  # the largest region settles furthest from the optimum


@pytest.mark.parametrize(("cores", "rate"), SWEEP, ids=SWEEP_IDS)
def test_regret_and_the_deep_rl_baselines_across_loads_and_cores(cores, rate):
    runs = rrl.compare_methods(
        rrl.cpu_space(cores), f"poisson(rate={rate})", seeds=SEEDS[:3], **sweep_setting(cores)
    )
    table = rrl.regret_table(runs)
    tail = table.groupby("method")["tail_chosen_latency_ms"].mean()
    regret = {m: np.mean([r.regret()[-1] for r in rs]) for m, rs in runs.items()}
    print(f"\n{cores} cores, {rate} requests/s: mean latency in the last tenth, ms",
          {m: round(x, 1) for m, x in tail.items()}, "; regret, s",
          {m: round(x / 1e3) for m, x in regret.items()})  # fmt: skip
    assert regret["rrl"] < regret["qlearning"]
    for baseline in ("capes", "deeprm"):
        assert tail["rrl"] <= tail[baseline], baseline
