"""INFaaS's rows: Table 3 and Sec. 6.3.2."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from .rows import row, tolerance

INFAAS_SEEDS = {"reduced": (0, 1, 2), "full": tuple(range(10))}


def claims(size: str, root: Path) -> list[dict[str, Any]]:
    """Table 3 (the exact ILP on Table 2's variants) and Sec. 6.3.2 (online and offline work
    co-located on one CPU machine, 80 s). Sec. 6.3.2's rows are means over seeds 0-2 (reduced)
    or 0-9 (full)."""
    from ..systems import infaas
    from ..systems.infaas import experiments

    del root  # INFaaS ships no data
    rows = []
    for r in infaas.table3():
        rows.append(
            row(
                f"Table 3: cheapest configuration's cost, {r['qps']} QPS at {r['slo_ms']} ms, $/s",
                "Table 3",
                r["paper_cost"],
                r["ilp_cost"],
                tolerance(r["paper_cost"], abs_=0.5),
                "Table 3 gives whole $/s and the ILP is exact: the same cost or a wrong optimum",
                cause=f"ILP configuration (A,B,C) {r['ilp_config']} against the paper's "
                f"{r['paper_config']}",
                detail=f"ILP (A,B,C) {r['ilp_config']}, paper {r['paper_config']}; greedy "
                f"{r['greedy_config']} at {r['greedy_cost']:g} $/s",
            )  # fmt: skip
        )
    seeds = INFAAS_SEEDS[size]
    runs = [experiments.offline_colocation(seed=s) for s in seeds]
    both = [r["colocated"] for r in runs]
    alone = [r["online_only"] for r in runs]
    change = [100 * (b["online_violation_rate"] - a["online_violation_rate"])
              for b, a in zip(both, alone, strict=True)]  # fmt: skip
    done = [b["offline_completed_in_run"] for b in both]
    lulls = [b["offline_in_lulls"] for b in both]
    peaks = [(d - n) / d if d else 0.0 for d, n in zip(done, lulls, strict=True)]
    mean_both = 100 * np.mean([b["online_violation_rate"] for b in both])
    mean_alone = 100 * np.mean([a["online_violation_rate"] for a in alone])
    seed_text = f"seeds {seeds[0]}-{seeds[-1]}"
    rows.append(
        row(
            "Sec. 6.3.2: online SLO violations, co-located minus online only, points",
            "Sec. 6.3.2 (Fig. 8a-c): 'INFaaS maintained performance for online requests in both "
            "cases'",
            0.0,
            float(np.mean(change)),
            tolerance(0.0, abs_=3.0),
            "'maintained' is read off Fig. 8: 3 points, about the binomial spread of one run's "
            "443 online queries (2 points)",
            cause=lambda: (
                f"a few seeds move the mean: per seed {np.round(change, 1).tolist()} points "
                f"(median {np.median(change):.1f}); not yet measured why those seeds lose more "
                "(a running offline batch is not pre-empted, so an online burst can wait for it)"
            ),
            detail=f"{seed_text}: co-located {mean_both:.1f}%, online only {mean_alone:.1f}% "
            f"(seed 0: {100 * both[0]['online_violation_rate']:.1f}% / "
            f"{100 * alone[0]['online_violation_rate']:.1f}%)",
        )  # fmt: skip
    )
    rows.append(
        row(
            "Sec. 6.3.2: offline images processed while co-located",
            "Sec. 6.3.2: 'On average, 52 images were processed by offline queries during the "
            "co-locating period (0-100 seconds)'",
            52.0,
            float(np.mean(done)),
            tolerance(52.0, rel=0.3),
            "a mean over the paper's runs; 30% as our offline queries arrive through the run "
            "(30% of arrivals) where the paper submits one 500-image request",
            cause=lambda: (
                f"not yet explained; offline work runs through every lull here "
                f"({np.mean(lulls):.0f} of {np.mean(done):.0f} started in the lulls 0-20 and "
                f"40-60 s, {np.mean(done) - np.mean(lulls):.0f} at the peaks: see the next row)"
            ),
            detail=f"{seed_text}: completed during the 80 s {done}, of them in lulls {lulls}; "
            f"seed 0 completed {both[0]['offline_completed']} of {both[0]['offline_queries']} "
            "with the drain",
        )  # fmt: skip
    )
    rows.append(
        row(
            "Sec. 6.3.2: share of offline work started at the peaks (20-40, 60-80 s)",
            "Sec. 6.3.2 (Fig. 8b): 'INFaaS throttled offline queries for two long periods: "
            "20-40 and 60-80 seconds'",
            0.0,
            float(np.mean(peaks)),
            tolerance(0.0, abs_=0.1),
            "read off Fig. 8b: throttled for the whole peak, a few batches at its edges",
            cause=lambda: _infaas_peak_cause(seeds[0]),
            detail=f"{seed_text}: " + ", ".join(f"{p:.2f}" for p in peaks),
        )  # fmt: skip
    )
    return rows


def _infaas_peak_cause(seed: int) -> str:
    """When offline batches start in a peak: seconds after its start (the pause acts on the busy
    share measured over the last period, so it lags the load)."""
    from .. import run as _run
    from ..systems.infaas import experiments

    res = _run.simulate(
        experiments.offline_scenario(), scheduler="infaas(offline_apps='1')", seed=seed
    )
    c = res.columns
    done = (c["app"] == 1) & (c["status"] == experiments.COMPLETED)
    start_s = c["start_ns"][done] / 1e9
    in_peak = ((start_s // 20) % 2 == 1) & (start_s < 80)
    into = np.sort(start_s[in_peak] % 20)
    if not len(into):
        return "no offline batch started at a peak with seed 0"
    return (
        f"not yet explained; seed {seed}: {len(into)} offline queries started at the peaks, "
        f"{int((into < 5).sum())} of them within 5 s of the peak's start (median "
        f"{np.median(into):.1f} s into it), so not only a lag of the pause at the peak's start"
    )
