"""`servelab infaas ...`: the command-line interface of servelab.infaas.

    servelab infaas variants [--catalogue resnet50|table2]
    servelab infaas query --accuracy 0.7 --latency-ms 50 [--batch 1] [--workers cpu,gpu]
    servelab infaas autoscale [--qps 1000 --slo-ms 300] [--catalogue table2] [--slack-qps 0]
    servelab infaas simulate [--rate 30] [--slo-ms 60] [--accuracy 0.7] [--count 400] [--seed 0]
    servelab infaas register MODEL --app APP --accuracy 0.8 --registry FILE [--name N]
    servelab infaas query --registry FILE (--app APP | --model N) [--inputs X.npy] [--out Y.npy]
    servelab infaas evaluate [--loads flat,steady,fluctuating] [--no-offline] [--interference]

`autoscale` without --qps reproduces Table 3 (exact ILP, greedy, the paper's numbers).
`register` profiles a model's variants on the real executors into a registry file; `query` with
--registry serves one query on them (without: getVariant over a catalogue, nothing runs). Every
command takes --json. Only argparse-level modules are imported here: each command imports what it
runs when it runs, so that `servelab --help` stays fast.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from ...cli_types import (
    ignored_option,
    int_in_range,
    non_negative_float,
    positive_float,
    random_seed,
)

CATALOGUES = ("resnet50", "table2")


def _print(args: argparse.Namespace, out: Any, text: str) -> int:
    print(json.dumps(out, indent=2) if args.json else text)
    return 0


def _variants(name: str) -> list[dict[str, Any]]:
    from . import catalogue

    return catalogue.resnet50_variants() if name == "resnet50" else catalogue.table2_variants()


def _hardware_list(text: str) -> list[str]:
    names = [x.strip() for x in text.split(",") if x.strip()]
    if not names:
        raise argparse.ArgumentTypeError(
            f"workers={text!r}: give hardware names separated by commas"
        )
    return names


def _cmd_variants(args: argparse.Namespace) -> int:
    variants = _variants(args.catalogue)
    lines = [f"{'variant':<34} {'hardware':<11} {'batch':>5} {'acc':>6} {'lat@1 ms':>9} {'$/s':>8}"]
    for v in variants:
        lines.append(
            f"{v['name']:<34} {v['hardware']:<11} {v['batch_opt']:>5} {v['accuracy']:>6.3f} "
            f"{v['latency_ms'][0]:>9.1f} {v['cost_per_s']:>8.4f}"
        )
    return _print(args, variants, "\n".join(lines))


def _cmd_query(args: argparse.Namespace) -> int:
    from . import catalogue

    if args.registry is not None:
        return _cmd_query_real(args)
    for option in ("app", "model", "input_file", "out"):
        if getattr(args, option) is not None:
            flag = "--inputs" if option == "input_file" else f"--{option}"
            raise ignored_option(flag, "--registry", "it selects and runs a registered model")
    variants = _variants(args.catalogue)
    store = catalogue.metadata_store(variants)
    for hw in args.workers:
        store.add_worker(hw)
    task = variants[0]["task"]
    choice = store.get_variant(
        task=task, accuracy=args.accuracy, latency_ms=args.latency_ms, batch=args.batch
    )
    text = f"{choice['kind']}: {choice['variant']} on worker {choice['worker']}"
    if choice["reason"]:
        text += f"\n  {choice['reason']}"
    return _print(args, choice, text)


def _cmd_autoscale(args: argparse.Namespace) -> int:
    from ...solvers import lp
    from . import autoscaler, paper

    if args.qps is None:
        rows = paper.table3(exact=lp.available())
        return _print(args, rows, paper.format_table3(rows))
    if args.slo_ms is None:
        raise ValueError("--slo-ms is required with --qps")
    problem = autoscaler.scaling_problem(
        _variants(args.catalogue), args.qps, args.slo_ms, slack_qps=args.slack_qps, lam=args.lam
    )
    out: dict[str, Any] = {"greedy": autoscaler.solve_greedy(problem)}
    if lp.available():
        out["exact"] = autoscaler.solve_exact(problem)
        out["greedy_cost_gap"] = autoscaler.cost_gap(out["exact"], out["greedy"])
    lines = []
    for key in ("exact", "greedy"):
        if key in out:
            plan = out[key]
            config = autoscaler.configuration(problem, plan)
            lines.append(
                f"{key:>6}: {config} {plan['running_cost_per_s']:.4f} $/s ({plan['status']})"
            )
    if "greedy_cost_gap" in out:
        lines.append(f"greedy cost gap: {out['greedy_cost_gap']:.1%}")
    return _print(args, out, "\n".join(lines))


def _cmd_simulate(args: argparse.Namespace) -> int:
    import servelab

    from . import catalogue

    profile = catalogue.to_profile(catalogue.resnet50_variants())
    scenario = {
        "profile": profile,
        "workers": [
            {"hardware": "cpu", "count": 2, "models": ["resnet50_tensorflow_cpu_b1"]},
            {"hardware": "inferentia", "count": 1, "models": ["resnet50_neuron_inferentia_b1"]},
            {"hardware": "gpu", "count": 1, "models": ["resnet50_tensorrt_gpu_b1"]},
        ],
        "workload": {
            "arrivals": f"poisson(rate={args.rate})",
            "count": args.count,
            "apps": [{"name": "classify", "slo_ms": args.slo_ms, "accuracy_floor": args.accuracy}],
        },
        "drain_s": 60,
    }
    out = {}
    lines = [f"{'scheduler':<13} {'completed':>9} {'p99 ms':>8} {'SLO viol.':>9} {'$/1k q':>8}"]
    for name in ("infaas", "clipper_plus"):
        s = servelab.simulate(scenario, scheduler=name, seed=args.seed).summary()
        out[name] = s
        lines.append(
            f"{name:<13} {s['completed']:>9} {s['latency_ms']['p99']:>8.1f} "
            f"{s['slo_violation_rate']:>9.1%} {s['cost_per_1k_queries']:>8.4f}"
        )
    return _print(args, out, "\n".join(lines))


def _positive_int_list(text: str) -> list[int]:
    try:
        values = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        values = []
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: give positive integers separated by commas")
    return values


def _cmd_register(args: argparse.Namespace) -> int:
    from pathlib import Path

    from .registry import ModelRegistry

    path = Path(args.registry)
    registry = ModelRegistry.load(path) if path.exists() else ModelRegistry()
    name = args.name or Path(args.model).stem
    out = registry.register_model(
        name, args.model, app=args.app, task=args.task, accuracy=args.accuracy,
        batches=args.batches, threads=args.threads, frameworks=args.frameworks,
        repeats=args.repeats, warmup=args.warmup, progress=not args.json,
    )  # fmt: skip
    registry.save(path)
    out["registry"] = str(path)
    out["profiled"] = registry.variants(model=name)
    lines = [f"{'variant':<40} {'lat@1 ms':>9} {'lat@max ms':>10} {'load ms':>8} {'MB':>7}"]
    for v in out["profiled"]:
        lines.append(
            f"{v['name']:<40} {v['latency_ms'][0]:>9.3f} {v['latency_ms'][-1]:>10.3f} "
            f"{v['load_s'] * 1e3:>8.1f} {v['memory_mb']:>7.1f}"
        )
    lines += [f"skipped {s['variant']}: {s['reason']}" for s in out["skipped"]]
    lines.append(f"saved to {path}")
    return _print(args, out, "\n".join(lines))


def _cmd_query_real(args: argparse.Namespace) -> int:
    import io

    import numpy as np

    from ... import textio
    from . import loading
    from .registry import ModelRegistry
    from .server import InfaasServer

    if (args.app is None) == (args.model is None):
        raise ValueError("query --registry: give exactly one of --app and --model")
    registry = ModelRegistry.load(args.registry)
    name = registry.apps[registry.check_app(args.app)][0] if args.app else args.model
    source = registry.models[registry.check_model(name)]["source"]
    if args.input_file is not None:
        raw = textio.read_bytes(args.input_file, what="query input (.npy / .npz)")
        data = np.load(io.BytesIO(raw), allow_pickle=False)
        inputs = (data["dense"], data["sparse"]) if args.input_file.endswith(".npz") else data
    elif source["kind"] == "torchscript":
        rng = np.random.default_rng(args.seed)  # seeded inputs: the same command, the same output
        inputs = rng.uniform(-1, 1, (args.rows, source["width"])).astype(np.float32)
    else:
        from ... import recsys

        gen = recsys.generator(source["model"], args.seed, scale=source["scale"])
        inputs = gen.first(args.rows)
    inputs = loading.check_inputs(inputs, source)
    hardware = sorted({v["hardware"] for v in registry.variants()})
    with InfaasServer(registry, workers={hw: 1 for hw in hardware}) as server:
        result = server.online_query(
            inputs, app=args.app, model=args.model, latency_ms=args.latency_ms,
            accuracy=args.accuracy,
        )  # fmt: skip
    if args.out is not None:
        np.save(args.out, result.outputs)
    out = dict(result.record, outputs_shape=list(result.outputs.shape))
    if args.out is None and args.json:
        out["outputs"] = result.outputs.tolist()
    r = result.record
    text = (
        f"{r['kind']}: {r['variant']} on worker {r['worker']} ({r['hardware']}): {r['rows']} rows "
        f"in {r['batches']} batches, {r['latency_ms']:.3f} ms (load {r['load_ms']:.1f} ms)"
    )
    if r["reason"]:
        text += f"\n  {r['reason']}"
    text += f"\noutputs {list(result.outputs.shape)}" + (
        f" saved to {args.out}" if args.out else ""
    )
    return _print(args, out, text)


_FIG6_LOADS = ("flat", "steady", "fluctuating")


def _load_list(text: str) -> list[str]:
    names = [x.strip() for x in text.split(",") if x.strip()]
    bad = [n for n in names if n not in _FIG6_LOADS]
    if not names or bad:
        raise argparse.ArgumentTypeError(
            f"loads={text!r}: give some of {','.join(_FIG6_LOADS)} separated by commas"
        )
    return names


def _cmd_evaluate(args: argparse.Namespace) -> int:
    from . import experiments

    out: dict[str, Any] = {"fig6": {}}
    lines = []
    for load in args.loads:
        rows = experiments.fig6(load=load, seed=args.seed)
        out["fig6"][load] = rows
        lines += [f"Fig. 6, {load} load:", experiments.format_fig6(rows), ""]
    if not args.no_offline:
        off = experiments.offline_colocation(seed=args.seed)
        out["offline"] = off
        lines.append("Sec. 6.3.2, online + offline on one CPU machine:")
        for key, r in off.items():
            lines.append(
                f"  {key:<12} online SLO violations {r['online_violation_rate']:.1%}, offline "
                f"{r['offline_completed']}/{r['offline_queries']} done "
                f"({r['offline_in_lulls']} started in lulls)"
            )
    if args.interference:
        fit = experiments.fit_interference(seed=args.seed)
        out["interference"] = fit
        lines.append("interference (median batch ms, one worker alone vs two co-located):")
        for p in fit["points"]:
            lines.append(
                f"  {p['executor']} batch {p['batch']}: alone {p['median_alone_ms']:.3f}, "
                f"co-located {p['median_together_ms']:.3f}, alpha {p['alpha']:.3f}"
            )
        lines.append(f"  fitted: {fit['spec']} (median alpha {fit['median_alpha']:.3f}, >= 0)")
    return _print(args, out, "\n".join(lines))


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Adds the `infaas` command and its subcommands to servelab's CLI."""
    p = sub.add_parser("infaas", help="INFaaS: model-less serving, variant selection, autoscaling")
    cmds = p.add_subparsers(dest="infaas_command", required=True)

    def common(c: argparse.ArgumentParser, catalogue: str = "resnet50") -> None:
        c.add_argument("--catalogue", choices=CATALOGUES, default=catalogue, help="variants")
        c.add_argument("--json", action="store_true", help="print JSON")

    var = cmds.add_parser("variants", help="the variant catalogue")
    common(var)
    var.set_defaults(run=_cmd_variants)

    qry = cmds.add_parser("query", help="getVariant for one query's goals (Sec. 4.1)")
    common(qry)
    qry.add_argument("--accuracy", type=non_negative_float, default=0.0, help="floor, 0..1")
    qry.add_argument("--latency-ms", type=non_negative_float, default=0.0, help="0: none")
    qry.add_argument(
        "--batch", type=int_in_range(1, 4096, "an integer in 1..4096"), default=1, help="items"
    )
    qry.add_argument(
        "--workers",
        type=_hardware_list,
        default=["cpu", "inferentia", "gpu"],
        help="hardware of the workers, comma-separated (default cpu,inferentia,gpu)",
    )
    real = qry.add_argument_group(
        "real serving (with --registry; the catalogue options are unused)"
    )
    real.add_argument("--registry", help="registry file written by servelab infaas register")
    real.add_argument("--app", help="the application (with --accuracy, --latency-ms)")
    real.add_argument("--model", help="a registered model (any of its variants)")
    real.add_argument(
        "--inputs", dest="input_file", help=".npy [rows, width] (.npz dense, sparse for recsys)"
    )
    real.add_argument(
        "--rows", type=int_in_range(1, 1 << 20, "an integer in 1..2**20"), default=1,
        help="rows of seeded random inputs without --inputs (default 1)",
    )  # fmt: skip
    real.add_argument("--seed", type=random_seed, default=0, help="of the random inputs")
    real.add_argument("--out", help="save the outputs to this .npy file")
    qry.set_defaults(run=_cmd_query, inputs=("registry", "input_file"))

    reg = cmds.add_parser("register", help="profile a model's variants into a registry file")
    reg.add_argument("model", help="a TorchScript file (torch.jit.save) or a recsys model name")
    reg.add_argument("--registry", required=True, help="registry JSON file (created if absent)")
    reg.add_argument("--name", help="registered name (default: the file's stem or model name)")
    reg.add_argument("--app", help="application it serves (default: --task)")
    reg.add_argument("--task", default="classification", help="default classification")
    reg.add_argument("--accuracy", type=non_negative_float, required=True, help="0..1")
    reg.add_argument("--batches", type=_positive_int_list, default=[1, 4, 8], help="1,4,8")
    reg.add_argument("--threads", type=_positive_int_list, default=[1, 2], help="1,2")
    reg.add_argument(
        "--frameworks", type=lambda t: [x.strip() for x in t.split(",") if x.strip()],
        help="comma-separated (default: every one of the model's kind but torchscript-frozen)",
    )  # fmt: skip
    reg.add_argument(
        "--repeats", type=int_in_range(1, 10**6, "an integer >= 1"), default=3, help="per cell"
    )
    reg.add_argument(
        "--warmup", type=int_in_range(0, 10**6, "an integer >= 0"), default=1, help="per cell"
    )
    reg.add_argument("--json", action="store_true", help="print JSON")
    reg.set_defaults(run=_cmd_register, inputs=("model",))

    aut = cmds.add_parser("autoscale", help="the Model-Autoscaler: Table 3, or one (QPS, SLO)")
    common(aut, catalogue="table2")
    aut.add_argument("--qps", type=non_negative_float, help="load (default: Table 3's rows)")
    aut.add_argument("--slo-ms", type=positive_float, help="SLO (with --qps)")
    aut.add_argument("--slack-qps", type=non_negative_float, default=0.0, help="headroom")
    aut.add_argument("--lam", type=non_negative_float, default=0.0, help="lambda (1/s)")
    aut.set_defaults(run=_cmd_autoscale)

    sim = cmds.add_parser("simulate", help="infaas vs clipper_plus on the ResNet50 catalogue")
    sim.add_argument("--rate", type=positive_float, default=30.0, help="queries/s")
    sim.add_argument("--slo-ms", type=positive_float, default=60.0, help="SLO")
    sim.add_argument("--accuracy", type=non_negative_float, default=0.7, help="floor, 0..1")
    sim.add_argument(
        "--count",
        type=int_in_range(1, 10**7, "an integer in 1..10**7"),
        default=400,
        help="queries (default 400)",
    )
    sim.add_argument("--seed", type=random_seed, default=0, help="default 0")
    sim.add_argument("--json", action="store_true", help="print JSON")
    sim.set_defaults(run=_cmd_simulate)

    ev = cmds.add_parser("evaluate", help="Fig. 6 cost panels and online + offline co-location")
    ev.add_argument(
        "--loads", type=_load_list, default=["flat", "steady", "fluctuating"],
        help="Fig. 6 loads, comma-separated (default flat,steady,fluctuating)",
    )  # fmt: skip
    ev.add_argument("--no-offline", action="store_true", help="skip the Sec. 6.3.2 run")
    ev.add_argument(
        "--interference", action="store_true",
        help="also fit alpha from two co-located recsys executors (real runs; a quiet machine)",
    )  # fmt: skip
    ev.add_argument("--seed", type=random_seed, default=0, help="default 0")
    ev.add_argument("--json", action="store_true", help="print JSON")
    ev.set_defaults(run=_cmd_evaluate)
