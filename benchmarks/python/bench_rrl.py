#!/usr/bin/env python3
"""RRL speed: servelab against a straightforward Python/numpy implementation (reference_rrl.py).

  (1) agreement: noise-free episode latencies and the exhaustive oracle match the reference's;
  (2) one learning step (estimator update + region update + action choice) on the CPU space of a
      16-core machine (4,096 configurations, region radius 1): goal <= 50 us;
  (3) a whole simulated tuning experiment of 10,000 episodes (goal: seconds), against the
      reference's per-episode loop (episode simulation + learning step) and its oracle search:
      extrapolated from a few hundred episodes and a sample of configurations, or, with
      --full-reference, the reference's whole 10,000 episodes and whole oracle timed (about two
      minutes on a quiet core).
Printed, never asserted.

    python benchmarks/python/bench_rrl.py                   # full, reference extrapolated
    python benchmarks/python/bench_rrl.py --full-reference  # full, reference measured
    python benchmarks/python/bench_rrl.py --smoke           # a few seconds
    python benchmarks/python/bench_rrl.py --estimator libtorch  # only (4): eigen vs libtorch

  (4) with --estimator libtorch: the learning step of (2) with the estimator on each backend,
      timed interleaved in this process, LibTorch at torch's default intra-op threads and at one.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
import reference_rrl  # noqa: E402
from timing import best_of  # noqa: E402

from servelab import rrl  # noqa: E402


def agreement(cores: int, rate: float) -> None:
    model = rrl.PerfModel(cores=cores, noise_cv=0.0)
    space = rrl.cpu_space(cores)
    episodes = rrl.draw_episodes(f"poisson(rate={rate})", 4, 200, seed=3)
    ours = rrl.surface(space, episodes, model=model)
    ref_space = reference_rrl.Space(cores)
    m = model.to_dict()
    sample = np.linspace(0, space.size - 1, 40).astype(int)
    theirs = np.array(
        [
            np.mean([reference_rrl.episode_mean_ms(m, ref_space.values[c], e) for e in episodes])
            for c in sample
        ]
    )
    assert np.allclose(ours[sample], theirs, rtol=1e-9), (
        "episode latencies differ from the reference"
    )
    best, best_ms = (
        reference_rrl.oracle(ref_space, m, episodes) if cores <= 8 else (int(np.argmin(ours)), None)
    )
    ours_best = rrl.oracle(space, episodes, model=model)
    assert ours_best["config"] == best, "the oracle differs from the reference's"
    print(f"(1) agreement: episode latencies of {sample.size} configurations and the oracle "
          f"({ours_best['describe']}) identical to the reference's")  # fmt: skip


def _cpu_seconds(fn) -> float:
    """CPU time of one call of ``fn`` (this thread), seconds."""
    start = time.thread_time()
    fn()
    return time.thread_time() - start


def learning_step(cores: int, steps: int) -> None:
    space = rrl.cpu_space(cores)
    learner = rrl.QLearner(space, {"cores": cores}, learner={"radius": 1.0}, seed=0)
    reference = reference_rrl.RegionQLearner(reference_rrl.Space(cores), 1.0, seed=0)
    latencies = 100 + np.arange(steps) % 50

    def ours():
        for x in latencies:
            learner.step(0, 14.0, float(x))

    def theirs():
        for x in latencies:
            reference.step(0.5, float(x))

    ours_s, _ = best_of(ours, 3)
    theirs_s, _ = best_of(theirs, 1)
    per_ours, per_theirs = ours_s / steps * 1e6, theirs_s / steps * 1e6
    # CPU time too: on a shared machine the wall time includes waiting for a core.
    cpu_ours = min(_cpu_seconds(ours) for _ in range(3)) / steps * 1e6
    cpu_theirs = _cpu_seconds(theirs) / steps * 1e6
    region = learner.mean_region_size
    print(
        f"(2) one learning step, {space.size} configurations, region {region:.1f} (with the call):"
    )
    goal = "met" if per_ours <= 50 else "MISSED"
    print(
        f"    servelab {per_ours:8.1f} us   reference {per_theirs:9.1f} us   "
        f"ratio reference / servelab {per_theirs / per_ours:.1f}x   goal <= 50 us: {goal}"
    )
    print(
        f"    CPU time: servelab {cpu_ours:8.1f} us   reference {cpu_theirs:9.1f} us   "
        f"ratio {cpu_theirs / cpu_ours:.1f}x   load average {os.getloadavg()[0]:.1f}"
    )


def estimator_backends(cores: int, steps: int) -> None:
    import torch  # the libtorch backend needs it loaded first (servelab.backends does so)

    from servelab import backends

    backends.require("torch")
    space = rrl.cpu_space(cores)
    latencies = 100 + np.arange(steps) % 50
    default_threads = torch.get_num_threads()
    learners = {
        (name, threads): rrl.QLearner(
            space, {"cores": cores}, learner={"radius": 1.0, "estimator": name}, seed=0
        )
        for name, threads in (("eigen", 0), ("libtorch", default_threads), ("libtorch", 1))
    }

    def run(key):
        def steps_of():
            if key[1]:
                torch.set_num_threads(key[1])
            for x in latencies:
                learners[key].step(0, 14.0, float(x))
            torch.set_num_threads(default_threads)

        return steps_of

    best = {key: (float("inf"), float("inf")) for key in learners}
    for _ in range(3):  # interleaved rounds: each backend sees the same machine load
        for key in learners:
            wall, _ = best_of(run(key), 1)
            cpu = _cpu_seconds(run(key))
            best[key] = (min(best[key][0], wall), min(best[key][1], cpu))
    print(f"(4) one learning step by estimator backend, {space.size} configurations (interleaved):")
    eigen_wall = best[("eigen", 0)][0]
    for (name, threads), (wall, cpu) in best.items():
        label = name if not threads else f"{name} ({threads} intra-op thread{'s' * (threads > 1)})"
        print(
            f"    {label:<32} {wall / steps * 1e6:8.1f} us   CPU {cpu / steps * 1e6:8.1f} us   "
            f"{wall / eigen_wall:5.1f}x eigen"
        )
    print(f"    load average {os.getloadavg()[0]:.1f}")


def experiment(cores: int, rate: float, steps: int, ref_steps: int) -> None:
    """ref_steps == steps times the reference's whole run (loop and every oracle configuration);
    fewer extrapolates from ref_steps episodes and 16 of the oracle's configurations."""
    space = rrl.cpu_space(cores)
    model = rrl.PerfModel(cores=cores)
    arrivals = f"poisson(rate={rate})"
    t = time.perf_counter()
    run = rrl.tune(space, arrivals, "rrl", steps=steps, model=model, seed=1)
    ours_s = time.perf_counter() - t
    learn_s = run.columns["learn_ns"].sum() / 1e9
    # The reference: its per-episode loop (noisy episode + learning step + three noise-free replays,
    # as servelab's loop) on ref_steps episodes, and its oracle on a sample of configurations.
    episodes = rrl.draw_episodes(arrivals, ref_steps, 200, seed=1)
    ref_space = reference_rrl.Space(cores)
    learner = reference_rrl.RegionQLearner(ref_space, 1.0, seed=1)
    m = model.to_dict()
    t = time.perf_counter()
    for e in episodes:
        c = learner.choose()
        ms = reference_rrl.episode_mean_ms(m, ref_space.values[c], e)
        learner.learn(c, 0.5, ms)
        for _ in range(3):
            reference_rrl.episode_mean_ms(m, ref_space.values[c], e)
    loop_per_step = (time.perf_counter() - t) / ref_steps
    measured = ref_steps >= steps
    sample = np.arange(space.size) if measured else np.linspace(0, space.size - 1, 16).astype(int)
    scored = rrl.draw_episodes(arrivals, 50, 200, seed=1)
    t = time.perf_counter()
    for c in sample:
        for e in scored:
            reference_rrl.episode_mean_ms(m, ref_space.values[c], e)
    oracle_s = (time.perf_counter() - t) / sample.size * space.size
    theirs_s = loop_per_step * steps + oracle_s
    print(f"(3) a tuning experiment of {steps} episodes on {space.size} configurations:")
    how = "measured" if measured else "extrapolated"
    print(f"    servelab {ours_s:7.2f} s (learning steps {learn_s:.2f} s)   "
          f"reference {theirs_s:8.0f} s "
          f"({how}: {loop_per_step * 1e3:.1f} ms per episode, oracle {oracle_s:.0f} s)   "
          f"ratio reference / servelab {theirs_s / ours_s:.0f}x")  # fmt: skip
    print(f"    converged at step {run.converged_step}; final {run.summary()['final_config']}")


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--smoke", action="store_true", help="small sizes, a few seconds")
    parser.add_argument(
        "--full-reference",
        action="store_true",
        help="time the reference's whole experiment instead of extrapolating (minutes)",
    )
    parser.add_argument(
        "--estimator",
        choices=["eigen", "libtorch"],
        default="eigen",
        help="libtorch: time only the learning step on each estimator backend (4)",
    )
    args = parser.parse_args()
    if args.estimator == "libtorch":
        estimator_backends(cores=8 if args.smoke else 16, steps=200 if args.smoke else 1000)
        return 0
    if args.smoke:
        agreement(cores=6, rate=6)
        learning_step(cores=8, steps=200)
        experiment(cores=8, rate=7, steps=500, ref_steps=20)
    else:
        agreement(cores=8, rate=7)
        learning_step(cores=16, steps=2000)
        steps = 10_000
        experiment(cores=16, rate=14, steps=steps, ref_steps=steps if args.full_reference else 200)
    return 0


if __name__ == "__main__":
    sys.exit(main())
