"""servelab.solvers.mdp against brute force (every deterministic policy solved exactly), against
the plain numpy reference (benchmarks/python/reference_mdp.py), and for its error messages."""

from __future__ import annotations

import itertools
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from servelab.solvers import mdp

from .gil import ticks_during

BENCHMARKS = Path(__file__).parents[2] / "benchmarks" / "python"
sys.path.insert(0, str(BENCHMARKS))
import reference_mdp  # noqa: E402


def dense_random(states: int, actions: int, seed: int, allowed_fraction: float = 1.0):
    """(P[a, s, s2], R[s, a], allowed[s, a]) with every state keeping at least one action."""
    rng = np.random.default_rng(seed)
    p = rng.random((actions, states, states)) ** 3  # some near-zero entries
    p[rng.random(p.shape) < 0.3] = 0.0
    p[:, np.arange(states), (np.arange(states) + 1) % states] += 0.1  # every row non-empty
    p /= p.sum(axis=2, keepdims=True)
    r = rng.random((states, actions))
    allowed = rng.random((states, actions)) < allowed_fraction
    allowed[np.arange(states), rng.integers(0, actions, states)] = True
    return p, r, allowed


def all_policies(model: mdp.Mdp):
    counts = [model.num_actions(s) for s in range(model.num_states)]
    for choice in itertools.product(*(range(c) for c in counts)):
        yield np.array(choice, dtype=np.int32)


def chain(model: mdp.Mdp, policy) -> tuple[np.ndarray, np.ndarray]:
    """Dense P_pi and r_pi."""
    n = model.num_states
    p = np.zeros((n, n))
    pairs = model.policy_pairs(policy)
    for s, a in enumerate(pairs):
        lo, hi = model.pair_begin[a], model.pair_begin[a + 1]
        np.add.at(p[s], model.next_state[lo:hi], model.probability[lo:hi])
    return p, model.reward[pairs]


@pytest.mark.parametrize("seed", range(8))
def test_discounted_optimum_is_the_best_of_all_policies(seed):
    p, r, allowed = dense_random(5, 3, seed, allowed_fraction=0.7)
    model = mdp.Mdp.from_dense(p, r, allowed)
    discount = 0.9
    values = []
    for policy in all_policies(model):
        p_pi, r_pi = chain(model, policy)
        values.append(np.linalg.solve(np.eye(model.num_states) - discount * p_pi, r_pi))
    values = np.array(values)
    best = values.max(axis=0)
    best_policy = list(all_policies(model))[int(np.argmax(values.sum(axis=1)))]

    vi = mdp.value_iteration(model, discount=discount, tolerance=1e-13)
    assert vi.converged
    np.testing.assert_allclose(vi.values, best, rtol=0, atol=1e-10)
    np.testing.assert_array_equal(vi.policy, best_policy)

    pi = mdp.policy_iteration(model, discount=discount)
    assert pi.converged
    np.testing.assert_array_equal(pi.policy, vi.policy)
    np.testing.assert_allclose(pi.values, best, rtol=0, atol=1e-12)

    ev = mdp.evaluate_policy(model, best_policy, discount=discount)
    np.testing.assert_allclose(ev.values, best, rtol=0, atol=1e-12)
    # The chosen actions, in the dense problem's own numbering, are allowed ones.
    ids = model.action_ids(vi.policy)
    assert allowed[np.arange(model.num_states), ids].all()


@pytest.mark.parametrize("sweeps", [1, 7, 100])
def test_undiscounted_sweeps_are_bit_identical_to_numpy(sweeps):
    csr = reference_mdp.random_mdp(400, 700, 8, seed=sweeps)
    model = mdp.Mdp(**csr)
    solution = mdp.value_iteration(model, max_iterations=sweeps, tolerance=0.0)
    values, policy = reference_mdp.value_iteration(csr, sweeps)
    assert solution.iterations == sweeps and not solution.converged
    np.testing.assert_array_equal(solution.values, values)
    np.testing.assert_array_equal(solution.policy, policy)
    direct, _ = reference_mdp.value_iteration(csr, sweeps, ordered=False)
    np.testing.assert_allclose(solution.values, direct, rtol=1e-12, atol=0)
    # discounted too
    disc = mdp.value_iteration(model, discount=0.95, max_iterations=sweeps, tolerance=0.0)
    np.testing.assert_array_equal(
        disc.values, reference_mdp.value_iteration(csr, sweeps, discount=0.95)[0]
    )


def test_stationary_distribution_matches_eigenvector_and_linear_solve():
    p, r, _ = dense_random(30, 2, seed=3)
    model = mdp.Mdp.from_dense(p, r)
    policy = np.zeros(30, dtype=np.int32)
    p_pi, r_pi = chain(model, policy)

    eigenvalues, eigenvectors = np.linalg.eig(p_pi.T)
    vec = np.real(eigenvectors[:, np.argmin(np.abs(eigenvalues - 1.0))])
    vec /= vec.sum()
    a = np.vstack([(np.eye(30) - p_pi).T[:-1], np.ones(30)])
    solved = np.linalg.solve(a, np.r_[np.zeros(29), 1.0])

    st = mdp.stationary_distribution(model, policy)
    assert st.converged and st.residual < 1e-12
    np.testing.assert_allclose(st.distribution, solved, rtol=0, atol=1e-12)
    np.testing.assert_allclose(st.distribution, vec, rtol=0, atol=1e-10)
    assert st.distribution.sum() == pytest.approx(1.0, abs=1e-15)

    gain = mdp.expectation(model, policy, st, model.reward)
    assert gain == pytest.approx(float(st.distribution @ r_pi), abs=1e-14)
    assert gain == pytest.approx(mdp.average_reward(model, policy).gain, abs=1e-11)


def test_fixed_step_power_iteration_is_bit_identical_to_numpy():
    """RAMSIS's use: 1,000 steps from state 0 (the solver may stop early at a cycle of iterates,
    but must return what all 1,000 steps give)."""
    csr = reference_mdp.random_mdp(500, 800, 10, seed=11)
    model = mdp.Mdp(**csr)
    policy = mdp.value_iteration(model, max_iterations=100, tolerance=0.0).policy
    start = np.zeros(500)
    start[0] = 1.0
    st = mdp.stationary_distribution(model, policy, max_iterations=1000, tolerance=0.0, start=start)
    reference = reference_mdp.stationary_distribution(csr, policy, 1000, start)
    np.testing.assert_array_equal(st.distribution, reference)
    assert st.iterations == 1000
    per_pair = np.linspace(0.0, 1.0, model.num_pairs)
    assert mdp.expectation(model, policy, st.distribution, per_pair) == pytest.approx(
        reference_mdp.expectation(csr, policy, reference, per_pair), rel=1e-14
    )


def test_average_reward_policy_iteration_matches_relative_value_iteration():
    p, r, _ = dense_random(6, 3, seed=5)
    model = mdp.Mdp.from_dense(p, r)
    gains = []
    for policy in all_policies(model):
        p_pi, r_pi = chain(model, policy)
        a = np.vstack([(np.eye(6) - p_pi).T[:-1], np.ones(6)])
        gains.append(float(np.linalg.solve(a, np.r_[np.zeros(5), 1.0]) @ r_pi))
    pi = mdp.policy_iteration(model, discount=1.0)
    assert pi.converged and pi.gain == pytest.approx(max(gains), abs=1e-12)
    rvi = mdp.value_iteration(model, relative=True, tolerance=1e-13)
    assert rvi.converged
    assert rvi.gain_lower <= pi.gain + 1e-12 and pi.gain - 1e-12 <= rvi.gain_upper
    np.testing.assert_array_equal(rvi.policy, pi.policy)
    np.testing.assert_allclose(rvi.values, pi.values, atol=1e-9)
    gain, bias = mdp.average_reward(model, pi.policy)
    assert gain == pytest.approx(pi.gain, abs=1e-13) and bias[0] == 0.0


def test_results_do_not_depend_on_the_thread_count():
    csr = reference_mdp.random_mdp(2000, 6000, 15, seed=2)
    model = mdp.Mdp(**csr)
    runs = [
        mdp.value_iteration(model, max_iterations=30, tolerance=0.0, threads=t)
        for t in (1, 2, 3, 0)
    ]
    for run in runs[1:]:
        np.testing.assert_array_equal(run.values, runs[0].values)
        np.testing.assert_array_equal(run.policy, runs[0].policy)
    chains = [
        mdp.stationary_distribution(
            model, runs[0].policy, max_iterations=50, tolerance=0.0, threads=t
        ).distribution
        for t in (1, 2, 4)
    ]
    for d in chains[1:]:
        np.testing.assert_array_equal(d, chains[0])


def test_from_dense_layout_mask_and_transition_rewards():
    p = np.array(
        [
            [[0.5, 0.5, 0.0], [0.0, 1.0, 0.0], [1.0, 0.0, 0.0]],
            [[0.0, 0.0, 1.0], [0.25, 0.0, 0.75], [0.0, 0.5, 0.5]],
        ]
    )
    r = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    allowed = np.array([[True, True], [False, True], [True, False]])
    model = mdp.Mdp.from_dense(p, r, allowed)
    assert (model.num_states, model.num_pairs, model.num_transitions) == (3, 4, 6)
    np.testing.assert_array_equal(model.state_begin, [0, 2, 3, 4])
    np.testing.assert_array_equal(model.pair_begin, [0, 2, 3, 5, 6])  # zeros dropped
    np.testing.assert_array_equal(model.next_state, [0, 1, 2, 0, 2, 0])
    np.testing.assert_array_equal(model.reward, [1.0, 2.0, 4.0, 5.0])
    np.testing.assert_array_equal(model.action_ids([1, 0, 0]), [1, 1, 0])
    np.testing.assert_array_equal(model.policy_pairs([1, 0, 0]), [1, 2, 3])
    assert model.pair(2, 0) == 3

    # Rewards per transition R[a, s, s2]: their expectation per pair.
    per_transition = np.arange(18, dtype=float).reshape(2, 3, 3)
    model = mdp.Mdp.from_dense(p, per_transition)
    expected = np.einsum("ast,ast->sa", p, per_transition).ravel()
    np.testing.assert_allclose(model.reward, expected)

    # The same from CSR arrays with transition_reward (every action allowed: pair = 2 s + a).
    pair_of_transition = np.repeat(np.arange(model.num_pairs), np.diff(model.pair_begin))
    state, action = np.divmod(pair_of_transition, 2)
    csr = mdp.Mdp(
        model.state_begin,
        model.pair_begin,
        model.next_state,
        model.probability,
        transition_reward=per_transition[action, state, model.next_state],
    )
    np.testing.assert_allclose(csr.reward, expected, rtol=1e-15)


def test_arrays_are_read_only_views_and_results_numpy():
    model = mdp.Mdp(**reference_mdp.random_mdp(50, 80, 4, seed=1))
    first, second = model.probability, model.probability
    assert np.shares_memory(first, second)  # views of the same C++ storage, not copies
    assert not first.flags.writeable
    with pytest.raises(ValueError):
        first[0] = 0.5
    solution = mdp.value_iteration(model, discount=0.9)
    assert solution.policy.dtype == np.int32 and solution.values.dtype == np.float64
    assert solution.policy.flags.owndata is False  # handed over from C++ without a copy
    q = mdp.q_values(model, solution.values, discount=0.9)
    np.testing.assert_array_equal(
        mdp.greedy_policy(model, solution.values, discount=0.9), solution.policy
    )
    assert q.shape == (model.num_pairs,)
    assert repr(model) == f"Mdp(states=50, pairs=80, transitions={model.num_transitions})"


def csr_arrays(**changes):
    base = {
        "state_begin": np.array([0, 2, 3]),
        "pair_begin": np.array([0, 2, 3, 4]),
        "next_state": np.array([0, 1, 1, 0]),
        "probability": np.array([0.5, 0.5, 1.0, 1.0]),
        "reward": np.array([1.0, 2.0, 0.0]),
    }
    base.update(changes)
    return base


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        (
            {"probability": np.array([0.5, 0.6, 1.0, 1.0])},
            r"pair 0 \(state 0, action 0\).*sum to 1\.1",
        ),
        ({"probability": np.array([0.5, 0.5, np.nan, 1.0])}, r"transition 2 .*probability=nan"),
        ({"probability": np.array([1.5, -0.5, 1.0, 1.0])}, r"probability=1\.5 is outside \[0, 1\]"),
        ({"next_state": np.array([0, 1, 1, 9])}, r"pair 2 \(state 1, action 0\): next_state=9"),
        (
            {"next_state": np.array([0, 1, 1, 2**40])},
            r"next_state\[3\]=1099511627776 is out of range",
        ),
        ({"next_state": np.array([0.0, 1.0, 1.0, 0.0])}, r"next_state must hold integers"),
        ({"reward": np.array([1.0, np.inf, 0.0])}, r"pair 1 \(state 0, action 1\): reward=inf"),
        ({"reward": np.array([1.0, 2.0])}, r"reward has 2 entries"),
        ({"state_begin": np.array([0, 3, 3])}, r"state 1 has no actions"),
        ({"state_begin": np.array([[0, 2, 3]])}, r"state_begin must be 1-D"),
        ({"state_begin": np.array([0])}, r"no states"),
    ],
)
def test_invalid_mdps_are_rejected_with_the_place_and_value(changes, message):
    with pytest.raises(ValueError, match=message):
        mdp.Mdp(**csr_arrays(**changes))


def test_invalid_arguments_are_rejected():
    model = mdp.Mdp(**csr_arrays())
    with pytest.raises(ValueError, match=r"policy\[1\]=1 is not an action of state 1"):
        mdp.stationary_distribution(model, [0, 1])
    with pytest.raises(ValueError, match=r"policy has 1 entries"):
        mdp.evaluate_policy(model, [0])
    with pytest.raises(ValueError, match=r"discount=1\.5"):
        mdp.value_iteration(model, discount=1.5)
    with pytest.raises(ValueError, match=r"min_iterations=9"):
        mdp.value_iteration(model, max_iterations=5, min_iterations=9)
    with pytest.raises(ValueError, match=r"initial_values\[1\]=nan"):
        mdp.value_iteration(model, initial_values=[0.0, np.nan])
    with pytest.raises(ValueError, match=r"relative=true needs discount=1"):
        mdp.value_iteration(model, discount=0.5, relative=True)
    with pytest.raises(ValueError, match=r"start sums to 0"):
        mdp.stationary_distribution(model, [0, 0], start=[0.0, 0.0])
    with pytest.raises(ValueError, match=r"per_pair has 2 entries"):
        mdp.expectation(model, [0, 0], [0.5, 0.5], [1.0, 2.0])
    with pytest.raises(ValueError, match=r"transitions must have shape"):
        mdp.Mdp.from_dense(np.ones((2, 3)), np.ones((3, 2)))
    with pytest.raises(ValueError, match=r"rewards must have shape"):
        mdp.Mdp.from_dense(np.ones((2, 3, 3)) / 3, np.ones((2, 3)))
    with pytest.raises(ValueError, match=r"state 0 has no actions"):
        mdp.Mdp.from_dense(
            np.ones((2, 2, 2)) / 2, np.ones((2, 2)), np.array([[0, 0], [1, 1]], bool)
        )
    with pytest.raises(TypeError):
        mdp.value_iteration("not an mdp")
    # Two absorbing states: no single gain, so average-reward policy iteration refuses.
    absorbing = mdp.Mdp([0, 1, 2], [0, 1, 2], [0, 1], [1.0, 1.0], [0.0, 1.0])
    with pytest.raises(ValueError, match=r"not unichain"):
        mdp.policy_iteration(absorbing, discount=1.0)


def test_long_solves_release_the_gil_and_stop_on_ctrl_c():
    model = mdp.Mdp(**reference_mdp.random_mdp(2000, 3000, 20, seed=4))
    during = ticks_during(
        lambda: mdp.value_iteration(model, max_iterations=2000, tolerance=0.0, threads=1)
    )
    assert during > 5  # the counter ran while C++ swept

    timer = threading.Timer(0.2, os.kill, args=(os.getpid(), signal.SIGINT))
    started = time.monotonic()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            # Bounded (tens of seconds of sweeps): a lost Ctrl-C fails the test, never hangs it.
            mdp.value_iteration(model, max_iterations=500_000, tolerance=0.0)
    finally:
        timer.cancel()
    assert time.monotonic() - started < 5.0


def test_benchmark_smoke():
    proc = subprocess.run(
        [sys.executable, str(BENCHMARKS / "bench_mdp.py"), "--smoke"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "identical to the ordered numpy reference" in proc.stdout
    assert "ratio" in proc.stdout
