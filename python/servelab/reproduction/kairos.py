"""Kairos's rows: Fig. 8, Fig. 9 (against Ribbon on mixes from GPU-heavy to CPU-heavy and on
ORCL's best configurations, against CLKWRK), Fig. 10 (Kairos+, and Ribbon and DRS explored by it),
Fig. 12 (the transient after the query sizes turn Gaussian), Fig. 13, Fig. 14 (the top bounds under
other distributors), Fig. 15(b) (QoS 20% higher) and Fig. 16(b) (noisy predictions)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .rows import needs, row, tolerance

#: Kairos run sizes: the allowable-throughput search (queries per run, seeds, tolerance), ORCL's
#: queries, how many configurations (best bounds first) Fig. 13 measures (None = all 331) and
#: its seeds (one at full size, as the notebook: 331 x 5 searches of 20,000 queries), Fig.
#: 10's models (None = all five) and run size: every configuration measured under Ribbon and
#: under DRS with its threshold hill-climbed for each (about 11 runs a configuration), and Fig.
#: 12's run size and the seeds of the competitors' searches (FIG12_EVALUATIONS each).
KAIROS_SIZES: dict[str, dict[str, Any]] = {
    "reduced": {
        "run": {"queries": 2000, "seeds": (0,), "rel_tol": 0.02, "oracle_queries": 2000},
        "fig13_top": 20,
        "fig13_seeds": (0,),
        "fig10_models": ("rm2", "dien"),
        "fig10_run": {"queries": 1000, "seeds": (0,), "rel_tol": 0.02},
        "fig12_run": {"queries": 1000, "seeds": (0,), "rel_tol": 0.02},
        "fig12_search_seeds": (0,),
    },
    "full": {
        "run": {"queries": 20000, "seeds": (0, 1, 2), "rel_tol": 0.01, "oracle_queries": 20000},
        "fig13_top": None,
        "fig13_seeds": (0,),
        "fig10_models": None,
        "fig10_run": {"queries": 20000, "seeds": (0,), "rel_tol": 0.01},
        "fig12_run": {"queries": 20000, "seeds": (0,), "rel_tol": 0.01},
        "fig12_search_seeds": (0, 1, 2),
    },
}

#: Beside the budget line (servelab.kairos.budget_line), the mix of three GPUs and three CPUs on
#: which issue 36 measured Kairos over Ribbon.
KAIROS_EXTRA_SETTINGS: tuple[dict[str, int], ...] = ({"g4dn.xlarge": 3, "r5n.large": 3},)
#: The artifact's example configuration (its config.json), on rm2.
ARTIFACT_EXAMPLE: dict[str, int] = {"g4dn.xlarge": 2, "r5n.large": 9}
#: Fig. 12: "the first 20 evaluated configurations of transient response are shown".
FIG12_EVALUATIONS = 20
#: Fig. 14: the top upper-bound configurations it plots (Fig. 13's top 20).
FIG14_TOP = 20


def _geomean(values: Sequence[float]) -> float:
    return float(np.exp(np.mean(np.log(np.asarray(values, dtype=float)))))


#: The parts of Kairos's table, each computed on its own (``reproduce(..., parts=...)``): "main"
#: (Fig. 8, 9, 10, 13, 15(b), 16(b): they share their measurements), "fig12" and "fig14".
PARTS: tuple[str, ...] = ("main", "fig12", "fig14")


def claims(size: str, root: Path, parts: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """Fig. 8, Fig. 9 (Kairos over Ribbon along the budget and on ORCL's best configuration, over
    CLKWRK), Fig. 10 (the share of the space Kairos+ evaluates to reach Kairos's, Ribbon's and
    DRS's optimum), Fig. 12 (after the sizes turn Gaussian), Fig. 13, Fig. 14 (the top bounds
    under each distributor), Fig. 15(b) and Fig. 16(b), on the artifact's data. Reduced: 2,000
    queries, one seed, a 2% rate search, Fig. 13 on the 20 best bounds of each model, Fig. 10's
    Ribbon and DRS on rm2 and dien at 1,000 queries; full: 20,000 queries, three seeds, 1%, all
    331 configurations (KAIROS_SIZES). ``parts``: some of PARTS (default all)."""
    from ..systems import kairos

    folder = needs(root, "kairos")
    setting = KAIROS_SIZES[size]
    parts = PARTS if parts is None else tuple(parts)
    rows: list[dict[str, Any]] = []
    frame: Any = None
    cache: dict[tuple[int, ...], float] = {}
    if "main" in parts:
        main, measured, oracles = _main_rows(folder, setting)
        rows += main
        frame, cache = measured["rm2"]
        oracle = oracles["rm2"]
    if "fig12" in parts:
        rows += _fig12_rows(folder, setting, setting["run"])
    if "fig14" in parts:
        if frame is None:
            frame = kairos.upper_bounds(folder, "rm2", formula="artifact")
            oracle = kairos.best_oracle_config(
                folder, "rm2", queries=setting["run"]["oracle_queries"]
            )
        rows += _fig14_rows(folder, setting, frame, cache, oracle)
    return rows


def _main_rows(folder: Path, setting: Mapping[str, Any]) -> tuple[list[dict], dict, dict]:
    """Fig. 8, 9, 10, 13, 15(b) and 16(b); with Fig. 13's measurements of Kairos (bounds frame
    and {counts: rate} per model) and ORCL's best per model, which Fig. 14 reuses."""
    from ..systems import kairos

    config_label = kairos.config_label
    run = setting["run"]
    rows: list[dict[str, Any]] = []
    from ..systems.kairos.paper import MODELS as models

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
        row(
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
        row(
            "Fig. 8: smallest gain over the five models",
            "Sec. 8.1 (Fig. 8): 'more than 1.25x in all cases'",
            1.25,
            gains[low_model],
            tolerance(1.25, interval=(1.25, 2.0)),
            "the text gives a floor (1.25x) and its largest gain (2x): the smallest lies between",
            detail=f"smallest: {low_model}; {gains_text}",
        )  # fmt: skip
    )

    # Fig. 15(b): the same comparison with QoS targets 20% higher (bounds derived for them).
    from ..systems.kairos.paper import QOS_MS

    loose = {
        m: kairos.compare_with_homogeneous(folder, m, size=run, qos_ms=1.2 * QOS_MS[m])
        for m in models
    }
    kept = {m: loose[m]["improvement"] / gains[m] for m in models}
    low_kept = max(kept, key=lambda m: abs(math.log(kept[m])))  # farthest from 1, either side
    rows.append(
        row(
            "Fig. 15(b): Kairos over the best homogeneous pool with QoS 20% higher, over its "
            "Fig. 8 gain, worst model",
            "Sec. 8.6 (Fig. 15(b)): 'when the QoS targets are set 20% higher, KAIROS continues "
            "to offer similar improvements as before'",
            1.0,
            kept[low_kept],
            tolerance(1.0, rel=0.25),
            "'similar improvements', bars read off Fig. 15(b) beside Fig. 8's red dots",
            cause=lambda: "; ".join(
                f"{m}: Fig. 8 {gains[m]:.2f}x -> {loose[m]['improvement']:.2f}x (best pool "
                f"{fig8[m]['homogeneous']} -> {loose[m]['homogeneous']}, "
                f"{loose[m]['homogeneous_scaled_rate']:.1f} QPS scaled; Kairos's pick "
                f"{config_label(loose[m]['kairos_config'])} {loose[m]['kairos_rate']:.1f} QPS; "
                + (
                    "another pool serves more at the looser target)"
                    if loose[m]["homogeneous"] != fig8[m]["homogeneous"]
                    else "the same pool: Kairos's pick for the looser target serves less, not "
                    "yet explained)"
                )
                for m in models
                if not 0.75 <= kept[m] <= 1.25
            ),
            detail=", ".join(
                f"{m} {loose[m]['improvement']:.2f}x ({kept[m]:.2f} of Fig. 8)" for m in models
            ),
        )  # fmt: skip
    )

    # Fig. 16(b): Kairos's predictions with Gaussian noise, on its Fig. 8 configuration.
    noisy: dict[str, dict[float, float]] = {}
    for m in models:
        config = fig8[m]["kairos_config"]
        noisy[m] = {
            x: rate(m, config, f"kairos(noise={x})") / fig8[m]["kairos_rate"]
            for x in (0.05, round(math.sqrt(0.05), 4))
        }
    low_noise = max(noisy, key=lambda m: abs(math.log(noisy[m][0.05])))  # farthest from 1
    rows.append(
        row(
            "Fig. 16(b): Kairos over the best homogeneous pool with 5% noise in its latency "
            "predictions, over its Fig. 8 gain, worst model",
            "Sec. 8.6 (Fig. 16(b)): 'additive Gaussian white noise with 5% variance in latency "
            "prediction ... KAIROS ... continues to offer similar improvements'",
            1.0,
            noisy[low_noise][0.05],
            tolerance(1.0, rel=0.2),
            "'similar improvements', bars read off Fig. 16(b) beside Fig. 8's red dots; the "
            "noise is read as a standard deviation of 5% of each prediction (kairos(noise=0.05))",
            cause=lambda: f"{low_noise}'s rate is {noisy[low_noise][0.05]:.2f} of Fig. 8's",
            detail="rate with noise over without, std 5% / std 22.4% (variance 0.05): "
            + ", ".join(
                f"{m} {v[0.05]:.2f} / {v[round(math.sqrt(0.05), 4)]:.2f}" for m, v in noisy.items()
            ),
        )  # fmt: skip
    )

    # Fig. 9 on fixed configurations: Kairos over Ribbon from GPU-heavy to CPU-heavy mixes.
    line = kairos.budget_line(folder)
    settings = [line[0], *KAIROS_EXTRA_SETTINGS, *line[1:]]
    settings.sort(key=lambda c: (-c.get("g4dn.xlarge", 0), sum(c.values())))
    on_configs = kairos.compare_on_configs(folder, settings, models=models, size=run)
    on_configs["ratio"] = on_configs["kairos_over_ribbon"]
    by_label: dict[str, Any] = {}
    for label, part in on_configs.groupby("label", sort=False):
        by_label[str(label)] = part.set_index("model")
    means = {label: _geomean(part["ratio"].tolist()) for label, part in by_label.items()}

    def per_model(label: str) -> str:
        part = by_label[label]
        return ", ".join(f"{m} {part.loc[m, 'ratio']:.2f}x" for m in models)

    def curve(model: str) -> str:
        return "; ".join(
            f"{label} {by_label[label].loc[model, 'ratio']:.2f}x" for label in by_label
        )  # fmt: skip

    def setting_cause(label: str) -> str:
        part = by_label[label]
        share = float(part["cpu_share"].iloc[0])
        if means[label] < 1.5:
            return (
                f"GPU-heavy ({share:.0%} of the price on CPUs): with few auxiliary instances "
                f"there is little heterogeneity for Kairos to exploit ({per_model(label)}); the "
                "paper's 1.5x needs more CPUs"
            )
        ref = "rm2" if "rm2" in part.index else models[0]
        ribbon = ", ".join(f"{lab} {by_label[lab].loc[ref, 'ribbon']:.1f}" for lab in by_label)
        kairos_ = ", ".join(f"{lab} {by_label[lab].loc[ref, 'kairos']:.1f}" for lab in by_label)
        return (
            f"CPU-heavy ({share:.0%} of the price on CPUs): Ribbon serves first come, first "
            f"served on the first idle instance, CPUs included, so large queries run on CPUs "
            f"beyond QoS, while Kairos matches them to the GPU; {ref} QPS along the budget, "
            f"Ribbon: {ribbon}; Kairos: {kairos_}; per model here {per_model(label)}"
        )

    for label in by_label:
        share = float(by_label[label]["cpu_share"].iloc[0])
        within = sum(1.2 <= r <= 1.8 for r in by_label[label]["ratio"])
        rows.append(
            row(
                f"Fig. 9 on {label}: Kairos over Ribbon, geometric mean of the five models",
                "Sec. 8.2 (Fig. 9): 'For all models, KAIROS can provide around 1.5x the "
                "throughput of Ribbon'",
                1.5,
                means[label],
                tolerance(1.5, rel=0.2),
                "'around 1.5x', bars read off Fig. 9; the paper's configurations (ORCL's best) "
                "are not named, so each mix from GPU-heavy to CPU-heavy is a candidate",
                cause=lambda label=label: setting_cause(label),
                detail=f"CPUs {share:.0%} of the price; {per_model(label)}; "
                f"{within} of {len(models)} models in [1.2, 1.8]",
            )  # fmt: skip
        )
    # Which mix comes nearest the paper's 1.5x: named in the causes, not itself a row (a row
    # for the nearest of six candidates would pass by construction).
    nearest = min(means, key=lambda label: abs(math.log(means[label] / 1.5)))
    example = config_label(ARTIFACT_EXAMPLE)
    measured = by_label[example].loc["rm2"] if example in by_label else None
    k_ex = measured["kairos"] if measured is not None else rate("rm2", ARTIFACT_EXAMPLE, "kairos")
    r_ex = measured["ribbon"] if measured is not None else rate("rm2", ARTIFACT_EXAMPLE, "ribbon")
    rows.append(
        row(
            f"Fig. 9 on the artifact's example configuration (rm2, {example}): Kairos over Ribbon",
            "Sec. 8.2 (Fig. 9): 'For all models, KAIROS can provide around 1.5x the "
            "throughput of Ribbon'; the configuration is the artifact's config.json",
            1.5,
            k_ex / r_ex if r_ex > 0 else math.inf,
            tolerance(1.5, rel=0.2),
            "'around 1.5x', bars read off Fig. 9",
            cause=lambda: f"rm2 along the budget: {curve('rm2')}; {setting_cause(example)}",
            detail=f"Kairos {k_ex:.1f} QPS, Ribbon {r_ex:.1f} QPS",
        )  # fmt: skip
    )

    # Fig. 9: the distributors on ORCL's best configuration.
    clockwork = {}
    oracles = {}
    for m in models:
        best = kairos.best_oracle_config(folder, m, queries=run["oracle_queries"])
        oracles[m] = best
        config = {t: n for t, n in best.config.items() if n}
        k, r, c = (rate(m, config, s) for s in ("kairos", "ribbon", "clockwork"))
        clockwork[m] = k / c if c > 0 else math.inf
        ratio = k / r if r > 0 else math.inf
        rows.append(
            row(
                f"Fig. 9: Kairos over Ribbon on ORCL's best configuration, {m}",
                "Sec. 8.2 (Fig. 9): 'For all models, KAIROS can provide around 1.5x the "
                "throughput of Ribbon'",
                1.5,
                ratio,
                tolerance(1.5, rel=0.2),
                "'around 1.5x', bars read off Fig. 9",
                cause=lambda m=m, config=config, ratio=ratio: (
                    f"the ratio depends on the configuration, and ORCL's best for {m} is "
                    f"CPU-heavy ({config_label(config)}: {ratio:.2f}x); {m} from 4 g4dn to "
                    f"1 g4dn + 13 r5n: {curve(m)} (rm2 on the artifact example {example}: "
                    f"{k_ex / r_ex:.2f}x); the paper's 1.5x matches the GPU-heavy mixes with a "
                    f"few CPUs (nearest: {nearest}, {means[nearest]:.2f}x over the models)"
                ),
                detail=f"{config_label(config)}: Kairos {k:.1f} QPS, Ribbon {r:.1f} QPS",
            )  # fmt: skip
        )
    top = max(clockwork, key=clockwork.get)
    rows.append(
        row(
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
    measured_kairos: dict[str, tuple[Any, dict[tuple[int, ...], float]]] = {}
    for m in models:
        frame = kairos.upper_bounds(folder, m, formula="artifact")
        types = frame.attrs["types"]
        cache: dict[tuple[int, ...], float] = {}
        measured_kairos[m] = (frame, cache)

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
        # Its share of the space counts only if it reached the measured optimum (else NaN:
        # stopping early would look cheap).
        reached = found.found and found.best_value >= measured[best_at] * (1 - 1e-9)
        shares[m] = 100.0 * found.best_index / len(frame) if reached else math.nan
    top = setting["fig13_top"]
    scope = f"the {top} best bounds" if top else "all configurations"
    worst = max(ranks, key=ranks.get)
    rows.append(
        row(
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
        row(
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
    worst_share = max(shares, key=lambda m: math.inf if math.isnan(shares[m]) else shares[m])
    rows.append(
        row(
            "Fig. 10: Kairos+ evaluations to its optimum, % of the space, worst model",
            "Sec. 8.3: 'KAIROS+ consistently evaluates less than 1% of the search space for all "
            "models'",
            1.0,
            shares[worst_share],
            tolerance(1.0, interval=(0.0, 1.0)),
            f"the claim is the range 0-1% itself ({len(frame) // 100} of this space's "
            f"{len(frame)} configurations)",
            cause=lambda: (
                f"{worst_share}: Kairos+ stopped before the measured optimum"
                if math.isnan(shares[worst_share])
                else f"{worst_share}'s optimum is the {ranks.get(worst_share)}th bound: Kairos+ "
                f"evaluates in bound order"
            ),
            detail=", ".join(f"{m} {v:.2f}%" for m, v in shares.items()),
        )  # fmt: skip
    )

    # Fig. 10: Ribbon and DRS (threshold hill-climbed per configuration) explored by Kairos+.
    fig10_models = setting["fig10_models"] or models
    overhead = {
        m: kairos.exploration_overhead(
            folder,
            m,
            size=setting["fig10_run"],
            distributors={"ribbon": "ribbon", "drs": "drs"},
            tune_drs=True,
        )  # fmt: skip
        for m in fig10_models
    }
    bound_rank = {}
    for m, table in overhead.items():
        frame = kairos.upper_bounds(folder, m, formula="artifact")
        types = frame.attrs["types"]
        ranks_of = {
            tuple(int(n) for n in r): int(k)
            for r, k in zip(frame[types].to_numpy(), frame["rank"], strict=True)
        }
        for scheme, r in table.iterrows():
            key = tuple(int(r["config"].get(t, 0)) for t in types)
            bound_rank[(m, scheme)] = ranks_of[key]
    names = {"ribbon": "Ribbon", "drs": "DRS (threshold hill-climbed per configuration)"}
    for scheme, name in names.items():
        share = {m: 100.0 * t.loc[scheme, "share_to_optimum"] for m, t in overhead.items()}
        pruned = {m: t.loc[scheme, "pruned_to_optimum"] for m, t in overhead.items()}
        median = float(np.median(list(share.values())))

        def fig10_cause(
            scheme: str = scheme, share: dict[str, float] = share, median: float = median
        ) -> str:
            parts = []
            for m, t in overhead.items():
                r = t.loc[scheme]
                parts.append(
                    f"{m}: optimum {config_label(r['config'])} ({r['rate']:.1f} QPS) has bound "
                    f"rank {bound_rank[(m, scheme)]} of {t.attrs['space_points']}, reached at "
                    f"{share[m]:.1f}%"
                )
            low = median < 5.0
            why = (
                "its optimum is among the configurations with the highest bounds, which Kairos+ "
                "evaluates first"
                if low
                else "its optimum lies low in the bound order and every configuration with a "
                "higher bound than its best rate must be evaluated"
            )
            return f"{why}; " + "; ".join(parts)

        rows.append(
            row(
                f"Fig. 10: {name} explored by Kairos+, evaluations to its optimum, % of the "
                "space, median over models",
                "Sec. 8.3 (Fig. 10): 'Ribbon and DRS often need to evaluate 5%-30% of the search "
                "space to reach the optimal configuration'",
                30.0,
                median,
                tolerance(30.0, interval=(5.0, 30.0)),
                "the claim is the range 5-30% itself; Kairos+ without sub-configuration pruning, "
                "which this scheme breaks (removing an instance can raise its throughput)",
                cause=fig10_cause,
                detail="; ".join(
                    f"{m} {share[m]:.1f}% (with sub-configuration pruning: "
                    + (
                        "never reached"
                        if math.isnan(pruned[m])
                        else f"{100.0 * pruned[m] / overhead[m].attrs['space_points']:.1f}%"
                    )
                    + f"; {int(overhead[m].loc[scheme, 'non_monotone'])} pairs where one more "
                    "instance serves less)"
                    for m in overhead
                ),
            )  # fmt: skip
        )
    return rows, measured_kairos, oracles


def gaussian_sizes(seed: int = 0, count: int = 100_000) -> str:
    """Fig. 12's Gaussian query sizes. The paper gives no parameters ("the query-size distribution
    changes from Log-normal to Gaussian"); ours has the mean and standard deviation of the
    artifact's mix (kairos_mix, ``count`` draws of ``seed``), clipped to the profiled 1..1000 and
    rounded up to multiples of 10 as the mix is."""
    from ..workload import make_size_distribution

    drawn = make_size_distribution("kairos_mix").generate(seed=seed, count=count)
    return (
        f"clipped_gaussian(mean={drawn.mean():.1f}, std={drawn.std():.1f}, low=1, high=1000, "
        "round_to=10)"
    )


def _fig12_rows(folder: Path, setting: Mapping[str, Any], run: Mapping[str, Any]) -> list[dict]:
    """Fig. 12 on RM2 after the query sizes turn Gaussian: Kairos's one-shot pick (its bound
    recomputed for the new sizes) against ORCL, Ribbon and DRS over the first
    FIG12_EVALUATIONS configurations of their own search (Ribbon's Bayesian optimisation),
    CLKWRK's evaluations to Kairos's throughput, and Kairos+'s evaluations to its end."""
    from ..systems import kairos
    from ..systems.kairos.bounds import configs_of
    from ..systems.kairos.paper import QOS_MS

    label = kairos.config_label
    model, sizes, size = "rm2", gaussian_sizes(), setting["fig12_run"]
    before = kairos.upper_bounds(folder, model, formula="artifact")
    after = kairos.upper_bounds(
        folder, model, formula="artifact", qos_ms=QOS_MS[model], sizes=sizes
    )
    types = after.attrs["types"]
    kw = {"model": model, "queries": size["queries"], "seeds": size["seeds"]}
    kw.update(rel_tol=size["rel_tol"], sizes=sizes)
    cache: dict[tuple[str, tuple[int, ...]], float] = {}

    def objective(scheme: str) -> Any:
        def value(config: Mapping[str, int]) -> float:
            key = (scheme, tuple(int(config.get(t, 0)) for t in types))
            if key not in cache:
                c = {t: n for t, n in zip(types, key[1], strict=True) if n}
                cache[key] = (
                    kairos.tune_drs_threshold(folder, c, **kw).rate
                    if scheme == "drs"
                    else kairos.evaluate_config(folder, c, scheme, **kw).rate
                )
            return cache[key]

        return value

    pick_before = kairos.select_config(before).config
    pick = kairos.select_config(after)
    k_rate = objective("kairos")(pick.config)
    oracle = kairos.best_oracle_config(folder, model, queries=run["oracle_queries"], sizes=sizes)
    plus = kairos.search(after, objective=objective("kairos"), method="kairos+")
    plus_trace = kairos.search_trace(plus, after)
    values: dict[str, list[np.ndarray]] = {}
    for scheme in ("ribbon", "drs", "clockwork"):
        for seed in setting["fig12_search_seeds"]:
            found = kairos.search(
                after, objective=objective(scheme), method="bo", seed=seed,
                max_evaluations=FIG12_EVALUATIONS,
                monotone_pruning=kairos.monotone_pruning_for(scheme),
            )  # fmt: skip
            values.setdefault(scheme, []).append(np.asarray(found.trace_values, dtype=float))
    seeds = ", ".join(str(s) for s in setting["fig12_search_seeds"])
    common = (
        f"RM2, sizes {sizes} (the paper gives no parameters: the mix's mean and standard "
        f"deviation); Kairos's pick before the change {label(pick_before)}, after "
        f"{label(pick.config)} (bound rank {pick.rank}), {k_rate:.1f} QPS"
    )
    rows = []
    ratio = k_rate / oracle.throughput if oracle.throughput > 0 else math.inf
    rows.append(
        row(
            "Fig. 12: Kairos's one-shot pick after the size distribution turns Gaussian over "
            "ORCL's best, RM2",
            "Sec. 8.4 (Fig. 12): 'The throughput of KAIROS and KAIROS+ are within 15% of the "
            "Oracle'",
            1.0,
            ratio,
            tolerance(1.0, rel=0.15),
            "'within 15% of the Oracle': the claim's own width, on either side",
            cause=lambda: (
                f"Kairos's pick {label(pick.config)} serves {k_rate:.1f} QPS (p99 allowable "
                f"rate), ORCL's best {label(oracle.config)} {oracle.throughput:.1f} QPS (its "
                "queries known in advance, served over the makespan)"
            ),
            detail=f"{common}; ORCL's best {label(oracle.config)} {oracle.throughput:.1f} QPS; "
            f"Kairos+ {plus.best_value:.1f} QPS",
        )  # fmt: skip
    )
    names = {"ribbon": "Ribbon", "drs": "DRS (threshold hill-climbed per configuration)"}
    for scheme, name in names.items():
        means = [float(v.mean()) for v in values[scheme]]
        bests = [float(v.max()) for v in values[scheme]]
        ours = k_rate / float(np.median(means))
        per_seed = "; ".join(
            f"seed {s}: mean {m:.1f}, best {b:.1f} QPS"
            for s, m, b in zip(setting["fig12_search_seeds"], means, bests, strict=True)
        )
        rows.append(
            row(
                "Fig. 12: Kairos's one-shot throughput over the mean of the first "
                f"{FIG12_EVALUATIONS} configurations {name} evaluates (its transient), RM2",
                "Sec. 8.4 (Fig. 12): 'Without online evaluation, its throughput is 2x more than "
                "that of Ribbon and DRS'",
                2.0,
                ours,
                tolerance(2.0, rel=0.25),
                "'2x', read off the figure's transient; Ribbon's own search (Bayesian "
                f"optimisation), median over seeds {seeds}",
                cause=lambda name=name, per_seed=per_seed, bests=bests: (
                    f"{name}'s evaluated configurations during its search ({per_seed}) against "
                    f"Kairos's {k_rate:.1f} QPS; over its best configuration Kairos is "
                    f"{k_rate / max(bests):.2f}x"
                ),
                detail=f"{common}; {per_seed}",
            )  # fmt: skip
        )
    at = 9  # the paper's count
    reach = []
    for v in values["clockwork"]:
        hit = np.nonzero(v >= k_rate * (1 - size["rel_tol"]))[0]
        reach.append(f"{hit[0] + 1}" if hit.size else f"not in {len(v)}")
    best_at = [float(v[:at].max()) / k_rate for v in values["clockwork"]]
    best_cw = [float(v.max()) for v in values["clockwork"]]

    def clockwork_best() -> str:
        value = objective("clockwork")
        every = [value(c) for c in configs_of(after)]
        k = int(np.argmax(every))
        return (
            f"{every[k]:.1f} QPS ({label(configs_of(after)[k])}, {every[k] / k_rate:.2f} of "
            "Kairos's)"
        )

    rows.append(
        row(
            f"Fig. 12: CLKWRK's best over its first {at} evaluations over Kairos's one-shot "
            "throughput, RM2",
            "Sec. 8.4 (Fig. 12): 'CLKWRK is the most competitive scheme, but it uses 9 "
            "evaluations to reach the same throughput as KAIROS'",
            1.0,
            float(np.median(best_at)),
            tolerance(1.0, rel=0.05),
            "'the same throughput' after 9 evaluations, read off the figure: 5%; Ribbon's search "
            f"(Bayesian optimisation) over CLKWRK's throughput, median over seeds {seeds}",
            cause=lambda: (
                f"CLKWRK's best over its first {at} evaluations is "
                + ", ".join(f"{b:.2f}" for b in best_at)
                + f" of Kairos's {k_rate:.1f} QPS (seeds {seeds}), over its first "
                f"{FIG12_EVALUATIONS} "
                + ", ".join(f"{b:.1f}" for b in best_cw)
                + f" QPS; its best over all {len(after)} configurations is "
                + clockwork_best()
            ),
            detail=f"{common}; evaluations to reach Kairos's throughput (within "
            f"{size['rel_tol']:.0%}) per seed: " + ", ".join(reach),
        )  # fmt: skip
    )
    evaluated = {tuple(int(x) for x in r) for r in plus_trace[types].to_numpy()}
    left = [
        b for r, b in zip(after[types].to_numpy(), after["bound"], strict=True)
        if tuple(int(x) for x in r) not in evaluated
    ]  # fmt: skip
    steps = "; ".join(
        f"rank {int(r['rank'])} (bound {r['bound']:.1f}) {r['value']:.1f} QPS"
        for _, r in plus_trace.iterrows()
    )
    rows.append(
        row(
            "Fig. 12: Kairos+'s evaluations until every configuration is evaluated or pruned "
            "after the change, RM2",
            "Sec. 8.4 (Fig. 12): 'by its 8th evaluation, all possible configurations in the "
            "search space have been either evaluated or pruned by upper bound'",
            8,
            plus.evaluations,
            tolerance(8, rel=0.5),
            "a count from the text; it depends on how far the measured optimum stands above the "
            "next bounds, hence on the Gaussian, whose parameters the paper does not give: half "
            "to 1.5 times",
            cause=lambda: (
                f"Kairos+ evaluated {steps}; every configuration left has a bound at or below "
                f"{max(left, default=0.0):.1f} QPS, under the best measured "
                f"{plus.best_value:.1f}, so bound pruning ends the search there"
            ),
            detail=f"{common}; Kairos+: {steps}",
        )  # fmt: skip
    )
    return rows


def _fig14_rows(
    folder: Path,
    setting: Mapping[str, Any],
    frame: Any,
    cache: dict[tuple[int, ...], float],
    oracle: Any,
) -> list[dict]:
    """Fig. 14 on RM2: the FIG14_TOP highest bounds measured under Kairos (Fig. 13's
    measurements), Ribbon, DRS (threshold hill-climbed per configuration) and CLKWRK, against the
    bound and ORCL's best throughput."""
    import pandas as pd

    from ..systems import kairos

    label = kairos.config_label
    run = setting["run"]
    types = frame.attrs["types"]
    top = frame.iloc[:FIG14_TOP]
    keys = [tuple(int(x) for x in r) for r in top[types].to_numpy()]
    bounds = top["bound"].to_numpy(dtype=float)
    kw = {"model": "rm2", "queries": run["queries"], "seeds": setting["fig13_seeds"]}
    kw["rel_tol"] = run["rel_tol"]

    def config(key: tuple[int, ...]) -> dict[str, int]:
        return {t: n for t, n in zip(types, key, strict=True) if n}

    rates = {"kairos": []}
    for key in keys:
        if key not in cache:
            cache[key] = kairos.evaluate_config(folder, config(key), "kairos", **kw).rate
        rates["kairos"].append(cache[key])
    for scheme in ("ribbon", "drs", "clockwork"):
        rates[scheme] = [
            kairos.tune_drs_threshold(folder, config(k), **kw).rate
            if scheme == "drs"
            else kairos.evaluate_config(folder, config(k), scheme, **kw).rate
            for k in keys
        ]
    share = {s: np.asarray(v, dtype=float) / bounds for s, v in rates.items()}
    spread = {s: f"{v.mean():.2f} ({v.min():.2f}-{v.max():.2f})" for s, v in share.items()}
    of_bound = "measured over bound, mean (range) over the top bounds: " + ", ".join(
        f"{s} {t}" for s, t in spread.items()
    )
    trend = pd.Series(rates["kairos"]).corr(pd.Series(bounds), method="spearman")
    rows = []
    top_label = label(config(keys[0]))
    gpu = {types[0]: 1}
    alone = frame[(frame[types[0]] == 1) & (frame[types[1:]].sum(axis=1) == 0)]

    def bound_cause() -> str:
        on_top = kairos.oracle_throughput(
            folder, config(keys[0]), model="rm2", queries=run["oracle_queries"]
        )
        on_gpu = kairos.oracle_throughput(folder, gpu, model="rm2", queries=run["oracle_queries"])
        gpu_bound = float(alone["bound"].iloc[0]) if len(alone) else math.nan
        return (
            f"the bound is above ORCL's throughput on the same configurations: on {top_label} "
            f"{bounds[0]:.1f} against {on_top:.1f} QPS (+{bounds[0] / on_top - 1:.1%}; ORCL's "
            f"best {label(oracle.config)} {oracle.throughput:.1f}), on one {types[0]} alone "
            f"{gpu_bound:.2f} against {on_gpu:.2f} (+{gpu_bound / on_gpu - 1:.1%}): the bound "
            "takes the artifact's measured per-instance rates (allocator_profile.json), ORCL the "
            f"profile's mean latencies over its {run['oracle_queries']}-query sequence"
        )

    rows.append(
        row(
            "Fig. 14: the highest upper bound over ORCL's best throughput, RM2",
            "Sec. 8.5 (Fig. 14): 'The upper bound (UB) is lower than but close to the Oracle "
            "throughput (dashed)'",
            1.0,
            bounds[0] / oracle.throughput if oracle.throughput > 0 else math.inf,
            tolerance(1.0, interval=(0.8, 1.0)),
            "'lower than' the dashed line: at most 1; 'close' read as within 20% (the figure read "
            "by eye)",
            cause=bound_cause,
            detail=f"bound {bounds[0]:.1f} QPS ({top_label}); ORCL's best "
            f"{oracle.throughput:.1f} QPS ({label(oracle.config)})",
        )  # fmt: skip
    )
    rows.append(
        row(
            f"Fig. 14: Kairos's measured throughput over the upper bound, mean over the "
            f"{FIG14_TOP} highest bounds, RM2",
            "Sec. 8.5 (Fig. 14): 'The calculated (UB) and KAIROS's experimentally observed "
            "throughput are close to each other and follow the same trend'",
            1.0,
            float(share["kairos"].mean()),
            tolerance(1.0, rel=0.2),
            "'close to each other', read as within 20% (the figure read by eye)",
            cause=lambda: f"Kairos serves {spread['kairos']} of the bound",
            detail=f"{of_bound}; rank correlation of Kairos's throughput with the bound "
            f"{trend:.2f}",
        )  # fmt: skip
    )
    names = {"ribbon": "Ribbon", "drs": "DRS (threshold hill-climbed)", "clockwork": "CLKWRK"}
    for scheme, name in names.items():
        rows.append(
            row(
                f"Fig. 14: {name}'s measured throughput over the upper bound, mean over the "
                f"{FIG14_TOP} highest bounds, RM2",
                "Sec. 8.5 (Fig. 14): 'If KAIROS only chooses a configuration based on the upper "
                "bound without employing its query-distribution mechanism, the actual "
                "throughput will yield far from expectation (loose bound)'",
                0.8,
                float(share[scheme].mean()),
                tolerance(0.8, interval=(0.0, 0.8)),
                "'far from expectation': the complement of the row above's 'close' (within "
                "20%), so at most 80% of the bound; the paper gives no number",
                cause=lambda scheme=scheme, name=name: (
                    f"{name} serves {spread[scheme]} of the bound, Kairos {spread['kairos']}: "
                    f"{name} reaches "
                    f"{float(np.mean(np.asarray(rates[scheme]) / np.asarray(rates['kairos']))):.2f}"
                    " of Kairos's throughput on these configurations"
                ),
                detail=of_bound,
            )  # fmt: skip
        )
    return rows
