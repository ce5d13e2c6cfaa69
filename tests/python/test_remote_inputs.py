"""The run's own inputs (``serve(inputs=...)``) sent to worker processes, and an executor written in
Python hosted there (``servelab worker --import MODULE``).

The worker processes import remote_input_executors.py, whose ``expect_inputs`` executor knows each
query's input (remote_input_cases.py) and fails the batch, naming the query, when what arrived
differs in type, dtype, shape or a single value, or holds the marker value. Loopback only.
"""

from __future__ import annotations

import os
import re
import socket
import struct
from pathlib import Path

import numpy as np
import pytest

import servelab
from servelab import backends
from servelab.results import COMPLETED, DROPPED
from servelab.worker_process import LocalWorkers, transport_times

from .remote_input_cases import CASES, MARKER, ExpectInputs, inputs

ROOT = Path(__file__).parents[2]
EXECUTORS = "tests.python.remote_input_executors"
HEADER = struct.Struct("<4sHHQI")  # magic, version, type, batch id, body length (docs/scale-out.md)
VERSION, HELLO, HELLO_REPLY, BATCH, BATCH_REPLY = 3, 1, 2, 3, 4
MALFORMED = 2


@pytest.fixture(autouse=True)
def importable(monkeypatch):
    """Worker processes import the executors module from the repository root."""
    path = [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(path))


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


def _scenario(executors: list[str], count: int = 40) -> dict:
    return {
        "profile": _profile(),
        "workers": [
            {"hardware": "cpu", "count": 1, "models": ["m"], "executor": e} for e in executors
        ],
        "workload": {
            "arrivals": "poisson(rate=400)",
            "count": count,
            "apps": [{"name": "m", "slo_ms": 200, "sizes": "uniform(low=1, high=4)"}],
        },
        "drain_s": 10,
    }


def _dropped(r: servelab.Result) -> dict[int, str]:
    c = r.columns
    return {
        int(q): r.meta["drop_reasons"][reason]
        for q, s, reason in zip(c["id"], c["status"], c["drop_reason"], strict=True)
        if s == DROPPED
    }


@pytest.fixture
def in_process():
    """The same executor registered in this process, to compare with in-process serving."""
    servelab.register_executor("expect_inputs_here", lambda case="float_rows": ExpectInputs(case))
    yield
    servelab.unregister_executor("expect_inputs_here")


@pytest.mark.parametrize(("case", "transport"), [(c, "unix") for c in CASES] + [("mixed", "tcp")])
def test_a_python_executor_in_a_worker_process_receives_each_querys_input_intact(
    case, transport, in_process
):
    count = 60
    transport_times()  # empties the log
    with LocalWorkers(
        2, f"expect_inputs(case='{case}')", transport=transport, imports=[EXECUTORS]
    ) as pool:
        r = servelab.serve(
            _scenario([pool.spec(0), pool.spec(1)], count), inputs=inputs(case, count)
        )
    r.check_consistency()
    c = r.columns
    assert _dropped(r) == {} and np.all(c["status"] == COMPLETED)
    assert len(set(c["worker"].tolist())) == 2  # both worker processes checked inputs
    t = transport_times()
    assert sorted(t["id"]) == list(range(count)) and t["ok"].all()
    # In-process serving takes the same inputs the same way.
    here = servelab.serve(
        _scenario([f"expect_inputs_here(case='{case}')"], count), inputs=inputs(case, count)
    )
    assert here.summary()["completed"] == count


def test_a_marker_in_the_inputs_fails_only_the_batches_that_carry_it():
    rows = inputs("float_rows", 40)
    rows[[3, 30], 1] = MARKER
    with LocalWorkers(1, "expect_inputs(case='float_rows')", imports=[EXECUTORS]) as pool:
        r = servelab.serve(_scenario([pool.spec(0)]), scheduler="fcfs", inputs=rows)
        where = pool.addresses[0]
    dropped = _dropped(r)
    assert sorted(dropped) == [3, 30]
    for q, reason in dropped.items():
        assert reason.startswith("executor failed: remote(") and where in reason
        assert reason.endswith(f"ValueError: saw the marker in query {q}"), reason


def test_inputs_a_worker_process_cannot_take_are_refused_before_the_run():
    count = 40
    transport_times()
    with LocalWorkers(1, "expect_inputs(case='mixed')", imports=[EXECUTORS]) as pool:
        spec = pool.spec(0)
        where = re.escape(
            f"workers[0].executor={servelab.make_executor(spec).describe()} -> "
            "expect_inputs(case='mixed') (models m): "
        )
        with pytest.raises(
            ValueError,
            match=where + r"inputs=array\(complex128, shape=\(40, 2\)\): dtype complex128 "
            r"cannot be sent to a worker process",
        ):
            servelab.serve(_scenario([spec]), inputs=np.zeros((count, 2), complex))
        with pytest.raises(
            ValueError,
            match=where + r"inputs=callable .*<lambda> returned \{'id': 0\} for query 0: a worker "
            r"process is sent numpy arrays and scalars only",
        ):
            servelab.serve(_scenario([spec]), inputs=lambda q: {"id": q})
        with pytest.raises(
            ValueError, match=r"has 10 rows \(one per query\) for a workload of count=40"
        ):
            servelab.serve(_scenario([spec]), inputs=np.zeros((10, 2)))
        assert len(transport_times()) == 0  # no batch was sent
        # A callable's later answer is checked when its batch runs: that batch fails alone.
        r = servelab.serve(
            _scenario([spec]),
            scheduler="fcfs",
            inputs=lambda q: "seven" if q == 7 else inputs("mixed", count)(q),
        )
        (reason,) = _dropped(r).values()
        assert list(_dropped(r)) == [7] and "returned 'seven' for query 7" in reason
        assert pool.processes[0].poll() is None


def test_a_worker_hosting_an_executor_that_makes_its_own_inputs_is_named():
    with LocalWorkers(1, "constant(latency_ms=1)") as pool:
        with pytest.raises(
            ValueError,
            match=r"inputs= is for executors that take inputs .*\(remote\(address=.* -> "
            r"constant\(latency_ms=1\)\) make their own",
        ):
            servelab.serve(_scenario([pool.spec(0)]), inputs=np.zeros((40, 2), np.float32))


# --- torchscript hosted in a worker process: float32 rows, as in-process ---------------------

needs_torch = pytest.mark.skipif(
    not backends.status("torch").usable,
    reason=f"torch backend not usable: {backends.status('torch').reason}",
)


def _marker_model(tmp_path) -> str:
    """A TorchScript linear layer of width 4 that raises on the marker value."""
    import torch

    class RejectsMarker(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.linear = torch.nn.Linear(4, 2)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            if bool((x == -7.0).any()):
                raise RuntimeError("saw the marker")
            return self.linear(x)

    path = tmp_path / "marker.pt"
    torch.jit.save(torch.jit.script(RejectsMarker()), str(path))
    return f"torchscript(path={str(path)!r})"


@needs_torch
def test_torchscript_in_a_worker_process_runs_the_users_rows(tmp_path):
    spec = _marker_model(tmp_path)
    rows = np.full((40, 4), 0.5, dtype=np.float32)
    rows[[3, 30]] = MARKER
    with LocalWorkers(1, spec) as pool:
        r = servelab.serve(_scenario([pool.spec(0)]), scheduler="fcfs", inputs=rows)
        assert sorted(_dropped(r)) == [3, 30] and "saw the marker" in _dropped(r)[3]
        by_callable = servelab.serve(
            _scenario([pool.spec(0)]),
            scheduler="fcfs",
            inputs=lambda q: np.full(4, MARKER if q == 5 else 0.0, np.float32),
        )
        assert list(_dropped(by_callable)) == [5]
        with pytest.raises(
            ValueError,
            match=r"-> torchscript\(.*\) \(models m\): takes float32 rows of 4 features; "
            r"inputs=array\(float64, shape=\(40, 4\)\) is not float32",
        ):
            servelab.serve(_scenario([pool.spec(0)]), inputs=np.zeros((40, 4)))
        with pytest.raises(ValueError, match=r"array\(float32, shape=\(40, 7\)\) has rows of"):
            servelab.serve(_scenario([pool.spec(0)]), inputs=np.zeros((40, 7), np.float32))


# --- malformed input sections from a raw socket ------------------------------------------------


def _hello() -> bytes:
    body = struct.pack("<qqQI", 0, 0, 1, 0) + struct.pack("<I", 0)  # any executor, not a probe
    return HEADER.pack(b"SLRW", VERSION, HELLO, 0, len(body)) + body


def _batch(input_section: bytes, input_count: int = 1) -> bytes:
    """One query (id 5, one item, no config) with ``input_section`` after it."""
    # model, items, counts (queries, sizes, config, inputs), padding bytes, flags; query id 5
    body = struct.pack("<qqIIIIII", 0, 1, 1, 0, 0, input_count, 0, 0) + struct.pack("<q", 5)
    body += input_section
    return HEADER.pack(b"SLRW", VERSION, BATCH, 1, len(body)) + body


def _input(dtype: int, shape: tuple, length: int, scalar: int = 0, data: bytes | None = None):
    head = struct.pack("<BBB", dtype, scalar, len(shape)) + struct.pack(f"<{len(shape)}q", *shape)
    return head + struct.pack("<I", length) + (b"\0" * length if data is None else data)


def _reply_to(address: str, data: bytes) -> tuple[int, str]:
    """Says hello, sends ``data`` and returns the batch reply's status and error text."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(10)
        s.connect(address.removeprefix("unix:"))
        s.sendall(_hello())
        fields = HEADER.unpack(_read(s, HEADER.size))
        assert fields[2] == HELLO_REPLY
        _read(s, fields[4])
        s.sendall(data)
        fields = HEADER.unpack(_read(s, HEADER.size))
        assert fields[2] == BATCH_REPLY
        body = _read(s, fields[4])
    status, _, _, length = struct.unpack_from("<IqqI", body)
    return status, body[24 : 24 + length].decode()


def _read(s: socket.socket, n: int) -> bytes:
    out = b""
    while len(out) < n:
        chunk = s.recv(n - len(out))
        assert chunk, f"connection closed after {len(out)} of {n} bytes"
        out += chunk
    return out


@pytest.mark.parametrize(
    ("section", "why"),
    [
        (_input(99, (2,), 8), "input 0 (query 5) dtype code=99 is not a dtype (1..12)"),
        (_input(11, (2,), 8, scalar=3), "input 0 (query 5) scalar=3 is neither 0 nor 1"),
        (_input(11, (1,) * 40, 4), "input 0 (query 5) ndim=40 is over 32"),
        (_input(11, (-3,), 0), "input 0 (query 5) shape has dimension -3 < 0"),
        (_input(12, (1 << 20, 1 << 20), 0), "shape=(1048576, 1048576) of float64 is over"),
        (_input(11, (2,), 12), "data length=12 is not the 8 bytes of shape=(2,) of float32"),
        (_input(11, (2,), 8, data=b"\0" * 3), "the body ends inside input data"),
        (b"", "the body ends inside input dtype"),  # no room for the section it announces
    ],
)
def test_a_malformed_input_section_is_named_and_the_worker_goes_on(section, why):
    with LocalWorkers(1, "expect_inputs(case='float_rows')", imports=[EXECUTORS]) as pool:
        status, error = _reply_to(pool.addresses[0], _batch(section))
        assert status == MALFORMED and why in error, error
        status, error = _reply_to(pool.addresses[0], _batch(b"", input_count=2))
        assert status == MALFORMED and "input count=2 is neither 0 nor the query count 1" in error
        r = servelab.serve(_scenario([pool.spec(0)]), inputs=inputs("float_rows", 40))
        assert pool.processes[0].poll() is None  # no crash
    assert r.summary()["completed"] == 40
