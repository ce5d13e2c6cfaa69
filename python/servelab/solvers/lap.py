"""Linear sum assignment (Jonker-Volgenant), a drop-in for scipy.optimize.linear_sum_assignment.

``linear_sum_assignment(cost_matrix, maximize=False) -> (row_ind, col_ind)``

* ``cost_matrix``: any 2-D array-like of numbers (bool, int, float). A C-contiguous float64 array
  is used in place; anything else is converted once.
* Every row is assigned when rows <= cols, else every column; ``row_ind`` is sorted ascending and
  ``cost_matrix[row_ind, col_ind].sum()`` is the optimum. Both are int64 numpy arrays.
* ``+inf`` marks a forbidden pair (``-inf`` when ``maximize=True``). ``ValueError("cost matrix is
  infeasible ...")`` when no complete assignment avoids them; NaN and the other infinity are
  rejected with the row, column and value.
* Large matrices are solved with the GIL released; Ctrl-C stops the solve.

The function is the C++ solver itself (no Python frame in between), so calls on small matrices
cost well under a microsecond beyond the solve.
"""

from __future__ import annotations

from .._core.solvers import linear_sum_assignment

__all__ = ["linear_sum_assignment"]
