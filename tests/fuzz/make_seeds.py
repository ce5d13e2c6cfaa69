"""Writes seed corpora for the fuzz targets of tests/fuzz.

    python tests/fuzz/make_seeds.py OUT [--data ../shared/data]

OUT/<target>/ receives: every registered arrival process, size distribution, scheduler and
executor described with its defaults (spec); small RAMSIS policies and policy sets solved here
(ramsis_policy); and, where the shared artifact data is present, its arrival traces, read in
place and written as seeds (traces). The small committed seeds in tests/fuzz/corpus/ are replayed
by ctest; these larger ones only start a fuzzing run.
"""

from __future__ import annotations

import argparse
import hashlib
from pathlib import Path

import servelab
from servelab.systems.ramsis import policy as ramsis_policy

ROOT = Path(__file__).resolve().parents[2]


def _write(folder: Path, text: str | bytes) -> None:
    data = text.encode() if isinstance(text, str) else text
    folder.mkdir(parents=True, exist_ok=True)
    (folder / hashlib.sha1(data).hexdigest()).write_bytes(data)


def _spec(entry: dict) -> str:
    args = [f"{p['name']}={p['default']!r}" for p in entry["params"] if p["default"] is not None]
    return f"{entry['name']}({', '.join(args)})" if args else entry["name"]


def spec_seeds(out: Path) -> int:
    entries = [
        *servelab.list_arrival_processes(),
        *servelab.list_size_distributions(),
        *servelab.list_schedulers(),
        *servelab.list_executors(),
    ]
    for entry in entries:
        _write(out, _spec(entry))
    return len(entries)


def _profile() -> servelab.Profile:
    models = (("fast", 0.6, 4.0, 2.5), ("slow", 0.8, 9.0, 4.0))
    return servelab.profiles.from_dict(
        {
            "format": "servelab.profile",
            "version": 1,
            "hardware": {"cpu": {"price_per_hour": 1.0}},
            "models": {m: {"accuracy": a} for m, a, _, _ in models},
            "latency": [
                {"hardware": "cpu", "model": m, "batch": b, "samples_ms": [base + per * (b - 1)]}
                for m, _, base, per in models
                for b in (1, 2, 3, 4)
            ],
        }
    )


def ramsis_seeds(out: Path) -> int:
    prof, models = _profile(), ["fast", "slow"]
    small = {"max_queue": 3, "intervals": 4}
    docs = [
        ramsis_policy.solve(prof, "cpu", models, slo_ms=40, load_qps=q, workers=w, **small)
        for q, w in ((20, 1), (100, 2), (400, 2))
    ]
    docs.append(
        ramsis_policy.policy_set(
            prof, "cpu", models, slo_ms=40, workers=2, loads=[50, 200], **small
        )
    )
    for doc in docs:
        _write(out, ramsis_policy.to_json(doc))
    return len(docs)


def trace_seeds(out: Path, data: Path) -> int:
    files = [
        data / "ramsis" / "twitter_trace" / "twitter_04_25_norm.txt",
        data / "rrl" / "interarrival_time_generated.txt",
    ]
    present = [f for f in files if f.is_file()]
    for f in present:
        _write(out, f.read_bytes())
    # The Azure Functions layout (not in the shared data): a header and two functions.
    header = "HashOwner,HashApp,HashFunction,Trigger," + ",".join(str(m) for m in range(1, 1441))
    rows = [
        f"o,a,f{i},http," + ",".join(str((m * (i + 1)) % 7) for m in range(1440)) for i in range(2)
    ]
    _write(out, "\n".join([header, *rows]) + "\n")
    return len(present) + 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    args = parser.parse_args()
    counts = {
        "spec": spec_seeds(args.out / "spec"),
        "ramsis_policy": ramsis_seeds(args.out / "ramsis_policy"),
        "traces": trace_seeds(args.out / "traces", args.data),
    }
    if not args.data.is_dir():
        print(f"no shared data at {args.data}: trace seeds are the synthetic ones only")
    print("seeds:", ", ".join(f"{k} {v}" for k, v in counts.items()))


if __name__ == "__main__":
    main()
