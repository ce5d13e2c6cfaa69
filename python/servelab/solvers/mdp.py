"""Finite Markov decision processes with sparse transitions, and their solvers.

An :class:`Mdp` is stored in CSR layout: state ``s`` owns the state-action *pairs*
``state_begin[s]:state_begin[s+1]``; pair ``a`` owns the transitions
``pair_begin[a]:pair_begin[a+1]`` of ``next_state`` / ``probability``, and ``reward[a]`` is its
expected immediate reward. A *policy* is an int array with, for every state, the index of the
chosen action among that state's own actions (``0 .. num_actions(s) - 1``).

Build one from CSR arrays (``Mdp(state_begin, pair_begin, next_state, probability, reward)``) or,
for small problems, from dense arrays (:meth:`Mdp.from_dense`). Then:

- :func:`value_iteration`: ``discount < 1`` is the discounted criterion; ``discount = 1`` gives the
  total reward over the sweeps run (RAMSIS runs exactly 100: ``max_iterations=100, tolerance=0``),
  or with ``relative=True`` relative value iteration for the average reward.
- :func:`policy_iteration`: exact policy evaluation; ``discount = 1`` optimises the average reward
  of unichain MDPs.
- :func:`evaluate_policy`, :func:`average_reward`, :func:`stationary_distribution` (power
  iteration), :func:`expectation`, :func:`q_values`, :func:`greedy_policy`.

The C++ solvers release the GIL, stop on Ctrl-C, and give the same result for any ``threads``
(ties between actions go to the lowest action index).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from .. import _core

_mdp = _core.solvers.mdp

__all__ = [
    "GainBias",
    "Mdp",
    "MdpSolution",
    "StationaryDistribution",
    "average_reward",
    "evaluate_policy",
    "expectation",
    "greedy_policy",
    "policy_iteration",
    "q_values",
    "stationary_distribution",
    "value_iteration",
]


def _from_core(name: str) -> property:
    """A read-only attribute that reads the same attribute of the wrapped C++ object."""
    return property(lambda self: getattr(self._core, name))


class Mdp:
    """A finite MDP with sparse transitions (CSR layout, see the module docstring).

    ``reward`` is per pair (None: 0); ``transition_reward`` (optional) is per transition, and its
    expectation is added to the pair's reward. ``action_ids`` (optional, one int per pair) is the
    caller's name for each pair's action, returned by :meth:`action_ids`; by default the local
    index. The arrays are copied once and validated: ValueError names the state/pair and value.
    The array properties are read-only views, not copies.
    """

    __slots__ = ("_action_ids", "_core")

    def __init__(
        self,
        state_begin,
        pair_begin,
        next_state,
        probability,
        reward=None,
        *,
        transition_reward=None,
        action_ids=None,
        tolerance: float = 1e-9,
    ) -> None:
        self._core = _mdp.Mdp(
            state_begin, pair_begin, next_state, probability, reward, transition_reward, tolerance
        )
        self._action_ids = self._checked_ids(action_ids)

    @classmethod
    def from_core(cls, core: _mdp.Mdp, action_ids=None) -> Mdp:
        """Wraps an MDP built in C++ (e.g. by servelab.ramsis) without copying it."""
        if not isinstance(core, _mdp.Mdp):
            raise TypeError(f"expected a servelab._core.solvers.mdp.Mdp, got {type(core).__name__}")
        self = cls.__new__(cls)
        self._core = core
        self._action_ids = self._checked_ids(action_ids)
        return self

    @classmethod
    def from_dense(cls, transitions, rewards, allowed=None, *, tolerance: float = 1e-9) -> Mdp:
        """An MDP from dense arrays, for small problems.

        ``transitions[a, s, s2]``: probability of moving from ``s`` to ``s2`` under action ``a``
        (shape ``(A, S, S)``). ``rewards``: ``R[s, a]`` (shape ``(S, A)``) or per transition
        ``R[a, s, s2]`` (shape ``(A, S, S)``). ``allowed``: bool ``(S, A)``, the actions available
        in each state (default: all). State ``s``'s actions are its allowed ``a`` in increasing
        order; :meth:`action_ids` maps a policy back to the ``a``. Zero probabilities are dropped.
        """
        p = np.asarray(transitions, dtype=np.float64)
        if p.ndim != 3 or p.shape[1] != p.shape[2]:
            raise ValueError(
                f"transitions must have shape (actions, states, states), got {p.shape}"
            )
        n_actions, n_states = p.shape[0], p.shape[1]
        r = np.asarray(rewards, dtype=np.float64)
        if r.shape == (n_states, n_actions):
            pair_reward = r
        elif r.shape == p.shape:  # per transition: expected reward sum_s2 P R
            pair_reward = np.einsum("ast,ast->sa", p, r)
        else:
            raise ValueError(
                f"rewards must have shape (states, actions)={(n_states, n_actions)} or that of "
                f"transitions {p.shape}, got {r.shape}"
            )
        if allowed is None:
            mask = np.ones((n_states, n_actions), dtype=bool)
        else:
            mask = np.asarray(allowed)
            if mask.shape != (n_states, n_actions) or mask.dtype != np.bool_:
                raise ValueError(
                    "allowed must be a bool array of shape (states, actions)="
                    f"{(n_states, n_actions)}, got {mask.dtype} {mask.shape}"
                )
        states, actions = np.nonzero(mask)  # row-major: by state, then action
        rows = p[actions, states, :]  # one row of next-state probabilities per pair
        nonzero = rows != 0.0
        pair_begin = np.zeros(len(states) + 1, dtype=np.int64)
        np.cumsum(nonzero.sum(axis=1), out=pair_begin[1:])
        state_begin = np.zeros(n_states + 1, dtype=np.int64)
        np.cumsum(mask.sum(axis=1), out=state_begin[1:])
        next_state = np.nonzero(nonzero)[1]
        return cls(
            state_begin,
            pair_begin,
            next_state,
            rows[nonzero],
            pair_reward[states, actions],
            action_ids=actions,
            tolerance=tolerance,
        )

    @property
    def core(self) -> _mdp.Mdp:
        """The C++ object (what servelab._core functions take)."""
        return self._core

    # Sizes (int) and the CSR arrays (read-only numpy views), straight from the C++ object.
    num_states = _from_core("num_states")
    num_pairs = _from_core("num_pairs")
    num_transitions = _from_core("num_transitions")
    state_begin = _from_core("state_begin")
    pair_begin = _from_core("pair_begin")
    next_state = _from_core("next_state")
    probability = _from_core("probability")
    reward = _from_core("reward")

    def num_actions(self, state: int) -> int:
        self._check_state(state)
        return int(self.state_begin[state + 1] - self.state_begin[state])

    def pair(self, state: int, action: int) -> int:
        """The global pair index of ``state``'s ``action``-th action."""
        if not 0 <= action < self.num_actions(state):
            raise ValueError(f"action={action} is not an action of state {state}")
        return int(self.state_begin[state] + action)

    def policy_pairs(self, policy) -> np.ndarray:
        """The pair each state's action is (index into ``reward`` and per-pair arrays)."""
        return _mdp.policy_pairs(self._core, policy)

    def action_ids(self, policy) -> np.ndarray:
        """The caller's action id (``action_ids``; from_dense: the ``a`` of ``transitions[a]``)
        chosen in each state; the local index when no ids were given."""
        pairs = self.policy_pairs(policy)
        if self._action_ids is None:
            return pairs - self.state_begin[:-1]
        return self._action_ids[pairs]

    def validate(self, tolerance: float = 1e-9) -> None:
        self._core.validate(tolerance)

    def _checked_ids(self, action_ids) -> np.ndarray | None:
        if action_ids is None:
            return None
        ids = np.asarray(action_ids)
        if ids.shape != (self.num_pairs,) or (
            ids.size and not np.issubdtype(ids.dtype, np.integer)
        ):
            raise ValueError(
                f"action_ids must be {self.num_pairs} integers (one per pair), "
                f"got shape {ids.shape} dtype {ids.dtype}"
            )
        ids = ids.astype(np.int64)
        ids.flags.writeable = False
        return ids

    def _check_state(self, state: int) -> None:
        if not 0 <= state < self.num_states:
            raise ValueError(f"state={state} is not a state (there are {self.num_states})")

    def __repr__(self) -> str:
        return (
            f"Mdp(states={self.num_states}, pairs={self.num_pairs}, "
            f"transitions={self.num_transitions})"
        )


MdpLike = Mdp | _mdp.Mdp


def _core_of(mdp: MdpLike) -> _mdp.Mdp:
    if isinstance(mdp, Mdp):
        return mdp.core
    if isinstance(mdp, _mdp.Mdp):
        return mdp
    raise TypeError(f"mdp must be a servelab.solvers.Mdp, got {type(mdp).__name__}")


@dataclass(frozen=True)
class MdpSolution:
    """Result of value_iteration, policy_iteration or evaluate_policy.

    ``policy``: the greedy policy of the final values (the evaluated one for evaluate_policy).
    ``residual``: the last sweep's max change (discounted) or span of the change (discount 1).
    ``gain``, ``gain_lower``, ``gain_upper`` (discount 1 only, else 0): the average reward per
    step and bounds on it from the last change (exact for policy iteration).
    """

    policy: np.ndarray
    values: np.ndarray
    iterations: int
    residual: float
    converged: bool
    gain: float = 0.0
    gain_lower: float = 0.0
    gain_upper: float = 0.0


@dataclass(frozen=True)
class StationaryDistribution:
    """Result of stationary_distribution: ``distribution`` sums to 1; ``residual`` is the L1
    change of the last step."""

    distribution: np.ndarray
    iterations: int
    residual: float
    converged: bool


class GainBias(NamedTuple):
    """Average reward per step and bias (relative values, 0 at the reference state)."""

    gain: float
    bias: np.ndarray


def value_iteration(
    mdp: MdpLike,
    *,
    discount: float = 1.0,
    tolerance: float = 1e-9,
    max_iterations: int = 10_000,
    min_iterations: int = 0,
    threads: int = 0,
    relative: bool = False,
    reference_state: int = 0,
    initial_values=None,
) -> MdpSolution:
    """Value iteration from ``initial_values`` (default 0) until the residual is below
    ``tolerance`` (after at least ``min_iterations`` sweeps) or ``max_iterations`` sweeps.

    ``relative=True`` (discount 1): subtract the value of ``reference_state`` after each sweep.
    ``threads=0`` picks a count by size; the result is the same for any count.
    """
    return MdpSolution(
        **_mdp.value_iteration(
            _core_of(mdp),
            discount=discount,
            tolerance=tolerance,
            max_iterations=max_iterations,
            min_iterations=min_iterations,
            threads=threads,
            relative=relative,
            reference_state=reference_state,
            initial_values=initial_values,
        )
    )


def policy_iteration(
    mdp: MdpLike,
    *,
    discount: float = 1.0,
    max_iterations: int = 10_000,
    threads: int = 0,
    reference_state: int = 0,
    initial_values=None,
) -> MdpSolution:
    """Howard's policy iteration with exact (sparse linear solve) policy evaluation.

    ``discount < 1``: discounted values. ``discount = 1``: average-reward policy iteration; every
    policy met must be unichain (ValueError otherwise); values are the bias (0 at
    ``reference_state``) and ``gain`` the optimal average reward. Starts from the greedy policy of
    ``initial_values`` (default 0); ``iterations`` counts the improving rounds.
    """
    return MdpSolution(
        **_mdp.policy_iteration(
            _core_of(mdp),
            discount=discount,
            max_iterations=max_iterations,
            threads=threads,
            reference_state=reference_state,
            initial_values=initial_values,
        )
    )


def evaluate_policy(
    mdp: MdpLike,
    policy,
    *,
    discount: float = 1.0,
    tolerance: float = 1e-9,
    max_iterations: int = 10_000,
    min_iterations: int = 0,
    threads: int = 0,
    relative: bool = False,
    reference_state: int = 0,
    initial_values=None,
) -> MdpSolution:
    """Values of a fixed policy: an exact sparse solve of ``(I - discount P) v = r`` for
    ``discount < 1``; sweeps for ``discount = 1`` (the total reward over the sweeps run, as value
    iteration, or relative values with ``relative=True``)."""
    return MdpSolution(
        **_mdp.policy_evaluation(
            _core_of(mdp),
            policy,
            discount=discount,
            tolerance=tolerance,
            max_iterations=max_iterations,
            min_iterations=min_iterations,
            threads=threads,
            relative=relative,
            reference_state=reference_state,
            initial_values=initial_values,
        )
    )


def average_reward(mdp: MdpLike, policy, *, reference_state: int = 0) -> GainBias:
    """Gain and bias of a unichain policy: ``h + gain = r + P h`` with ``h[reference_state] = 0``.
    ValueError when the policy's chain has more than one recurrent class."""
    gain, bias = _mdp.average_reward(_core_of(mdp), policy, reference_state)
    return GainBias(gain, bias)


def stationary_distribution(
    mdp: MdpLike,
    policy,
    *,
    tolerance: float = 1e-12,
    max_iterations: int = 100_000,
    min_iterations: int = 0,
    start=None,
    lazy: bool = False,
    threads: int = 0,
) -> StationaryDistribution:
    """Stationary distribution of the policy's Markov chain by power iteration from ``start``
    (default uniform; normalised), renormalised every step, until the L1 change is below
    ``tolerance`` or ``max_iterations`` steps (RAMSIS: 1,000 steps from state 0, ``tolerance=0``).
    ``lazy=True`` iterates ``(x + x P) / 2``, which also converges on periodic chains."""
    return StationaryDistribution(
        **_mdp.stationary_distribution(
            _core_of(mdp),
            policy,
            tolerance=tolerance,
            max_iterations=max_iterations,
            min_iterations=min_iterations,
            lazy=lazy,
            threads=threads,
            start=start,
        )
    )


def expectation(mdp: MdpLike, policy, distribution, per_pair) -> float:
    """``sum_s distribution[s] * per_pair[pair chosen in s]`` (summed in state order), e.g. the
    expected reward or violation rate; ``distribution`` may be a StationaryDistribution."""
    if isinstance(distribution, StationaryDistribution):
        distribution = distribution.distribution
    return _mdp.expectation(_core_of(mdp), policy, distribution, per_pair)


def q_values(mdp: MdpLike, values, *, discount: float = 1.0) -> np.ndarray:
    """Per pair: ``reward + discount * sum_t probability_t * values[next_state_t]``."""
    return _mdp.q_values(_core_of(mdp), values, discount)


def greedy_policy(mdp: MdpLike, values, *, discount: float = 1.0) -> np.ndarray:
    """The greedy policy of ``values`` (ties to the lowest action index)."""
    return _mdp.greedy_policy(_core_of(mdp), values, discount)
