"""`servelab rrl ...`: the command-line interface of servelab.rrl.

    servelab rrl tune     --space cpu --cores 16 --workload poisson --rate 14 --steps 3000
    servelab rrl tune     --space gpu --workload spiky --rate 61 --objective slo --slo-ms 520 --json
    servelab rrl simulate --space cpu --cores 16 --workload trace --rate 14 --config 2,1,8
    servelab rrl simulate --space cpu --cores 8 --workload dynamic --rate 7 --oracle --json
    servelab rrl fit      --executor "recsys(model='rm2', backend='onednn')" --inter-op 1,2 --json

`tune` runs simulated tuning experiments (the learners against the static oracle) and reports
convergence, the final configuration and regret; `simulate` serves a workload under one
configuration (or the oracle's) on the performance model; `fit` fits the CPU performance model to
measurements of a real executor on this machine. Every command takes --json.

Only argparse-level modules are imported here: each command imports what it runs when it runs, so
that `servelab --help` stays fast.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from ...cli_types import positive_float, positive_int32, random_seed

WORKLOAD_NAMES = ("poisson", "dynamic", "spiky", "trace")


def _knob_values(text: str) -> list[int]:
    try:
        values = [int(x) for x in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"config={text!r}: give the knob values as 'a,b,c' integers"
        ) from None
    return values


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--space", choices=["cpu", "gpu"], default="cpu", help="default cpu")
    p.add_argument(
        "--cores", type=positive_int32, help="cpu: the machine's cores (default: this machine's)"
    )
    p.add_argument("--workload", choices=WORKLOAD_NAMES, default="poisson", help="default poisson")
    p.add_argument(
        "--rate", type=positive_float, required=True, help="mean arrival rate, requests/s"
    )
    p.add_argument("--data", help="trace: the RRL data folder (default $SERVELAB_RRL_DATA)")
    p.add_argument(
        "--objective", choices=["mean", "p95", "slo"], default="mean", help="default mean latency"
    )
    p.add_argument("--slo-ms", type=positive_float, help="objective slo: the p95 target, ms")
    p.add_argument("--episode-requests", type=positive_int32, default=200, help="default 200")
    p.add_argument("--seed", type=random_seed, default=0, help="default 0")
    p.add_argument("--json", action="store_true", help="print JSON")


def _setup(args: argparse.Namespace) -> tuple[Any, Any, Any]:
    from servelab.systems.rrl import model as perf  # on use: see the module doc
    from servelab.systems.rrl import spaces, workloads

    if args.space == "cpu":
        space = spaces.cpu_space(args.cores)
        model = perf.PerfModel(cores=space.knobs[0][1][-1] if args.cores is None else args.cores)
    else:
        if args.cores is not None:
            raise ValueError("--cores applies to --space cpu only")
        space = spaces.gpu_space()
        model = perf.PerfModel()
    arrivals = workloads.workload(args.workload, args.rate, data=args.data)
    return space, model, arrivals


def _cmd_tune(args: argparse.Namespace) -> int:
    from servelab.systems.rrl import experiments, tuning  # on use: see the module doc

    space, model, arrivals = _setup(args)
    methods = tuning.METHODS if args.method == "all" else (args.method,)
    learner = tuning.LearnerConfig(radius=args.radius, beta=args.beta, estimator=args.estimator)
    runs = experiments.compare_methods(
        space,
        arrivals,
        methods,
        seeds=[args.seed],
        learner=learner,
        processes=args.processes,
        objective=args.objective,
        slo_ms=args.slo_ms,
        steps=args.steps,
        episode_requests=args.episode_requests,
        model=model,
    )
    rows = [{**run.summary(), "settings": run.settings} for m in methods for run in runs[m]]
    if args.json:
        print(json.dumps({"space": args.space, "size": space.size, "runs": rows}, indent=2))
        return 0
    print(
        f"{args.space} space of {space.size} configurations, "
        f"{args.workload} at {args.rate:g} requests/s"
    )
    for r in rows:
        converged = (
            f"converged at step {r['converged_step']}" if r["converged"] else "did not converge"
        )
        print(
            f"  {r['method']:>9}: {converged}; final {r['final_config']} "
            f"({r['final_latency_ms']:.1f} ms, {r['final_ratio']:.2f}x the oracle's "
            f"{r['oracle_config']}); mean regret {r['mean_regret_ms']:.1f} ms/episode"
        )
        if "note" in r:
            print(f"  note: {r['note']}")
    return 0


def _cmd_simulate(args: argparse.Namespace) -> int:
    import numpy as np  # on use: see the module doc

    from servelab.systems.rrl import tuning

    space, model, arrivals = _setup(args)
    if (args.config is None) == (not args.oracle):
        raise ValueError("give exactly one of --config and --oracle")
    episodes = tuning.draw_episodes(arrivals, args.episodes, args.episode_requests, args.seed)
    if args.oracle:
        best = tuning.oracle(
            space, episodes, model=model, objective=args.objective, slo_ms=args.slo_ms
        )
        config = int(best["config"])
    else:
        config = space.index_of(args.config)
        best = None
    results = [
        tuning.episode(
            space,
            config,
            e,
            model=model,
            objective=args.objective,
            slo_ms=args.slo_ms,
            seed=args.seed + i,
        )
        for i, e in enumerate(episodes)
    ]
    out = {
        "config": space.describe(config),
        "values": space.values(config),
        "episodes": len(results),
        "mean_ms": float(np.mean([r["mean_ms"] for r in results])),
        "p95_ms": float(np.mean([r["p95_ms"] for r in results])),
        "resource_share": results[0]["resource_share"],
    }
    if best is not None:
        out["oracle"] = best
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    print(
        f"{out['config']}: mean {out['mean_ms']:.1f} ms, p95 {out['p95_ms']:.1f} ms over "
        f"{out['episodes']} episodes of {args.episode_requests} requests (resource share "
        f"{out['resource_share']:.2f})"
    )
    if best is not None and not best["feasible"]:
        print(f"  note: no configuration meets slo_ms={args.slo_ms:g}: the oracle is the fastest")
    return 0


def _int_list(text: str) -> list[int]:
    try:
        return [int(x) for x in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: give integers as 'a,b,c'") from None


def _cmd_fit(args: argparse.Namespace) -> int:
    from servelab.systems.rrl import calibration  # on use: see the module doc

    fit = calibration.fit_from_profiler(
        args.executor,
        threads=args.threads,
        inter_op=args.inter_op,
        concurrency=args.concurrency,
        batch=args.batch,
        repeats=args.repeats,
        seed=args.seed,
    )
    out = fit.summary()
    if args.json:
        print(json.dumps(out, indent=2, default=float))
        return 0
    print(f"{out['executor']}: batches of {out['batch']}, {out['cores']} cores "
          f"(load average {out['load_average']:.1f})")  # fmt: skip
    for r in out["rows"]:
        print(
            f"  inter_op {r['inter_op']}, intra_op {r['intra_op']}, {r['in_service']} in service: "
            f"measured {r['measured_ms']:.2f} ms, fitted {r['fitted_ms']:.2f} ms, "
            f"rms error {r['rms_relative_error']:.3f} over {r['samples']} batches"
        )
    params = ", ".join(f"{k}={v:.3g}" for k, v in out["params"].items())
    print(f"  fitted {params}; rms relative error {out['rms_relative_error']:.3f}")
    return 0


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Adds the `rrl` command and its subcommands to servelab's CLI."""
    p = sub.add_parser("rrl", help="RRL: region-based Q-learning of serving parallelism")
    cmds = p.add_subparsers(dest="rrl_command", required=True)

    tune = cmds.add_parser("tune", help="simulated tuning experiments against the oracle")
    _common(tune)
    tune.add_argument(
        "--method",
        choices=["rrl", "qlearning", "capes", "deeprm", "all"],
        default="all",
        help="default all (the four methods)",
    )
    tune.add_argument("--steps", type=positive_int32, default=2000, help="episodes (default 2000)")
    tune.add_argument(
        "--radius", type=positive_float, default=1.0, help="rrl: region radius, grid steps"
    )
    tune.add_argument(
        "--beta", type=positive_float, default=20.0, help="Boltzmann inverse temperature"
    )
    tune.add_argument(
        "--estimator",
        choices=["eigen", "libtorch"],
        default="eigen",
        help="rrl: where the latency estimator's arithmetic runs (libtorch needs servelab's "
        "torch backend; default eigen)",
    )
    tune.add_argument(
        "--processes", type=positive_int32, default=1, help="worker processes (default 1)"
    )
    tune.set_defaults(run=_cmd_tune, inputs=("data",))

    sim = cmds.add_parser("simulate", help="serve a workload under one configuration")
    _common(sim)
    sim.add_argument("--config", type=_knob_values, help="the knob values, e.g. 2,1,8")
    sim.add_argument("--oracle", action="store_true", help="the static best configuration")
    sim.add_argument("--episodes", type=positive_int32, default=50, help="default 50")
    sim.set_defaults(run=_cmd_simulate, inputs=("data",))

    fit = cmds.add_parser(
        "fit", help="fit the CPU performance model to measurements of a real executor"
    )
    fit.add_argument(
        "--executor", default="recsys(model='rm2', backend='onednn')", help="executor spec"
    )
    fit.add_argument("--threads", type=_int_list, default=[1, 2], help="intra-op threads, 1,2")
    fit.add_argument(
        "--inter-op", type=_int_list, default=[1, 2], help="inter-op threads, 1,2 (1: not varied)"
    )
    fit.add_argument(
        "--concurrency", type=_int_list, default=[1, 2], help="requests in service, 1,2"
    )
    fit.add_argument("--batch", type=positive_int32, default=64, help="queries per request")
    fit.add_argument("--repeats", type=positive_int32, default=20, help="timed batches per cell")
    fit.add_argument("--seed", type=random_seed, default=0, help="default 0")
    fit.add_argument("--json", action="store_true", help="print JSON")
    fit.set_defaults(run=_cmd_fit)
