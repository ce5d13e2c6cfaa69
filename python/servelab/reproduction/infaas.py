"""INFaaS's rows: Table 3, Sec. 6.1 (INFaaS against Clipper+ and SM+ on machines with co-located
variants) and Sec. 6.3.2."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from .rows import row, tolerance

INFAAS_SEEDS = {"reduced": (0, 1, 2), "full": tuple(range(10))}
#: Sec. 6.1's grid: the paper's peaks (its trace mapped to 10..1,000 QPS; 300 and 600 as lower
#: peaks), 80 % popular, both seeds; the trace's 27 points held step_s seconds each (full: 10 s,
#: 270 s and 126,000 queries at peak 1,000, the paper's 113,420; reduced: 5 s).
SEC61 = {"peaks": (300.0, 600.0, 1000.0), "seeds": (0, 1)}
SEC61_STEP_S = {"reduced": 5.0, "full": 10.0}


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
    rows.extend(sec61_claims(size))
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


def sec61_claims(size: str) -> list[dict[str, Any]]:
    """Sec. 6.1 (``sec61.compare`` on machines: co-located variants under the ``infaas``
    interference model, all three systems on the same EC2 machine types): INFaaS's violations,
    its ratios over Clipper+ and SM+, worker utilisation and GPU memory. Means over the grid's
    points (``SEC61``)."""
    from ..systems.infaas import sec61

    frame = sec61.compare(
        peaks=SEC61["peaks"], popular_shares=[0.8], seeds=SEC61["seeds"], step_s=SEC61_STEP_S[size]
    )
    inf = frame[frame["system"] == "infaas"]
    base = {s: frame[frame["system"] == s] for s in ("clipper_plus", "sm_plus")}
    label = {"clipper_plus": "Clipper+", "sm_plus": "SM+"}
    points = f"peaks {', '.join(f'{p:g}' for p in SEC61['peaks'])} x seeds {SEC61['seeds']}"

    def per_point(values: Any, fmt: str = ".3f") -> str:
        return ", ".join(format(float(v), fmt) for v in values)

    rows = []
    viol = float(inf["slo_violation_rate"].mean())
    rows.append(
        row(
            "Sec. 6.1: INFaaS's SLO violations (mean over the points)",
            "Sec. 6.1: 'while keeping SLO violations under 4% on average'",
            0.04,
            viol,
            tolerance(0.04, interval=(0.0, 0.08)),
            "the paper gives a bound, not a value; up to 2x of it, as our 175 variants' latencies "
            "are scaled from ResNet50's (Table 8 gives accuracies only)",
            cause=lambda: (
                f"popular applications {100 * inf['popular_violation_rate'].mean():.1f}% late, "
                f"cold {100 * inf['cold_violation_rate'].mean():.1f}% (per point "
                f"{per_point(inf['cold_violation_rate'])})"
            ),
            detail=f"{points}: {per_point(inf['slo_violation_rate'])}; popular "
            f"{100 * inf['popular_violation_rate'].mean():.1f}%, cold "
            f"{100 * inf['cold_violation_rate'].mean():.1f}% late",
        )  # fmt: skip
    )
    for system, paper in (("clipper_plus", 1.63), ("sm_plus", 2.54)):
        b = base[system]
        rows.append(
            row(
                f"Sec. 6.1: fewer SLO violations than {label[system]} (x)",
                f"Sec. 6.1: '{paper}x fewer SLO violations compared to {label[system]}'",
                paper,
                float(b["fewer_violations"].mean()),
                tolerance(paper, rel=0.25),
                "a ratio of two small rates over one trace: 25% (the goal of the co-location "
                "work); a point of INFaaS's rate moves it by about 15%",
                cause=lambda b=b: _baseline_cause(b, inf),
                detail=f"{label[system]} {per_point(b['slo_violation_rate'])} against INFaaS "
                f"{per_point(inf['slo_violation_rate'])}; its popular applications "
                f"{100 * b['popular_violation_rate'].mean():.1f}% late, cold "
                f"{100 * b['cold_violation_rate'].mean():.1f}%",
            )  # fmt: skip
        )
    for system in ("clipper_plus", "sm_plus"):
        b = base[system]
        rows.append(
            row(
                f"Sec. 6.1: lower cost than {label[system]} (x)",
                "Sec. 6.1: 'INFaaS achieved 1.23x lower cost'",
                1.23,
                float(b["lower_cost"].mean()),
                tolerance(1.23, rel=0.15),
                "EC2 prices of whole VMs: the ratio moves in steps of one VM's price for the run "
                "(an m5.2xlarge over 280 s is 2% of INFaaS's cost, an inf1.2xlarge 2%)",
                cause=lambda b=b: (
                    f"{label[b['system'].iloc[0]]} {per_point(b['cost_dollars'])} $ against "
                    f"INFaaS {per_point(inf['cost_dollars'])} $"
                ),
                detail=f"per point {per_point(b['lower_cost'])}; machines started: INFaaS "
                f"{per_point(inf['machines_started'], '.0f')}, {label[system]} "
                f"{per_point(b['machines_started'], '.0f')}",
            )  # fmt: skip
        )
    for system, paper in (("clipper_plus", 1.1), ("sm_plus", 1.3)):
        b = base[system]
        rows.append(
            row(
                f"Sec. 6.1: higher throughput than {label[system]} (x)",
                f"Sec. 6.1: '{paper}x ... higher throughput' than {label[system]}",
                paper,
                float(b["infaas_throughput_over"].mean()),
                tolerance(paper, rel=0.15),
                "the paper gives one decimal (+-5%) of a ratio read off Fig. 5's boxes",
                cause=lambda b=b: (
                    f"{label[b['system'].iloc[0]]} serves {per_point(b['throughput_qps'], '.0f')} "
                    f"QPS against INFaaS {per_point(inf['throughput_qps'], '.0f')}: its cold "
                    f"applications are {100 * b['cold_violation_rate'].mean():.0f}% late but "
                    "mostly served (late, not lost), and its popular ones all in time"
                ),
                detail=f"per point {per_point(b['infaas_throughput_over'])}",
            )  # fmt: skip
        )
    util = float(inf["machine_utilisation"].mean())
    rows.append(
        row(
            "Sec. 6.1: INFaaS's average worker (VM) utilisation",
            "Sec. 6.1: 'an average worker utilization of 48.9%'",
            0.489,
            util,
            tolerance(0.489, rel=0.25),
            "the paper does not say how it measures it; ours is the share of time a VM runs at "
            "least one batch (sec61.machine_usage)",
            cause=lambda: _usage_cause(inf, base),
            detail=f"{points}: {per_point(inf['machine_utilisation'])}; Clipper+ "
            f"{base['clipper_plus']['machine_utilisation'].mean():.3f}, SM+ "
            f"{base['sm_plus']['machine_utilisation'].mean():.3f}",
        )  # fmt: skip
    )
    gpu = float(inf["gpu_memory_utilisation"].mean())
    rows.append(
        row(
            "Sec. 6.1: INFaaS's average GPU DRAM utilisation",
            "Sec. 6.1: 'an average GPU DRAM utilization of 58.6% (5.6x and 2.8x higher than SM+ "
            "and Clipper+)'",
            0.586,
            gpu,
            tolerance(0.586, rel=0.25),
            "our footprints are assumptions (0.7-4.6 GB per variant); the records give a lower "
            "bound (a variant counts from its first to its last batch)",
            cause=lambda: _gpu_cause(inf, base),
            detail=f"{points}: {per_point(inf['gpu_memory_utilisation'])}; Clipper+ "
            f"{base['clipper_plus']['gpu_memory_utilisation'].mean():.3f} (paper 58.6/2.8 = "
            f"0.209), SM+ {base['sm_plus']['gpu_memory_utilisation'].mean():.3f} (paper 58.6/5.6 "
            "= 0.105)",
        )  # fmt: skip
    )
    return rows


def _baseline_cause(b: Any, inf: Any) -> str:
    """Why a baseline's violations are off the paper's ratio: where its misses are."""
    cold = b["cold_violation_rate"].mean()
    popular = b["popular_violation_rate"].mean()
    return (
        f"the baseline's misses are its cold applications ({100 * cold:.0f}% late, popular "
        f"{100 * popular:.1f}%): 20% of the queries on 5 CPU VMs (cores / 4 = 10 instance slots), "
        "whose capacity the cold load exceeds at every peak here (1.3x / 2.6x / 4.3x at 300 / "
        "600 / 1,000 as one application per worker); INFaaS moves them to accelerators "
        f"({100 * inf['cold_violation_rate'].mean():.0f}% late). In the paper Clipper+ is "
        "between INFaaS and SM+; here SM+ adds CPU VMs for them and Clipper+ cannot"
    )


def _usage_cause(inf: Any, base: dict[str, Any]) -> str:
    share = inf["gpu_query_share"].mean()
    by_hw = ", ".join(
        f"{hw} {inf[f'utilisation_{hw}'].mean():.2f}" for hw in ("cpu", "gpu", "inferentia")
    )
    return (
        f"INFaaS's VMs by hardware: {by_hw}; it serves {100 * share:.0f}% of its queries on its "
        "5 V100s (paid for the whole run), preferring the cheaper Inferentia and CPU variants, so "
        "its GPU VMs idle most of the time. The baselines' VMs: Clipper+ "
        f"{base['clipper_plus']['machine_utilisation'].mean():.2f}, SM+ "
        f"{base['sm_plus']['machine_utilisation'].mean():.2f} (their CPU VMs are saturated)"
    )


def _gpu_cause(inf: Any, base: dict[str, Any]) -> str:
    return (
        "INFaaS's cost objective keeps few instances on the V100s (it downgrades popular and "
        "cold applications to Inferentia and CPU variants when their load drops, and its GPU "
        "instance slots are 4 per V100, at most about 7 of 16 GB with our footprints); the "
        "baselines' pinned GPU instances give "
        f"{base['clipper_plus']['gpu_memory_utilisation'].mean():.3f} (Clipper+) and "
        f"{base['sm_plus']['gpu_memory_utilisation'].mean():.3f} (SM+), near the 0.209 and 0.105 "
        "the paper's ratios imply"
    )
