"""Kairos (HPDC'23): heterogeneous instance mixes under a cost budget.

Query distribution by min-cost bipartite matching, a throughput upper bound that picks a
configuration without online trials, Kairos+ search, and the baselines Kairos is compared with::

    from servelab import kairos

    frame = kairos.upper_bounds("../shared/data/kairos", "rm2")  # every config, ranked by bound
    choice = kairos.select_config(frame)                          # Kairos's one-shot pick
    result = kairos.search(frame, objective=throughput_of, method="kairos+")

The package follows the systems' template (docs/architecture.md), one module per kind of part:

- offline algorithms: ``bounds`` (upper bounds, one-shot selection), ``kairos_plus`` (Kairos+ and
  the searches it is compared with), ``oracle`` (ORCL), ``fluid`` (an LP bound, beyond the paper);
- ``schedulers``: the registered distributors (kairos, ribbon, drs, clockwork, oracle);
- ``experiments``: evaluation of a configuration by simulation, DRS tuning, Fig. 8, 9 and 10;
- ``paper``: the paper's settings (QoS targets) and claims, our numbers beside them;
- ``data``: the artifact's files and the profiles; ``cli``: ``servelab kairos ...``.

Every public name below is imported on first use, so ``import servelab.kairos`` stays cheap.
"""

from __future__ import annotations

from .._lazy import lazy_exports

# module -> the public names it provides
_PUBLIC = {
    "bounds": (
        "FORMULAS",
        "AuxiliaryProfile",
        "BoundProfile",
        "InstanceSpace",
        "Selection",
        "bound_setup",
        "bound_table",
        "instance_space",
        "named_config",
        "select_config",
        "space_of",
        "upper_bounds",
    ),
    "data": (
        "allocator_profile_dict",
        "artifact_models",
        "read_allocator_profile",
        "read_allocator_profiles",
        "read_instance_json",
    ),
    "experiments": (
        "DrsTuning",
        "best_homogeneous",
        "budget_line",
        "capacity_estimate",
        "compare_distributors",
        "compare_on_configs",
        "config_label",
        "compare_with_homogeneous",
        "evaluate_config",
        "evaluation_scenario",
        "exploration_overhead",
        "fidelity_report",
        "tune_drs_threshold",
    ),
    "fluid": ("FluidBound", "fluid_bounds", "fluid_size_classes", "fluid_upper_bound"),
    "kairos_plus": (
        "METHODS",
        "MONOTONE_DISTRIBUTORS",
        "compare_searches",
        "monotone_pruning_for",
        "non_monotone_pairs",
        "search",
        "search_trace",
    ),
    "oracle": (
        "BestOracle",
        "OracleResult",
        "OracleSequence",
        "best_oracle_config",
        "oracle_throughput",
    ),
    "paper": ("PAPER_CLAIMS", "QOS_MS"),
    "schedulers": ("DISTRIBUTORS", "base_type", "default_drs_threshold"),
}
_MODULES = (*_PUBLIC, "cli")
_WHERE = {name: module for module, names in _PUBLIC.items() for name in names}

__all__, __getattr__, __dir__ = lazy_exports(__name__, globals(), _WHERE, modules=_MODULES)
