#!/usr/bin/env python3
"""RAMSIS policy generation time: servelab against the plain numpy reference (reference_ramsis.py).

The paper's Table 2 cases, 60 workers, 2000 QPS, SLO 150 ms, N = 32, Poisson arrivals:
  (a) the 9 Pareto image models, FLD D = 100, maximal batching (3,334 states, 3,979 pairs);
  (b) 60 synthetic models interpolated on that front in 0.5% accuracy steps, FLD, maximal;
  (c) MD with variable batching on (a).
Each case is one policy: build the MDP (transitions included), 100 value-iteration sweeps, the
guarantees. The reference builds the same MDP from Eq. 2 with dense numpy algebra; it runs (a)
(about a minute) and checks it picks the same action in every state; --reference-all runs it on
(b) and (c) too (many minutes). Printed, never asserted.

    python benchmarks/python/bench_ramsis_policy.py            # full (needs ../shared/data)
    python benchmarks/python/bench_ramsis_policy.py --smoke    # a small case, a few seconds
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
import reference_ramsis  # noqa: E402
from timing import best_of  # noqa: E402

from servelab import ramsis  # noqa: E402

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "ramsis"
PAPER_S = {"a": 132.20, "b": 1355.09, "c": 3693.53}  # Table 2 (their machine)
GOAL_S = {"a": 0.1, "b": 10.0, "c": None}


def run_case(name, table, options, repeats, with_reference) -> bool:
    details = None

    def ours():
        nonlocal details
        details = ramsis.solve(table, **options, details=True)
        return details["policy"]

    ours_s, policy = best_of(ours, repeats)
    print(
        f"({name}) {len(table)} models, {details['num_states']} states, "
        f"{details['num_pairs']} pairs, {details['num_transitions']} transitions"
    )
    print(
        f"    servelab: {ours_s * 1e3:9.1f} ms  (build {details['build_s'] * 1e3:.1f}, "
        f"solve {details['solve_s'] * 1e3:.1f}, guarantees {details['evaluate_s'] * 1e3:.1f} ms)"
        f"  expected accuracy {policy.expected_accuracy:.4f}, "
        f"violation {policy.expected_violation:.2e}"
    )
    if GOAL_S.get(name):
        print(f"    goal <= {GOAL_S[name]:g} s: {'met' if ours_s <= GOAL_S[name] else 'MISSED'}")
    if name in PAPER_S:
        print(
            f"    the paper's Table 2: {PAPER_S[name]:.0f} s (ratio {PAPER_S[name] / ours_s:,.0f}x)"
        )
    if not with_reference:
        return True
    lat = np.rint(table.latency_s * 1e9).astype(np.int64)
    ref_options = {
        "slo_ns": int(round(options["slo_ms"] * 1e6)),
        "load_qps": options["load_qps"],
        "workers": options["workers"],
        "max_queue": options.get("max_queue", 32),
        "discretisation": options.get("discretisation", "fld"),
        "intervals": options.get("intervals", 100),
        "batching": options.get("batching", "maximal"),
    }
    ref_s, (mdp, choice, guarantees) = best_of(
        lambda: reference_ramsis.generate(lat, np.asarray(table.accuracy), **ref_options), 1
    )
    ours_mdp = ramsis.build_mdp(table, **options)
    same = np.array_equal(ours_mdp.choice_of(policy), choice)
    print(f"    numpy reference: {ref_s:9.2f} s   ratio {ref_s / ours_s:8.0f}x  (goal >= 100x)")
    print(
        f"    same action in every state: {same}; expected violation "
        f"{guarantees['violation']:.6e} (reference) vs {policy.expected_violation:.6e}"
    )
    return same


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--smoke", action="store_true", help="a small made-up case, with the reference"
    )
    parser.add_argument(
        "--reference-all", action="store_true", help="the reference on (b) and (c) too"
    )
    parser.add_argument("--data", type=Path, default=DATA)
    args = parser.parse_args(argv)

    if args.smoke:
        lat = [
            [(b1 + per * (b - 1)) / 1e3 for b in range(1, 9)]
            for b1, per in ((4, 2.5), (9, 4), (17, 7))
        ]
        table = ramsis.LatencyTable(["fast", "medium", "slow"], [0.6, 0.75, 0.85], np.array(lat))
        options = {"slo_ms": 40.0, "load_qps": 300.0, "workers": 3, "max_queue": 6, "intervals": 10}
        ok = run_case("smoke", table, options, 3, True)
        ok &= run_case(
            "smoke-md-variable",
            table,
            {**options, "discretisation": "md", "batching": "variable"},
            3,
            True,
        )
        return 0 if ok else 1

    if not (args.data / "derived").is_dir():
        print(f"no RAMSIS data at {args.data}: run with --data or --smoke", file=sys.stderr)
        return 1
    task = ramsis.image_task(args.data)
    options = {"slo_ms": 150.0, "load_qps": 2000.0, "workers": 60}
    ok = run_case("a", task.table, options, 5, True)
    synthetic = task.table.interpolated(0.005)
    ok &= run_case("b", synthetic, options, 3, args.reference_all)
    ok &= run_case(
        "c",
        task.table,
        {**options, "discretisation": "md", "batching": "variable"},
        3,
        args.reference_all,
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
