"""Hera (Choi, Kim, Rhu, 2022): co-locating recommendation models on CPU servers by worker
scalability and co-location affinity.

::

    from servelab import hera

    off = hera.build()                        # Table I's models on Table II's node
    off.summary()                             # class (high/low scalability), QPS, max workers
    off.affinity                              # Algorithm 1's lookup table (Fig. 10a)
    off.pearson()                             # vs the contention model's co-located QPS
    hera.emu_summary(off)                     # Fig. 11: EMU of each selection policy's pairs
    plan = hera.schedule(off, hera.targets_for(off, 4), "hera")   # Algorithm 2
    plan.num_servers, plan.emu
    run = hera.run_node(off, "dlrm_d", "ncf", hera.fig14_loads())  # Algorithm 3 (Fig. 14)
    print(hera.format_comparison(hera.comparison(off)))           # ours beside the paper

Modules: ``specs`` (node presets, Table I model profiles), ``offline`` (profiling tables,
scalability, affinity, pair allocations), ``selection`` (Fig. 11's policies and EMU),
``cluster`` (Algorithm 2 and the baselines, servers needed), ``rmu`` (Algorithm 3's node
resource manager against PARTIES over a load trace, Fig. 12-14), ``experiments`` (the same
managers as the registered schedulers ``hera_rmu`` and ``parties`` in a servelab Scenario),
``fig14`` (Fig. 14's opposite load moves as a Scenario, each model with its own arrivals),
``paper`` (the paper's numbers and comparisons), ``sweeps`` (the experiment loops as
``servelab.sweep`` points), ``calibration`` (fitting a profile to measured points), ``sla_fit``
(the cache-miss curve and the QPS within the SLA measured here, and their fits), ``schedulers``
(spec builders for ``hera_rmu`` and ``parties``), ``cli`` and
``plotting``. Core pinning and resctrl LLC partitioning are the serving loop's (``servelab.serve``
with ``pin``/``cores`` and ``llc="resctrl"``; ``servelab.resctrl_status()``). The
contention model and the algorithms run in C++ (``servelab._core.hera``). Every name below loads
its module on first use.
"""

from __future__ import annotations

from .._lazy import lazy_exports

# public name -> the module (of this package) that defines it
_EXPORTS = {
    **dict.fromkeys(
        (
            "LABELS", "ModelProfile", "NODE_PRESETS", "NodeSpec", "baseline_node", "label",
            "model", "models", "node", "table1_models",
        ),
        "specs",
    ),
    **dict.fromkeys(("HeraOffline", "build"), "offline"),
    **dict.fromkeys(
        (
            "FIG11_LEVELS", "SELECTIONS", "emu_distribution", "emu_summary", "emu_without_cat",
            "selection_pairs",
        ),
        "selection",
    ),
    **dict.fromkeys(
        ("ClusterPlan", "schedule", "servers_needed", "servers_table", "targets_for"), "cluster"
    ),
    **dict.fromkeys(("offline_from", "offline_source"), "sweeps"),
    **dict.fromkeys(
        ("fit_miss_curve", "fit_sla_qps", "measure_miss_curve", "measure_sla_qps"), "sla_fit"
    ),
    **dict.fromkeys(
        (
            "FIG15_LEVELS", "PAPER", "UNPUBLISHED_FIELDS", "comparison", "format_comparison",
            "parameter_sensitivity",
        ),
        "paper",
    ),
    **dict.fromkeys(
        (
            "Calibration", "Fit", "calibrate_from_executor", "fit_profile", "machine_node",
            "measure_points", "predict",
        ),
        "calibration",
    ),  # fmt: skip
    **dict.fromkeys(("MANAGERS", "SCHEDULERS", "manager_spec"), "schedulers"),
    **dict.fromkeys(
        (
            "HARDWARE", "alone_profile", "contention_spec", "machine_workers",
            "node_profile", "node_scenario", "run_managed", "settled_tails",
        ),
        "experiments",
    ),
    **dict.fromkeys(("PAPER_FIG14", "fig14_scenario", "run_fig14", "window_tails"), "fig14"),
    **dict.fromkeys(
        (
            "CONTROLLERS", "FIG12_LOADS", "best_static_partner_load", "fig14_loads",
            "max_partner_loads", "partner_loads_table", "rmu_emu", "run_node",
        ),
        "rmu",
    ),
    **dict.fromkeys(
        ("plot_affinity", "plot_emu", "plot_servers", "plot_ways_curves", "plot_workers_curves"),
        "plotting",
    ),
}  # fmt: skip

__all__, __getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)
