"""Generic solvers, usable on their own with numpy input: assignment, LP/MILP, MDPs, search.

Each solver lives in its own module; this package re-exports their public names.
"""

from . import lp
from .lap import linear_sum_assignment
from .lp import LinearProgram, LPResult, solve_lp
from .mdp import (
    Mdp,
    MdpSolution,
    StationaryDistribution,
    average_reward,
    evaluate_policy,
    expectation,
    greedy_policy,
    policy_iteration,
    q_values,
    stationary_distribution,
    value_iteration,
)
from .search import SearchResult, SearchSpace, list_search_methods, trace_frame

__all__ = [
    "LPResult",
    "LinearProgram",
    "Mdp",
    "MdpSolution",
    "SearchResult",
    "SearchSpace",
    "StationaryDistribution",
    "average_reward",
    "evaluate_policy",
    "expectation",
    "greedy_policy",
    "linear_sum_assignment",
    "list_search_methods",
    "lp",
    "policy_iteration",
    "q_values",
    "solve_lp",
    "stationary_distribution",
    "trace_frame",
    "value_iteration",
]
