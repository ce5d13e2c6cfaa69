"""Plots of RAMSIS policies: the map of model choice over (queue length, slack), and a policy
set's guarantees against load."""

from __future__ import annotations

from typing import Any

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from matplotlib.colors import BoundaryNorm, ListedColormap

from ... import _core


def plot_policy(
    policy: Any,
    ax: Axes | None = None,
    *,
    max_queue: int | None = None,
    annotate_batch: bool = False,
    title: str | None = None,
) -> Axes:
    """Model choice per state: x = slack of the earliest query (ms, the policy's levels), y = queue
    length; one colour per model (white: wait, the empty queue). `max_queue` crops the y axis;
    annotate_batch writes the batch where it is not the whole queue (variable batching)."""
    if isinstance(policy, _core.ramsis.PolicySet):
        raise ValueError("plot_policy takes one WorkerPolicy: use policy_set.lookup(load)")
    if not isinstance(policy, _core.ramsis.WorkerPolicy):
        raise TypeError(f"policy={policy!r} is not a WorkerPolicy")
    levels = policy.num_levels
    n_rows = policy.max_queue + 1
    model = policy.action_model[: n_rows * levels].reshape(n_rows, levels)
    batch = policy.action_batch[: n_rows * levels].reshape(n_rows, levels)
    top = n_rows - 1 if max_queue is None else min(int(max_queue), n_rows - 1)
    model, batch = model[: top + 1], batch[: top + 1]
    slack_ms = policy.slack_levels_s * 1e3
    edges = np.append(slack_ms, slack_ms[-1] + (slack_ms[-1] - slack_ms[-2]))

    names = list(policy.models)
    colours = ["white"] + [
        plt.get_cmap("viridis")(i / max(len(names) - 1, 1)) for i in range(len(names))
    ]
    cmap = ListedColormap(colours)
    norm = BoundaryNorm(np.arange(-1.5, len(names)), cmap.N)
    if ax is None:
        _, ax = plt.subplots(figsize=(8, 4.5))
    mesh = ax.pcolormesh(
        edges, np.arange(top + 2) - 0.5, model, cmap=cmap, norm=norm, shading="flat"
    )
    bar = ax.figure.colorbar(mesh, ax=ax, ticks=np.arange(-1, len(names)))
    bar.ax.set_yticklabels(["wait"] + names, fontsize=7)
    if annotate_batch:
        for n in range(1, top + 1):
            for j in range(levels):
                if batch[n, j] != n:
                    x = 0.5 * (edges[j] + edges[j + 1])
                    ax.text(x, n, str(batch[n, j]), ha="center", va="center", fontsize=5)
    ax.set_xlabel("slack of the earliest query (ms)")
    ax.set_ylabel("queries in the worker queue")
    ax.set_title(
        title
        if title is not None
        else f"RAMSIS policy: {policy.load_qps:g} QPS, {policy.workers} workers, "
        f"SLO {policy.slo_ms:g} ms"
    )
    return ax


def plot_policy_set(policies: Any, ax: Axes | None = None) -> Axes:
    """Expected accuracy and violation of each policy of a PolicySet against its load."""
    if not isinstance(policies, _core.ramsis.PolicySet):
        raise TypeError(f"policies={policies!r} is not a PolicySet")
    loads = policies.loads_qps
    acc = np.array([p.expected_accuracy for p in policies.policies])
    vio = np.array([p.expected_violation for p in policies.policies])
    feasible = np.array([p.feasible for p in policies.policies])
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 4))
    ax.plot(loads, acc * 100, "o-", label="expected accuracy (%)")
    ax.plot(loads[~feasible], acc[~feasible] * 100, "rx", label="infeasible")
    ax.set_xlabel("load (queries/s)")
    ax.set_ylabel("expected accuracy (%)")
    twin = ax.twinx()
    twin.plot(loads, vio * 100, "s--", color="tab:red", alpha=0.6, label="expected violation (%)")
    twin.set_ylabel("expected SLO violation (%)")
    ax.legend(loc="lower left")
    return ax
