"""servelab.solvers.lp against scipy.optimize.linprog / milp, plus the error paths."""

from __future__ import annotations

import numpy as np
import pytest

from servelab.solvers import LinearProgram, lp, solve_lp

from .diagnostics import cpp_diagnostics

scipy_optimize = pytest.importorskip("scipy.optimize")
scipy_sparse = pytest.importorskip("scipy.sparse")

needs_lp = pytest.mark.skipif(
    not lp.available(), reason="servelab was built without an LP solver (coinor-libcbc-dev)"
)


def random_feasible_lp(rng: np.random.Generator, n: int, m_ub: int, m_eq: int) -> dict:
    """A bounded, feasible LP: constraints built around a known interior point."""
    x0 = rng.uniform(0.5, 4.0, n)
    A_ub = rng.normal(size=(m_ub, n))
    b_ub = A_ub @ x0 + rng.uniform(0.1, 2.0, m_ub)
    A_eq = rng.normal(size=(m_eq, n))
    b_eq = A_eq @ x0
    upper = rng.choice([5.0, 8.0, np.inf], n)
    bounds = [(0.0, None if np.isinf(u) else u) for u in upper]
    # Unbounded-above variables get a cost that pushes them down, so the optimum is finite.
    c = np.where(np.isinf(upper), rng.uniform(0.1, 2.0, n), rng.normal(size=n))
    return {"c": c, "A_ub": A_ub, "b_ub": b_ub, "A_eq": A_eq, "b_eq": b_eq, "bounds": bounds}


@needs_lp
def test_random_lps_match_linprog_objective_and_duals():
    rng = np.random.default_rng(11)
    for trial in range(150):
        n = int(rng.integers(1, 25))
        m_ub, m_eq = int(rng.integers(0, 20)), int(rng.integers(0, min(n, 6)))
        problem = random_feasible_lp(rng, n, m_ub, m_eq)
        kw = {k: (v if k != "A_eq" or m_eq else None) for k, v in problem.items()}
        if m_eq == 0:
            kw["b_eq"] = None
        if m_ub == 0:
            kw["A_ub"] = kw["b_ub"] = None
        ref = scipy_optimize.linprog(method="highs", **kw)
        assert ref.status == 0, ref.message
        ours = solve_lp(**kw)
        assert ours.status == "optimal", (trial, ours.message)
        assert ours.fun == pytest.approx(ref.fun, rel=1e-7, abs=1e-7)
        x = ours.x
        if m_ub:
            assert np.all(kw["A_ub"] @ x <= kw["b_ub"] + 1e-7)
        if m_eq:
            np.testing.assert_allclose(kw["A_eq"] @ x, kw["b_eq"], atol=1e-7)
            np.testing.assert_allclose(ours.duals_eq, ref.eqlin.marginals, atol=1e-6)
        if m_ub:
            np.testing.assert_allclose(ours.duals_ub, ref.ineqlin.marginals, atol=1e-6)


@needs_lp
def test_maximize_is_the_negated_minimum():
    rng = np.random.default_rng(3)
    for _ in range(30):
        problem = random_feasible_lp(rng, 6, 5, 1)
        problem["c"] = -np.abs(problem["c"])  # maximising -|c| x stays bounded (x >= 0)
        ours = solve_lp(maximize=True, **problem)
        ref = scipy_optimize.linprog(
            -problem["c"], **{k: v for k, v in problem.items() if k != "c"}
        )
        assert ours.fun == pytest.approx(-ref.fun, rel=1e-7, abs=1e-7)
        # d(max)/d(b) = -(d(min of -c x)/d(b)).
        np.testing.assert_allclose(ours.duals_ub, -ref.ineqlin.marginals, atol=1e-6)


@needs_lp
def test_random_milps_match_scipy_milp():
    rng = np.random.default_rng(5)
    for trial in range(60):
        n, m = int(rng.integers(2, 10)), int(rng.integers(1, 8))
        A = rng.integers(-3, 6, (m, n)).astype(float)
        x0 = rng.integers(0, 4, n).astype(float)
        b = A @ x0 + rng.integers(0, 4, m)
        c = rng.integers(-9, 10, n).astype(float)
        integrality = rng.integers(0, 2, n)
        upper = rng.integers(3, 8, n).astype(float)
        ref = scipy_optimize.milp(
            c,
            constraints=scipy_optimize.LinearConstraint(A, -np.inf, b),
            integrality=integrality,
            bounds=scipy_optimize.Bounds(0, upper),
        )
        assert ref.status == 0, ref.message
        ours = solve_lp(
            c,
            A_ub=A,
            b_ub=b,
            bounds=list(zip([0] * n, upper, strict=True)),
            integrality=integrality,
        )
        assert ours.status == "optimal", (trial, ours.message)
        assert ours.fun == pytest.approx(ref.fun, rel=1e-7, abs=1e-7), trial
        assert np.all(ours.x[integrality == 1] == np.round(ours.x[integrality == 1]))
        assert np.all(A @ ours.x <= b + 1e-7)
        assert (ours.duals is None) == bool(integrality.any())  # duals for pure LPs only


@needs_lp
def test_sparse_matrices_and_scipy_bounds():
    c = np.array([1.0, 2.0, 3.0])
    A = scipy_sparse.csr_matrix(np.array([[1.0, 1.0, 1.0], [0.0, 1.0, 0.0]]))
    res = solve_lp(
        c,
        A_eq=A,
        b_eq=[6.0, 2.0],
        bounds=scipy_optimize.Bounds([0, 0, 1], [np.inf, np.inf, np.inf]),
    )
    assert res.status == "optimal"
    assert res.fun == pytest.approx(3 * 1 + 2 * 2 + 1 * 3)
    np.testing.assert_allclose(res.x, [3.0, 2.0, 1.0])


@needs_lp
def test_infeasible_and_unbounded():
    assert solve_lp([1.0], A_ub=[[1.0]], b_ub=[-1.0]).status == "infeasible"
    res = solve_lp([-1.0, 0.0], A_ub=[[0.0, 1.0]], b_ub=[1.0])
    assert res.status == "unbounded" and res.x is None and res.fun is None
    assert not res.success
    mip = solve_lp([0.0], A_eq=[[2.0]], b_eq=[3.0], bounds=(0, 10), integrality=[1])
    assert mip.status == "infeasible"  # 2x = 3 has no integer solution
    assert solve_lp([-1.0], integrality=1).status == "unbounded"


@needs_lp
def test_builder_with_names():
    prog = LinearProgram(maximize=True)
    x = prog.add_variable("x", upper=4, objective=3)
    prog.add_variable("y", objective=2)
    prog.add_constraint({x: 1, "y": 1}, upper=5, name="capacity")
    prog.add_constraint([("x", 1), ("y", 3)], upper=9)
    res = prog.solve()
    assert res.success and res.fun == pytest.approx(14)
    assert res["x"] == pytest.approx(4) and res[1] == pytest.approx(1)
    assert res.values() == pytest.approx({"x": 4.0, "y": 1.0})
    assert res.constraint_names == ("capacity", "c1")
    assert res.duals[0] == pytest.approx(2.0)  # one more unit of capacity: one more y
    prog.set_integer("y")
    prog.set_bounds("x", 0, 3.5)
    prog.set_objective({"y": 2.5}, offset=1.0)
    res = prog.solve(time_limit=30)
    assert res.fun == pytest.approx(15.0)  # (3, 2) + offset
    assert res.solver.startswith("cbc")
    with pytest.raises(KeyError, match="no variable named 'z'"):
        res["z"]


@needs_lp
def test_iteration_limit_reports_it():
    rng = np.random.default_rng(1)
    n = 60
    A = rng.uniform(1, 10, (n, n))
    res = solve_lp(-rng.uniform(1, 5, n), A_ub=A, b_ub=rng.uniform(50, 100, n), iteration_limit=1)
    assert res.status == "iteration_limit"
    assert solve_lp(-np.ones(n), A_ub=A, b_ub=np.full(n, 100.0)).status == "optimal"


def test_bad_input_messages():
    with pytest.raises(ValueError, match=r"c\[1\] is not finite"):
        solve_lp([1.0, np.nan])
    with pytest.raises(ValueError, match="A_ub has 3 columns, but c has 2 entries"):
        solve_lp([1.0, 2.0], A_ub=np.ones((1, 3)), b_ub=[1.0])
    with pytest.raises(ValueError, match="b_ub has 2 entries, but its matrix has 1 rows"):
        solve_lp([1.0, 2.0], A_ub=np.ones((1, 2)), b_ub=[1.0, 2.0])
    with pytest.raises(ValueError, match="A_eq is given without b_eq"):
        solve_lp([1.0], A_eq=[[1.0]])
    with pytest.raises(ValueError, match="bounds has 1 pairs, but c has 2 entries"):
        solve_lp([1.0, 2.0], bounds=[(0, 1)])
    with pytest.raises(ValueError, match=r"lower bound 2 > upper bound 1"):
        solve_lp([1.0], bounds=(2, 1))
    with pytest.raises(ValueError, match="semi-continuous"):
        solve_lp([1.0], integrality=[2])
    with pytest.raises(ValueError, match="non-finite entry inf"):
        solve_lp([1.0], A_ub=[[np.inf]], b_ub=[1.0])
    prog = LinearProgram()
    prog.add_variable("x")
    with pytest.raises(ValueError, match="variable name 'x' is already used"):
        prog.add_variable("x")
    with pytest.raises(KeyError, match="no variable named 'q'"):
        prog.add_constraint({"q": 1.0}, upper=1)
    with pytest.raises(ValueError, match="time_limit_s=-1 must be > 0"):
        prog.solve(time_limit=-1)


def test_without_the_backend_solving_says_how_to_get_it():
    if lp.available():
        pytest.skip(f"built with {lp.backend_version()}")
    with pytest.raises(RuntimeError, match="built without an LP solver"):
        solve_lp([1.0])


def test_available_and_version_agree():
    assert lp.available() == bool(lp.backend_version())
    if lp.available():
        assert "cbc" in lp.backend_version() and "clp" in lp.backend_version()


@needs_lp
def test_threads_solve_concurrently():
    """Solves release the GIL; LPs and MILPs from several threads give the sequential answers."""
    import threading

    rng = np.random.default_rng(8)
    problems = []
    for k in range(8):
        n = 12
        problems.append(
            {
                "c": -rng.uniform(1, 10, n),
                "A_ub": rng.uniform(1, 5, (3, n)),
                "b_ub": rng.uniform(10, 20, 3),
                "bounds": (0, 3),
                "integrality": k % 2,  # every other one a MILP
            }
        )
    expected = [solve_lp(**p).fun for p in problems]
    got: list[float | None] = [None] * len(problems)

    def work(k: int) -> None:
        for _ in range(3):
            got[k] = solve_lp(**problems[k]).fun

    threads = [threading.Thread(target=work, args=(k,)) for k in range(len(problems))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert got == pytest.approx(expected, rel=1e-9)


@needs_lp
def test_ctrl_c_still_reaches_python_after_concurrent_solves():
    """CLP swaps the SIGINT handler during a solve; concurrent solves must not leave its own."""
    import os
    import signal
    import threading
    import time

    rng = np.random.default_rng(3)
    problem = {
        "c": -rng.uniform(1, 10, 12),
        "A_ub": rng.uniform(1, 5, (3, 12)),
        "b_ub": rng.uniform(10, 20, 3),
        "bounds": (0, 3),
    }
    threads = [
        threading.Thread(
            target=lambda k=k: [solve_lp(**problem, integrality=k % 2) for _ in range(20)]
        )
        for k in range(8)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    timer = threading.Timer(0.1, os.kill, args=(os.getpid(), signal.SIGINT))
    start = time.monotonic()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            cpp_diagnostics().spin_for(10.0)
    finally:
        timer.cancel()
    assert time.monotonic() - start < 5.0
