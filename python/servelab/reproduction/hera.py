"""Hera's rows: the cluster-level results (Fig. 11's EMU, Fig. 15's servers) and the node
manager's (Fig. 12-13's max loads with DLRM(D) at 50%, Fig. 12's EMU gain over PARTIES)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from .rows import row, tolerance


def claims(size: str, root: Path) -> list[dict[str, Any]]:
    """Hera's cluster-level results (Sec. VII-A1 and VII-C): Fig. 11's EMU of each model
    selection and Fig. 15's servers at even per-model targets (averaged over FIG15_LEVELS), on
    Table I's models and Table II's node. Analytical: both sizes are the same computation."""
    from ..systems import hera
    from ..systems.hera.cluster import servers_needed

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
        row(
            "Fig. 11: Random's lowest EMU",
            "Sec. VII-A1: 'achieving 82 to 147% EMU'",
            0.82,
            emu["random"]["min"],
            tolerance(0.82, abs_=0.05),
            extreme_reason,
        )  # fmt: skip
    )
    rows.append(
        row(
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
        row(
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
            row(
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
            row(
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
    rows.extend(_node_manager_rows(off))
    rows.extend(_fig17_rows(off))
    return rows


def _fig17_rows(off: Any) -> list[dict[str, Any]]:
    """Fig. 17(a): Hera's EMU gain over DeepRecSys from co-location alone (no LLC partitioning)
    and what CAT adds (``emu_without_cat``)."""
    from ..systems import hera

    r = hera.emu_without_cat(off)
    worst = max(r["pairs"], key=lambda p: p["emu_cat"] - p["emu_no_cat"])
    detail = (
        f"mean EMU over Hera's {len(r['pairs'])} pairs: {r['hera_no_cat']:.3f} without CAT, "
        f"{r['hera_cat']:.3f} with; DeepRecSys {r['deeprecsys']:.3f}"
    )
    cause = (
        f"{detail}. CAT adds little here: every Hera pair holds a low model (DLRM(B), DLRM(D): "
        "4 MB of reusable working set, insensitive to ways) that takes little of a shared LLC, "
        "so its partner loses little by sharing (0.6-1.4 points at +-30% of every unpublished "
        "parameter, parameter_sensitivity); the largest loss without CAT is "
        f"{worst['a']} + {worst['b']}, {worst['emu_cat'] - worst['emu_no_cat']:.3f} EMU. The "
        "working sets are our choice (the paper gives none)"
    )
    quote = (
        "Sec. VII-D: 'Even without LLC partitioning, Hera's co-location algorithm alone provides "
        "22% EMU improvements vs. Baseline DeepRecSys, with further 8% improvement with LLC "
        "partitioning'"
    )
    reason = (
        "a number in the text; 25%: our contention model's cache terms are built from the "
        "paper's figures"
    )
    return [
        row(
            "Fig. 17(a): Hera's EMU gain over DeepRecSys without LLC partitioning",
            quote,
            0.22,
            r["gain_no_cat"],
            tolerance(0.22, rel=0.25),
            reason,
            cause=cause,
            detail=detail,
        ),
        row(
            "Fig. 17(a): the further EMU gain LLC partitioning adds",
            quote,
            0.08,
            r["gain_cat"] - r["gain_no_cat"],
            tolerance(0.08, abs_=0.04),
            "half the paper's gain either side: the size of CAT's contribution",
            cause=cause,
            detail=detail,
        ),
    ]


def _node_manager_rows(off: Any) -> list[dict[str, Any]]:
    """Fig. 12-13: NCF's and DIN's max load with DLRM(D) at 50% under each manager (the window
    rule of max_partner_load, which judges capacity), beside the best fixed allocation of the
    node; Fig. 12's mean EMU gain."""
    from .. import _core
    from ..systems import hera

    i = off.index("dlrm_d")
    rows = []
    paper_loads = {("hera", "ncf"): 0.8, ("hera", "din"): 1.0,
                   ("parties", "ncf"): 0.5, ("parties", "din"): 0.9}  # fmt: skip
    bounds: dict[str, dict[str, Any]] = {}
    for (manager, partner), value in paper_loads.items():
        j = off.index(partner)
        ours = _core.hera.max_partner_load(
            off.node, off.models[i], off.tables[i], off.models[j], off.tables[j], manager, 0.5
        )
        if partner not in bounds:
            bounds[partner] = hera.best_static_partner_load(off, "dlrm_d", partner, 0.5)
        bound = bounds[partner]
        name = "Hera" if manager == "hera" else "PARTIES"
        rows.append(
            row(
                f"Fig. 13: {partner.upper()}'s max load with DLRM(D) at 50%, {name}",
                f"Fig. 13: '{name} ... reaching {value:.0%} of max load for "
                f"{partner.upper()}' (Fig. 12's curves)",
                value,
                float(ours),
                tolerance(value, rel=0.2),
                "a point read off a figure; 20%: our contention model is built from the paper's "
                "tables and figures",
                cause=lambda bound=bound, partner=partner, ours=ours: (
                    f"the node's bound: no fixed allocation of the 16 cores and 11 ways serves "
                    f"{partner.upper()} beyond {bound['partner_load']:.3f} of its max load with "
                    f"DLRM(D) at 50% (best: workers {bound['workers']}, ways {bound['ways']}); "
                    f"ours {ours:.3f}. {partner.upper()} scales linearly with cores here, so the "
                    "10 cores DLRM(D) leaves carry at most 62.5% of its 16-core max "
                    "(docs/hera.md, Fig. 12's window rule and the node's bound)"
                ),
                detail=f"best fixed allocation {bound['partner_load']:.3f}",
            )  # fmt: skip
        )
    gain = hera.rmu_emu(off)
    value = hera.PAPER["rmu_emu_gain_vs_parties"]
    rows.append(
        row(
            "Fig. 12: Hera's RMU mean EMU gain over PARTIES",
            "Sec. VII-A2: 'Hera achieves an average 12% (maximum 55%) EMU improvement than "
            "PARTIES'",
            value,
            gain["gain"],
            tolerance(value, abs_=0.06),
            "half the paper's gain either side: the sign and the size of the lead",
            cause=lambda: (
                f"at constant load both managers reach about the node's capacity (mean EMU "
                f"Hera {gain['hera']:.3f}, PARTIES {gain['parties']:.3f} over the seven "
                "partners at 40-80%); the managers differ under changing load (Fig. 14)"
            ),
            detail=f"mean EMU Hera {gain['hera']:.3f}, PARTIES {gain['parties']:.3f}",
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
