"""Hera's figures: scalability curves (Fig. 6), LLC sensitivity (Fig. 7), the affinity table
(Fig. 10a), EMU per selection policy (Fig. 11) and servers needed (Fig. 15, 16)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import matplotlib.pyplot as plt
import numpy as np

from .offline import HeraOffline
from .selection import SELECTIONS, emu_distribution
from .specs import label

_SELECTION_LABELS = {
    "deeprecsys": "DeepRecSys",
    "random": "Random",
    "hera_random": "Hera(Random)",
    "hera": "Hera",
}


def _axes(ax: Any) -> Any:
    return ax if ax is not None else plt.subplots(figsize=(6, 3.5))[1]


def plot_workers_curves(off: HeraOffline, ax: Any = None) -> Any:
    """Fig. 6: QPS vs workers, normalised to the QPS with every core."""
    ax = _axes(ax)
    workers = np.arange(1, off.node.cores + 1)
    for name in off.names:
        curve = off.workers_curve(name)
        mask = curve > 0
        ax.plot(workers[mask], curve[mask], marker="o", ms=3, label=label(name))
    ax.set_xlabel("workers")
    ax.set_ylabel("QPS / QPS(max workers)")
    ax.legend(fontsize=7, ncol=2)
    return ax


def plot_ways_curves(off: HeraOffline, ax: Any = None) -> Any:
    """Fig. 7: QPS vs LLC ways with the most workers, normalised to every way."""
    ax = _axes(ax)
    ways = np.arange(1, off.node.llc_ways + 1)
    for name in off.names:
        ax.plot(ways, off.ways_curve(name), marker="o", ms=3, label=label(name))
    ax.set_xlabel("LLC ways")
    ax.set_ylabel("QPS / QPS(all ways)")
    ax.legend(fontsize=7, ncol=2)
    return ax


def plot_affinity(off: HeraOffline, ax: Any = None) -> Any:
    """Fig. 10(a): the co-location affinity table."""
    ax = _axes(ax)
    image = ax.imshow(off.affinity, cmap="viridis", vmin=min(0.6, off.affinity.min()), vmax=1.0)
    labels = [label(n) for n in off.names]
    ax.set_xticks(range(len(labels)), labels, rotation=60, fontsize=7)
    ax.set_yticks(range(len(labels)), labels, fontsize=7)
    ax.figure.colorbar(image, ax=ax)
    return ax


def plot_emu(off: HeraOffline, ax: Any = None, selections: Sequence[str] = SELECTIONS) -> Any:
    """Fig. 11: EMU of each selection policy's pairs (violins; markers at min, median, max)."""
    ax = _axes(ax)
    data = [100 * emu_distribution(off, s) for s in selections]
    ax.violinplot(data, showmedians=True, showextrema=True)
    ax.set_xticks(range(1, len(selections) + 1), [_SELECTION_LABELS.get(s, s) for s in selections])
    ax.axhline(100, color="grey", lw=0.8, ls="--")
    ax.set_ylabel("EMU (%)")
    return ax


def plot_servers(
    levels: Sequence[float],
    servers: Mapping[str, Sequence[float]],
    ax: Any = None,
    xlabel: str = "target level",
) -> Any:
    """Fig. 15/16: servers each policy needs at each target level."""
    ax = _axes(ax)
    for s, counts in servers.items():
        ax.plot(levels, counts, marker="o", label=_SELECTION_LABELS.get(s, s))
    ax.set_xlabel(xlabel)
    ax.set_ylabel("servers")
    ax.legend()
    return ax
