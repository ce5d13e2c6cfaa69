#!/usr/bin/env python3
"""RAMSIS simulation speed: the 5-minute Twitter trace on 60 workers (about 790k queries).

The artifact's Python simulator needs about 6 minutes for this run; the goal here is under 0.5 s.
Prints the simulation time of RAMSIS (policies generated beforehand, not timed), its ratio to the
artifact's 6 minutes, and ratios against reference runs of the same workload in the same process:
the generic ``fcfs`` policy (one query per batch) and Jellyfish+ (central queue, adaptive
batches). Then the same RAMSIS run the way the experiments make it (``ramsis.run_experiment``: a
Scenario through ``servelab.simulate``, which reads the profile and policy files the scenario names,
plus the summary), against the bare simulation. Printed, never asserted.

    python benchmarks/python/bench_ramsis_sim.py             # the full trace (`make bench`)
    python benchmarks/python/bench_ramsis_sim.py --smoke     # 30 s of it (the test suite)
    python benchmarks/python/bench_ramsis_sim.py --data ../shared/data/ramsis

Needs the RAMSIS data folder (--data, $SERVELAB_RAMSIS_DATA or ../shared/data/ramsis next to the
repository); without it the benchmark says so and exits 0.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from timing import best_of

from servelab import _core, ramsis
from servelab.ramsis.data import DATA_ENV
from servelab.ramsis.paper import PERCENTILE, POLICY_LOADS, TRACE_DURATION_S
from servelab.ramsis.tasks import HARDWARE

ARTIFACT_SECONDS = 6 * 60.0  # the artifact's simulator on this run (issue / artifact appendix)
WORKERS = 60
SLO_MS = 150.0


def find_data(given: str | None) -> Path | None:
    candidates = [given, os.environ.get(DATA_ENV)]
    candidates.append(str(Path(__file__).resolve().parents[3] / "shared" / "data" / "ramsis"))
    for c in candidates:
        if c and (Path(c) / "derived").is_dir():
            return Path(c)
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--smoke", action="store_true", help="30 s of the trace, one repeat")
    parser.add_argument("--data", help="the RAMSIS data folder")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    data = find_data(args.data)
    if data is None:
        print("RAMSIS data not found (--data, $SERVELAB_RAMSIS_DATA): benchmark skipped")
        return 0
    duration = 30.0 if args.smoke else TRACE_DURATION_S
    repeats = 1 if args.smoke else args.repeats
    task = ramsis.get_task("image", data)

    generation_s, policies = best_of(
        lambda: ramsis.ramsis_policies(task, slo_ms=SLO_MS, workers=WORKERS, loads=POLICY_LOADS), 1
    )

    trace = ramsis.twitter_trace(data)
    workload = _core.Workload(
        trace.arrivals("artifact", duration),
        [_core.Application("image", slo_s=SLO_MS / 1e3)],
        horizon_s=duration,
    )
    group = _core.WorkerGroup(HARDWARE, WORKERS, list(task.models), {})

    def run(scheduler):
        return _core.simulate_run(
            task.profile, [group], workload, scheduler, seed=0, decision_statistic=f"p{PERCENTILE}",
            service=f"p{PERCENTILE}", drain_s=SLO_MS / 1e3,
        )  # fmt: skip

    ramsis_s, raw = best_of(lambda: run(ramsis.scheduler(policies)), repeats)
    queries = len(raw["columns"]["id"])
    fcfs_s, _ = best_of(lambda: run(_core.make_scheduler("fcfs")), repeats)
    jf_s, _ = best_of(
        lambda: run(_core.ramsis.jellyfish_scheduler(loads=list(POLICY_LOADS))), repeats
    )

    def experiment():
        return ramsis.run_experiment(
            task, "ramsis", WORKERS, trace=trace, duration_s=duration, slo_ms=SLO_MS, data=data
        )

    experiment()  # writes the scenario's files once (as any later run finds them)
    experiment_s, run_ = best_of(experiment, repeats)
    same = (run_.result.columns["model"] == raw["columns"]["model"]).all()
    scale = TRACE_DURATION_S / duration  # the artifact's figure is for the whole trace
    print(
        f"RAMSIS simulation, image task, SLO {SLO_MS:g} ms, {WORKERS} workers, Twitter trace "
        f"({duration:g} s, {queries} queries)"
    )
    per_query = queries / ramsis_s / 1e6
    print(f"  policy set ({len(policies.policies)} loads) made in {generation_s:.2f} s (not timed)")
    print(f"  RAMSIS:                      {ramsis_s:8.3f} s  ({per_query:.2f} M queries/s)")
    print("  goal:                           0.5 s for the whole trace")
    print(f"  ratio vs the artifact's 6 min: {ARTIFACT_SECONDS / (ramsis_s * scale):8.0f}x faster")
    print(
        f"  fcfs on the same workload:   {fcfs_s:8.3f} s  (RAMSIS / fcfs = {ramsis_s / fcfs_s:.2f})"
    )
    ratio_jf = ramsis_s / jf_s
    print(f"  Jellyfish+ on the same:      {jf_s:8.3f} s  (RAMSIS / Jellyfish+ = {ratio_jf:.2f})")
    sim_s = run_.summary["sim_seconds"]
    print(
        f"  as an experiment:            {experiment_s:8.3f} s  (experiment / RAMSIS = "
        f"{experiment_s / ramsis_s:.2f}; servelab.simulate {sim_s:.3f} s; same choices: {same})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
