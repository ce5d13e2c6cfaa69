#!/usr/bin/env python3
"""INFaaS's decisions: getVariant against its brute-force reference, and the exact
Model-Autoscaler ILP against the greedy heuristic.

  (a) getVariant with 175 variants (22 architectures x CPU / Inferentia / GPU) and 100 workers,
      a query by application goals, median of single calls: goal <= 10 us (the paper's Table 7:
      2.2-3.5 ms, 27-44x faster than brute force). Both searches must choose the same (variant,
      worker) on every query before they are timed.
  (b) The Sec. 4.2.1 ILP (CBC) against the Sec. 4.2.2 greedy on 50 and 100 architectures:
      solve time and the greedy's cost gap (the paper: Gurobi 23 s / 50 s).
  (c) One decision of the `infaas` policy's Model-Autoscaler (plan_scaling, what the policy calls
      every period) with autoscaler='ilp' against 'greedy', on ResNet-50's variants at Fig. 6's
      loads: median time per decision and the ratio.
  (d) The whole Fig. 6 fluctuating run in the simulator with each autoscaler: wall time and
      Sec. 6.2's cost.
Times and ratios are printed, never asserted.

    python benchmarks/python/bench_infaas.py            # full
    python benchmarks/python/bench_infaas.py --smoke    # small, a second
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import servelab
from servelab import _core, infaas
from servelab.solvers import lp

HARDWARE = ("cpu", "inferentia", "gpu")


def synthetic_variants(architectures: int, per_arch: int, seed: int) -> list[dict]:
    """Variants shaped like the paper's: per architecture a base latency; Inferentia ~8x and
    GPU ~12x faster than CPU, batch-optimised GPU variants; Sec. 6.2's memory-based cost."""
    rng = np.random.default_rng(seed)
    accs = list(infaas.TABLE8_ACCURACY.values())
    out = []
    for a in range(architectures):
        base = float(rng.uniform(40, 400))
        acc = accs[a % len(accs)] / 100 if a % len(accs) != 21 else 0.245
        for j in range(per_arch):
            hw = HARDWARE[j % 3]
            batch = 1 if hw == "cpu" else int(2 ** (j // 3 % 4))
            speed = {"cpu": 1.0, "inferentia": 8.0, "gpu": 12.0}[hw]
            lat = [base / speed * (1 + 0.6 * (b - 1) / max(batch, 1)) for b in range(1, batch + 1)]
            mem = float(rng.uniform(300, 2000))
            out.append(
                {
                    "name": f"arch{a}_v{j}", "architecture": f"arch{a}", "task": "classification",
                    "hardware": hw, "accuracy": acc, "latency_ms": lat,
                    "load_s": float(rng.uniform(0.5, 8)), "memory_mb": mem,
                    "cost_per_s": infaas.COST_PER_GB_S[hw] * mem / 1024,
                }
            )  # fmt: skip
    return out


def bench_get_variant(total: int, workers: int, repeats: int) -> None:
    variants = synthetic_variants(22, -(-total // 22), seed=1)[:total]
    store = infaas.metadata_store(variants)
    rng = np.random.default_rng(2)
    for w in range(workers):
        store.add_worker(HARDWARE[w % 3])
        store.set_utilisation(w, float(rng.uniform(0, 1)))
    for _ in range(len(variants)):  # a third of the variants hold an instance somewhere
        v = int(rng.integers(0, len(variants)))
        hw = variants[v]["hardware"]
        w = int(rng.integers(0, workers // 3)) * 3 + HARDWARE.index(hw)
        if w < workers:
            store.set_state(v, w, ["active", "overloaded", "interfered"][int(rng.integers(0, 3))])
    queries = [(0.72, 20.0), (0.75, 50.0), (0.6, 300.0), (0.82, 5.0)]
    same = all(
        store.get_variant(task="classification", accuracy=a, latency_ms=lat)
        == store.get_variant(task="classification", accuracy=a, latency_ms=lat, brute_force=True)
        for a, lat in queries
    )
    print(f"(a) getVariant, {len(variants)} variants x {workers} workers: identical {same}")
    for a, lat in queries:
        ours = store.time_get_variant("classification", a, lat, repeats=repeats)
        brute = store.time_get_variant("classification", a, lat, brute_force=True, repeats=repeats)
        kind = store.get_variant(task="classification", accuracy=a, latency_ms=lat)["kind"]
        print(
            f"    accuracy >= {a:.2f}, {lat:>5.0f} ms ({kind:>8}): ours {ours * 1e6:7.2f} us, "
            f"brute force {brute * 1e6:8.2f} us, ratio {brute / ours:6.1f}x "
            f"(goal <= 10 us: {'met' if ours <= 10e-6 else 'MISSED'}; paper 2.2-3.5 ms, 27-44x)"
        )


def bench_autoscaler(architectures: list[int], per_arch: int) -> None:
    print("(b) Model-Autoscaler, exact ILP (CBC) vs greedy")
    for n in architectures:
        variants = synthetic_variants(n, per_arch, seed=3)
        problem = infaas.scaling_problem(variants, load_qps=40.0 * n, slo_ms=100.0, lam=0.01)
        greedy = infaas.solve_greedy(problem)
        if not lp.available():
            print(f"    {n} architectures: exact ILP skipped (built without CBC)")
            continue
        exact = infaas.solve_exact(problem)
        print(
            f"    {n:>3} architectures ({len(variants)} variants): "
            f"ILP {exact['solve_s'] * 1e3:8.1f} ms "
            f"({exact['status']}, {exact['running_cost_per_s']:.3f} $/s), greedy "
            f"{greedy['solve_s'] * 1e3:6.3f} ms ({greedy['running_cost_per_s']:.3f} $/s), "
            f"cost gap {infaas.cost_gap(exact, greedy):.1%}, ratio "
            f"{exact['solve_s'] / max(greedy['solve_s'], 1e-9):.0f}x (paper: Gurobi 23 s / 50 s)"
        )


def bench_policy_decision(repeats: int) -> None:
    print("(c) the infaas policy's Model-Autoscaler decision, autoscaler='ilp' vs 'greedy'")
    if not lp.available():
        print("    skipped: built without CBC")
        return
    variants = infaas.resnet50_variants()
    for qps in (4.0, 80.0, 700.0):
        problem = infaas.scaling_problem(
            variants, load_qps=qps, slo_ms=1000.0, slack_qps=0.05 * qps
        )
        times = {}
        for name in ("greedy", "ilp"):
            samples = []
            for _ in range(repeats):
                t0 = time.perf_counter()
                _core.infaas.plan_scaling(problem, autoscaler=name)
                samples.append(time.perf_counter() - t0)
            times[name] = statistics.median(samples)
        print(
            f"    {qps:>5g} QPS, {len(variants)} variants: greedy {times['greedy'] * 1e6:8.1f} us, "
            f"ILP {times['ilp'] * 1e6:9.1f} us, ratio {times['ilp'] / times['greedy']:.0f}x"
        )


def bench_fig6_run() -> None:
    from servelab.systems.infaas import experiments  # the harness, only for this part

    print("(d) Fig. 6 fluctuating run, autoscaler='greedy' vs 'ilp'")
    if not lp.available():
        print("    skipped: built without CBC")
        return
    interval, rates = experiments.FIG6_LOADS["fluctuating"]
    horizon = interval * len(rates)
    rows = {}
    for name in ("greedy", "ilp"):
        scenario = experiments.fig6_scenario("fluctuating")
        t0 = time.perf_counter()
        result = servelab.simulate(scenario, scheduler=f"infaas(autoscaler='{name}')", seed=0)
        rows[name] = (time.perf_counter() - t0, experiments.variant_cost(result, horizon))
        violations = result.summary()["slo_violation_rate"]
        print(
            f"    {name:>6}: {rows[name][0]:.3f} s wall, cost ${rows[name][1]:.3f}, "
            f"SLO violations {violations:.1%}"
        )
    print(
        f"    ratio ILP / greedy: time {rows['ilp'][0] / rows['greedy'][0]:.1f}x, "
        f"cost {rows['ilp'][1] / rows['greedy'][1]:.3f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--smoke", action="store_true", help="small sizes, about a second")
    args = parser.parse_args()
    if args.smoke:
        bench_get_variant(total=175, workers=100, repeats=201)
        bench_autoscaler([10], per_arch=8)
        bench_policy_decision(repeats=5)
    else:
        bench_get_variant(total=175, workers=100, repeats=20001)
        bench_autoscaler([50, 100], per_arch=8)
        bench_policy_decision(repeats=201)
        bench_fig6_run()


if __name__ == "__main__":
    main()
