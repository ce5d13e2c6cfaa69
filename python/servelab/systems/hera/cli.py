"""`servelab hera ...`: the command-line interface of servelab.hera.

    servelab hera profile  [--models ncf,dlrm_d] [--node xeon-gold-6242] [--curves]
    servelab hera affinity [--models ...]
    servelab hera schedule --qps 4000 [--selection all] [--low-share 0.3] [--seed 0]
    servelab hera simulate [--pair dlrm_b ncf]       # node-level co-location (Fig. 9, 11)
    servelab hera simulate --fig14 [--pair dlrm_d ncf]  # Algorithm 3 vs PARTIES under load changes
    servelab hera simulate --managed --loads 0.5 0.4    # hera_rmu and parties in servelab.simulate
    servelab hera simulate --fig14 --managed         # Fig. 14 as a Scenario under those schedulers
    servelab hera simulate --managed --fixed-service # the same without hera_contention

Every command takes --json. The models default to Table I's, the node to Table II's; --cores,
--ways and --bandwidth-gbs change the node. Only argparse-level modules are imported here: each
command imports what it runs when it runs, so that `servelab --help` stays fast.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from ...cli_types import int_in_range, non_negative_float, positive_float, random_seed

SELECTIONS = ("hera", "hera_random", "random", "deeprecsys")


def _model_list(text: str) -> list[str]:
    names = [x.strip() for x in text.split(",") if x.strip()]
    if not names:
        raise argparse.ArgumentTypeError(f"models={text!r}: give names separated by commas")
    return names


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--models", type=_model_list, help="comma-separated Table I names (default: all eight)"
    )
    p.add_argument(
        "--node", default="xeon-gold-6242", help="node preset (default xeon-gold-6242, Table II)"
    )
    p.add_argument(
        "--cores", type=int_in_range(2, 1024, "an integer in 2..1024"), help="cores of the node"
    )
    p.add_argument(
        "--ways", type=int_in_range(2, 64, "an integer in 2..64"), help="LLC ways of the node"
    )
    p.add_argument(
        "--bandwidth-gbs", type=positive_float, help="memory bandwidth of the node (GB/s)"
    )
    p.add_argument(
        "--threshold",
        type=positive_float,
        default=0.5,
        help="scalability slope threshold (default 0.5)",
    )
    p.add_argument("--json", action="store_true", help="print JSON")


def _offline(args: argparse.Namespace) -> Any:
    from . import offline, specs

    fields = {
        k: v
        for k, v in (
            ("cores", args.cores),
            ("llc_ways", args.ways),
            ("mem_bandwidth_gbs", args.bandwidth_gbs),
        )
        if v is not None
    }
    return offline.build(args.models, specs.node(args.node, **fields), threshold=args.threshold)


def _print(args: argparse.Namespace, out: Any, text: str) -> int:
    print(json.dumps(out, indent=2) if args.json else text)
    return 0


def _cmd_profile(args: argparse.Namespace) -> int:
    off = _offline(args)
    rows = off.summary()
    if args.curves:
        for r in rows:
            r["workers_curve"] = off.workers_curve(r["model"]).tolist()
            r["ways_curve"] = off.ways_curve(r["model"]).tolist()
    lines = [
        f"  {r['label']:8s} {r['scalability']:4s} slope {r['slope']:5.2f}  "
        f"max workers {r['max_workers']:2d}  {r['isolated_qps']:9.1f} QPS  "
        f"1-worker latency {r['latency_ms']:6.2f} ms (SLA {r['sla_ms']:g})"
        for r in rows
    ]
    return _print(args, {"node": off.node.name, "models": rows}, "\n".join(lines))


def _cmd_affinity(args: argparse.Namespace) -> int:
    off = _offline(args)
    out = {
        "models": off.names,
        "affinity": off.affinity.tolist(),
        "measured": off.measured_colocation().tolist(),
        "pearson": off.pearson() if len(off.names) >= 3 else None,
    }
    head = "          " + " ".join(f"{n[:7]:>7s}" for n in off.names)
    lines = [head] + [
        f"{a[:9]:9s} " + " ".join(f"{v:7.3f}" for v in row)
        for a, row in zip(off.names, off.affinity, strict=False)
    ]
    if out["pearson"] is not None:
        lines.append(f"Pearson(affinity, co-located QPS) = {out['pearson']:.3f} (paper: 0.95)")
    return _print(args, out, "\n".join(lines))


def _cmd_schedule(args: argparse.Namespace) -> int:
    from . import cluster

    off = _offline(args)
    target = cluster.targets_for(off, args.qps, args.low_share)
    selections = SELECTIONS if args.selection == "all" else (args.selection,)
    plans = [
        cluster.schedule(off, target, s, seed=args.seed, max_servers=args.max_servers)
        for s in selections
    ]
    out = [p.to_dict() for p in plans]
    lines = [
        f"  {p.selection:12s} {p.num_servers:6d} servers  EMU {p.emu:6.1%}"
        + ("" if p.feasible else f"  INFEASIBLE: {p.reason}")
        for p in plans
    ]
    code = _print(args, out, "\n".join(lines))
    return code if all(p.feasible for p in plans) else 1


def _cmd_simulate(args: argparse.Namespace) -> int:
    from . import selection

    off = _offline(args)
    if args.fig14:
        return _fig14_managed(args, off) if args.managed else _fig14(args, off)
    if args.managed:
        return _managed(args, off)
    if args.pair:
        a, b = args.pair
        p = off.pair(a, b)
        text = (
            f"  {a} x{p['workers_a']} ({p['ways_a']} ways) {p['qps_a']:.1f} QPS "
            f"= {p['load_a']:.0%} of alone; {b} x{p['workers_b']} ({p['ways_b']} ways) "
            f"{p['qps_b']:.1f} QPS = {p['load_b']:.0%}; EMU {p['emu']:.0%}"
            + ("" if p["feasible"] else f"  INFEASIBLE: {p['reason']}")
        )
        return _print(args, p, text)
    summary = selection.emu_summary(off)
    lines = [
        f"  {s:12s} EMU min {e['min']:6.1%} median {e['median']:6.1%} "
        f"mean {e['mean']:6.1%} max {e['max']:6.1%}"
        for s, e in summary.items()
    ]
    lines.append("  paper (Fig. 11): DeepRecSys 100%, Random 82-147%, Hera never below 100%")
    return _print(args, summary, "\n".join(lines))


def _fig14(args: argparse.Namespace, off: Any) -> int:
    from . import rmu

    a, b = args.pair or ("dlrm_d", "ncf")
    loads = rmu.fig14_loads(args.windows)
    out = {}
    for c in rmu.CONTROLLERS:
        r = rmu.run_node(off, a, b, loads, c)
        out[c] = {k: (v.tolist() if hasattr(v, "tolist") else v) for k, v in r.items()}
    lines = [
        f"  {c:8s} windows over SLA: {a} {r['violations_a']}, {b} {r['violations_b']} "
        f"(of {args.windows}); "
        f"worst p95/SLA {max(max(r['tail_over_sla_a']), max(r['tail_over_sla_b'])):.2f}"
        for c, r in out.items()
    ]
    return _print(args, out, "\n".join(lines))


def _fig14_managed(args: argparse.Namespace, off: Any) -> int:
    import numpy as np

    from . import fig14

    a, b = args.pair or ("dlrm_d", "ncf")
    runs = fig14.run_fig14(
        off, a, b, windows=args.windows, window_s=args.window_s, machine=not args.fixed_service
    )
    out = {
        m: {
            "over": r["over"],
            "over_settled": r["over_settled"],
            "tail_over_sla": np.where(np.isnan(r["tails"]), None, r["tails"]).tolist(),
        }
        for m, r in runs.items()
    }
    lines = [
        f"  {m:9s} windows over SLA: {a} {r['over'][0]}, {b} {r['over'][1]} (of {args.windows}); "
        f"3 windows after each load change on: {a} {r['over_settled'][0]}, "
        f"{b} {r['over_settled'][1]}"
        for m, r in out.items()
    ]
    lines.append("  paper (Fig. 14): Hera's RMU holds the SLA after each change, PARTIES spikes")
    return _print(args, out, "\n".join(lines))


def _managed(args: argparse.Namespace, off: Any) -> int:
    from . import experiments

    a, b = args.pair or ("dlrm_d", "ncf")
    load_a, load_b = args.loads
    runs = experiments.run_managed(
        off, a, b, load_a, load_b, duration_s=args.duration_s, machine=not args.fixed_service
    )
    out = {
        m: {"emu": r["emu"], "by_app": r["by_app"], "summary": r["summary"]}
        for m, r in runs.items()
    }
    lines = [
        f"  {m:9s} EMU {r['emu']:6.1%}  SLO violations: "
        + ", ".join(f"{app} {v['slo_violation_rate']:.1%}" for app, v in r["by_app"].items())
        for m, r in out.items()
    ]
    return _print(args, out, "\n".join(lines))


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Adds the `hera` command and its subcommands to servelab's CLI."""
    p = sub.add_parser("hera", help="Hera: co-locating recommendation models on CPU servers")
    cmds = p.add_subparsers(dest="hera_command", required=True)

    prof = cmds.add_parser("profile", help="profile the models: QPS tables, worker scalability")
    _common(prof)
    prof.add_argument("--curves", action="store_true", help="include Fig. 6 and 7 curves")
    prof.set_defaults(run=_cmd_profile)

    aff = cmds.add_parser(
        "affinity", help="Algorithm 1's affinity table and its Pearson correlation"
    )
    _common(aff)
    aff.set_defaults(run=_cmd_affinity)

    sch = cmds.add_parser("schedule", help="Algorithm 2 and the baselines: servers for target QPS")
    _common(sch)
    sch.add_argument(
        "--qps", type=non_negative_float, required=True, help="target QPS of every model"
    )
    sch.add_argument(
        "--low-share",
        type=non_negative_float,
        help="skewed targets: share of the low models (0..1)",
    )
    sch.add_argument(
        "--selection", choices=SELECTIONS + ("all",), default="all", help="default all"
    )
    sch.add_argument(
        "--seed", type=random_seed, default=0, help="seed of the random policies (default 0)"
    )
    sch.add_argument(
        "--max-servers",
        type=int_in_range(1, 10**9, "a positive integer"),
        default=100_000,
        help="default 100000",
    )
    sch.set_defaults(run=_cmd_schedule)

    sim = cmds.add_parser(
        "simulate", help="node-level co-location: EMU of each policy, or one pair"
    )
    _common(sim)
    sim.add_argument("--pair", nargs=2, metavar=("A", "B"), help="run two models on one node")
    sim.add_argument(
        "--fig14", action="store_true", help="Fig. 14's load changes under Hera's RMU and PARTIES"
    )
    sim.add_argument(
        "--managed",
        action="store_true",
        help="the registered schedulers hera_rmu and parties, simulated (with --fig14: Fig. 14 "
        "as a Scenario)",
    )
    sim.add_argument(
        "--fixed-service",
        action="store_true",
        help="with --managed: one machine per worker and service times fixed at the start "
        "(default: the node as a machine whose contention follows the managers' partition)",
    )
    sim.add_argument(
        "--loads",
        nargs=2,
        type=positive_float,
        default=(0.5, 0.4),
        metavar=("A", "B"),
        help="with --managed: loads as fractions of each model's max load (default 0.5 0.4)",
    )
    sim.add_argument(
        "--duration-s",
        type=positive_float,
        default=10.0,
        help="with --managed: simulated seconds (default 10)",
    )
    sim.add_argument(
        "--windows",
        type=int_in_range(3, 100_000, "an integer in 3..100000"),
        default=60,
        help="with --fig14 (default 60)",
    )
    sim.add_argument(
        "--window-s",
        type=positive_float,
        default=1.0,
        help="with --fig14 --managed: seconds per window (default 1)",
    )
    sim.set_defaults(run=_cmd_simulate)
