"""The ``servelab`` command line. Every subcommand takes ``--json`` for machine-readable output.

Every error ends the command with exit code 2 and one line on stderr (see `error_line`).
"""

from __future__ import annotations

import argparse
import errno
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

from .backends import build_info
from .cli_types import int_in_range, non_negative_float, positive_float, positive_int, random_seed

DESCRIPTION = (
    "servelab: ML inference-serving experiments. Simulate or serve a scenario, run the main job "
    "(demo), or use a system's commands (kairos, ramsis, rrl, hera, infaas). "
    "Every command takes --json."
)

# The errors that bad user input can raise on its way through the readers and the C++ core
# (RuntimeError covers RecursionError and the core's failures). Anything else is a bug in
# servelab and keeps its traceback.
USER_ERRORS = (
    ValueError,
    KeyError,
    TypeError,
    OSError,
    RuntimeError,
    MemoryError,
    OverflowError,
)

# The batch of the smoke work is at most this: its input and hidden layers then take a few
# hundred MiB, and the smoke work stays a check of seconds.
SMOKE_MAX_BATCH = 65536

# `servelab reproduce`'s choices (servelab.reproduction.PAPERS and SIZES, kept here so that
# `servelab --help` does not import pandas).
REPRODUCE_PAPERS = ("kairos", "ramsis", "infaas", "hera", "rrl")
REPRODUCE_SIZES = ("reduced", "full")


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
    from . import smoke  # numpy: imported by the command, so `servelab --help` stays fast

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
                line += ", " + _speed_vs_reference(r["speedup_vs_reference"])
            print(line)
    return 1 if failed else 0


def _speed_vs_reference(speedup: float) -> str:
    """'2.0x as fast as the reference' or, below 1, '1.25x slower than the reference'."""
    if speedup >= 1 or speedup <= 0:
        return f"{speedup:.1f}x as fast as the reference"
    return f"{1 / speedup:.2f}x slower than the reference ({speedup:.2f}x as fast)"


def _writable_folder(path: Path) -> Path:
    """Creates --out now, so that an unusable path fails before minutes of work, not after."""
    path.mkdir(parents=True, exist_ok=True)
    if not os.access(path, os.W_OK | os.X_OK):
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(path))
    return path


def _cmd_demo(args: argparse.Namespace) -> int:
    from .main_job import run_main_job

    summary = run_main_job(
        _writable_folder(Path(args.out)),
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
    if getattr(args, "executor", None):
        overrides["executor"] = args.executor
    if getattr(args, "batch_timeout_ms", None) is not None:
        overrides["batch_timeout_ms"] = args.batch_timeout_ms
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


def _print_registry(entries: list[dict[str, Any]], origin: bool = False) -> None:
    """One entry per block: its spec with defaults (and the module it came from), then its doc."""
    for e in entries:
        params = ", ".join(
            p["name"] + ("" if p["required"] else f"={p['default']!r}") for p in e["params"]
        )
        where = f"  [{e['module']}]" if origin else ""
        print(f"{e['name']}({params}){where}\n    {e['doc']}")


def _cmd_schedulers(args: argparse.Namespace) -> int:
    from .schedulers import list_schedulers

    entries = list_schedulers()
    if args.json:
        print(json.dumps(entries, indent=2))
    else:
        _print_registry(entries)
    return 0


def _cmd_executors(args: argparse.Namespace) -> int:
    from .executors import list_executors  # loads the usable backends, which add theirs

    entries = list_executors()
    if args.json:
        print(json.dumps(entries, indent=2))
    else:
        _print_registry(entries, origin=True)
    return 0


def _cmd_registries(args: argparse.Namespace) -> int:
    from .registries import registries  # loads the usable backends, which add theirs

    tables = registries()
    if args.json:
        print(json.dumps(tables, indent=2))
        return 0
    for name, entries in tables.items():
        print(f"== {name} ({len(entries)})")
        for e in entries:
            where = e.get("origin") or e.get("module") or ""
            print(f"  {e['name']}" + (f"  [{where}]" if where else ""))
    return 0


def _int_list(text: str) -> list[int]:
    """'1,2,4' -> [1, 2, 4], each a positive integer."""
    items = [t.strip() for t in text.split(",")]
    if not all(items):
        raise argparse.ArgumentTypeError(f"{text!r} is not a comma-separated list of integers")
    return [positive_int(t) for t in items]


def _cmd_profile(args: argparse.Namespace) -> int:
    from .profiling import profile  # torch and tqdm load here, not at `servelab --help`

    prof = profile(
        args.executor,
        batches=args.batches,
        threads=args.threads,
        repeats=args.repeats,
        warmup=args.warmup,
        hardware=args.hardware,
        model=args.model,
        price_per_hour=args.price,
        measure=args.measure,
        seed=args.seed,
        path=args.out,
        progress=not args.json,
    )
    rows = [
        {
            "hardware": hw,
            "model": m,
            "batch": b,
            "mean_ms": prof.latency(hw, m, b, statistic="mean") * 1e3,
            "p99_ms": prof.latency(hw, m, b, statistic="p99") * 1e3,
        }
        for hw in prof.hardware
        for m in prof.models
        for b in args.batches
    ]
    if args.json:
        print(json.dumps({"profile": args.out, "latency": rows}, indent=2))
        return 0
    for r in rows:
        print(
            f"  {r['hardware']} {r['model']} batch {r['batch']:>5}: mean {r['mean_ms']:.3f} ms, "
            f"p99 {r['p99_ms']:.3f} ms"
        )
    print(f"profile written to {args.out}")
    return 0


def _utilisation(text: str) -> float:
    value = positive_float(text)
    if not value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a utilisation strictly between 0 and 1")
    return value


def _cmd_sim_vs_real(args: argparse.Namespace) -> int:
    from .world_comparison import sim_vs_real  # numpy, pandas and the executors load here

    common = dict(
        workers=args.workers, queries=args.queries, size=args.size, scheduler=args.scheduler,
        repeats=args.repeats, seed=args.seed,
    )  # fmt: skip
    runs, prof, calibration = [], None, None
    if args.calibrate_at is not None:  # one calibration, every utilisation predicted from it
        c = sim_vs_real(
            args.executor, utilisation=args.calibrate_at, progress=not args.json,
            profile_from="calibrate", **common,
        )  # fmt: skip
        prof, calibration = c.meta["base_profile"], c.meta["calibration"]
    for u in args.utilisation:
        c = sim_vs_real(
            args.executor, utilisation=u, profile=prof, progress=not args.json and prof is None,
            profile_from=args.profile_from, calibration=calibration, **common,
        )  # fmt: skip
        prof = c.meta.get("base_profile", c.profile)  # measured once, used at every utilisation
        runs.append(c)
    if args.plot:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, axes = plt.subplots(1, len(runs), figsize=(5 * len(runs), 3.5), squeeze=False)
        for ax, c in zip(axes[0], runs, strict=True):
            c.plot_cdf(ax)
        fig.tight_layout()
        fig.savefig(args.plot)
    if args.json:
        out = [
            {"utilisation": c.utilisation, "rate_qps": c.rate_qps, "executor": c.executor,
             "table": c.table().reset_index().to_dict(orient="records")}
            for c in runs
        ]  # fmt: skip
        print(json.dumps(out, indent=2))
        return 0
    for c in runs:
        print(f"{c.executor}, {c.utilisation:.0%} utilisation ({c.rate_qps:.1f} queries/s):")
        print(c.table().to_string(float_format=lambda x: f"{x:.3f}"))
    if args.plot:
        print(f"CDFs written to {args.plot}")
    return 0


def _cmd_reproduce(args: argparse.Namespace) -> int:
    from .reproduction import format_table, reproduce  # numpy, pandas and the systems load here

    table = reproduce(args.paper, size=args.size, data=args.data)
    if args.json:
        out = {
            **table.attrs,
            "within": int((table["verdict"] == "within").sum()),
            "rows": table.to_dict(orient="records"),
        }
        print(json.dumps(out, indent=2))
    else:
        print(format_table(table, markdown=args.markdown))
    return 0


class _Parser(argparse.ArgumentParser):
    """argparse with its usage errors on one line, like every other error of the command."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {_one_line(message)} (see {self.prog} --help)\n")


def _one_line(text: str) -> str:
    return "; ".join(line.strip() for line in text.splitlines() if line.strip())


def _reason(error: BaseException) -> str:
    """What went wrong, in words, with the path where the exception carries one."""
    if isinstance(error, OSError) and error.filename is not None:
        reason = error.strerror or str(error)
        if error.filename2 is not None:
            return f"{error.filename} -> {error.filename2}: {reason}"
        return f"{error.filename}: {reason}"
    if isinstance(error, UnicodeDecodeError):
        return f"not {error.encoding} text ({error.reason} at byte {error.start})"
    if isinstance(error, RecursionError):
        return "nested too deeply to read"
    if isinstance(error, MemoryError):
        return f"out of memory ({error})" if str(error) else "out of memory"
    if isinstance(error, KeyError) and error.args and isinstance(error.args[0], str):
        return error.args[0]  # str(KeyError) would quote the message
    return str(error) or type(error).__name__


def error_line(command: str, error: BaseException, inputs: Sequence[str] = ()) -> str:
    """The single line printed for an error: `servelab <command>: error: <path>: <reason>`.

    `inputs` are the paths the user named. An error of a kind that carries no path (a decode
    error, a recursion limit, an overflow) is prefixed with those that exist.
    """
    reason = _one_line(_reason(error))
    existing = [p for p in inputs if _exists(p)]
    if _carries_no_path(error) and existing and not any(p in reason for p in inputs):
        files = [p for p in existing if Path(p).is_file()]  # more likely culprits than folders
        reason = f"{' or '.join(files or existing)}: {reason}"
    return f"servelab {command}: error: {reason}"


def _carries_no_path(error: BaseException) -> bool:
    """Errors whose messages never name a file (servelab's own ValueErrors and KeyErrors do)."""
    if isinstance(error, OSError):
        return error.filename is None
    return isinstance(
        error, (UnicodeDecodeError, RecursionError, MemoryError, TypeError, OverflowError)
    )


def _exists(path: str) -> bool:
    try:
        return Path(path).exists()
    except (OSError, ValueError):  # a name too long, or with a NUL byte, is no file
        return False


def _command_name(args: argparse.Namespace) -> str:
    """ "simulate", or "kairos bound" for a system's subcommand."""
    system_command = getattr(args, f"{args.command}_command", None)
    return f"{args.command} {system_command}" if system_command else args.command


def _input_paths(args: argparse.Namespace) -> list[str]:
    """The values of the options a subcommand declared as input files (set_defaults(inputs=))."""
    values = (getattr(args, name, None) for name in getattr(args, "inputs", ()))
    return [str(v) for v in values if v]


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="servelab", description=DESCRIPTION)
    sub = parser.add_subparsers(dest="command", required=True)
    info = sub.add_parser("info", help="what was compiled in and what is usable now")
    info.add_argument("--json", action="store_true", help="print JSON")
    info.set_defaults(run=_cmd_info)

    demo = sub.add_parser(
        "demo", help="the main job: schedulers compared on the default scenario, plots written"
    )
    demo.add_argument("--out", default="servelab-output", help="folder for plots and summary.json")
    demo.add_argument(
        "--queries", type=positive_int, default=20000, help="queries per run (default 20000)"
    )
    demo.add_argument(
        "--serve-s",
        type=positive_float,
        default=8.0,
        help="length of the real serving run, seconds (default 8)",
    )
    demo.add_argument("--json", action="store_true", help="print the summary as JSON")
    demo.set_defaults(run=_cmd_demo)

    for world, what in (("simulate", "simulate"), ("serve", "serve for real (wall clock)")):
        p = sub.add_parser(world, help=f"{what} a scenario: a YAML/JSON file or a built-in name")
        p.add_argument(
            "scenario", help="path to a scenario file, or a built-in name (e.g. default)"
        )
        p.add_argument("--scheduler", help="override the scenario's scheduler, e.g. 'jsq'")
        p.add_argument("--seed", type=random_seed, help="override the scenario's seed")
        p.add_argument("--count", type=positive_int, help="override the number of queries")
        p.add_argument(
            "--warmup-s",
            type=non_negative_float,
            default=0.0,
            help="leave out of the summary the queries that arrive in the first seconds",
        )
        if world == "serve":
            p.add_argument(
                "--executor",
                help="what runs the batches of groups without their own executor, e.g. "
                "\"torchscript(path='m.pt')\" (see: servelab executors)",
            )
            p.add_argument(
                "--batch-timeout-ms",
                type=positive_float,
                help="drop a batch that has not returned after this long and take its worker out "
                "of service for the rest of the run (default: no limit)",
            )
        p.add_argument("--json", action="store_true", help="print summary and scenario as JSON")
        p.set_defaults(run=_cmd_run, inputs=("scenario",))

    sched = sub.add_parser("schedulers", help="list the registered schedulers and parameters")
    sched.add_argument("--json", action="store_true", help="print JSON")
    sched.set_defaults(run=_cmd_schedulers)

    ex = sub.add_parser("executors", help="list the registered executors and parameters")
    ex.add_argument("--json", action="store_true", help="print JSON")
    ex.set_defaults(run=_cmd_executors)

    reg = sub.add_parser(
        "registries",
        help="every registry: what a spec can name, and what optional modules add (with origins)",
    )
    reg.add_argument("--json", action="store_true", help="print JSON")
    reg.set_defaults(run=_cmd_registries)

    prof = sub.add_parser(
        "profile", help="measure an executor over batch sizes and write a servelab profile"
    )
    prof.add_argument("executor", help="an executor spec, e.g. \"torchscript(path='m.pt')\"")
    prof.add_argument("--out", required=True, help="the profile JSON to write")
    prof.add_argument("--batches", type=_int_list, default=[1, 2, 4, 8, 16, 32], help="e.g. 1,8,64")
    prof.add_argument("--threads", type=_int_list, help="intra-op thread counts to sweep, e.g. 1,2")
    prof.add_argument("--repeats", type=positive_int, default=10, help="timed batches per cell")
    prof.add_argument(
        "--warmup", type=int_in_range(0, 1_000_000, "an integer >= 0"), default=2,
        help="untimed batches first",
    )  # fmt: skip
    prof.add_argument("--hardware", default="cpu", help="the profile's hardware name")
    prof.add_argument("--model", help="the profile's model name (default: the executor's)")
    prof.add_argument("--price", type=non_negative_float, default=0.0, help="$/hour")
    prof.add_argument(
        "--measure",
        choices=("wall", "exec"),
        default="wall",
        help="wall: each batch's wall time (a run's service time); exec: the executor's own",
    )
    prof.add_argument("--seed", type=random_seed, default=0, help="seeds the inputs")
    prof.add_argument("--json", action="store_true", help="print the measured latencies as JSON")
    prof.set_defaults(run=_cmd_profile)

    svr = sub.add_parser(
        "sim-vs-real",
        help="profile an executor, simulate and serve the same scenario, compare latencies",
    )
    svr.add_argument("executor", help="an executor spec, e.g. \"recsys(model='rm2')\"")
    svr.add_argument("--workers", type=positive_int, default=2, help="identical workers")
    svr.add_argument(
        "--utilisation", type=_utilisation, nargs="+", default=[0.3, 0.5, 0.7],
        help="offered load as a share of the workers' capacity, one run each",
    )  # fmt: skip
    svr.add_argument("--queries", type=positive_int, default=2000, help="queries per run")
    svr.add_argument("--size", type=positive_int, default=1, help="items per query")
    svr.add_argument("--scheduler", default="fcfs", help="a registered scheduler spec")
    svr.add_argument("--repeats", type=positive_int, default=30, help="profiled batches per size")
    svr.add_argument("--seed", type=random_seed, default=0, help="seeds arrivals and inputs")
    svr.add_argument(
        "--profile-from", choices=["batches", "serve", "calibrate"], default="calibrate",
        help="simulate on batches timed back to back, on a pilot serving run's service times, "
        "or on what servelab.calibrate fits from the pilot (service times and the loop's delays)",
    )  # fmt: skip
    svr.add_argument(
        "--calibrate-at", type=_utilisation, default=None, metavar="U",
        help="calibrate once, on a pilot run at utilisation U, and predict every --utilisation "
        "from it (held out)",
    )  # fmt: skip
    svr.add_argument("--plot", help="write both latency CDFs of every run to this image")
    svr.add_argument("--json", action="store_true", help="print JSON")
    svr.set_defaults(run=_cmd_sim_vs_real)

    smoke_cmd = sub.add_parser("smoke", help="build info plus each backend's smoke work")
    smoke_cmd.add_argument("--json", action="store_true", help="print JSON")
    smoke_cmd.add_argument(
        "--batch",
        type=int_in_range(1, SMOKE_MAX_BATCH, "a positive integer"),
        default=64,
        help=f"batch size of the smoke work (default 64, at most {SMOKE_MAX_BATCH})",
    )
    smoke_cmd.set_defaults(run=_cmd_smoke)

    rep = sub.add_parser(
        "reproduce",
        help="a paper's figures and headline claims beside ours: tolerance and verdict per row",
    )
    rep.add_argument("paper", choices=REPRODUCE_PAPERS, help="which paper")
    rep.add_argument(
        "--size", choices=REPRODUCE_SIZES, default="reduced",
        help="reduced (under a minute per paper) or full (the paper's setting)",
    )  # fmt: skip
    rep.add_argument(
        "--data", help="the folder of the artifacts' data (default: $SERVELAB_DATA, else "
        "../shared/data beside a source checkout)",
    )  # fmt: skip
    rep.add_argument("--markdown", action="store_true", help="print a markdown table")
    rep.add_argument("--json", action="store_true", help="print the rows as JSON")
    rep.set_defaults(run=_cmd_reproduce, inputs=("data",))

    from servelab import worker_process  # servelab worker: a process that runs remote batches

    worker_process.add_parser(sub)

    from servelab.frontend import cli as frontend_cli  # servelab frontend: OIP over HTTP, gRPC

    frontend_cli.add_parser(sub)

    # The systems bring their own subcommands (servelab kairos ..., servelab ramsis ...).
    from servelab.systems.hera import cli as hera_cli
    from servelab.systems.infaas import cli as infaas_cli
    from servelab.systems.kairos import cli as kairos_cli
    from servelab.systems.ramsis import cli as ramsis_cli
    from servelab.systems.rrl import cli as rrl_cli

    kairos_cli.add_parser(sub)
    ramsis_cli.add_parser(sub)
    rrl_cli.add_parser(sub)
    hera_cli.add_parser(sub)
    infaas_cli.add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Runs one command and returns its exit code: 0, 1 for a failed check, 2 for an error, 130
    when interrupted (Ctrl-C)."""
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as done:  # --help (0) or a usage error (2), already printed
        return done.code if isinstance(done.code, int) else 2
    try:
        return args.run(args)
    except BrokenPipeError:  # `servelab ... | head`: the reader left; that is not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except USER_ERRORS as e:
        print(error_line(_command_name(args), e, _input_paths(args)), file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # Ctrl-C: the long calls stopped cleanly; no traceback to show
        print(f"servelab {_command_name(args)}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
