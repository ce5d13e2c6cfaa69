"""The main job: the default experiment on the embedded profile.

A heterogeneous cluster (scenario "default") under Poisson arrivals; several schedulers compared
at the scenario's rate, then each scheduler's allowable throughput (the largest rate whose p99
meets the 350 ms QoS) found by bisection, and one scheduler run for real (the serving loop with
emulated executors) next to its simulation; last, a built-in recommendation model is profiled,
simulated on its measured profile and served for real, side by side. Prints tables and writes
plots + JSON to a folder.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ._core import make_arrival_process
from .experiments import AllowableThroughput, QoS, allowable_throughput
from .results import Result
from .run import serve, simulate
from .scenario import load_scenario

#: The schedulers compared (registry specs).
SCHEDULERS = (
    "fcfs(prefer='g4dn.xlarge')",
    "least_finish_time",
    "jsq",
    "edf",
    "round_robin",
)


def _with_rate(workload: dict[str, Any], rate: float, count: int | None = None) -> dict[str, Any]:
    out = dict(workload, arrivals=f"poisson(rate={rate:.6g})")
    if count is not None:
        out["count"] = count
    return out


def run_main_job(
    out: Path, *, queries: int = 20000, serve_s: float = 8.0, log: Callable[[str], None] = print
) -> dict[str, Any]:
    """Runs the experiment, writes plots and summary.json into `out`, returns the summary."""
    base = load_scenario("default")
    rate = make_arrival_process(base.workload["arrivals"]).mean_rate
    qos = QoS(percentile=99, target_ms=float(base.workload["apps"][0]["slo_ms"]))
    workload = _with_rate(base.workload, rate, queries)
    started = time.perf_counter()

    log(
        f"Scenario: {base.description}\nWorkers: "
        + ", ".join(f"{w.get('count', 1)} x {w['hardware']}" for w in base.workers)
        + f"; {queries} queries at {rate:g} queries/s; QoS: {qos.describe()}\n"
    )

    runs: dict[str, Result] = {}
    for spec in SCHEDULERS:
        runs[spec] = simulate(base, scheduler=spec, workload=workload)
    log(_table(runs))

    log(f"\nAllowable throughput ({qos.describe()}, seeds 0-1, bisection to 2%):")
    allowable = {}
    for spec in SCHEDULERS:

        def run(r: float, seed: int, spec: str = spec) -> Result:
            return simulate(
                base, scheduler=spec, seed=seed, workload=_with_rate(base.workload, r, 5000)
            )

        a = allowable_throughput(run, qos, low=rate / 4, seeds=(0, 1), rel_tol=0.02)
        allowable[spec] = a.rate
        log(f"  {spec:<28} {_allowable_text(a)}")

    serve_count = max(1, int(rate * serve_s))
    log(f"\nThe same policy in both worlds: {serve_count} queries, {SCHEDULERS[0]}")
    small = _with_rate(base.workload, rate, serve_count)
    sim = simulate(base, scheduler=SCHEDULERS[0], workload=small)
    real = serve(base, scheduler=SCHEDULERS[0], workload=small)
    both = {"simulated": sim, "served (wall clock)": real}
    log(_table(both))

    real = _real_model_section(out, log)

    out.mkdir(parents=True, exist_ok=True)
    from .plotting import save_all  # matplotlib loads only when plots are made

    written = save_all(runs, out, window_s=10.0)  # minutes of arrivals: 10 s windows read better
    written += [p for p in save_all(both, out / "sim_vs_serve")]
    summary = {
        "scenario": base.to_dict(),
        "rate": rate,
        "summaries": {spec: r.summary() for spec, r in runs.items()},
        "allowable_throughput": allowable,
        "sim_vs_serve": {label: r.summary() for label, r in both.items()},
        "real_model": real,
        "elapsed_s": time.perf_counter() - started,
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=2))
    log(f"\nWrote {len(written)} plots and summary.json to {out}/ in {summary['elapsed_s']:.1f} s")
    return summary


def _real_model_section(out: Path, log: Callable[[str], None]) -> dict[str, Any]:
    """Profile -> simulate -> serve -> compare on a built-in recommendation model (DLRM RM2 on
    the CPU, oneDNN where usable), at half the workers' capacity."""
    from .backends import build_info
    from .calibration import loop_breakdown
    from .world_comparison import sim_vs_real

    backend = "onednn" if build_info()["backends"]["onednn"]["usable"] else "reference"
    executor = f"recsys(model='rm2', backend='{backend}', intra_op_threads=1)"
    log(f"\nA real model, the loop closed: {executor}, 2 workers, queries of 8 items, 50% load")
    log("(simulated on what servelab.calibrate fits from a pilot run: service times and the loop)")
    load_before = os.getloadavg()[0]
    c = sim_vs_real(
        executor, workers=2, utilisation=0.5, queries=2000, size=8, repeats=30,
        profile_from="calibrate", pilot_queries=1000,
    )  # fmt: skip
    table = c.table()
    log(table.to_string(float_format=lambda x: f"{x:9.3f}"))
    log("error = simulated / measured - 1 (-0.40: the simulator predicts 40% less than measured)")
    log("\nWhere the served queries' time went (ms):")
    breakdown = loop_breakdown(c.measured)
    log(breakdown[["mean_ms", "p50_ms", "p99_ms"]].to_string(float_format=lambda x: f"{x:8.3f}"))
    verdict = _fidelity_verdict(table, load_before)
    log(verdict)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ax = c.plot_cdf()
    out.mkdir(parents=True, exist_ok=True)
    ax.figure.savefig(out / "real_model_cdf.png")
    plt.close(ax.figure)
    return {
        "executor": c.executor,
        "rate_qps": c.rate_qps,
        "table": table.reset_index().to_dict(orient="records"),
        "loop_breakdown": breakdown.reset_index().to_dict(orient="records"),
        "loop_model": c.simulated.meta.get("loop_model"),
        "load_average_before": load_before,
        "verdict": verdict,
    }


#: The sim-vs-real goals: |p50 error| and |p99 error| at most these.
P50_GOAL, P99_GOAL = 0.05, 0.10


def _fidelity_verdict(table: Any, load_before: float) -> str:
    """One line: the p50 and p99 errors against the goals, and the load average before the runs
    (on a busy machine the served run waits for cores the simulator never sees)."""
    p50, p99 = table.loc["latency p50 (ms)", "error"], table.loc["latency p99 (ms)", "error"]
    ok = abs(p50) <= P50_GOAL and abs(p99) <= P99_GOAL
    cores = os.cpu_count() or 1
    busy = load_before > 0.5 * cores
    return (
        f"verdict: p50 error {p50:+.1%} (goal within {P50_GOAL:.0%}), p99 error {p99:+.1%} "
        f"(goal within {P99_GOAL:.0%}): {'met' if ok else 'NOT met'}; load average "
        f"{load_before:.2f} before the runs on {cores} cores"
        + (": other work was running, measure again on a quiet machine" if busy else "")
    )


def _allowable_text(found: AllowableThroughput) -> str:
    """One scheduler's allowable throughput as the main job prints it."""
    tried = len(found.evaluations)
    if not found.feasible:  # even the lowest rate misses the QoS: there is no rate to report
        lowest = min(ev.rate for ev in found.evaluations)
        return f"fails the QoS at the lowest rate tried ({lowest:.1f} queries/s)"
    bound = "" if found.converged else ", the highest tried: it may sustain more"
    return f"{found.rate:7.1f} queries/s  ({tried} rates tried{bound})"


def _table(runs: dict[str, Result]) -> str:
    head = (
        f"{'scheduler':<28} {'p50 ms':>8} {'p99 ms':>9} {'SLO viol.':>9} {'goodput/s':>9} "
        f"{'cost $':>7} {'util.':>6}"
    )
    lines = [head, "-" * len(head)]
    for label, r in runs.items():
        s = r.summary()
        lines.append(
            f"{label:<28} {s['latency_ms']['p50']:8.1f} {s['latency_ms']['p99']:9.1f} "
            f"{100 * s['slo_violation_rate']:8.2f}% {s['goodput_qps']:9.1f} "
            f"{s['cost_dollars']:7.3f} {100 * s['utilisation']['mean']:5.1f}%"
        )
    return "\n".join(lines)
