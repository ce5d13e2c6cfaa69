"""Plain numpy MDP solvers: the reference servelab.solvers.mdp is tested and timed against.

MDPs are dicts of CSR arrays (state_begin, pair_begin, next_state, probability, reward), the
layout of servelab.solvers.Mdp. Two Bellman backups:

- ``ordered=True`` sums each pair's transitions in order, one transition position at a time over
  all pairs (a padded "ELL" layout), exactly as servelab's C++ loop does: values are
  bit-identical to servelab's after any number of sweeps.
- ``ordered=False`` is the most direct vectorised numpy (``np.add.reduceat`` of
  probability * value); numpy's pairwise summation rounds differently in the last bits. The
  benchmark times whichever is faster.

The stationary distribution uses ``np.bincount``, which adds in input order: with transitions
taken by source state, it matches servelab bit for bit as well.
"""

from __future__ import annotations

import numpy as np


def random_mdp(
    states: int, pairs: int, mean_transitions: int, seed: int, max_actions: int | None = None
) -> dict:
    """A random sparse MDP: `pairs` pairs spread over the states (each state >= 1), each with
    1 .. 2 * mean_transitions - 1 transitions to random states; rewards uniform in [0, 1)."""
    rng = np.random.default_rng(seed)
    if max_actions is None:
        per_state = np.diff(np.arange(states + 1) * pairs // states)
    else:
        per_state = rng.integers(1, max_actions + 1, size=states)
    state_begin = np.concatenate([[0], np.cumsum(per_state)]).astype(np.int64)
    n_pairs = int(state_begin[-1])
    lengths = rng.integers(1, 2 * mean_transitions, size=n_pairs)
    pair_begin = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    n_transitions = int(pair_begin[-1])
    next_state = rng.integers(0, states, size=n_transitions).astype(np.int32)
    weight = 0.05 + rng.random(n_transitions)
    totals = np.add.reduceat(weight, pair_begin[:-1])
    probability = weight / np.repeat(totals, lengths)
    return {
        "state_begin": state_begin,
        "pair_begin": pair_begin,
        "next_state": next_state,
        "probability": probability,
        "reward": rng.random(n_pairs),
    }


def _ell(mdp: dict) -> tuple[np.ndarray, np.ndarray]:
    """(columns, weights), shape (pairs, longest pair): row a is pair a's transitions in order,
    padded with next state 0 and probability 0 (which adds exactly nothing)."""
    pair_begin = mdp["pair_begin"]
    lengths = np.diff(pair_begin)
    width = int(lengths.max())
    pairs = len(lengths)
    position = np.arange(len(mdp["next_state"])) - np.repeat(pair_begin[:-1], lengths)
    row = np.repeat(np.arange(pairs), lengths)
    columns = np.zeros((width, pairs), dtype=np.int64)
    weights = np.zeros((width, pairs))
    columns[position, row] = mdp["next_state"]
    weights[position, row] = mdp["probability"]
    return columns, weights


class Backup:
    """q = reward + discount * P v for every pair, by one of the two summation orders."""

    def __init__(self, mdp: dict, discount: float = 1.0, ordered: bool = True) -> None:
        self.mdp, self.discount, self.ordered = mdp, discount, ordered
        if ordered:
            self.columns, self.weights = _ell(mdp)

    def __call__(self, values: np.ndarray) -> np.ndarray:
        mdp = self.mdp
        if self.ordered:
            acc = np.zeros(self.columns.shape[1])
            for k in range(self.columns.shape[0]):
                acc += self.weights[k] * values[self.columns[k]]
        else:
            acc = np.add.reduceat(
                mdp["probability"] * values[mdp["next_state"]], mdp["pair_begin"][:-1]
            )
        return mdp["reward"] + self.discount * acc


def greedy(mdp: dict, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(max q per state, the lowest action index attaining it)."""
    state_begin = mdp["state_begin"]
    counts = np.diff(state_begin)
    best = np.maximum.reduceat(q, state_begin[:-1])
    state_of_pair = np.repeat(np.arange(len(counts)), counts)
    local = np.arange(len(q)) - state_begin[state_of_pair]
    candidates = np.where(q == best[state_of_pair], local, np.iinfo(np.int64).max)
    return best, np.minimum.reduceat(candidates, state_begin[:-1]).astype(np.int32)


def value_iteration(
    mdp: dict, sweeps: int, discount: float = 1.0, ordered: bool = True
) -> tuple[np.ndarray, np.ndarray]:
    """`sweeps` Bellman sweeps from zero, then the greedy policy of the final values."""
    backup = Backup(mdp, discount, ordered)
    values = np.zeros(len(mdp["state_begin"]) - 1)
    for _ in range(sweeps):
        values, _ = greedy(mdp, backup(values))
    return values, greedy(mdp, backup(values))[1]


def policy_transitions(mdp: dict, policy: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(source, destination, probability) of the policy's chain, by source state then position."""
    pair = mdp["state_begin"][:-1] + np.asarray(policy)
    first = mdp["pair_begin"][pair]
    lengths = mdp["pair_begin"][pair + 1] - first
    source = np.repeat(np.arange(len(pair)), lengths)
    index = np.arange(int(lengths.sum())) - np.repeat(np.cumsum(lengths) - lengths - first, lengths)
    return source, mdp["next_state"][index], mdp["probability"][index]


def stationary_distribution(
    mdp: dict, policy: np.ndarray, steps: int, start: np.ndarray | None = None
) -> np.ndarray:
    """`steps` power-iteration steps x <- x P, renormalised each step (sums taken in order)."""
    n = len(mdp["state_begin"]) - 1
    source, destination, probability = policy_transitions(mdp, policy)
    x = np.full(n, 1.0 / n) if start is None else start / np.cumsum(start)[-1]
    for _ in range(steps):
        y = np.bincount(destination, weights=probability * x[source], minlength=n)
        x = y / np.cumsum(y)[-1]  # cumsum adds in order, like servelab (np.sum would not)
    return x


def expectation(
    mdp: dict, policy: np.ndarray, distribution: np.ndarray, per_pair: np.ndarray
) -> float:
    return float(np.dot(distribution, per_pair[mdp["state_begin"][:-1] + np.asarray(policy)]))
