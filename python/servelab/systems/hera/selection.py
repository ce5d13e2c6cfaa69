"""Model selection at one node (Sec. VII-A1, Fig. 11): which pairs each policy co-locates, and the
EMU (effective machine utilisation) of those pairs.

- DeepRecSys: every model alone (EMU 100% by definition);
- Random: any pair of distinct models;
- Hera(Random): any pair except (high, high) worker-scalability pairs;
- Hera: the pairs Algorithm 2 co-locates when every model has the same target QPS, at each of
  ``FIG11_LEVELS`` (each low model with its highest-affinity high model still short of its
  target, then the next); with no model of the other class, every model alone.
Every policy runs its pairs with Hera's node allocation, as in the paper ("all four design points
employ our proposed resource management algorithm").
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from ... import _core
from .offline import HeraOffline

SELECTIONS = ("deeprecsys", "random", "hera_random", "hera")
#: per-model target QPS at which Algorithm 2's pairs are taken as Hera's (Fig. 15's levels)
FIG11_LEVELS = (2000.0, 4000.0, 8000.0, 16000.0)


def selection_pairs(off: HeraOffline, selection: str) -> list[tuple[str, str]]:
    """The pairs (a, b) a policy may co-locate; (m, m) is model m alone."""
    names, high = off.names, off.high
    pairs = list(itertools.combinations(range(len(names)), 2))
    if selection == "deeprecsys":
        chosen = [(i, i) for i in range(len(names))]
    elif selection == "random":
        chosen = pairs
    elif selection == "hera_random":
        chosen = [(i, j) for i, j in pairs if not (high[i] and high[j])]
    elif selection == "hera":
        chosen = sorted(_algorithm2_pairs(off)) or [(i, i) for i in range(len(names))]
    else:
        raise KeyError(f"selection {selection!r} is unknown; known: {', '.join(SELECTIONS)}")
    return [(names[i], names[j]) for i, j in chosen]


def _algorithm2_pairs(off: HeraOffline) -> set[tuple[int, int]]:
    """The distinct pairs of Algorithm 2's plans at FIG11_LEVELS (as index pairs): (low, high), and
    (low, low) where low models are left over once the high ones are served."""
    t = off.cluster_tables()
    n = len(off.names)
    chosen: set[tuple[int, int]] = set()
    for level in FIG11_LEVELS:
        plan = _core.hera.schedule_cluster(
            t["isolated_qps"], t["high"], t["affinity"], t["pair_qps"], np.full(n, level), "hera"
        )
        for a, b in zip(plan["model_a"], plan["model_b"], strict=True):
            if b >= 0:
                chosen.add((min(a, b), max(a, b)))
    return chosen


def emu_distribution(off: HeraOffline, selection: str) -> np.ndarray:
    """EMU of each pair the policy may choose (Fig. 11's violin for that policy)."""
    return np.array(
        [
            (off.alone(a) if a == b else off.pair(a, b))["emu"]
            for a, b in selection_pairs(off, selection)
        ],
        dtype=float,
    )


def emu_summary(off: HeraOffline) -> dict[str, dict[str, float]]:
    """min, median, mean and max EMU of each policy's pairs (as fractions: 1.0 = 100%)."""
    out = {}
    for s in SELECTIONS:
        e = emu_distribution(off, s)
        if e.size == 0:
            raise ValueError(f"selection {s!r} has no pair to co-locate among {off.names}")
        out[s] = {
            "min": float(e.min()),
            "median": float(np.median(e)),
            "mean": float(e.mean()),
            "max": float(e.max()),
            "pairs": int(e.size),
        }
    return out


def emu_without_cat(off: HeraOffline) -> dict[str, Any]:
    """Fig. 17(a): the EMU of Hera's pairs (``selection_pairs(off, 'hera')``) with and without LLC
    partitioning, beside DeepRecSys (each model alone). Without CAT a pair keeps Hera's workers
    and shares the whole LLC (``evaluate(..., shared_llc=True)``: every model misses as the LLC
    holding both working sets); with CAT it is ``pair``'s EMU (the ways split by
    adjust_LLC_partition). Returns the mean EMUs, the gains over DeepRecSys (``gain_no_cat``,
    ``gain_cat``) and the per-pair rows (``pairs``: a, b, emu_cat, emu_no_cat)."""
    rows = []
    for a, b in selection_pairs(off, "hera"):
        if a == b:
            rows.append({"a": a, "b": b, "emu_cat": 1.0, "emu_no_cat": 1.0})
            continue
        p = off.pair(a, b)
        i, j = off.index(a), off.index(b)
        tenants = [
            (off.models[i], p["workers_a"], max(1, p["ways_a"])),
            (off.models[j], p["workers_b"], max(1, p["ways_b"])),
        ]
        shared = _core.hera.evaluate(off.node, tenants, shared_llc=True)["tenants"]
        emu = shared[0]["qps"] / off.isolated_qps(a) + shared[1]["qps"] / off.isolated_qps(b)
        rows.append({"a": a, "b": b, "emu_cat": float(p["emu"]), "emu_no_cat": float(emu)})
    deeprecsys = float(emu_distribution(off, "deeprecsys").mean())
    cat = float(np.mean([r["emu_cat"] for r in rows]))
    no_cat = float(np.mean([r["emu_no_cat"] for r in rows]))
    return {
        "deeprecsys": deeprecsys,
        "hera_cat": cat,
        "hera_no_cat": no_cat,
        "gain_cat": cat / deeprecsys - 1,
        "gain_no_cat": no_cat / deeprecsys - 1,
        "pairs": rows,
    }
