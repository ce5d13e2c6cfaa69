"""The Hera paper's reported numbers, and our numbers beside them.

No code or data of Hera is public, so the comparisons are of orderings and ranges: the paper's
figure next to what our contention model gives on the same models and node.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .cluster import servers_needed
from .offline import HeraOffline, build
from .rmu import CONTROLLERS, best_static_partner_load, fig14_loads, rmu_emu, run_node
from .selection import emu_summary, emu_without_cat
from .specs import model, table1_models

#: what the paper reports (fractions: 0.95 = 95%)
PAPER: dict[str, Any] = {
    "low_scalability_models": ("dlrm_b", "dlrm_d"),  # Sec. VI-B
    "dlrm_b_max_workers": 8,  # Sec. V-B: out of memory beyond 8 workers
    "dlrm_d_gain_12_to_16_workers": 0.04,  # Sec. V-B
    # Fig. 7: share of the full-LLC QPS kept with (ways) ways
    "fig7": {"dlrm_d": (1, 0.90), "dien": (2, 0.80), "wnd": (2, 0.80), "din": (5, 0.80)},
    "pearson": 0.95,  # Fig. 10
    "high_high_loss": 0.20,  # Fig. 9(a): NCF + DIEN vs isolation
    "emu_random_range": (0.82, 1.47),  # Fig. 11
    "emu_gain_vs_deeprecsys": 0.373,  # Sec. VII-A1, mean EMU
    "emu_gain_vs_random": 0.347,
    "emu_gain_vs_hera_random": 0.054,
    "servers_saved_vs_deeprecsys": 0.26,  # Sec. VII-C, Fig. 15
    "servers_saved_vs_random": 0.11,
    "random_servers_saved_vs_deeprecsys": 0.15,
    "rmu_emu_gain_vs_parties": 0.12,  # Sec. VII-A2 (max 0.55)
    "affinity_seconds_hundreds_of_models": 1.0,  # Sec. VII-E: "less than one second"
    "cluster_schedule_seconds": 0.1,  # Sec. VII-E: "less than 100 ms"
}

#: the even per-model target QPS our Fig. 15 comparison averages over
FIG15_LEVELS = (2000.0, 4000.0, 8000.0, 16000.0)


def comparison(off: HeraOffline, levels: tuple[float, ...] = FIG15_LEVELS) -> list[dict[str, Any]]:
    """Rows (quantity, paper, ours) for the figures the contention model reproduces."""
    emu = emu_summary(off)
    rows: list[dict[str, Any]] = []

    def row(quantity: str, paper: Any, ours: Any) -> None:
        rows.append({"quantity": quantity, "paper": paper, "ours": ours})

    row(
        "low worker-scalability models",
        ", ".join(PAPER["low_scalability_models"]),
        ", ".join(off.low_models),
    )
    if "dlrm_b" in off.names:
        row(
            "DLRM(B) max workers (memory)",
            PAPER["dlrm_b_max_workers"],
            off.tables[off.index("dlrm_b")].max_workers,
        )
    if "dlrm_d" in off.names:
        c = off.workers_curve("dlrm_d")
        row(
            "DLRM(D) QPS gain 12 -> 16 workers",
            PAPER["dlrm_d_gain_12_to_16_workers"],
            float(c[15] / c[11] - 1),
        )
    for name, (ways, share) in PAPER["fig7"].items():
        if name in off.names:
            row(
                f"Fig. 7 {name} QPS share with {ways} ways",
                share,
                float(off.ways_curve(name)[ways - 1]),
            )
    row("Pearson(affinity, co-located QPS)", PAPER["pearson"], off.pearson())
    if {"ncf", "dien"} <= set(off.names):
        row(
            "Fig. 9a NCF+DIEN loss vs isolation",
            PAPER["high_high_loss"],
            1 - off.pair("ncf", "dien")["emu"],
        )
    row(
        "Fig. 11 Random EMU range",
        PAPER["emu_random_range"],
        (emu["random"]["min"], emu["random"]["max"]),
    )
    row("Fig. 11 Hera min EMU", 1.0, emu["hera"]["min"])
    for other, key in (
        ("deeprecsys", "emu_gain_vs_deeprecsys"),
        ("random", "emu_gain_vs_random"),
        ("hera_random", "emu_gain_vs_hera_random"),
    ):
        row(
            f"Hera mean EMU gain vs {other}",
            PAPER[key],
            emu["hera"]["mean"] / emu[other]["mean"] - 1,
        )
    servers = servers_needed(off, levels)
    mean = {s: float(np.mean(v)) for s, v in servers.items()}
    row(
        "Fig. 15 servers saved, Hera vs DeepRecSys",
        PAPER["servers_saved_vs_deeprecsys"],
        1 - mean["hera"] / mean["deeprecsys"],
    )
    row(
        "Fig. 15 servers saved, Hera vs Random",
        PAPER["servers_saved_vs_random"],
        1 - mean["hera"] / mean["random"],
    )
    row(
        "Fig. 15 servers saved, Random vs DeepRecSys",
        PAPER["random_servers_saved_vs_deeprecsys"],
        1 - mean["random"] / mean["deeprecsys"],
    )
    if {"dlrm_d", "ncf"} <= set(off.names):
        row(
            "Fig. 12 Hera RMU mean EMU gain vs PARTIES",
            PAPER["rmu_emu_gain_vs_parties"],
            rmu_emu(off)["gain"],
        )
        runs = {c: run_node(off, "dlrm_d", "ncf", fig14_loads(), c) for c in CONTROLLERS}
        missed = {c: r["violations_a"] + r["violations_b"] for c, r in runs.items()}
        row(
            "Fig. 14 windows over SLA (Hera, PARTIES)",
            "(0, spikes)",
            (missed["hera"], missed["parties"]),
        )
    return rows


def format_comparison(rows: list[dict[str, Any]]) -> str:
    """The rows as aligned text: quantity, paper, ours."""

    def shown(v: Any) -> str:
        if isinstance(v, float):
            return f"{v:.3f}"
        if isinstance(v, tuple):
            return "(" + ", ".join(shown(x) for x in v) + ")"
        return str(v)

    width = max(len(r["quantity"]) for r in rows)
    lines = [f"{'quantity':<{width}}  {'paper':>16}  {'ours':>16}"]
    lines += [
        f"{r['quantity']:<{width}}  {shown(r['paper']):>16}  {shown(r['ours']):>16}" for r in rows
    ]
    return "\n".join(lines)


#: the Table I parameters the paper does not give (docs/hera.md, "Choices where the paper is
#: silent")
UNPUBLISHED_FIELDS = ("compute_ms", "cache_stall", "shared_ws_mb", "private_ws_mb", "dense_mb")


def parameter_sensitivity(
    fields: tuple[str, ...] = UNPUBLISHED_FIELDS,
    factors: tuple[float, ...] = (0.7, 1.3),
    levels: tuple[float, ...] = FIG15_LEVELS,
) -> list[dict[str, Any]]:
    """The results' sensitivity to the unpublished model parameters: each field of every Table I
    model scaled by each factor (one field at a time), the offline tables rebuilt, and the
    headline numbers recomputed. One row per (field, factor), the first row the shipped values
    (field "", factor 1): the low-scalability models, Hera's mean EMU gain over DeepRecSys and
    Random (Fig. 11), servers saved over DeepRecSys and Random (Fig. 15, mean over ``levels``),
    NCF's bound with DLRM(D) at 50% (Fig. 12-13; ``best_static_partner_load``) and the EMU gains
    over DeepRecSys without and with CAT (Fig. 17a)."""

    def measure(field: str, factor: float) -> dict[str, Any]:
        models = [model(m.name, **({field: getattr(m, field) * factor} if field else {}))
                  for m in table1_models()]  # fmt: skip
        off = build(models)
        emu = emu_summary(off)
        servers = servers_needed(off, levels)
        mean = {k: float(np.mean(v)) for k, v in servers.items()}
        cat = emu_without_cat(off)
        return {
            "field": field,
            "factor": factor,
            "low_models": ",".join(off.low_models),
            "emu_gain_vs_deeprecsys": emu["hera"]["mean"] / emu["deeprecsys"]["mean"] - 1,
            "emu_gain_vs_random": emu["hera"]["mean"] / emu["random"]["mean"] - 1,
            "servers_saved_vs_deeprecsys": 1 - mean["hera"] / mean["deeprecsys"],
            "servers_saved_vs_random": 1 - mean["hera"] / mean["random"],
            "ncf_bound_dlrm_d_50": best_static_partner_load(off, "dlrm_d", "ncf", 0.5)[
                "partner_load"
            ],
            "gain_no_cat": cat["gain_no_cat"],
            "gain_cat": cat["gain_cat"],
        }

    for f in fields:
        if f not in UNPUBLISHED_FIELDS:
            raise KeyError(f"field {f!r} is not one of {', '.join(UNPUBLISHED_FIELDS)}")
    for x in factors:
        if not (isinstance(x, (int, float)) and x > 0):
            raise ValueError(f"factor={x!r} must be a positive number")
    return [measure("", 1.0)] + [measure(f, float(x)) for f in fields for x in factors]
