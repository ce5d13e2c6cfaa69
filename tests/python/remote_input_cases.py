"""The inputs that test_remote_inputs.py sends to worker processes, and the check their executor
makes on arrival: each query's input is a function of the case and the query id, so the worker
knows what it should receive and names any difference."""

from __future__ import annotations

from typing import Any

import numpy as np

CASES = ("float_rows", "int_scalars", "mixed")
MARKER = -7.0  # an input holding it makes the executor raise: shows which queries' inputs ran


def expected(case: str, q: int) -> Any:
    """Query ``q``'s input, as the executor should receive it (numpy's types, exactly)."""
    if case == "float_rows":  # rows of a (count, 4) float32 array
        return np.arange(4, dtype=np.float32) / 8 + q
    if case == "int_scalars":  # rows of a 1-D int64 array: numpy scalars
        return np.int64(q * 1_000_003 - 5)
    if case == "mixed":  # what a callable returns: dtypes, shapes and kinds change per query
        kind = q % 5
        if kind == 0:
            return np.full((q % 3 + 1, 2), q / 3, dtype=np.float64)
        if kind == 1:
            return np.arange(q % 4, dtype=np.uint16)  # (0,) for q = 4k
        if kind == 2:
            return np.bool_(q % 2)
        if kind == 3:
            return np.array(q, dtype=np.int32)  # a 0-d array, not a scalar
        return np.full((2, 1, 3), q, dtype=np.float16)
    raise ValueError(f"case={case!r} is not one of {CASES}")


def inputs(case: str, count: int) -> Any:
    """What the test passes as ``serve(inputs=...)``: an array with one row per query, or a
    callable."""
    if case == "mixed":
        return lambda q: expected(case, q)
    return np.stack([expected(case, q) for q in range(count)])


def difference(case: str, q: int, got: Any) -> str | None:
    """Why ``got`` is not query ``q``'s input, or None."""
    want = expected(case, q)
    if isinstance(got, np.ndarray) != isinstance(want, np.ndarray) or type(got) is not type(want):
        return f"query {q}: got a {type(got).__name__}, expected a {type(want).__name__}"
    if got.dtype != want.dtype or np.shape(got) != np.shape(want):
        return f"query {q}: got {got.dtype}{np.shape(got)}, expected {want.dtype}{np.shape(want)}"
    if not np.array_equal(got, want):
        return f"query {q}: got {got!r}, expected {want!r}"
    return None


class ExpectInputs:
    """An executor that checks every query's input on arrival: a difference or the marker fails
    the batch, naming the query."""

    def __init__(self, case: str) -> None:
        self.case = case

    def run(self, batch: Any) -> None:
        if batch.inputs is None:
            raise RuntimeError("no inputs arrived")
        for q, got in zip(batch.queries.tolist(), batch.inputs, strict=True):
            if np.any(np.asarray(got) == MARKER):
                raise ValueError(f"saw the marker in query {q}")
            problem = difference(self.case, q, got)
            if problem:
                raise RuntimeError(problem)
