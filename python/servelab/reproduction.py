"""Each paper's figures and headline claims beside ours, one row per claim, with a two-sided
tolerance and a verdict computed from the values.

    import servelab

    table = servelab.reproduce("infaas")                  # reduced size: seconds
    table = servelab.reproduce("kairos", size="full")     # the paper's setting
    table[["claim", "paper", "ours", "low", "high", "verdict"]]

Every row holds:

- ``claim`` and ``source``: what the paper states, and where (figure, table or section; the
  artifact's printout for RAMSIS, as ../shared/data's NOTES.md records it);
- ``paper``: the paper's value, taken from its text (never typed from our runs);
- ``ours``: computed now by the system's own API;
- ``low`` / ``high``: the two-sided tolerance interval, ``tolerance`` the same in words and
  ``tolerance_reason`` why it is that wide (values read off a figure, or given as "about", get
  wider ones);
- ``verdict``: "within" when low <= ours <= high, else "outside";
- ``cause``: for a row outside its tolerance, what makes it so, with the measured evidence;
- ``detail``: the numbers behind ``ours``.

``size="reduced"`` runs each paper in well under a minute on two cores (fewer queries, seeds and
configurations: each paper's function says which); ``size="full"`` runs the paper's setting.
Kairos and RAMSIS read the artifacts' data from ``data`` (default: $SERVELAB_DATA, else
../shared/data beside a source checkout); INFaaS, Hera and RRL need none. ``servelab reproduce
<paper> [--size reduced|full] [--json]`` prints the same table.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

#: The papers :func:`reproduce` covers.
PAPERS: tuple[str, ...] = ("kairos", "ramsis", "infaas", "hera", "rrl")
#: The run sizes.
SIZES: tuple[str, ...] = ("reduced", "full")
#: Where the artifacts' data is looked for when ``data`` is not given.
DATA_ENV = "SERVELAB_DATA"
CHECKOUT_DATA = Path(__file__).resolve().parents[3] / "shared" / "data"

COLUMNS = (
    "paper_name", "claim", "source", "paper", "ours", "low", "high", "tolerance",
    "tolerance_reason", "verdict", "cause", "detail",
)  # fmt: skip


# ---- rows ------------------------------------------------------------------------------------


def tolerance(
    paper: float,
    *,
    rel: float | None = None,
    abs_: float | None = None,
    interval: tuple[float, float] | None = None,
) -> tuple[float, float, str]:
    """The interval (low, high) and its words: ``rel`` (a share of the paper's value on either
    side), ``abs_`` (that much on either side) or an explicit ``interval``."""
    given = [x is not None for x in (rel, abs_, interval)]
    if sum(given) != 1:
        raise ValueError("give exactly one of rel=, abs_= or interval=")
    if rel is not None:
        low, high = sorted((paper * (1 - rel), paper * (1 + rel)))  # a negative value too
        return low, high, f"±{rel:.0%}"
    if abs_ is not None:
        return paper - abs_, paper + abs_, f"±{abs_:g}"
    assert interval is not None
    low, high = interval
    return float(low), float(high), f"[{low:g}, {high:g}]"


def verdict(ours: float, low: float, high: float) -> str:
    """ "within" when low <= ours <= high (a NaN is never within), else "outside"."""
    ok = ours is not None and not math.isnan(float(ours)) and low <= float(ours) <= high
    return "within" if ok else "outside"


def _row(
    claim: str,
    source: str,
    paper: float,
    ours: float,
    tol: tuple[float, float, str],
    reason: str,
    *,
    cause: str | Callable[[], str] = "",
    detail: str = "",
) -> dict[str, Any]:
    """One row; ``cause`` (text, or a function computing it) is kept only for a row outside."""
    low, high, words = tol
    v = verdict(ours, low, high)
    if v == "outside":
        cause = cause() if callable(cause) else cause
        if not cause:
            cause = "not yet explained"
    else:
        cause = ""
    return {
        "claim": claim, "source": source, "paper": float(paper), "ours": float(ours),
        "low": low, "high": high, "tolerance": words, "tolerance_reason": reason,
        "verdict": v, "cause": cause, "detail": detail,
    }  # fmt: skip


def data_root(data: str | os.PathLike[str] | None = None) -> Path:
    """The folder holding the artifacts' data (kairos/, ramsis/, ...)."""
    if data is None:
        data = os.environ.get(DATA_ENV) or CHECKOUT_DATA
    return Path(data)


def _needs(root: Path, name: str) -> Path:
    folder = root / name
    if not folder.is_dir():
        raise FileNotFoundError(
            f"{folder}: the {name} artifact's data is absent (give data= or set ${DATA_ENV})"
        )
    return folder


# ---- Kairos ----------------------------------------------------------------------------------

#: Kairos run sizes: the allowable-throughput search (queries per run, seeds, tolerance), ORCL's
#: queries, how many configurations (best bounds first) Fig. 13 measures (None = all 331) and
#: its seeds (one at full size, as the notebook: 331 x 5 searches of 20,000 queries).
KAIROS_SIZES: dict[str, dict[str, Any]] = {
    "reduced": {
        "run": {"queries": 2000, "seeds": (0,), "rel_tol": 0.02, "oracle_queries": 2000},
        "fig13_top": 20,
        "fig13_seeds": (0,),
    },
    "full": {
        "run": {"queries": 20000, "seeds": (0, 1, 2), "rel_tol": 0.01, "oracle_queries": 20000},
        "fig13_top": None,
        "fig13_seeds": (0,),
    },
}

#: The rm2 configurations on which Kairos over Ribbon is set beside the paper's "about 1.5x"
#: (issue 36): homogeneous GPUs, GPUs with a few CPUs, the artifact's example (config.json).
KAIROS_RIBBON_SETTINGS: dict[str, dict[str, int]] = {
    "4 g4dn": {"g4dn.xlarge": 4},
    "3 g4dn + 3 r5n": {"g4dn.xlarge": 3, "r5n.large": 3},
    "2 g4dn + 9 r5n (artifact example)": {"g4dn.xlarge": 2, "r5n.large": 9},
}


def _config_text(config: Mapping[str, int]) -> str:
    return " + ".join(f"{n} {t.split('.')[0]}" for t, n in config.items() if n)


def _kairos(size: str, root: Path) -> list[dict[str, Any]]:
    """Fig. 8, Fig. 9 (Kairos over Ribbon and CLKWRK on ORCL's best configuration), Fig. 10's
    Kairos+ share of the space and Fig. 13, on the artifact's data. Reduced: 2,000 queries, one
    seed, a 2% rate search, Fig. 13 on the 20 best bounds of each model; full: 20,000 queries,
    three seeds, 1%, all 331 configurations."""
    from .systems import kairos

    folder = _needs(root, "kairos")
    setting = KAIROS_SIZES[size]
    run = setting["run"]
    rows: list[dict[str, Any]] = []
    from .systems.kairos.paper import MODELS as models

    def rate(
        model: str, config: Mapping[str, int], spec: str, seeds: Sequence[int] | None = None
    ) -> float:
        return kairos.evaluate_config(
            folder, dict(config), spec, model=model, queries=run["queries"],
            seeds=run["seeds"] if seeds is None else seeds, rel_tol=run["rel_tol"],
        ).rate  # fmt: skip

    # Fig. 8: Kairos's one-shot configuration against the best homogeneous pool.
    fig8 = {m: kairos.compare_with_homogeneous(folder, m, size=run) for m in models}
    gains = {m: float(r["improvement"]) for m, r in fig8.items()}
    gains_text = ", ".join(f"{m} {g:.2f}x" for m, g in gains.items())
    rows.append(
        _row(
            "Fig. 8: Kairos over the best homogeneous pool, RM2",
            "Sec. 8.1 (Fig. 8): 'up to 2x throughput (i.e., RM2 model)'",
            2.0,
            gains["rm2"],
            tolerance(2.0, rel=0.2),
            "'up to 2x' is a rounded figure from a bar chart",
            detail=gains_text,
        )  # fmt: skip
    )
    low_model = min(gains, key=gains.get)
    rows.append(
        _row(
            "Fig. 8: smallest gain over the five models",
            "Sec. 8.1 (Fig. 8): 'more than 1.25x in all cases'",
            1.25,
            gains[low_model],
            tolerance(1.25, interval=(1.25, 2.0)),
            "the text gives a floor (1.25x) and its largest gain (2x): the smallest lies between",
            detail=f"smallest: {low_model}; {gains_text}",
        )  # fmt: skip
    )

    # Fig. 9: the distributors on ORCL's best configuration.
    ribbon_dependence: dict[str, float] = {}

    def dependence() -> str:
        if not ribbon_dependence:
            for name, config in KAIROS_RIBBON_SETTINGS.items():
                k, r = rate("rm2", config, "kairos"), rate("rm2", config, "ribbon")
                ribbon_dependence[name] = k / r if r > 0 else math.inf
        return "; ".join(f"{n} {v:.2f}x" for n, v in ribbon_dependence.items())

    clockwork = {}
    for m in models:
        best = kairos.best_oracle_config(folder, m, queries=run["oracle_queries"])
        config = {t: n for t, n in best.config.items() if n}
        k, r, c = (rate(m, config, s) for s in ("kairos", "ribbon", "clockwork"))
        clockwork[m] = k / c if c > 0 else math.inf
        ratio = k / r if r > 0 else math.inf
        rows.append(
            _row(
                f"Fig. 9: Kairos over Ribbon on ORCL's best configuration, {m}",
                "Sec. 8.2 (Fig. 9): 'For all models, KAIROS can provide around 1.5x the "
                "throughput of Ribbon'",
                1.5,
                ratio,
                tolerance(1.5, rel=0.2),
                "'around 1.5x', bars read off Fig. 9",
                cause=lambda m=m, config=config, ratio=ratio: (
                    f"the ratio depends on the configuration, and ORCL's best for {m} is "
                    f"CPU-heavy ({_config_text(config)}: {ratio:.2f}x); on rm2 Kairos over "
                    f"Ribbon is {dependence()}: the paper's 1.5x lies between GPU-heavy and "
                    f"CPU-heavy mixes, and the paper does not name ORCL's configuration"
                ),
                detail=f"{_config_text(config)}: Kairos {k:.1f} QPS, Ribbon {r:.1f} QPS",
            )  # fmt: skip
        )
    top = max(clockwork, key=clockwork.get)
    rows.append(
        _row(
            "Fig. 9: largest gain of Kairos over CLKWRK (any model)",
            "Sec. 8.2 (Fig. 9): 'KAIROS outperforms the DRS and CLKWRK schemes by up to 44%'",
            1.44,
            clockwork[top],
            tolerance(1.44, rel=0.1),
            "a number in the text; 10% for our runs' rate search and seed noise",
            cause=lambda: (
                f"Kairos over CLKWRK is {min(clockwork.values()):.2f}-"
                f"{max(clockwork.values()):.2f}x on the models' ORCL configurations: not yet "
                "explained"
            ),
            detail=", ".join(f"{m} {v:.2f}x" for m, v in clockwork.items()),
        )  # fmt: skip
    )

    # Fig. 13 and Fig. 10: the best bounds measured; Kairos+ over the same measurements.
    ranks, picks, shares = {}, {}, {}
    for m in models:
        frame = kairos.upper_bounds(folder, m, formula="artifact")
        types = frame.attrs["types"]
        cache: dict[tuple[int, ...], float] = {}

        def measure(
            config: Mapping[str, int],
            m: str = m,
            types: Sequence[str] = types,
            cache: dict[tuple[int, ...], float] = cache,
        ) -> float:
            key = tuple(int(config.get(t, 0)) for t in types)
            if key not in cache:
                config = {t: n for t, n in zip(types, key, strict=True) if n}
                cache[key] = rate(m, config, "kairos", setting["fig13_seeds"])
            return cache[key]

        n_top = setting["fig13_top"] or len(frame)
        counts = [tuple(int(x) for x in row) for row in frame[types].to_numpy()]
        for key in counts[:n_top]:
            measure(dict(zip(types, key, strict=True)))
        measured = [cache[k] for k in counts[:n_top]]
        best_at = int(np.argmax(measured))
        ranks[m] = int(frame["rank"].iloc[best_at])
        pick = kairos.select_config(frame)
        picks[m] = measure(dict(zip(types, pick.counts, strict=True))) / measured[best_at]
        found = kairos.search(frame, objective=measure, method="kairos+")
        shares[m] = 100.0 * found.best_index / len(frame)
    scope = "the 20 best bounds" if setting["fig13_top"] else "all configurations"
    worst = max(ranks, key=ranks.get)
    rows.append(
        _row(
            f"Fig. 13: bound rank of the measured optimum, worst model ({scope} measured)",
            "Sec. 8.4 (Fig. 13): 'the actual optimal configuration is always among the top 10 "
            "candidates'",
            10,
            ranks[worst],
            tolerance(10, interval=(1, 10)),
            "the claim is the range 1-10 itself",
            cause=lambda: f"{worst}'s optimum has bound rank {ranks[worst]}",
            detail=", ".join(f"{m} rank {r}" for m, r in ranks.items()),
        )  # fmt: skip
    )
    low_pick = min(picks, key=picks.get)
    rows.append(
        _row(
            "Fig. 13: Kairos's one-shot pick over the measured optimum, worst model",
            "Sec. 8.2: 'KAIROS still provides approximately the same throughput as KAIROS+ "
            "without any online evaluation'",
            1.0,
            picks[low_pick],
            tolerance(1.0, rel=0.1),
            "'approximately the same': 10%, the spread of the top bounds' measured throughputs",
            cause=lambda: f"{low_pick}'s pick measures {picks[low_pick]:.2f} of its optimum",
            detail=", ".join(f"{m} {v:.2f}" for m, v in picks.items()),
        )  # fmt: skip
    )
    worst_share = max(shares, key=shares.get)
    rows.append(
        _row(
            "Fig. 10: Kairos+ evaluations to its optimum, % of the space, worst model",
            "Sec. 8.3: 'KAIROS+ consistently evaluates less than 1% of the search space for all "
            "models'",
            1.0,
            shares[worst_share],
            tolerance(1.0, interval=(0.0, 1.0)),
            "the claim is the range 0-1% itself (3 of this space's 331 configurations)",
            cause=lambda: (
                f"{worst_share}'s optimum is the {ranks.get(worst_share)}th bound: Kairos+ "
                f"evaluates in bound order"
            ),
            detail=", ".join(f"{m} {v:.2f}%" for m, v in shares.items()),
        )  # fmt: skip
    )
    return rows


# ---- RAMSIS ----------------------------------------------------------------------------------


def _ramsis(size: str, root: Path) -> list[dict[str, Any]]:
    """RAMSIS's accuracy gains over Jellyfish+ and ModelSwitching in the artifact's setting
    (image, SLO 150 ms, the Twitter trace at 60/70/80 workers and constant loads 400..4000 QPS at
    60 workers, the artifact's ModelSwitching tables), against what its appendix says the
    artifact prints. That setting costs seconds, so both sizes run it in full."""
    from .systems import ramsis
    from .systems.ramsis.experiments import compare_methods, read_artifact_ms_tables

    folder = _needs(root, "ramsis")
    del size  # the artifact's setting is cheap: reduced and full are the same runs
    tables = read_artifact_ms_tables((60, 70, 80), folder)
    frames = {
        "trace": compare_methods(
            "image", workers=(60, 70, 80), slo_ms=150.0, trace=True, ms_tables=tables,
            data=folder, threads=2,
        ),
        "constant": compare_methods(
            "image", workers=(60,), slo_ms=150.0, loads=ramsis.CONSTANT_LOADS, ms_tables=tables,
            data=folder, threads=2,
        ),
    }  # fmt: skip
    names = {"jellyfish": "Jellyfish+", "model_switching": "ModelSwitching"}
    rows = []
    for workload, frame in frames.items():
        gains = ramsis.accuracy_gains(frame)
        where = "Twitter trace, 60/70/80 workers" if workload == "trace" else (
            "constant 400..4000 QPS, 60 workers"
        )  # fmt: skip
        for baseline, (mean, best) in ramsis.ARTIFACT_GAINS[workload].items():
            g = gains[baseline]
            per = frame.pivot_table(
                index=["workers", "load_qps"] if workload == "constant" else "workers",
                columns="method", values="accuracy_per_satisfied_query",
            )  # fmt: skip
            diff = 100 * (per["ramsis"] - per[baseline])
            detail = f"{g['configurations']} configurations; gains {diff.round(2).tolist()} pp"
            for stat, value, tol, reason in (
                ("mean", mean, 1.0, "a printed number; 1 pp: one run per configuration, "
                 "whose arrivals differ from the artifact's numpy stream"),
                ("max", best, 1.5, "a printed number; 1.5 pp: the largest of the configurations' "
                 "gains, the most sensitive to one run's arrivals"),
            ):  # fmt: skip
                rows.append(
                    _row(
                        f"accuracy gain over {names[baseline]}, {stat}, pp ({where})",
                        "artifact appendix A.4.2 (plot.py's printout, image, SLO 150 ms)",
                        value,
                        g[stat],
                        tolerance(value, abs_=tol),
                        reason,
                        detail=detail,
                    )  # fmt: skip
                )
    return rows


# ---- INFaaS ----------------------------------------------------------------------------------

INFAAS_SEEDS = {"reduced": (0, 1, 2), "full": tuple(range(10))}


def _infaas(size: str, root: Path) -> list[dict[str, Any]]:
    """Table 3 (the exact ILP on Table 2's variants) and Sec. 6.3.2 (online and offline work
    co-located on one CPU machine, 80 s). Sec. 6.3.2's rows are means over seeds 0-2 (reduced)
    or 0-9 (full)."""
    from .systems import infaas
    from .systems.infaas import experiments

    del root  # INFaaS ships no data
    rows = []
    for r in infaas.table3():
        rows.append(
            _row(
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
        _row(
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
        _row(
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
        _row(
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
    from . import run as _run
    from .systems.infaas import experiments

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


# ---- Hera ------------------------------------------------------------------------------------


def _hera(size: str, root: Path) -> list[dict[str, Any]]:
    """Hera's cluster-level results (Sec. VII-A1 and VII-C): Fig. 11's EMU of each model
    selection and Fig. 15's servers at even per-model targets (averaged over FIG15_LEVELS), on
    Table I's models and Table II's node. Analytical: both sizes are the same computation."""
    from .systems import hera
    from .systems.hera.cluster import servers_needed

    del size, root  # no data, no run length
    off = hera.build()
    emu = hera.emu_summary(off)
    rows = []
    model_reason = (
        "a number in the text; 25%: Hera's code and data are unpublished and our contention "
        "model is built from the paper's tables and figures (its affinity/QPS Pearson is 0.92 "
        "against the paper's 0.95)"
    )
    extreme_reason = (
        "a number in the text; 0.05: one pair of 28 sets each extreme, through our contention "
        "model (built from the paper's tables and figures)"
    )
    rows.append(
        _row(
            "Fig. 11: Random's lowest EMU",
            "Sec. VII-A1: 'achieving 82 to 147% EMU'",
            0.82,
            emu["random"]["min"],
            tolerance(0.82, abs_=0.05),
            extreme_reason,
        )  # fmt: skip
    )
    rows.append(
        _row(
            "Fig. 11: Random's highest EMU",
            "Sec. VII-A1: 'achieving 82 to 147% EMU'",
            1.47,
            emu["random"]["max"],
            tolerance(1.47, abs_=0.05),
            extreme_reason,
            cause=lambda: _hera_best_pair(off),
        )  # fmt: skip
    )
    rows.append(
        _row(
            "Fig. 11: Hera's lowest EMU",
            "Sec. VII-A1: 'guaranteeing the EMU never falls below 100%'",
            1.0,
            emu["hera"]["min"],
            tolerance(1.0, interval=(1.0, 1.47)),
            "from the text's floor (100%) to the largest EMU any pair reaches (147%)",
        )  # fmt: skip
    )
    paper = hera.PAPER
    for other, key in (
        ("DeepRecSys", "deeprecsys"), ("Random", "random"), ("Hera(Random)", "hera_random"),
    ):  # fmt: skip
        value = paper[f"emu_gain_vs_{key}"]
        ours = emu["hera"]["mean"] / emu[key]["mean"] - 1
        rows.append(
            _row(
                f"Fig. 11: Hera's mean EMU gain over {other}",
                "Sec. VII-A1: 'Hera achieves 37.3%, 34.7%, and 5.4% average EMU improvement "
                "than DeepRecSys, Random, and Hera (Random)'",
                value,
                ours,
                tolerance(value, rel=0.25),
                model_reason,
                cause=lambda key=key: (
                    f"Random's mean EMU is {emu['random']['mean']:.3f} here; the paper's gains "
                    f"imply {1.373 / 1.347:.3f} (1.373 / 1.347): our random pairs lose less"
                    if key == "random"
                    else f"Hera's mean EMU {emu['hera']['mean']:.3f}, {key}'s "
                    f"{emu[key]['mean']:.3f}"
                ),
                detail=f"mean EMU: Hera {emu['hera']['mean']:.3f}, {key} {emu[key]['mean']:.3f}",
            )  # fmt: skip
        )
    servers = servers_needed(off, hera.FIG15_LEVELS)
    mean = {s: float(np.mean(v)) for s, v in servers.items()}
    levels = ", ".join(f"{x:g}" for x in hera.FIG15_LEVELS)
    for a, b, key, quote in (
        ("hera", "deeprecsys", "servers_saved_vs_deeprecsys", "26% ... than DeepRecSys"),
        ("hera", "random", "servers_saved_vs_random", "11% reduction ... than Random"),
        ("random", "deeprecsys", "random_servers_saved_vs_deeprecsys",
         "Random ... reduce the number of servers by an average 15% compared to DeepRecSys"),
    ):  # fmt: skip
        value = paper[key]
        ours = 1 - mean[a] / mean[b]
        rows.append(
            _row(
                f"Fig. 15: servers saved, {a} against {b} (even targets)",
                f"Sec. VII-C: '{quote}'",
                value,
                ours,
                tolerance(value, rel=0.25),
                model_reason,
                cause=lambda a=a, b=b: f"servers {a} {servers[a]}, {b} {servers[b]}",
                detail=f"servers at {levels} QPS per model: {a} {servers[a]}, {b} {servers[b]}",
            )  # fmt: skip
        )
    return rows


def _hera_best_pair(off: Any) -> str:
    best = (-1.0, "", "")
    names = list(off.names)
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            e = float(off.pair(a, b)["emu"])
            best = max(best, (e, a, b))
    return (
        f"our best pair is {best[1]} + {best[2]} at EMU {best[0]:.3f}; the paper does not name "
        "its 147% pair, so which pair's contention differs is not known"
    )


# ---- RRL -------------------------------------------------------------------------------------

#: RRL run sizes: seeds (the issue asks for at least 10 at full size) and steps per run.
RRL_SIZES: dict[str, dict[str, Any]] = {
    "reduced": {"seeds": (0, 1, 2, 3, 4), "steps": 1500},
    "full": {"seeds": tuple(range(10)), "steps": 1500},
}


def _rrl(size: str, root: Path) -> list[dict[str, Any]]:
    """Fig. 11's radius-1 speed-up over point-based Q-learning and Sec. 6.3's mean latency
    against CAPES, on the CPU space of an 8-core machine (512 configurations) with the
    performance model, Inception-like at 7 requests/s (the fidelity tests' setting: the paper's
    Fig. 4 load scaled to 8 cores). Reduced: seeds 0-4; full: 0-9."""
    from .systems import rrl

    del root  # the performance model needs no data
    setting = RRL_SIZES[size]
    space, model = rrl.cpu_space(8), rrl.PerfModel(cores=8)
    common = {"steps": setting["steps"], "model": model, "oracle_episodes": 10}
    seeds = setting["seeds"]
    sweep = rrl.region_sweep(space, "poisson(rate=7.0)", (0, 1, 2), seeds=seeds, **common)
    steps = sweep.groupby("radius")["steps_to_converge"].mean()
    speedup = float(steps[0.0] / steps[1.0])
    per_seed = sweep[sweep["radius"] == 1.0]["steps_to_converge"].tolist()
    seed_text = f"seeds {seeds[0]}-{seeds[-1]}"
    rows = [
        _row(
            "Fig. 11: radius 1 converges faster than point-based Q-learning, x",
            "Sec. 6.2 (Fig. 11): 'when the region size is one, RRL converges five times faster "
            "than Q-learning'",
            5.0,
            speedup,
            tolerance(5.0, rel=0.3),
            "one number from the paper's testbed; 30%: ours is a mean over seeds on a "
            "performance model, where one slow seed moves it",
            cause=lambda: (
                f"not yet tested; radius 1's steps per seed {per_seed} against "
                f"{steps[0.0]:.0f} for Q-learning; radius 2 gives {steps[0.0] / steps[2.0]:.2f}x. "
                "Suspected: one estimator step per observation (the artifact retrains to a "
                "plateau) and optimistic start values that sweep every region"
            ),
            detail=f"{seed_text}: mean steps to converge, radius 0 {steps[0.0]:.0f}, "
            f"1 {steps[1.0]:.0f}, 2 {steps[2.0]:.0f}",
        )  # fmt: skip
    ]
    runs = rrl.compare_methods(
        space, "poisson(rate=7.0)", ("rrl", "capes"), seeds=seeds[:3], progress=False, **common
    )
    table = rrl.regret_table(runs).groupby("method")
    mean = table["mean_chosen_latency_ms"].mean()
    tail = table["tail_chosen_latency_ms"].mean()
    reduction = float(1 - mean["rrl"] / mean["capes"])
    rows.append(
        _row(
            "Sec. 6.3: RRL's mean latency below CAPES's over a run, Inception (share)",
            "Sec. 6.3 (Fig. 12b): 'improves from CAPES and DeepRM by 50.6% and 52.9% "
            "respectively for Inception'",
            0.506,
            reduction,
            tolerance(0.506, rel=0.25),
            "a number in the text; 25%: the paper's runs last 2,000 minutes of a WiKi trace, "
            "ours a Poisson load on the performance model",
            cause=lambda: (
                f"the difference is in the learning phase: over the whole run RRL averages "
                f"{mean['rrl']:.0f} ms against CAPES's {mean['capes']:.0f} ms, in the last tenth "
                f"{tail['rrl']:.0f} ms against {tail['capes']:.0f} ms"
            ),
            detail=f"seeds {seeds[0]}-{seeds[:3][-1]}: mean chosen latency RRL "
            f"{mean['rrl']:.1f} ms, CAPES {mean['capes']:.1f} ms; last tenth {tail['rrl']:.1f} / "
            f"{tail['capes']:.1f} ms",
        )  # fmt: skip
    )
    return rows


# ---- entry point -----------------------------------------------------------------------------

_BUILDERS: dict[str, Callable[[str, Path], list[dict[str, Any]]]] = {
    "kairos": _kairos,
    "ramsis": _ramsis,
    "infaas": _infaas,
    "hera": _hera,
    "rrl": _rrl,
}


def reproduce(
    paper: str, size: str = "reduced", *, data: str | os.PathLike[str] | None = None
) -> pd.DataFrame:
    """The paper's figures and headline claims beside ours: one row per claim (see the module
    doc for the columns). attrs: paper, size, seconds (the wall time of the computation)."""
    if not isinstance(paper, str) or paper not in _BUILDERS:
        raise ValueError(f"paper={paper!r} is not one of {', '.join(PAPERS)}")
    if not isinstance(size, str) or size not in SIZES:
        raise ValueError(f"size={size!r} is not one of {', '.join(SIZES)}")
    start = time.perf_counter()
    rows = _BUILDERS[paper](size, data_root(data))
    frame = pd.DataFrame([{"paper_name": paper, **r} for r in rows], columns=list(COLUMNS))
    frame.attrs.update(
        {"paper": paper, "size": size, "seconds": round(time.perf_counter() - start, 2)}
    )
    return frame


def format_table(frame: pd.DataFrame, *, markdown: bool = False) -> str:
    """The table as text (or a markdown table): claim, paper, ours, tolerance, verdict, cause
    and the numbers behind ours."""

    def num(x: float) -> str:
        return f"{x:.3g}" if abs(x) < 100 else f"{x:.1f}"

    head = ("claim", "paper", "ours", "tolerance", "verdict", "cause", "detail")
    body = [
        (
            r.claim,
            num(r.paper),
            num(r.ours),
            f"{r.tolerance} = [{num(r.low)}, {num(r.high)}]",
            r.verdict,
            r.cause,
            r.detail,
        )  # fmt: skip
        for r in frame.itertuples()
    ]
    within = int((frame["verdict"] == "within").sum())
    a = frame.attrs
    foot = (
        f"{a.get('paper')}, size {a.get('size')}: {within} of {len(frame)} rows within tolerance "
        f"({a.get('seconds')} s)"
    )
    if markdown:
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        lines += ["| " + " | ".join(c.replace("|", "/") for c in row) + " |" for row in body]
        return "\n".join(lines) + f"\n\n{foot}"
    lines = []
    for row, r in zip(body, frame.itertuples(), strict=True):
        lines.append(f"{r.verdict.upper():8} {row[0]}")
        lines.append(f"         paper {row[1]}, ours {row[2]}, tolerance {row[3]}")
        lines.append(f"         source: {r.source}")
        lines.append(f"         tolerance: {r.tolerance_reason}")
        if r.detail:
            lines.append(f"         detail: {r.detail}")
        if r.cause:
            lines.append(f"         cause: {r.cause}")
    lines.append(foot)
    return "\n".join(lines)
