"""servelab.solvers.linear_sum_assignment against scipy.optimize.linear_sum_assignment.

The optimal cost must agree (within 1e-9 relative); the assignment itself may differ under ties.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest

scipy_optimize = pytest.importorskip("scipy.optimize")

from servelab.solvers import linear_sum_assignment  # noqa: E402


def random_matrix(rng: np.random.Generator, rows: int, cols: int, kind: str) -> np.ndarray:
    if kind == "uniform":
        return rng.random((rows, cols))
    if kind == "ties":
        return rng.integers(0, 4, (rows, cols)).astype(float)
    if kind == "negative":
        return rng.integers(-50, 50, (rows, cols)).astype(float)
    if kind == "huge":
        c = rng.random((rows, cols))
        c[rng.random((rows, cols)) < 0.3] = 1e12
        return c
    if kind == "inf":
        c = rng.integers(0, 10, (rows, cols)).astype(float)
        c[rng.random((rows, cols)) < rng.choice([0.2, 0.5, 0.8])] = np.inf
        return c
    raise AssertionError(kind)


KINDS = ["uniform", "ties", "negative", "huge", "inf"]


def compare(cost: np.ndarray, maximize: bool) -> str:
    """Solves with both; asserts they agree. Returns "feasible" or "infeasible"."""
    try:
        ref_rows, ref_cols = scipy_optimize.linear_sum_assignment(cost, maximize=maximize)
    except ValueError as ref_error:
        assert "infeasible" in str(ref_error)
        with pytest.raises(ValueError, match="cost matrix is infeasible"):
            linear_sum_assignment(cost, maximize=maximize)
        return "infeasible"
    rows, cols = linear_sum_assignment(cost, maximize=maximize)
    assert rows.dtype == np.int64 and cols.dtype == np.int64
    assert rows.shape == cols.shape == (min(cost.shape),)
    assert np.all(np.diff(rows) > 0), "row_ind must be strictly increasing"
    assert len(np.unique(cols)) == len(cols), "a column is used twice"
    expected = cost[ref_rows, ref_cols].sum()
    got = cost[rows, cols].sum()
    assert abs(got - expected) <= 1e-9 * max(1.0, abs(expected)), (cost.shape, got, expected)
    return "feasible"


def test_thousands_of_small_random_matrices_match_scipy():
    rng = np.random.default_rng(2024)
    outcomes = {"feasible": 0, "infeasible": 0}
    for trial in range(4000):
        rows, cols = (int(x) for x in rng.integers(1, 25, 2))
        if trial % 3 == 0:
            cols = rows  # square
        kind = KINDS[trial % len(KINDS)]
        cost = random_matrix(rng, rows, cols, kind)
        maximize = kind in ("uniform", "ties", "negative") and bool(trial % 2)
        outcomes[compare(cost, maximize)] += 1
    assert outcomes["feasible"] > 3000
    assert outcomes["infeasible"] > 50


@pytest.mark.parametrize("kind", KINDS)
def test_large_matrices_match_scipy(kind):
    rng = np.random.default_rng(KINDS.index(kind))
    shapes = [(64, 64), (100, 130), (130, 100), (256, 256), (200, 512), (512, 512), (512, 300)]
    for rows, cols in shapes:
        compare(random_matrix(rng, rows, cols, kind), maximize=False)


def test_every_size_from_1_to_512():
    rng = np.random.default_rng(5)
    for n in [*range(1, 40), 63, 64, 65, 127, 128, 129, 255, 256, 257, 511, 512]:
        compare(rng.random((n, n)), maximize=bool(n % 2))
        compare(rng.integers(0, 3, (n, n + 3)).astype(float), maximize=False)


def test_known_answer_and_return_convention():
    cost = np.array([[4, 1, 3], [2, 0, 5], [3, 2, 2]])
    rows, cols = linear_sum_assignment(cost)
    assert rows.tolist() == [0, 1, 2] and cols.tolist() == [1, 0, 2]
    assert cost[rows, cols].sum() == 5
    rows, cols = linear_sum_assignment(cost, maximize=True)
    assert cost[rows, cols].sum() == 11
    # Tall: the row left out does not appear, row_ind stays sorted.
    tall = np.array([[5.0, 2.0], [4.0, 8.0], [1.0, 9.0]])
    rows, cols = linear_sum_assignment(tall)
    assert rows.tolist() == [0, 2] and cols.tolist() == [1, 0]
    # Keywords like scipy's.
    rows2, cols2 = linear_sum_assignment(cost_matrix=tall, maximize=False)
    assert rows2.tolist() == rows.tolist() and cols2.tolist() == cols.tolist()


@pytest.mark.parametrize(
    "make",
    [
        lambda c: c.tolist(),  # nested lists
        lambda c: c.astype(np.int32),
        lambda c: c.astype(np.float32),
        lambda c: np.asfortranarray(c),
        lambda c: np.repeat(c, 2, axis=1)[:, ::2],  # non-contiguous view
        lambda c: c.astype(">f8"),  # big-endian
        lambda c: c > 0.5,  # bool
    ],
)
def test_array_likes_are_converted(make):
    cost = np.random.default_rng(1).random((7, 9))
    converted = make(cost)
    reference = np.asarray(converted, dtype=float)
    rows, cols = linear_sum_assignment(converted)
    ref_rows, ref_cols = scipy_optimize.linear_sum_assignment(reference)
    assert reference[rows, cols].sum() == pytest.approx(reference[ref_rows, ref_cols].sum())


def test_input_is_not_modified_and_read_only_input_works():
    cost = np.random.default_rng(2).random((30, 20))
    before = cost.copy()
    cost.flags.writeable = False
    linear_sum_assignment(cost, maximize=True)
    np.testing.assert_array_equal(cost, before)


def test_empty_matrices():
    for shape in [(0, 0), (0, 5), (5, 0)]:
        rows, cols = linear_sum_assignment(np.zeros(shape))
        assert rows.shape == cols.shape == (0,)
        assert rows.dtype == np.int64


def test_bad_entries_name_row_column_and_value():
    cost = np.ones((3, 4))
    cost[2, 1] = np.nan
    with pytest.raises(ValueError, match=r"row 2, column 1: nan"):
        linear_sum_assignment(cost)
    cost[2, 1] = -np.inf
    with pytest.raises(ValueError, match=r"row 2, column 1: -inf"):
        linear_sum_assignment(cost)
    cost[2, 1] = np.inf  # forbidden when minimising, meaningless when maximising
    with pytest.raises(ValueError, match=r"row 2, column 1: inf"):
        linear_sum_assignment(cost, maximize=True)


def test_infeasible():
    cost = np.array([[np.inf, 1.0], [np.inf, 2.0]])
    with pytest.raises(ValueError, match="cost matrix is infeasible"):
        linear_sum_assignment(cost)
    with pytest.raises(ValueError, match="cost matrix is infeasible"):
        linear_sum_assignment(np.full((4, 6), np.inf))


def test_bad_shapes_and_types():
    with pytest.raises(ValueError, match="must be a 2-D array, got 1"):
        linear_sum_assignment(np.ones(3))
    with pytest.raises(ValueError, match="must be a 2-D array, got 3"):
        linear_sum_assignment(np.ones((2, 2, 2)))
    with pytest.raises(TypeError):
        linear_sum_assignment(np.ones((2, 2), dtype=complex))
    with pytest.raises((TypeError, ValueError)):
        linear_sum_assignment([["a", "b"], ["c", "d"]])
    with pytest.raises(TypeError, match="unexpected keyword argument 'maximise'"):
        linear_sum_assignment(np.ones((2, 2)), maximise=True)
    with pytest.raises(TypeError, match="missing required argument"):
        linear_sum_assignment()
    with pytest.raises(TypeError, match="multiple values"):
        linear_sum_assignment(np.ones((2, 2)), cost_matrix=np.ones((2, 2)))


def test_threads_solve_concurrently_with_the_same_results():
    rng = np.random.default_rng(9)
    matrices = [rng.random((200, 200)) for _ in range(8)]
    expected = [scipy_optimize.linear_sum_assignment(c) for c in matrices]
    results: list[object] = [None] * len(matrices)

    def work(k: int) -> None:
        for _ in range(3):
            results[k] = linear_sum_assignment(matrices[k])

    threads = [threading.Thread(target=work, args=(k,)) for k in range(len(matrices))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for cost, (rows, cols), (ref_rows, ref_cols) in zip(matrices, results, expected, strict=True):
        assert cost[rows, cols].sum() == pytest.approx(cost[ref_rows, ref_cols].sum(), rel=1e-12)


def test_benchmark_smoke():
    """The scipy comparison benchmark runs (tiny) and prints its ratios."""
    import subprocess
    import sys
    from pathlib import Path

    script = Path(__file__).parents[2] / "benchmarks" / "python" / "bench_lap.py"
    proc = subprocess.run(
        [sys.executable, str(script), "--smoke"], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.count("x\n") == 10  # a ratio per size, in both tables
