"""The Hera paper's reported numbers, and our numbers beside them.

No code or data of Hera is public, so the comparisons are of orderings and ranges: the paper's
figure next to what our contention model gives on the same models and node.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .cluster import servers_needed
from .offline import HeraOffline
from .rmu import CONTROLLERS, fig14_loads, rmu_emu, run_node
from .selection import emu_summary

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
