"""`servelab ramsis ...`: the command-line interface of servelab.ramsis.

    servelab ramsis policy   --task image --slo-ms 150 --workers 60 --load 2000 [--out p.json]
    servelab ramsis policy   --task image --workers 60 --loads 200:4000:200 --out set.json
    servelab ramsis evaluate --task image --workers 60 --load 2000 [--policy p.json] [--simulate]
    servelab ramsis simulate --task image --method all --workers 70 --trace
    servelab ramsis simulate --task text --method ramsis --workers 20 --load 1600 --slo-ms 200

Every command takes --data (the RAMSIS data folder with derived/ and twitter_trace/; default
$SERVELAB_RAMSIS_DATA) and --json (machine-readable output).
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any


def _loads(text: str) -> list[float]:
    """'200,400,800' or 'start:stop:step' (stop included) -> loads in queries/s."""
    try:
        if ":" in text:
            start, stop, step = (float(x) for x in text.split(":"))
            if not step > 0:
                raise ValueError
            count = int(math.floor((stop - start) / step + 1e-9)) + 1
            return [start + i * step for i in range(count)]
        return [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"loads={text!r}: give 'a,b,c' or 'start:stop:step' in queries/s"
        ) from None


def _common(p: argparse.ArgumentParser, *, load: bool = True) -> None:
    p.add_argument("--task", choices=["image", "text"], default="image", help="default image")
    p.add_argument("--data", help="the RAMSIS data folder (default $SERVELAB_RAMSIS_DATA)")
    p.add_argument("--slo-ms", type=float, help="latency SLO (default: the task's tightest)")
    p.add_argument("--workers", type=int, default=60, help="number of workers (default 60)")
    if load:
        p.add_argument("--load", type=float, help="load in queries/s")
    p.add_argument("--json", action="store_true", help="print JSON")


def _task_slo(args: argparse.Namespace) -> tuple[Any, float]:
    from .simulate import get_task

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
    from .. import _core

    task, slo = _task_slo(args)
    if (args.load is None) == (args.loads is None):
        raise ValueError("give exactly one of --load and --loads")
    common = {
        "slo_ms": slo,
        "workers": args.workers,
        "intervals": args.intervals,
        "batching": args.batching,
        "discretisation": args.discretisation,
    }
    if args.load is not None:
        made = _core.ramsis.generate_policy(task.table, load_qps=args.load, **common)
        policy = made["policy"]
        rows = [_policy_row(policy)]
        text = policy.to_json()
    else:
        policy = _core.ramsis.generate_policy_set(
            task.table, args.loads, max_accuracy_gap=args.max_gap / 100.0, **common
        )
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
    from .. import _core
    from .simulate import simulate

    task, slo = _task_slo(args)
    if args.load is None:
        raise ValueError("give --load")
    if args.policy:
        policy = _core.ramsis.WorkerPolicy.from_json(Path(args.policy).read_text())
    else:
        policy = _core.ramsis.generate_policy(
            task.table, slo_ms=slo, load_qps=args.load, workers=args.workers
        )["policy"]
    mdp = _core.ramsis.build_mdp(task.table, slo_ms=slo, load_qps=args.load, workers=args.workers)
    expected = _core.ramsis.evaluate(mdp, policy)
    out: dict[str, Any] = {
        "task": args.task,
        "slo_ms": slo,
        "workers": args.workers,
        "load_qps": args.load,
        "expected_accuracy": expected["expected_accuracy"],
        "expected_violation": expected["expected_violation"],
    }
    if args.simulate:
        run = simulate(
            task, _core.ramsis.ramsis_scheduler(policy, load_qps=args.load), args.workers,
            load=args.load, slo_ms=slo, duration_s=args.duration_s, seed=args.seed, data=args.data,
        )  # fmt: skip
        acc = run.summary["accuracy_per_satisfied_query"]
        out["simulated_accuracy"] = None if acc is None else acc / 100.0
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
    from .simulate import METHODS, scheduler, simulate

    task, slo = _task_slo(args)
    if (args.load is None) == (not args.trace):
        raise ValueError("give exactly one of --load and --trace")
    methods = list(METHODS) if args.method == "all" else [args.method]
    rows = []
    for method in methods:
        chosen: Any = method
        if method == "ramsis" and args.policies:
            chosen = scheduler(args.policies, load_qps=args.load or 0.0)
        run = simulate(
            task, chosen, args.workers, load=args.load, trace=True if args.trace else None,
            slo_ms=slo, duration_s=args.duration_s, seed=args.seed, data=args.data,
            trace_mode=args.trace_mode, threads=args.threads,
        )  # fmt: skip
        rows.append({**run.row(), "method": method, "scheduler": run.result.meta["scheduler"]})
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    where = f"{args.load:g} queries/s" if args.load is not None else f"trace ({args.trace_mode})"
    print(f"{args.task}, SLO {slo:g} ms, {args.workers} workers, {where}")
    print(f"{'method':>16} {'queries':>9} {'accuracy %':>11} {'violation %':>12} {'sim s':>7}")
    for r in rows:
        acc = r["accuracy_per_satisfied_query"]
        print(
            f"{r['method']:>16} {r['queries']:>9} {'-' if acc is None else f'{acc:.3f}':>11} "
            f"{100 * (r['violation_rate'] or 0.0):>12.4f} {r['sim_seconds']:>7.2f}"
        )
    return 0


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Adds the `ramsis` command and its subcommands to servelab's CLI."""
    p = sub.add_parser("ramsis", help="RAMSIS: MDP model-selection policies, baselines, simulation")
    cmds = p.add_subparsers(dest="ramsis_command", required=True)

    pol = cmds.add_parser("policy", help="generate a policy (--load) or a policy set (--loads)")
    _common(pol)
    pol.add_argument("--loads", type=_loads, help="'a,b,c' or 'start:stop:step' queries/s")
    pol.add_argument("--intervals", type=int, default=100, help="FLD intervals D (default 100)")
    pol.add_argument("--batching", choices=["maximal", "variable"], default="maximal")
    pol.add_argument("--discretisation", choices=["fld", "md"], default="fld")
    pol.add_argument(
        "--max-gap",
        type=float,
        default=0.0,
        help="refine --loads until adjacent expected accuracies differ by less (percentage "
        "points; default 0: no refinement)",
    )
    pol.add_argument("--out", help="save the policy (set) as JSON")
    pol.set_defaults(run=_cmd_policy)

    ev = cmds.add_parser("evaluate", help="expected accuracy and violation rate of a policy")
    _common(ev)
    ev.add_argument("--policy", help="a worker policy JSON file (default: generate one)")
    ev.add_argument("--simulate", action="store_true", help="also simulate it at --load")
    ev.add_argument("--duration-s", type=float, default=30.0, help="simulated time (default 30)")
    ev.add_argument("--seed", type=int, default=0)
    ev.set_defaults(run=_cmd_evaluate)

    sim = cmds.add_parser("simulate", help="simulate RAMSIS and its baselines")
    _common(sim)
    sim.add_argument(
        "--method",
        choices=["ramsis", "jellyfish", "model_switching", "all"],
        default="ramsis",
        help="default ramsis",
    )
    sim.add_argument("--trace", action="store_true", help="the Twitter trace instead of --load")
    sim.add_argument("--trace-mode", choices=["artifact", "stretched"], default="artifact")
    sim.add_argument("--duration-s", type=float, help="default 30 (constant) or 300 (trace)")
    sim.add_argument("--policies", help="RAMSIS: a policy set JSON file instead of generating")
    sim.add_argument("--seed", type=int, default=0)
    sim.add_argument("--threads", type=int, default=1, help="threads for table generation")
    sim.set_defaults(run=_cmd_simulate)
