"""User-supplied per-query inputs, servelab.serve(inputs=...): an array with one row per query or a
callable of the query id, read by executors written in Python (batch.inputs) and by torchscript
instead of the seeded inputs; a dtype or shape that does not fit is refused before the run, naming
the executor, its model and the value.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import servelab
from servelab import backends
from servelab.results import COMPLETED, DROPPED


def _profile() -> servelab.Profile:
    return servelab.profiles.from_dict(
        {
            "format": "servelab.profile",
            "version": 1,
            "hardware": {"cpu": {"price_per_hour": 1.0}},
            "models": {"m": {}},
            "latency": [
                {"hardware": "cpu", "model": "m", "batch": b, "samples_ms": [1.0 + b / 8]}
                for b in (1, 8, 32)
            ],
        }
    )


def _scenario(executor: str, count: int = 40) -> dict:
    return {
        "profile": _profile(),
        "workers": [{"hardware": "cpu", "count": 2, "models": ["m"], "executor": executor}],
        "workload": {
            "arrivals": "poisson(rate=400)",
            "count": count,
            "apps": [{"name": "m", "slo_ms": 200, "sizes": "uniform(low=1, high=4)"}],
        },
        "drain_s": 10,
    }


class Keeper:
    """Keeps every query's input it is given, by query id."""

    def __init__(self, seen: dict):
        self.seen = seen

    def run(self, batch):
        assert len(batch.inputs) == len(batch.queries)
        for q, x in zip(batch.queries.tolist(), batch.inputs, strict=True):
            self.seen[q] = x


@pytest.fixture
def keeper():
    seen: dict = {}
    servelab.register_executor("keeper", lambda: Keeper(seen), params=[])
    yield seen
    servelab.unregister_executor("keeper")


def test_a_python_executor_receives_each_querys_row_of_an_array(keeper):
    inputs = np.arange(40 * 3, dtype=np.int64).reshape(40, 3)  # any dtype: passed as given
    r = servelab.serve(_scenario("keeper"), inputs=inputs)
    assert r.summary()["completed"] == 40
    assert sorted(keeper) == list(range(40))
    for q, x in keeper.items():
        np.testing.assert_array_equal(x, inputs[q])


def test_a_python_executor_receives_what_a_callable_returns_for_each_query(keeper):
    r = servelab.serve(_scenario("keeper"), inputs=lambda q: {"id": q, "tokens": [q] * 2})
    assert r.summary()["completed"] == 40
    assert keeper == {q: {"id": q, "tokens": [q, q]} for q in range(40)}


def test_a_callable_that_raises_drops_that_batch_with_the_reason(keeper):
    def inputs(q):
        if q == 7:
            raise KeyError("no input for 7")
        return q

    r = servelab.serve(_scenario("keeper"), scheduler="fcfs", inputs=inputs)
    c = r.columns
    dropped = c["status"] == DROPPED
    assert dropped.sum() == 1 and c["id"][dropped].tolist() == [7]
    assert r.meta["drop_reasons"][c["drop_reason"][dropped][0]] == (
        "executor failed: keeper(): inputs(7) raised KeyError: 'no input for 7'"
    )
    assert (c["status"][~dropped] == COMPLETED).all()


def test_inputs_that_cannot_serve_the_run_are_refused_before_it(keeper):
    with pytest.raises(
        ValueError, match=r"has 10 rows \(one per query\) for a workload of count=40"
    ):
        servelab.serve(_scenario("keeper"), inputs=np.zeros((10, 3)))
    with pytest.raises(
        ValueError, match="inputs=None is neither an array|inputs=.*neither an array"
    ):
        servelab.serve(_scenario("keeper"), inputs=np.array([None, 1], dtype=object))
    with pytest.raises(ValueError, match=r"inputs=.*array\(float64, shape=\(\)\)"):
        servelab.serve(_scenario("keeper"), inputs=3.0)
    with pytest.raises(
        ValueError, match=r"inputs= is for executors that take inputs.*\(emulated\)"
    ):
        servelab.serve(
            _scenario("keeper") | {"workers": [{"hardware": "cpu"}]}, inputs=np.zeros((40, 3))
        )
    with pytest.raises(ValueError, match="inputs= is for servelab.serve"):
        servelab.simulate(_scenario("keeper"), inputs=np.zeros((40, 3)))


def test_float_rows_repeat_a_querys_row_for_each_item_and_check_a_callables_shape():
    rows = np.arange(12, dtype=np.float32).reshape(4, 3)
    got = servelab._core.QueryInputs(rows).float_rows([2, 0], [2, 1], width=3)
    np.testing.assert_array_equal(got, rows[[2, 2, 0]])
    per_item = servelab._core.QueryInputs(lambda q: np.full((2, 3), q, dtype=np.float32))
    np.testing.assert_array_equal(per_item.float_rows([5], [2], 3), np.full((2, 3), 5, np.float32))
    with pytest.raises(
        ValueError,
        match=r"inputs=callable .*<lambda> returned array\(float32, shape=\(2, 3\)\) for query 5 "
        r"\(1 items\): expected a float32 array of shape \(3,\) or \(1, 3\)",
    ):
        per_item.float_rows([5], [1], 3)
    with pytest.raises(ValueError, match=r"has 4 rows \(one per query\); query 4 has none"):
        servelab._core.QueryInputs(rows).float_rows([4], [1], 3)


torch_usable = backends.status("torch").usable
needs_torch = pytest.mark.skipif(
    not torch_usable, reason=f"torch backend not usable: {backends.status('torch').reason}"
)


def _marker_model(tmp_path) -> str:
    """A TorchScript linear layer (width 4) that raises when it sees the value 7 in its input:
    seeded inputs (uniform in [-1, 1)) never hold it, so a failure shows the user's inputs ran."""
    import torch

    class RejectsSeven(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.linear = torch.nn.Linear(4, 2)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            if bool((x == 7.0).any()):
                raise RuntimeError("saw the marker 7")
            return self.linear(x)

    path = tmp_path / "marker.pt"
    torch.jit.save(torch.jit.script(RejectsSeven()), str(path))
    return servelab.make_executor(f"torchscript(path={str(path)!r})").describe()


@needs_torch
def test_torchscript_runs_the_users_rows_instead_of_the_seeded_ones(tmp_path):
    spec = _marker_model(tmp_path)
    plain = servelab.serve(_scenario(spec), inputs=np.full((40, 4), 0.5, dtype=np.float32))
    assert plain.summary()["completed"] == 40
    marked = np.full((40, 4), 0.5, dtype=np.float32)
    marked[[3, 30]] = 7.0  # two queries carry the marker: only their batches fail
    r = servelab.serve(_scenario(spec), scheduler="fcfs", inputs=marked)
    c = r.columns
    dropped = c["status"] == DROPPED
    assert sorted(c["id"][dropped].tolist()) == [3, 30]
    reason = r.meta["drop_reasons"][c["drop_reason"][dropped][0]]
    assert reason.startswith(f"executor failed: {spec}") and "saw the marker 7" in reason
    by_callable = servelab.serve(
        _scenario(spec),
        scheduler="fcfs",
        inputs=lambda q: np.full(4, 7.0 if q == 5 else 0.0, np.float32),
    )
    c = by_callable.columns
    assert c["id"][c["status"] == DROPPED].tolist() == [5]


@needs_torch
def test_torchscript_inputs_of_the_wrong_dtype_or_width_name_the_executor_model_and_value(tmp_path):
    spec = _marker_model(tmp_path)
    where = (
        rf"workers\[0\]\.executor={re.escape(spec)} \(models m\): "
        r"takes float32 rows of 4 features; inputs="
    )
    with pytest.raises(
        ValueError, match=where + r"array\(float64, shape=\(40, 4\)\) is not float32"
    ):
        servelab.serve(_scenario(spec), inputs=np.zeros((40, 4)))
    with pytest.raises(
        ValueError, match=where + r"array\(float32, shape=\(40, 7\)\) has rows of another width"
    ):
        servelab.serve(_scenario(spec), inputs=np.zeros((40, 7), np.float32))
    with pytest.raises(ValueError, match=where + r"array\(float32, shape=\(40,\)\) must be 2-D"):
        servelab.serve(_scenario(spec), inputs=np.zeros(40, np.float32))
    with pytest.raises(
        ValueError,
        match=where + r"callable .*<lambda> returned array\(float32, shape=\(2,\)\) for query 0",
    ):
        servelab.serve(_scenario(spec), inputs=lambda q: np.zeros(2, np.float32))
