"""Linear and mixed-integer programs, solved by COIN-OR CLP (LPs) and CBC (MILPs).

Two ways in:

* ``solve_lp(c, A_ub, b_ub, A_eq, b_eq, bounds, integrality, maximize=False)``, with the
  conventions of ``scipy.optimize.linprog`` (bounds default to ``(0, None)``, ``None`` meaning
  unbounded) and of ``scipy.optimize.milp`` for ``integrality`` (1 integer, 0 continuous)::

      res = solve_lp([-1, -2], A_ub=[[1, 1]], b_ub=[4], bounds=(0, 3))
      res.status, res.fun, res.x, res.duals_ub

* ``LinearProgram``, a builder with named variables and constraints::

      lp = LinearProgram(maximize=True)
      x = lp.add_variable("x", upper=4, objective=3)
      y = lp.add_variable("y", integer=True, objective=2)
      lp.add_constraint({x: 1, "y": 1}, upper=5, name="capacity")
      res = lp.solve(time_limit=10)
      res["x"], res.fun

Both return an ``LPResult``. ``available()`` says whether servelab was built with the solver;
without it, solving raises RuntimeError. Solves release the GIL and stop on Ctrl-C.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ..backends import BackendUnavailable, require


def _solvers() -> Any:
    """servelab._lp, loaded on first use (it links CBC/CLP; ``import servelab`` does not)."""
    return require("lp")


__all__ = ["LPResult", "LinearProgram", "available", "backend_version", "solve_lp"]

STATUSES = ("optimal", "infeasible", "unbounded", "time_limit", "iteration_limit", "error")


def available() -> bool:
    """Whether servelab was built with an LP/MILP solver (COIN-OR CBC/CLP)."""
    try:
        return bool(_solvers().lp_available())
    except BackendUnavailable:
        return False


def backend_version() -> str:
    """The solver libraries compiled in, e.g. ``"cbc 2.10.8, clp 1.17.6"`` ("" when none)."""
    try:
        return str(_solvers().lp_backend_version())
    except BackendUnavailable:
        return ""


@dataclass(frozen=True)
class LPResult:
    """The outcome of a solve.

    ``status`` is one of "optimal", "infeasible", "unbounded", "time_limit", "iteration_limit",
    "error". ``x`` and ``fun`` are set whenever a feasible point is known (always when optimal).
    For pure LPs solved to optimality, ``duals[i]`` is d fun / d (active bound of constraint i) and
    ``reduced_costs[j]`` the same for variable j's bound (scipy's "marginals"); otherwise None.
    ``best_bound`` is the proven bound on the optimum (MILPs stopped early: the gap to ``fun``).
    """

    status: str
    x: np.ndarray | None
    fun: float | None
    duals: np.ndarray | None
    reduced_costs: np.ndarray | None
    best_bound: float | None
    iterations: int
    solver: str
    message: str
    variable_names: tuple[str, ...] = field(repr=False, default=())
    constraint_names: tuple[str, ...] = field(repr=False, default=())
    # solve_lp only: duals split like scipy's res.ineqlin / res.eqlin marginals.
    duals_ub: np.ndarray | None = field(repr=False, default=None)
    duals_eq: np.ndarray | None = field(repr=False, default=None)

    @property
    def success(self) -> bool:
        return self.status == "optimal"

    def __getitem__(self, name: str | int) -> float:
        """The value of a variable, by name or index."""
        if self.x is None:
            raise ValueError(f"no solution to read: the solve ended with status '{self.status}'")
        if isinstance(name, str):
            try:
                return float(self.x[self.variable_names.index(name)])
            except ValueError:
                raise KeyError(f"no variable named {name!r}") from None
        return float(self.x[name])

    def values(self) -> dict[str, float]:
        """Every variable's value by name (empty when there is no solution)."""
        if self.x is None:
            return {}
        return dict(zip(self.variable_names, self.x.tolist(), strict=True))


def _bound(value: Any, default: float, what: str) -> float:
    if value is None:
        return default
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{what} must be a number or None, got {value!r}") from None
    if math.isnan(x):
        raise ValueError(f"{what} is NaN")
    return x


class LinearProgram:
    """A linear (or mixed-integer, once a variable is integer) program built step by step.

    Variables are referred to by the index ``add_variable`` returns or by name.
    """

    def __init__(self, maximize: bool = False) -> None:
        self._model = _solvers().LpModel(maximize=maximize)
        self._var_names: list[str] = []
        self._row_names: list[str] = []

    @property
    def maximize(self) -> bool:
        return bool(self._model.maximize)

    @maximize.setter
    def maximize(self, value: bool) -> None:
        self._model.maximize = bool(value)

    @property
    def num_variables(self) -> int:
        return int(self._model.num_variables)

    @property
    def num_constraints(self) -> int:
        return int(self._model.num_constraints)

    def add_variable(
        self,
        name: str = "",
        lower: float | None = 0.0,
        upper: float | None = None,
        integer: bool = False,
        objective: float = 0.0,
    ) -> int:
        """Adds a variable in [lower, upper] (None: unbounded); returns its index."""
        j = self._model.add_variable(
            name,
            _bound(lower, -math.inf, f"variable {name!r} lower"),
            _bound(upper, math.inf, f"variable {name!r} upper"),
            bool(integer),
            float(objective),
        )
        self._var_names.append(self._model.variable_name(j))
        return int(j)

    def add_binary(self, name: str = "", objective: float = 0.0) -> int:
        return self.add_variable(name, 0.0, 1.0, integer=True, objective=objective)

    def _index(self, var: int | str) -> int:
        if isinstance(var, str):
            return int(self._model.variable(var))
        if isinstance(var, bool) or not isinstance(var, int | np.integer):
            raise ValueError(f"a variable is an index or a name, got {var!r}")
        return int(var)

    def add_constraint(
        self,
        terms: Mapping[int | str, float] | Iterable[tuple[int | str, float]],
        lower: float | None = None,
        upper: float | None = None,
        name: str = "",
    ) -> int:
        """Adds ``lower <= sum(coef * var) <= upper`` (None: no bound on that side).

        ``terms`` maps variables (index or name) to coefficients. Equality: lower == upper.
        """
        pairs = terms.items() if isinstance(terms, Mapping) else terms
        variables, coefs = [], []
        for var, coef in pairs:
            variables.append(self._index(var))
            coefs.append(float(coef))
        row = self._model.add_constraint(
            np.asarray(variables, dtype=np.int64),
            np.asarray(coefs, dtype=float),
            _bound(lower, -math.inf, f"constraint {name!r} lower"),
            _bound(upper, math.inf, f"constraint {name!r} upper"),
            name,
        )
        self._row_names.append(self._model.constraint_name(row))
        return int(row)

    def set_objective(self, coefs: Mapping[int | str, float], offset: float | None = None) -> None:
        """Sets the objective coefficients of the variables given (others keep theirs)."""
        for var, coef in coefs.items():
            self._model.set_objective(self._index(var), float(coef))
        if offset is not None:
            self._model.set_objective_offset(float(offset))

    def set_bounds(self, var: int | str, lower: float | None, upper: float | None) -> None:
        j = self._index(var)
        self._model.set_bounds(
            j,
            _bound(lower, -math.inf, "lower"),
            _bound(upper, math.inf, "upper"),
        )

    def set_integer(self, var: int | str, integer: bool = True) -> None:
        self._model.set_integer(self._index(var), bool(integer))

    def solve(
        self,
        time_limit: float | None = None,
        iteration_limit: int | None = None,
        mip_gap: float = 1e-9,
        verbose: bool = False,
    ) -> LPResult:
        """Solves with CLP (no integer variable) or CBC.

        ``time_limit`` in seconds; ``iteration_limit`` counts simplex iterations for an LP and
        branch-and-bound nodes for a MILP; ``mip_gap`` is the relative gap at which a MILP stops.
        """
        raw = _solvers().solve_lp_model(
            self._model,
            math.inf if time_limit is None else float(time_limit),
            -1 if iteration_limit is None else int(iteration_limit),
            float(mip_gap),
            bool(verbose),
        )
        return _result(raw, tuple(self._var_names), tuple(self._row_names))


def _result(raw: dict, var_names: tuple[str, ...], row_names: tuple[str, ...]) -> LPResult:
    status = raw["status"]
    return LPResult(
        status=status,
        x=raw["values"],
        fun=float(raw["objective"]) if raw["has_solution"] else None,
        duals=raw["duals"],
        reduced_costs=raw["reduced_costs"],
        best_bound=(
            float(raw["best_bound"])
            if status in ("optimal", "time_limit", "iteration_limit")
            else None
        ),
        iterations=int(raw["iterations"]),
        solver=raw["solver"],
        message=raw["message"],
        variable_names=var_names,
        constraint_names=row_names,
    )


def _matrix(A: Any, name: str, cols: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """CSR arrays of a dense array-like or a scipy.sparse matrix with `cols` columns."""
    if hasattr(A, "tocsr"):  # scipy.sparse, without importing scipy
        csr = A.tocsr()
        csr.sum_duplicates()
        rows, width = csr.shape
        indptr, indices, data = csr.indptr, csr.indices, csr.data
    else:
        try:
            dense = np.asarray(A, dtype=float)
        except (TypeError, ValueError):
            raise ValueError(f"{name} must be a 2-D array of numbers") from None
        if dense.ndim == 1 and cols > 0 and dense.size == cols:
            dense = dense[None, :]  # one row given flat, like linprog accepts
        if dense.ndim != 2:
            raise ValueError(f"{name} must be 2-D, got shape {dense.shape}")
        rows, width = dense.shape
        nz_rows, nz_cols = np.nonzero(dense)
        indptr = np.searchsorted(nz_rows, np.arange(rows + 1)).astype(np.int64)
        indices, data = nz_cols, dense[nz_rows, nz_cols]
    if width != cols:
        raise ValueError(f"{name} has {width} columns, but c has {cols} entries")
    data = np.asarray(data, dtype=float)
    if not np.all(np.isfinite(data)):
        bad = int(np.flatnonzero(~np.isfinite(data))[0])
        raise ValueError(f"{name} has a non-finite entry {data[bad]} (column {int(indices[bad])})")
    return (
        np.asarray(indptr, dtype=np.int64),
        np.asarray(indices, dtype=np.int64),
        data,
        int(rows),
    )


def _vector(b: Any, name: str, size: int) -> np.ndarray:
    v = np.asarray(b, dtype=float).reshape(-1)
    if v.size != size:
        raise ValueError(f"{name} has {v.size} entries, but its matrix has {size} rows")
    if np.any(np.isnan(v)):
        raise ValueError(f"{name}[{int(np.flatnonzero(np.isnan(v))[0])}] is NaN")
    return v


def _bounds(bounds: Any, n: int) -> tuple[np.ndarray, np.ndarray]:
    if bounds is None:
        return np.zeros(n), np.full(n, math.inf)
    if hasattr(bounds, "lb") and hasattr(bounds, "ub"):  # scipy.optimize.Bounds
        lower = np.broadcast_to(np.asarray(bounds.lb, dtype=float), (n,)).copy()
        upper = np.broadcast_to(np.asarray(bounds.ub, dtype=float), (n,)).copy()
        return lower, upper
    pairs: Sequence
    if (
        isinstance(bounds, Sequence)
        and len(bounds) == 2
        and all(b is None or np.isscalar(b) for b in bounds)
    ):
        pairs = [bounds] * n  # one (min, max) for every variable
    else:
        pairs = list(bounds)
        if len(pairs) != n:
            raise ValueError(f"bounds has {len(pairs)} pairs, but c has {n} entries")
    lower, upper = np.empty(n), np.empty(n)
    for j, pair in enumerate(pairs):
        try:
            lo, hi = pair
        except (TypeError, ValueError):
            raise ValueError(f"bounds[{j}] must be a (min, max) pair, got {pair!r}") from None
        lower[j] = _bound(lo, -math.inf, f"bounds[{j}] min")
        upper[j] = _bound(hi, math.inf, f"bounds[{j}] max")
    return lower, upper


def solve_lp(
    c: Any,
    A_ub: Any = None,
    b_ub: Any = None,
    A_eq: Any = None,
    b_eq: Any = None,
    bounds: Any = (0, None),
    integrality: Any = None,
    *,
    maximize: bool = False,
    time_limit: float | None = None,
    iteration_limit: int | None = None,
    mip_gap: float = 1e-9,
) -> LPResult:
    """Optimises ``c @ x`` s.t. ``A_ub @ x <= b_ub``, ``A_eq @ x == b_eq``, bounds, integrality.

    Conventions of ``scipy.optimize.linprog``: ``bounds`` is one ``(min, max)`` pair for all
    variables or one per variable (``None`` = unbounded), default ``(0, None)``; a
    ``scipy.optimize.Bounds`` also works. ``integrality`` as in ``scipy.optimize.milp``: per
    variable 0 (continuous) or 1 (integer), or one value for all. Matrices may be dense or
    scipy.sparse. ``maximize=True`` maximises instead. ``duals_ub`` / ``duals_eq`` are the
    marginals of the two constraint blocks (pure LPs at optimality).
    """
    cost = np.asarray(c, dtype=float).reshape(-1)
    n = cost.size
    if not np.all(np.isfinite(cost)):
        raise ValueError(f"c[{int(np.flatnonzero(~np.isfinite(cost))[0])}] is not finite")
    lower, upper = _bounds(bounds, n)
    if integrality is None:
        integer = np.zeros(n, dtype=bool)
    else:
        flags = np.broadcast_to(np.asarray(integrality), (n,))
        if not np.all(np.isin(flags, (0, 1))):
            raise ValueError(
                "integrality must hold 0 (continuous) or 1 (integer) per variable; "
                "semi-continuous (2, 3) is not supported"
            )
        integer = flags.astype(bool)
    lp = LinearProgram(maximize=maximize)
    lp._model.add_variables(lower, upper, cost, integer)
    lp._var_names = [f"x{j}" for j in range(n)]
    blocks = []
    for A, b, kind in ((A_ub, b_ub, "ub"), (A_eq, b_eq, "eq")):
        if A is None:
            if b is not None and np.asarray(b).size:
                raise ValueError(f"b_{kind} is given without A_{kind}")
            blocks.append(0)
            continue
        indptr, indices, data, rows = _matrix(A, f"A_{kind}", n)
        if b is None:
            raise ValueError(f"A_{kind} is given without b_{kind}")
        rhs = _vector(b, f"b_{kind}", rows)
        lo = np.full(rows, -math.inf) if kind == "ub" else rhs
        names = [f"{kind}{i}" for i in range(rows)]
        lp._model.add_constraints_csr(indptr, indices, data, lo, rhs, names)
        lp._row_names += names
        blocks.append(rows)
    res = lp.solve(time_limit=time_limit, iteration_limit=iteration_limit, mip_gap=mip_gap)
    if res.duals is not None:
        res = replace(res, duals_ub=res.duals[: blocks[0]], duals_eq=res.duals[blocks[0] :])
    return res
