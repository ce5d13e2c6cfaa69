#!/usr/bin/env python3
"""MDP solvers against plain numpy: 100 undiscounted value-iteration sweeps (as RAMSIS runs)
plus 1,000 power-iteration steps of the resulting policy's stationary distribution.

A random sparse MDP the size of RAMSIS's per-worker MDP (3,334 states, 4,000 state-action pairs,
about 30 transitions per pair) and one with variable batching's 100k pairs. Checks first that
servelab and the numpy reference (reference_mdp.py) agree (values bit-identical to the ordered
reference), then prints times and the ratio against the faster numpy variant. Printed, never
asserted.

    python benchmarks/python/bench_mdp.py           # full size (`make bench`)
    python benchmarks/python/bench_mdp.py --smoke   # small (the test suite)
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
import reference_mdp  # noqa: E402
from timing import best_of  # noqa: E402

from servelab.solvers import mdp  # noqa: E402

SWEEPS, STEPS = 100, 1000


def servelab_run(model: mdp.Mdp, start: np.ndarray, threads: int):
    solution = mdp.value_iteration(model, max_iterations=SWEEPS, tolerance=0.0, threads=threads)
    chain = mdp.stationary_distribution(
        model, solution.policy, max_iterations=STEPS, tolerance=0.0, start=start, threads=threads
    )
    return solution, chain


def numpy_run(csr: dict, start: np.ndarray, ordered: bool):
    values, policy = reference_mdp.value_iteration(csr, SWEEPS, ordered=ordered)
    return values, policy, reference_mdp.stationary_distribution(csr, policy, STEPS, start)


def case(name: str, states: int, pairs: int, repeats: int, reference_repeats: int) -> int:
    csr = reference_mdp.random_mdp(states, pairs, 30, seed=5)
    model = mdp.Mdp(**csr)
    start = np.zeros(states)
    start[0] = 1.0  # RAMSIS starts the power iteration in the empty-queue state

    ours_s, (solution, chain) = best_of(lambda: servelab_run(model, start, 0), repeats)
    one_s, _ = best_of(lambda: servelab_run(model, start, 1), repeats)
    ordered_s, (values, policy, distribution) = best_of(
        lambda: numpy_run(csr, start, True), reference_repeats
    )
    direct_s, (values_direct, _, _) = best_of(
        lambda: numpy_run(csr, start, False), reference_repeats
    )
    if not (
        np.array_equal(solution.values, values)
        and np.array_equal(solution.policy, policy)
        and np.array_equal(chain.distribution, distribution)
        and np.allclose(values_direct, values, rtol=1e-12, atol=0)
    ):
        print(f"MISMATCH ({name}): servelab and the numpy reference disagree", file=sys.stderr)
        return 1
    vi_s, _ = best_of(
        lambda: mdp.value_iteration(model, max_iterations=SWEEPS, tolerance=0.0), repeats
    )
    reference_s = min(ordered_s, direct_s)
    print(f"{name}: {states} states, {model.num_pairs} pairs, {model.num_transitions} transitions")
    print(f"  servelab, {SWEEPS} sweeps + {STEPS} power steps: {ours_s * 1e3:9.2f} ms")
    print(f"  servelab, the same on one thread:         {one_s * 1e3:9.2f} ms")
    print(
        f"  servelab, {SWEEPS} sweeps alone:                {vi_s * 1e3:9.2f} ms  "
        f"({vi_s / SWEEPS * 1e6:.1f} us per sweep)"
    )
    print(f"  numpy, ordered sums (bit-identical):      {ordered_s * 1e3:9.2f} ms")
    print(f"  numpy, reduceat (direct):                 {direct_s * 1e3:9.2f} ms")
    print(f"  ratio vs the faster numpy:                {reference_s / ours_s:9.1f}x")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--smoke", action="store_true", help="small MDPs, one repeat")
    args = parser.parse_args(argv)
    if args.smoke:
        status = case("small (smoke)", 300, 400, 1, 1)
    else:
        status = case("RAMSIS size", 3334, 4000, 5, 2)
        status |= case("variable batching size", 3334, 100_000, 3, 1)
    if status == 0:
        print("  values, policies and distributions identical to the ordered numpy reference")
    return status


if __name__ == "__main__":
    sys.exit(main())
