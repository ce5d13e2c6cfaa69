"""The ``servelab`` command line. Every subcommand takes ``--json`` for machine-readable output."""

from __future__ import annotations

import argparse
import json
import sys
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


def _cmd_info(args: argparse.Namespace) -> int:
    info = build_info()
    if args.json:
        print(json.dumps(info, indent=2))
    else:
        _print_build_info(info)
    return 0


def _cmd_demo(args: argparse.Namespace) -> int:
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="servelab", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    info = sub.add_parser("info", help="what was compiled in and what is usable now")
    info.add_argument("--json", action="store_true", help="print JSON")
    info.set_defaults(run=_cmd_info)
    demo = sub.add_parser("demo", help="build info plus each backend's smoke work (the main job)")
    demo.add_argument("--json", action="store_true", help="print JSON")
    demo.add_argument(
        "--batch", type=int, default=64, help="batch size of the smoke work (default 64)"
    )
    demo.set_defaults(run=_cmd_demo)
    args = parser.parse_args(argv)
    if getattr(args, "batch", 1) <= 0:
        parser.error(f"--batch must be positive, got {args.batch}")
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
