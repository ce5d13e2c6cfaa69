"""`servelab ramsis ...`: the command-line interface of servelab.ramsis.

    servelab ramsis policy   --task image --slo-ms 150 --workers 60 --load 2000 [--out p.json]
    servelab ramsis policy   --task image --workers 60 --loads 200:4000:200 --out set.json
    servelab ramsis evaluate --task image --workers 60 --load 2000 [--policy p.json] [--simulate]
    servelab ramsis simulate --task image --method all --workers 70 --trace
    servelab ramsis simulate --task text --method ramsis --workers 20 --load 1600 --slo-ms 200

Every command takes --data (the RAMSIS data folder with derived/ and twitter_trace/; default
$SERVELAB_RAMSIS_DATA, else ../shared/data/ramsis of a source checkout) and --json
(machine-readable output; simulate's rows carry the scenario that replays each run).

Only argparse-level modules are imported here: each command imports what it runs (numpy, pandas,
the core) when it runs, so that `servelab --help` stays fast.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any

from ...cli_types import (
    conflicting_options,
    ignored_option,
    int_in_range,
    non_negative_float,
    positive_float,
    positive_int32,
    random_seed,
)

DEFAULT_DURATION_S = 30.0  # evaluate --simulate
DEFAULT_SEED = 0
DEFAULT_MAX_GAP = 0.0  # percentage points; 0: no refinement
DEFAULT_TRACE_MODE = "artifact"
DEFAULT_INTERVALS = 100
MAX_INTERVALS = 100_000  # the MDP builder's limit on D
# A policy set is solved per load; far more loads than this is a slip in the step.
MAX_LOADS = 10_000


def _loads(text: str) -> list[float]:
    """'200,400,800' or 'start:stop:step' (stop included) -> loads in queries/s, each positive."""
    try:
        loads = (
            _load_range(text) if ":" in text else [_load(x) for x in text.split(",") if x.strip()]
        )
    except (ValueError, OverflowError):
        raise argparse.ArgumentTypeError(
            f"loads={text!r}: give 'a,b,c' or 'start:stop:step' of positive finite queries/s"
        ) from None
    if not loads:
        raise argparse.ArgumentTypeError(f"loads={text!r}: no load in it")
    return loads


def _load_range(text: str) -> list[float]:
    start, stop, step = (_load(x) for x in text.split(":"))
    count = int(math.floor((stop - start) / step + 1e-9)) + 1
    if count > MAX_LOADS:
        raise argparse.ArgumentTypeError(
            f"loads={text!r}: {count} loads, more than {MAX_LOADS}; take a larger step"
        )
    return [start + i * step for i in range(count)]


def _load(text: str) -> float:
    value = float(text)
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"load {text!r} is not a positive finite number")
    return value


def _common(p: argparse.ArgumentParser, *, load: bool = True) -> None:
    p.add_argument(
        "--task", choices=["image", "text"], default="image", help="the task (default image)"
    )
    p.add_argument("--data", help="the RAMSIS data folder (default $SERVELAB_RAMSIS_DATA)")
    p.add_argument(
        "--slo-ms", type=positive_float, help="latency SLO (default: the task's tightest)"
    )
    p.add_argument(
        "--workers", type=positive_int32, default=60, help="number of workers (default 60)"
    )
    if load:
        p.add_argument("--load", type=positive_float, help="load in queries/s")
    p.add_argument("--json", action="store_true", help="print JSON")


def _task_slo(args: argparse.Namespace) -> tuple[Any, float]:
    from servelab.systems.ramsis.data import get_task  # on use: see the module doc

    task = get_task(args.task, args.data)
    return task, float(args.slo_ms) if args.slo_ms is not None else task.slos_ms[0]


def _policy_row(p: Any) -> dict[str, Any]:
    return {
        "load_qps": p.load_qps,
        "expected_accuracy": p.expected_accuracy,
        "expected_violation": p.expected_violation,
        "feasible": bool(p.feasible),
        "states": p.num_states,
    }


def _cmd_policy(args: argparse.Namespace) -> int:
    from servelab.systems.ramsis import policy as offline  # on use: see the module doc

    if (args.load is None) == (args.loads is None):
        raise ValueError("give exactly one of --load and --loads")
    if args.max_gap is not None and args.loads is None:
        raise ignored_option("--max-gap", "--loads", "it refines a policy set across loads")
    if args.intervals is not None and args.discretisation != "fld":
        raise conflicting_options(
            "--intervals",
            f"--discretisation {args.discretisation}",
            "its slack levels are the profiled latencies",
        )
    task, slo = _task_slo(args)
    common = {
        "slo_ms": slo,
        "workers": args.workers,
        "intervals": args.intervals or DEFAULT_INTERVALS,
        "batching": args.batching,
        "discretisation": args.discretisation,
    }
    if args.load is not None:
        policy = offline.solve(task, load_qps=args.load, **common)
        rows = [_policy_row(policy)]
    else:
        policy = offline.policy_set(
            task, loads=args.loads, max_accuracy_gap=(args.max_gap or DEFAULT_MAX_GAP) / 100.0,
            **common,
        )  # fmt: skip
        rows = [_policy_row(p) for p in policy.policies]
    text = policy.to_json()
    if args.out:
        Path(args.out).write_text(text)
    out = {
        "task": args.task,
        "slo_ms": slo,
        "workers": args.workers,
        "models": list(policy.models),
        "policies": rows,
        "saved_to": args.out,
    }
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    print(f"RAMSIS policies: {args.task}, SLO {slo:g} ms, {args.workers} workers")
    print(f"{'load qps':>10} {'E[accuracy] %':>14} {'E[violation] %':>15} {'feasible':>9}")
    for r in rows:
        print(
            f"{r['load_qps']:>10.1f} {100 * r['expected_accuracy']:>14.3f} "
            f"{100 * r['expected_violation']:>15.4f} {'yes' if r['feasible'] else 'no':>9}"
        )
    if args.out:
        print(f"saved to {args.out}")
    return 0


def _cmd_evaluate(args: argparse.Namespace) -> int:
    # on use: see the module doc
    from servelab.systems.ramsis import experiments, schedulers
    from servelab.systems.ramsis import policy as offline

    if args.load is None:
        raise ValueError("give --load")
    for option, value in (
        ("--duration-s", args.duration_s),
        ("--seed", args.seed),
        ("--cache-dir", args.cache_dir),
    ):
        if value is not None and not args.simulate:
            raise ignored_option(option, "--simulate", "only the simulation uses it")
    task, slo = _task_slo(args)
    if args.policy:
        policy = offline.WorkerPolicy.from_json(offline.read_policy_text(args.policy))
    else:
        policy = offline.solve(task, slo_ms=slo, load_qps=args.load, workers=args.workers)
    mdp = offline.build_mdp(task, slo_ms=slo, load_qps=args.load, workers=args.workers)
    expected = offline.expected_performance(mdp, policy)
    out: dict[str, Any] = {
        "task": args.task,
        "slo_ms": slo,
        "workers": args.workers,
        "load_qps": args.load,
        "expected_accuracy": expected["expected_accuracy"],
        "expected_violation": expected["expected_violation"],
    }
    if args.simulate:
        spec = schedulers.ramsis_spec(policy, load_qps=args.load, cache_dir=args.cache_dir)
        run = experiments.run_experiment(
            task, spec, args.workers, load=args.load, slo_ms=slo,
            duration_s=args.duration_s or DEFAULT_DURATION_S, seed=args.seed or DEFAULT_SEED,
            data=args.data, cache_dir=args.cache_dir,
        )  # fmt: skip
        out["simulated_accuracy"] = run.summary["accuracy_per_satisfied_query"]  # a fraction
        out["simulated_violation"] = run.summary["violation_rate"]
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    print(
        f"RAMSIS expectations: {args.task}, SLO {slo:g} ms, {args.workers} workers, "
        f"{args.load:g} queries/s"
    )
    print(f"  expected accuracy  {100 * out['expected_accuracy']:.3f} %")
    print(f"  expected violation {100 * out['expected_violation']:.4f} %")
    if args.simulate:
        sim_acc = out["simulated_accuracy"]
        print(f"  simulated accuracy  {'-' if sim_acc is None else f'{100 * sim_acc:.3f} %'}")
        print(f"  simulated violation {100 * out['simulated_violation']:.4f} %")
    return 0


def _cmd_simulate(args: argparse.Namespace) -> int:
    # on use: see the module doc
    from servelab.systems.ramsis import experiments, schedulers
    from servelab.systems.ramsis.paper import METHODS

    if (args.load is None) == (not args.trace):
        raise ValueError("give exactly one of --load and --trace")
    _check_simulate_options(args)
    task, slo = _task_slo(args)
    methods = list(METHODS) if args.method == "all" else [args.method]
    rows = []
    for method in methods:
        chosen = method
        if method == "ramsis" and args.policies:
            chosen = schedulers.ramsis_spec(args.policies, load_qps=args.load or 0.0)
        run = experiments.run_experiment(
            task, chosen, args.workers, load=args.load, trace=True if args.trace else None,
            slo_ms=slo, duration_s=args.duration_s, seed=args.seed, data=args.data,
            trace_mode=args.trace_mode or DEFAULT_TRACE_MODE, threads=args.threads,
            cache_dir=args.cache_dir, balancer=args.balancer or "round_robin",
        )  # fmt: skip
        rows.append(
            {
                **run.row(),
                "method": method,
                "scheduler": run.result.meta["scheduler"],
                "scenario": run.scenario,
            }
        )
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    mode = args.trace_mode or DEFAULT_TRACE_MODE
    where = f"{args.load:g} queries/s" if args.load is not None else f"trace ({mode})"
    print(f"{args.task}, SLO {slo:g} ms, {args.workers} workers, {where}")
    print(f"{'method':>16} {'queries':>9} {'accuracy %':>11} {'violation %':>12} {'sim s':>7}")
    for r in rows:
        acc = r["accuracy_per_satisfied_query"]
        print(
            f"{r['method']:>16} {r['queries']:>9} {'-' if acc is None else f'{100 * acc:.3f}':>11} "
            f"{100 * (r['violation_rate'] or 0.0):>12.4f} {r['sim_seconds']:>7.2f}"
        )
    return 0


def _check_simulate_options(args: argparse.Namespace) -> None:
    """Refuses the options that the other options given would leave without effect."""
    if args.trace_mode is not None and not args.trace:
        raise ignored_option("--trace-mode", "--trace", "it says how the trace is replayed")
    if args.policies and args.method not in ("ramsis", "all"):
        raise conflicting_options(
            "--policies", f"--method {args.method}", "only RAMSIS reads a policy set"
        )
    if args.balancer is not None and args.method not in ("ramsis", "all"):
        raise conflicting_options(
            "--balancer", f"--method {args.method}", "only RAMSIS balances over worker queues"
        )
    if args.balancer is not None and args.policies:
        raise conflicting_options(
            "--balancer", "--policies", "a policy file names the balancer it was generated for"
        )


def _cache_dir(p: argparse.ArgumentParser, when: str = "") -> None:
    p.add_argument(
        "--cache-dir",
        help=f"{when}where the files the run's scenario names (the task's profile, RAMSIS's "
        "policies) are written (default: the per-user cache, ~/.cache/servelab/ramsis)",
    )


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Adds the `ramsis` command and its subcommands to servelab's CLI."""
    p = sub.add_parser("ramsis", help="RAMSIS: MDP model-selection policies, baselines, simulation")
    cmds = p.add_subparsers(dest="ramsis_command", required=True)

    pol = cmds.add_parser("policy", help="generate a policy (--load) or a policy set (--loads)")
    _common(pol)
    pol.add_argument("--loads", type=_loads, help="'a,b,c' or 'start:stop:step' queries/s")
    pol.add_argument(
        "--intervals",
        type=int_in_range(1, MAX_INTERVALS, "a positive integer"),
        help=f"with --discretisation fld: slack intervals D (default {DEFAULT_INTERVALS})",
    )
    pol.add_argument(
        "--batching",
        choices=["maximal", "variable"],
        default="maximal",
        help="serve the whole queue (maximal) or allow partial batches (variable); default maximal",
    )
    pol.add_argument(
        "--discretisation",
        choices=["fld", "md"],
        default="fld",
        help="slack discretisation: fixed-length (fld) or model-based (md); default fld",
    )
    pol.add_argument(
        "--max-gap",
        type=non_negative_float,
        help="with --loads: refine until adjacent expected accuracies differ by less "
        "(percentage points; default 0: no refinement)",
    )
    pol.add_argument("--out", help="save the policy (set) as JSON")
    pol.set_defaults(run=_cmd_policy, inputs=("data",))

    ev = cmds.add_parser("evaluate", help="expected accuracy and violation rate of a policy")
    _common(ev)
    ev.add_argument("--policy", help="a worker policy JSON file (default: generate one)")
    ev.add_argument("--simulate", action="store_true", help="also simulate it at --load")
    ev.add_argument(
        "--duration-s",
        type=positive_float,
        help=f"with --simulate: simulated seconds (default {DEFAULT_DURATION_S:g})",
    )
    ev.add_argument(
        "--seed",
        type=random_seed,
        help=f"with --simulate: seed of the simulated arrivals (default {DEFAULT_SEED})",
    )
    _cache_dir(ev, "with --simulate: ")
    ev.set_defaults(run=_cmd_evaluate, inputs=("data", "policy"))

    sim = cmds.add_parser("simulate", help="simulate RAMSIS and its baselines")
    _common(sim)
    sim.add_argument(
        "--method",
        choices=["ramsis", "jellyfish", "model_switching", "all"],
        default="ramsis",
        help="default ramsis",
    )
    sim.add_argument("--trace", action="store_true", help="the Twitter trace instead of --load")
    sim.add_argument(
        "--trace-mode",
        choices=["artifact", "stretched"],
        help=f"with --trace: replay it as the artifact does or stretched to --duration-s "
        f"(default {DEFAULT_TRACE_MODE})",
    )
    sim.add_argument(
        "--duration-s",
        type=positive_float,
        help="simulated seconds (default 30 at a constant load, 300 on the trace)",
    )
    sim.add_argument("--policies", help="RAMSIS: a policy set JSON file instead of generating")
    sim.add_argument(
        "--balancer",
        choices=["round_robin", "shortest_queue"],
        help="RAMSIS: the load balancer its generated policies model and its scheduler uses "
        "(default round_robin, the paper's; a --policies file names its own)",
    )
    sim.add_argument(
        "--seed",
        type=random_seed,
        default=DEFAULT_SEED,
        help=f"seed of the simulated arrivals (default {DEFAULT_SEED})",
    )
    sim.add_argument(
        "--threads",
        type=positive_int32,
        default=1,
        help="threads for table generation (default 1; results do not depend on it)",
    )
    _cache_dir(sim)
    sim.set_defaults(run=_cmd_simulate, inputs=("data", "policies"))
