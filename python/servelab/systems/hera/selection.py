"""Model selection at one node (Sec. VII-A1, Fig. 11): which pairs each policy co-locates, and the
EMU (effective machine utilisation) of those pairs.

- DeepRecSys: every model alone (EMU 100% by definition);
- Random: any pair of distinct models;
- Hera(Random): any pair except (high, high) worker-scalability pairs;
- Hera: each low model with its highest-affinity high model, and each high model with its
  highest-affinity low model (the pairs Algorithm 2 would pick for them); a model with no
  model of the other class runs alone.
Every policy runs its pairs with Hera's node allocation, as in the paper ("all four design points
employ our proposed resource management algorithm").
"""

from __future__ import annotations

import itertools

import numpy as np

from .offline import HeraOffline

SELECTIONS = ("deeprecsys", "random", "hera_random", "hera")


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
        chosen = set()
        for i in range(len(names)):
            partners = [j for j in range(len(names)) if high[j] != high[i]]
            # No complementary model (all high or all low): the model runs alone.
            j = max(partners, key=lambda j: (off.affinity[i, j], -j)) if partners else i
            chosen.add((min(i, j), max(i, j)))
        chosen = sorted(chosen)
    else:
        raise KeyError(f"selection {selection!r} is unknown; known: {', '.join(SELECTIONS)}")
    return [(names[i], names[j]) for i, j in chosen]


def emu_distribution(off: HeraOffline, selection: str) -> np.ndarray:
    """EMU of each pair the policy may choose (Fig. 11's violin for that policy)."""
    return np.array(
        [off.pair(a, b)["emu"] for a, b in selection_pairs(off, selection)], dtype=float
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
