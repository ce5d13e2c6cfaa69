"""`servelab kairos ...`: the command-line interface of servelab.kairos.

    servelab kairos bound  ../shared/data/kairos --model rm2 [--top 20] [--json]
    servelab kairos select ../shared/data/kairos --model rm2
    servelab kairos search ../shared/data/kairos --model rm2 --method kairos+ --queries 2000
    servelab kairos evaluate ../shared/data/kairos --model rm2 --config 2,0,9,0 --distributor kairos

SOURCE is a Kairos artifact folder (allocator_profile.json, instance.json, data/) or a native
profile file; the budget comes from the artifact's instance.json, from --space (a file in that
layout) or from --budget with the profile's prices.

Building the parser imports nothing heavy: each command imports the modules it runs (pandas comes
with the bounds) when it is run, so ``servelab --help`` answers at once.
"""

from __future__ import annotations

import argparse
import json
import math
from typing import TYPE_CHECKING, Any

from ...cli_types import (
    conflicting_options,
    ignored_option,
    non_negative_int,
    positive_float,
    positive_int,
    random_seed,
)

DEFAULT_SIZES = "kairos_mix"
DEFAULT_DISTRIBUTOR = "kairos"
DEFAULT_QUERIES = 20000
DEFAULT_SEED = 0
if TYPE_CHECKING:
    import pandas as pd

# Methods whose result does not depend on the seed.
DETERMINISTIC_METHODS = ("kairos_plus", "exhaustive")


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("source", help="a Kairos artifact folder or a native profile file (JSON)")
    p.add_argument("--model", help="the model (default: the profile's only model)")
    p.add_argument("--space", help="a search-space file in instance.json's layout")
    p.add_argument("--budget", type=positive_float, help="budget in $/h (replaces the space's)")
    p.add_argument(
        "--types",
        help="instance types, base first, comma-separated (profile sources without --space)",
    )
    p.add_argument(
        "--qos-ms",
        type=positive_float,
        help="QoS target; with an artifact folder, derive the inputs from its latencies",
    )
    p.add_argument(
        "--sizes",
        help=f"query-size distribution spec (default {DEFAULT_SIZES}); with an artifact folder "
        "it needs --qos-ms",
    )
    p.add_argument(
        "--formula",
        choices=["paper", "artifact"],
        default="paper",
        help="bound formula: the paper's or the artifact's (default paper)",
    )
    p.add_argument("--json", action="store_true", help="print JSON")


def _check_bound_options(args: argparse.Namespace) -> None:
    """Refuses the options that the other options given would leave without effect."""
    from .data import is_artifact_folder

    if args.sizes is not None and args.qos_ms is None and is_artifact_folder(args.source):
        raise ignored_option(
            "--sizes",
            "--qos-ms",
            "without a QoS of one's own the bounds come from allocator_profile.json, "
            "whose query sizes are fixed",
        )
    if args.types is not None and args.space is not None:
        raise conflicting_options("--types", "--space", "the space file names the instance types")


def _check_evaluation_options(args: argparse.Namespace) -> None:
    """search and evaluate: refuse ignored options, then fill in the defaults."""
    if getattr(args, "lookup", None):
        for option, value in (("--distributor", args.distributor), ("--queries", args.queries)):
            if value is not None:
                raise conflicting_options(
                    option, "--lookup", "the lookup's values replace the simulations"
                )
    args.distributor = args.distributor or DEFAULT_DISTRIBUTOR
    args.queries = args.queries or DEFAULT_QUERIES
    args.seed = DEFAULT_SEED if args.seed is None else args.seed


def _check_search_options(args: argparse.Namespace) -> None:
    from .kairos_plus import METHODS

    method = METHODS.get(args.method)  # an unknown name is reported by search()
    if args.bound_pruning and method == "kairos_plus":
        raise conflicting_options(
            "--bound-pruning", "--method kairos+", "Kairos+ always prunes by its bounds"
        )
    if args.lookup and args.seed is not None and method in DETERMINISTIC_METHODS:
        raise conflicting_options(
            "--seed",
            f"--lookup and --method {args.method}",
            "the method is deterministic and the lookup replaces the seeded simulations",
        )


def _bound_args(args: argparse.Namespace) -> dict[str, Any]:
    from .data import read_instance_json

    kw: dict[str, Any] = {"formula": args.formula, "sizes": args.sizes or DEFAULT_SIZES}
    if args.space:
        kw["space"] = read_instance_json(args.space, budget=args.budget)
    elif args.budget is not None:
        kw["budget"] = args.budget
    if args.types:
        kw["types"] = [t.strip() for t in args.types.split(",") if t.strip()]
    if args.qos_ms is not None:
        kw["qos_ms"] = args.qos_ms
    return kw


def _frame(args: argparse.Namespace) -> pd.DataFrame:
    from .bounds import upper_bounds

    return upper_bounds(args.source, args.model, **_bound_args(args))


def _counts(frame: pd.DataFrame, row: pd.Series) -> dict[str, int]:
    return {t: int(row[t]) for t in frame.attrs["types"]}


def _cmd_bound(args: argparse.Namespace) -> int:
    _check_bound_options(args)
    frame = _frame(args)
    shown = frame if args.top is None else frame.iloc[: args.top]
    if args.json:
        rows = [
            {
                "config": _counts(frame, r),
                "cost": float(r["cost"]),
                "bound": float(r["bound"]),
                "rank": int(r["rank"]),
                "regime": r["regime"],
            }
            for _, r in shown.iterrows()
        ]
        print(
            json.dumps(
                {
                    "model": frame.attrs["model"],
                    "formula": frame.attrs["formula"],
                    "types": frame.attrs["types"],
                    "budget": frame.attrs["budget"],
                    "configs": len(frame),
                    "bounds": rows,
                },
                indent=2,
            )
        )
        return 0
    print(
        f"{len(frame)} configurations under ${frame.attrs['budget']}/h, "
        f"model {frame.attrs['model']}, formula {frame.attrs['formula']}; "
        f"types: {', '.join(frame.attrs['types'])}"
    )
    print(
        shown.drop(columns=["regime"])
        .reset_index()
        .to_string(index=False, float_format=lambda x: f"{x:.3f}")
    )
    return 0


def _cmd_select(args: argparse.Namespace) -> int:
    from .bounds import select_config

    _check_bound_options(args)
    frame = _frame(args)
    choice = select_config(frame, same_base_top=args.same_base_top, top_k=args.top_k)
    if args.json:
        print(
            json.dumps(
                {
                    "config": choice.config,
                    "bound": choice.bound,
                    "cost": choice.cost,
                    "rank": choice.rank,
                    "rule": choice.rule,
                    "candidates": [_counts(frame, r) for _, r in choice.candidates.iterrows()],
                },
                indent=2,
            )
        )
        return 0
    print(
        f"Kairos picks {choice.config} (rank {choice.rank}, bound {choice.bound:.2f} QPS, "
        f"${choice.cost:.3f}/h; rule: {choice.rule})"
    )
    return 0


def _objective(args: argparse.Namespace, types: list[str]):
    """--lookup FILE: {"2,0,9,0": qps, ...}; otherwise allowable throughput by simulation."""
    if args.lookup:
        from ... import textio

        raw = textio.read_json(args.lookup, what="Kairos lookup JSON file")
        if not isinstance(raw, dict):
            raise ValueError(f'{args.lookup}: expected a JSON object {{"n1,n2,...": value}}')
        table = {}
        for key, value in raw.items():
            try:
                counts = tuple(int(x) for x in str(key).replace(" ", "").split(","))
            except ValueError:
                raise ValueError(
                    f"{args.lookup}: key {key!r} is not comma-separated instance counts "
                    f"(one per type: {', '.join(types)})"
                ) from None
            v = value[-1] if isinstance(value, list) else value
            if not isinstance(v, (int, float)) or isinstance(v, bool) or not math.isfinite(v):
                raise ValueError(f"{args.lookup}: {key}={value!r} is not a finite number")
            table[counts] = float(v)
        return table
    from .experiments import evaluate_config

    def simulate(config: dict[str, int]) -> float:
        used = {t: n for t, n in config.items() if n > 0}
        return evaluate_config(
            args.source,
            used,
            args.distributor,
            qos_ms=args.qos_ms,
            model=args.model,
            queries=args.queries,
            seed=args.seed,
        ).rate

    return simulate


def _cmd_search(args: argparse.Namespace) -> int:
    from .bounds import named_config
    from .kairos_plus import search, search_trace

    _check_bound_options(args)
    _check_search_options(args)
    _check_evaluation_options(args)
    frame = _frame(args)
    if args.model is None:
        args.model = frame.attrs["model"]
    result = search(
        frame,
        objective=_objective(args, frame.attrs["types"]),
        method=args.method,
        seed=args.seed,
        max_evaluations=args.max_evaluations,
        bound_pruning=args.bound_pruning,
    )
    best_config = named_config(frame, result.best_config)
    if args.json:
        trace = search_trace(result, frame).reset_index().to_dict(orient="records")
        print(
            json.dumps(
                {
                    "method": result.method,
                    "found": result.found,
                    "best_config": best_config,
                    "best_value": result.best_value,
                    "best_cost": result.best_cost,
                    "evaluations": result.evaluations,
                    "best_index": result.best_index,
                    "space_points": result.space_points,
                    "share": result.share,
                    "stop_reason": result.stop_reason,
                    "trace": trace,
                },
                indent=2,
                default=float,
            )
        )
        return 0
    if not result.found:
        print("no feasible configuration")
        return 1
    print(
        f"{result.method}: best {best_config} = {result.best_value:.2f} "
        f"(${result.best_cost:.3f}/h), found at evaluation {result.best_index}; "
        f"{result.evaluations} evaluations = {100 * result.share:.2f}% of "
        f"{result.space_points} configurations ({result.stop_reason})"
    )
    return 0


def _model(args: argparse.Namespace) -> str:
    """--model, or the only model of a profile file."""
    if args.model:
        return args.model
    from .data import artifact_models, is_artifact_folder

    if is_artifact_folder(args.source):
        raise ValueError(f"--model is required: one of {', '.join(artifact_models(args.source))}")
    from ... import profiles

    models = profiles.load(args.source).models
    if len(models) != 1:
        raise ValueError(f"--model is required: the profile holds {', '.join(models)}")
    return models[0]


def _cmd_evaluate(args: argparse.Namespace) -> int:
    from .experiments import evaluate_config

    _check_bound_options(args)
    _check_evaluation_options(args)
    args.model = _model(args)
    config = _parse_config(args.config, args)
    found = evaluate_config(
        args.source,
        {t: n for t, n in config.items() if n > 0},
        args.distributor,
        qos_ms=args.qos_ms,
        model=args.model,
        queries=args.queries,
        seed=args.seed,
    )
    if args.json:
        print(
            json.dumps(
                {
                    "config": config,
                    "distributor": args.distributor,
                    "model": args.model,
                    "rate": found.rate,
                    "feasible": found.feasible,
                    "runs": len(found.evaluations),
                },
                indent=2,
            )
        )
        return 0
    print(
        f"{config} under {args.distributor}: allowable throughput {found.rate:.2f} QPS "
        f"({len(found.evaluations)} runs)"
    )
    return 0


def _parse_config(text: str, args: argparse.Namespace) -> dict[str, int]:
    """ "g4dn.xlarge=2,r5n.large=9", or counts "2,0,9,0" in the order of the space's types."""
    parts = [p.strip() for p in text.split(",") if p.strip()]
    if parts and all("=" in p for p in parts):
        out = {}
        for p in parts:
            name, _, n = p.partition("=")
            out[name.strip()] = _count(n, text)
        return out
    from .bounds import bound_setup

    types = list(bound_setup(args.source, args.model, **_bound_args(args)).space.types)
    if len(parts) != len(types):
        raise ValueError(
            f"--config {text!r} has {len(parts)} counts, the space has {len(types)} types "
            f"({', '.join(types)})"
        )
    return {t: _count(n, text) for t, n in zip(types, parts, strict=True)}


def _count(text: str, whole: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise ValueError(f"--config {whole!r}: {text!r} is not an instance count") from None
    if n < 0:
        raise ValueError(f"--config {whole!r}: count {n} is negative")
    return n


# The options naming files the user gives (servelab's error line names them when a reader
# does not).
_INPUTS = ("source", "space")


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Adds the `kairos` command and its subcommands to servelab's CLI."""
    p = sub.add_parser(
        "kairos", help="Kairos: upper bounds, one-shot selection, Kairos+ search, evaluation"
    )
    ksub = p.add_subparsers(dest="kairos_command", required=True)

    b = ksub.add_parser(
        "bound", help="every configuration under the budget with its cost and bound, ranked"
    )
    _common(b)
    b.add_argument("--top", type=positive_int, help="show only the N highest bounds")
    b.set_defaults(run=_cmd_bound, inputs=_INPUTS)

    s = ksub.add_parser("select", help="Kairos's one-shot configuration (no online evaluation)")
    _common(s)
    s.add_argument(
        "--same-base-top",
        type=positive_int,
        default=3,
        help="top configurations checked for one base count (default 3)",
    )
    s.add_argument(
        "--top-k",
        type=positive_int,
        default=10,
        help="configurations among which the centroid is chosen (default 10)",
    )
    s.set_defaults(run=_cmd_select, inputs=_INPUTS)

    def evaluation_args(q: argparse.ArgumentParser, seeded: str) -> None:
        q.add_argument(
            "--distributor",
            help=f"registered distributor spec (default {DEFAULT_DISTRIBUTOR})",
        )
        q.add_argument(
            "--queries",
            type=positive_int,
            help=f"queries per simulation run (default {DEFAULT_QUERIES})",
        )
        q.add_argument(
            "--seed",
            type=random_seed,
            help=f"seed of the simulated workloads{seeded} (default {DEFAULT_SEED})",
        )

    se = ksub.add_parser(
        "search", help="search the configurations with evaluations (Kairos+ or a competitor)"
    )
    _common(se)
    evaluation_args(se, " and of a randomised --method")
    se.add_argument(
        "--method",
        default="kairos+",
        help="kairos+, random, genetic, bo, annealing, hill_climbing or exhaustive",
    )
    se.add_argument("--lookup", help='values instead of simulations: JSON {"2,0,9,0": qps, ...}')
    se.add_argument(
        "--max-evaluations",
        type=non_negative_int,
        default=0,
        help="stop after this many evaluations (default 0: no limit)",
    )
    se.add_argument(
        "--bound-pruning",
        action="store_true",
        help="give the competitors Kairos+'s bound pruning (Kairos+ always has it)",
    )
    se.set_defaults(run=_cmd_search, inputs=(*_INPUTS, "lookup"))

    ev = ksub.add_parser(
        "evaluate", help="allowable throughput of one configuration under a distributor"
    )
    _common(ev)
    evaluation_args(ev, "")
    ev.add_argument(
        "--config", required=True, help='"2,0,9,0" (space order) or "g4dn.xlarge=2,r5n.large=9"'
    )
    ev.set_defaults(run=_cmd_evaluate, inputs=_INPUTS)
