"""Kairos (HPDC'23): heterogeneous instance mixes under a cost budget.

Query distribution by min-cost bipartite matching, a throughput upper bound that picks a
configuration without online trials, Kairos+ search, and the baselines Kairos is compared with::

    from servelab import kairos

    frame = kairos.upper_bounds("../shared/data/kairos", "rm2")  # every config, ranked by bound
    choice = kairos.select_config(frame)                          # Kairos's one-shot pick
    result = kairos.search(frame, objective=throughput_of, method="kairos+")
"""

from .artifact import (
    QOS_MS,
    allocator_profile_dict,
    artifact_models,
    read_allocator_profile,
    read_allocator_profiles,
    read_instance_json,
)
from .bounds import (
    FORMULAS,
    AuxiliaryProfile,
    BoundProfile,
    InstanceSpace,
    Selection,
    bound_setup,
    bound_table,
    instance_space,
    select_config,
    space_of,
    upper_bounds,
)
from .search import METHODS, SearchResult, compare_searches, search

__all__ = [
    "FORMULAS",
    "METHODS",
    "QOS_MS",
    "AuxiliaryProfile",
    "BoundProfile",
    "InstanceSpace",
    "SearchResult",
    "Selection",
    "allocator_profile_dict",
    "artifact_models",
    "bound_setup",
    "bound_table",
    "compare_searches",
    "instance_space",
    "read_allocator_profile",
    "read_allocator_profiles",
    "read_instance_json",
    "search",
    "select_config",
    "space_of",
    "upper_bounds",
]

# The query distributors' evaluation and comparisons (distributors.py, evaluate.py).
from .distributors import (  # noqa: E402
    PAPER_CLAIMS,
    BestOracle,
    DrsTuning,
    OracleResult,
    OracleSequence,
    base_type,
    best_homogeneous,
    best_oracle_config,
    compare_distributors,
    compare_with_homogeneous,
    default_drs_threshold,
    fidelity_report,
    oracle_throughput,
    tune_drs_threshold,
)
from .evaluate import DISTRIBUTORS, capacity_estimate, evaluate  # noqa: E402

__all__ += [
    "DISTRIBUTORS",
    "PAPER_CLAIMS",
    "BestOracle",
    "DrsTuning",
    "OracleResult",
    "OracleSequence",
    "base_type",
    "best_homogeneous",
    "best_oracle_config",
    "capacity_estimate",
    "compare_distributors",
    "compare_with_homogeneous",
    "default_drs_threshold",
    "evaluate",
    "fidelity_report",
    "oracle_throughput",
    "tune_drs_threshold",
]

# The LP fluid bound (fluid.py), beyond the paper.
from .fluid import FluidBound, fluid_bounds, fluid_size_classes, fluid_upper_bound  # noqa: E402

__all__ += ["FluidBound", "fluid_bounds", "fluid_size_classes", "fluid_upper_bound"]
