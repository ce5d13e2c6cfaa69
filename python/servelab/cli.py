"""The ``servelab`` command line. Every subcommand takes ``--json`` for machine-readable output."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from . import smoke
from .backends import build_info


def _print_build_info(info: dict[str, Any]) -> None:
    print(
        f"servelab {info['version']} ({info['build_type']}, {info['compiler']}, "
        f"C++ {info['cxx_standard']})"
    )
    for name, b in info["backends"].items():
        compiled = f"compiled ({b['compiled_version']})" if b["compiled"] else "not compiled"
        usable = "usable: yes" if b["usable"] else f"usable: no ({b['reason']})"
        print(f"  {name:<7} {compiled:<28} {usable}")
    print(f"  lp      {info['lp_solver'] or 'not compiled (apt-get install coinor-libcbc-dev)'}")


def _cmd_info(args: argparse.Namespace) -> int:
    info = build_info()
    if args.json:
        print(json.dumps(info, indent=2))
    else:
        _print_build_info(info)
    return 0


def _cmd_smoke(args: argparse.Namespace) -> int:
    info = build_info()
    results = smoke.run_all(batch=args.batch)
    failed = [r["backend"] for r in results if r["passed"] is False]
    if args.json:
        print(json.dumps({"build_info": info, "smoke": results, "failed": failed}, indent=2))
    else:
        _print_build_info(info)
        print(f"\nSmoke work: MLP {list(smoke.DEFAULT_WIDTHS)} on a batch of {args.batch}")
        for r in results:
            if not r["ran"]:
                print(f"  {r['backend']:<7} skipped: {r['reason']}")
                continue
            verdict = "ok" if r["passed"] else "MISMATCH"
            line = (
                f"  {r['backend']:<7} {verdict}: "
                f"max |diff| vs {r['against']} = {r['max_abs_error']:.2e}"
            )
            if "speedup_vs_reference" in r:
                line += f", {r['speedup_vs_reference']:.1f}x faster than the reference"
            print(line)
    return 1 if failed else 0


def _cmd_demo(args: argparse.Namespace) -> int:
    from .main_job import run_main_job

    summary = run_main_job(
        Path(args.out),
        queries=args.queries,
        serve_s=args.serve_s,
        log=(lambda _msg: None) if args.json else print,
    )
    if args.json:
        print(json.dumps(summary, indent=2))
    return 0


def _cmd_run(args: argparse.Namespace) -> int:
    from .run import serve, simulate
    from .scenario import load_scenario

    scenario = load_scenario(args.scenario)
    overrides: dict[str, Any] = {}
    if args.scheduler:
        overrides["scheduler"] = args.scheduler
    if args.seed is not None:
        overrides["seed"] = args.seed
    if args.count is not None:
        overrides["workload"] = {**scenario.workload, "count": args.count}
    result = (simulate if args.command == "simulate" else serve)(scenario, **overrides)
    summary = result.summary(warmup_s=args.warmup_s)
    if args.json:
        print(json.dumps({"summary": summary, "scenario": result.meta["scenario"]}, indent=2))
        return 0
    lat = summary["latency_ms"]
    print(
        f"{result.meta['world']}: {scenario.name or args.scenario} with {result.meta['scheduler']}"
    )
    counts = (summary["queries"], summary["completed"], summary["dropped"])
    print("  queries {}, completed {}, dropped {}".format(*counts))
    print(f"  latency ms: p50 {lat['p50']:.2f}, p95 {lat['p95']:.2f}, p99 {lat['p99']:.2f}")
    print(
        f"  SLO violations {100 * summary['slo_violation_rate']:.2f}%, "
        f"goodput {summary['goodput_qps']:.1f}/s, cost ${summary['cost_dollars']:.4f}"
    )
    return 0


def _cmd_schedulers(args: argparse.Namespace) -> int:
    from .schedulers import list_schedulers

    entries = list_schedulers()
    if args.json:
        print(json.dumps(entries, indent=2))
        return 0
    for e in entries:
        params = ", ".join(
            p["name"] + ("" if p["required"] else f"={p['default']!r}") for p in e["params"]
        )
        print(f"{e['name']}({params})\n    {e['doc']}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="servelab", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    info = sub.add_parser("info", help="what was compiled in and what is usable now")
    info.add_argument("--json", action="store_true", help="print JSON")
    info.set_defaults(run=_cmd_info)

    demo = sub.add_parser(
        "demo", help="the main job: schedulers compared on the default scenario, plots written"
    )
    demo.add_argument("--out", default="servelab-output", help="folder for plots and summary.json")
    demo.add_argument("--queries", type=_positive_int, default=20000, help="queries per run")
    demo.add_argument(
        "--serve-s", type=float, default=8.0, help="length of the real serving run, seconds"
    )
    demo.add_argument("--json", action="store_true", help="print the summary as JSON")
    demo.set_defaults(run=_cmd_demo)

    for world, what in (("simulate", "simulate"), ("serve", "serve for real (wall clock)")):
        p = sub.add_parser(world, help=f"{what} a scenario: a YAML/JSON file or a built-in name")
        p.add_argument(
            "scenario", help="path to a scenario file, or a built-in name (e.g. default)"
        )
        p.add_argument("--scheduler", help="override the scenario's scheduler, e.g. 'jsq'")
        p.add_argument("--seed", type=int, help="override the scenario's seed")
        p.add_argument("--count", type=_positive_int, help="override the number of queries")
        p.add_argument("--warmup-s", type=float, default=0.0, help="exclude early arrivals")
        p.add_argument("--json", action="store_true", help="print summary and scenario as JSON")
        p.set_defaults(run=_cmd_run)

    sched = sub.add_parser("schedulers", help="list the registered schedulers and parameters")
    sched.add_argument("--json", action="store_true", help="print JSON")
    sched.set_defaults(run=_cmd_schedulers)

    smoke_cmd = sub.add_parser("smoke", help="build info plus each backend's smoke work")
    smoke_cmd.add_argument("--json", action="store_true", help="print JSON")
    smoke_cmd.add_argument(
        "--batch", type=_positive_int, default=64, help="batch size (default 64)"
    )
    smoke_cmd.set_defaults(run=_cmd_smoke)

    # The systems bring their own subcommands (servelab kairos ..., servelab ramsis ...).
    from servelab.kairos import cli as kairos_cli
    from servelab.ramsis import cli as ramsis_cli

    kairos_cli.add_parser(sub)
    ramsis_cli.add_parser(sub)

    args = parser.parse_args(argv)
    try:
        return args.run(args)
    except (ValueError, KeyError, FileNotFoundError) as e:
        print(f"servelab {args.command}: error: {e.args[0] if e.args else e}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # `servelab ... | head`: the reader left; that is not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


def _positive_int(text: str) -> int:
    value = int(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text}")
    return value


if __name__ == "__main__":
    sys.exit(main())
