"""Regenerates the example profile ``recsys_cpu``: the built-in recommendation models MEASURED
with servelab's profiler on the machine that runs this (unlike make_examples.py's generated
profiles, the file changes with the machine and from run to run).

Run ``python -m servelab.profiles.measure_recsys [output_dir]``. Every model of
``servelab.recsys.list_models()`` runs on the oneDNN backend (the reference backend where oneDNN
is not usable) with one intra-op thread and tables at scale 0.01, over batch sizes 1-64; each
batch size is timed REPEATS times after WARMUP untimed batches (wall time per batch, the service
time a serving run sees). The hardware is named "cpu".
"""

from __future__ import annotations

import os
import platform
import sys
from pathlib import Path
from typing import Any

BATCHES = (1, 2, 4, 8, 16, 32, 64)
REPEATS = 30
WARMUP = 5
SCALE = 0.01
NAME = "recsys_cpu"


def _cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _backend() -> str:
    from ..backends import build_info

    return "onednn" if build_info()["backends"]["onednn"]["usable"] else "reference"


def measure(progress: bool = True) -> Any:
    """Profiles every built-in model and returns one Profile with all of them."""
    from .. import recsys
    from ..profiling import profile
    from . import Profile

    backend = _backend()
    merged: dict[str, Any] = {"hardware": {}, "models": {}, "latency": []}
    for model in recsys.list_models():
        spec = f"recsys(model='{model}', backend='{backend}', scale={SCALE}, intra_op_threads=1)"
        part = profile(
            spec, batches=BATCHES, repeats=REPEATS, warmup=WARMUP, model=model, progress=progress
        ).to_dict()
        merged["hardware"].update(part["hardware"])
        merged["models"].update(part["models"])
        merged["latency"].extend(part["latency"])
    return Profile.from_dict(
        {
            "format": "servelab.profile",
            "version": 1,
            "source": (
                f"Measured by servelab.profile on {_cpu_name()} ({os.cpu_count()} CPUs): "
                f"recsys(backend='{backend}', scale={SCALE}, intra_op_threads=1); regenerate "
                "with python -m servelab.profiles.measure_recsys"
            ),
            "description": f"wall time per batch, {REPEATS} repeats after {WARMUP} warm-ups",
            **merged,
        }
    )


def main(argv: list[str] | None = None) -> int:
    from .format import save

    args = sys.argv[1:] if argv is None else argv
    out = Path(args[0]) if args else Path(__file__).parent / "data"
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{NAME}.json"
    save(measure(), path)
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
