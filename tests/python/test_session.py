"""servelab.Session: the serving loop fed by submissions. Every query is answered once (served,
or dropped with the reason), outputs are the executor's for that query's rows, the records are
serve()'s, and bad input is refused naming the field and value."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

import numpy as np
import pytest

import servelab
from servelab import backends
from servelab.results import COMPLETED, DROPPED
from servelab.session import Outcome, Session


def _profile(ms: float = 2.0) -> servelab.Profile:
    return servelab.profiles.from_dict(
        {
            "format": "servelab.profile",
            "version": 1,
            "hardware": {"cpu": {"price_per_hour": 1.0}},
            "models": {"m": {}},
            "latency": [
                {"hardware": "cpu", "model": "m", "batch": b, "samples_ms": [ms * (1 + b / 8)]}
                for b in (1, 8, 32)
            ],
        }
    )


def _scenario(workers: int = 2, **extra) -> dict:
    return {
        "profile": _profile(),
        "workers": [{"hardware": "cpu", "count": workers, **extra}],
        "workload": {
            "arrivals": "poisson(rate=100)",
            "count": 10,
            "apps": [{"name": "a", "slo_ms": 200}, {"name": "b", "slo_ms": 50}],
        },
        "drain_s": 10,
    }


@contextlib.contextmanager
def _registered(name: str, make) -> Iterator[str]:
    servelab.register_executor(name, make)
    try:
        yield name
    finally:
        servelab.unregister_executor(name)


def test_every_submitted_query_is_answered_and_recorded_like_serve():
    with Session(_scenario(), scheduler="fcfs", service="mean") as s:
        assert s.apps == ["a", "b"] and s.app_slo_ms("b") == 50.0
        futures = [s.submit(i % 2, size=1 + i % 3) for i in range(40)]
        outcomes = [f.result(timeout=30) for f in futures]
    r = s.result
    assert r is not None and len(r) == 40
    r.check_consistency()
    c = r.columns
    assert [o.id for o in outcomes] == list(range(40))  # ids in submission order
    for o in outcomes:
        assert isinstance(o, Outcome) and o.completed and o.reason == "" and o.output is None
        assert o.app == ("a", "b")[o.id % 2] and o.model == "m"
        # The outcome is the record: arrival, deadline, start, end and worker.
        assert o.arrival_s == c["arrival_ns"][o.id] / 1e9
        assert o.deadline_s - o.arrival_s == pytest.approx(s.app_slo_ms(o.app) / 1e3)
        assert o.start_s == c["start_ns"][o.id] / 1e9 and o.finish_s == c["finish_ns"][o.id] / 1e9
        assert o.worker == c["worker"][o.id]
        assert o.late == (c["finish_ns"][o.id] > c["deadline_ns"][o.id])
    assert np.all(c["status"] == COMPLETED)
    assert list(c["size"]) == [1 + i % 3 for i in range(40)]
    # Arrivals are the submissions' times, in order, and within the session.
    assert np.all(np.diff(c["arrival_ns"]) >= 0)
    assert r.meta["world"] == "serve"


def test_submissions_from_many_threads_are_all_answered_once():
    answered: list[int] = []
    lock = threading.Lock()
    with Session(_scenario(workers=3), scheduler="jsq") as s:

        def client(n: int) -> None:
            for _ in range(n):
                o = s.submit("a").result(timeout=30)
                with lock:
                    answered.append(o.id)

        threads = [threading.Thread(target=client, args=(25,)) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert sorted(answered) == list(range(100))
    assert len(s.result) == 100


def test_a_python_executor_returns_each_querys_output_rows():
    calls = []

    class Doubler:
        def run(self, batch):
            calls.append(list(batch.sizes))
            return [np.asarray(x) * 2 for x in batch.inputs]

    with (
        _registered("session_doubler", lambda: Doubler()),
        Session(_scenario(executor="session_doubler"), scheduler="fcfs") as s,
    ):
        xs = [np.arange(3 * k, dtype=np.float32).reshape(k, 3) for k in (1, 2, 4)]
        outs = [s.submit("a", x).result(timeout=30) for x in xs]
    for x, o in zip(xs, outs, strict=True):
        assert o.completed
        np.testing.assert_array_equal(o.output, x * 2)
    assert [sum(c) for c in calls] == [1, 2, 4]  # size is the rows of the inputs


def test_one_array_per_batch_is_split_by_the_queries_sizes():
    class RowSums:
        def run(self, batch):
            rows = np.concatenate(
                [np.asarray(x, dtype=np.float64).reshape(-1, 2) for x in batch.inputs]
            )
            return rows.sum(axis=1)

    # One batch of six queries: "batching" waits up to 200 ms for a fuller one.
    with (
        _registered("session_rowsums", lambda: RowSums()),
        Session(
            _scenario(workers=1, executor="session_rowsums"), scheduler="batching(timeout_ms=200)"
        ) as s,
    ):
        xs = [np.full((k, 2), k, dtype=np.float32) for k in (1, 3, 2, 5, 1, 4)]
        futures = [s.submit("a", x) for x in xs]
        outs = [f.result(timeout=30) for f in futures]
    assert s.result.columns["batch_queries"].tolist() == [6] * 6
    for x, o in zip(xs, outs, strict=True):
        np.testing.assert_array_equal(o.output, x.sum(axis=1))


def test_a_failing_executor_drops_its_batch_with_the_reason_and_serves_on():
    class FailsOnNegative:
        def run(self, batch):
            if any(float(np.asarray(x).min()) < 0 for x in batch.inputs):
                raise ValueError("negative input")
            return [np.asarray(x) for x in batch.inputs]

    with (
        _registered("session_fails", lambda: FailsOnNegative()),
        Session(_scenario(workers=1, executor="session_fails"), scheduler="fcfs") as s,
    ):
        bad = s.submit("a", np.array([[-1.0]], dtype=np.float32)).result(timeout=30)
        good = s.submit("a", np.array([[2.0]], dtype=np.float32)).result(timeout=30)
    assert bad.status == "dropped" and "negative input" in bad.reason
    assert bad.reason.startswith("executor failed: session_fails")
    assert bad.output is None and np.isnan(bad.latency_s)
    assert good.completed and good.output.tolist() == [[2.0]]
    assert s.result.columns["status"].tolist() == [DROPPED, COMPLETED]


def test_abort_drops_what_is_queued_or_running_and_answers_it():
    profile = _profile(ms=200.0)  # long batches: the queue is full when it aborts
    sc = _scenario(workers=1)
    sc["profile"] = profile
    s = Session(sc, scheduler="fcfs", service="mean")
    futures = [s.submit("a") for _ in range(5)]
    s.abort()
    outcomes = [f.result(timeout=30) for f in futures]
    r = s.close()
    assert all(o.status == "dropped" for o in outcomes)
    assert {o.reason for o in outcomes} == {"session stopped"}
    assert len(r) == 5 and np.all(r.columns["status"] == DROPPED)
    with pytest.raises(RuntimeError, match="closed"):
        s.submit("a")


def test_close_drains_what_was_submitted():
    sc = _scenario(workers=1)
    sc["profile"] = _profile(ms=20.0)
    s = Session(sc, scheduler="fcfs", service="mean")
    futures = [s.submit("a") for _ in range(6)]
    r = s.close()
    assert all(f.done() and f.result().completed for f in futures)
    assert len(r) == 6 and s.close() is r  # idempotent
    with pytest.raises(RuntimeError, match="submit: the serving session is closed"):
        s.submit("a")


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (
            lambda s: s.submit("nope"),
            ValueError,
            r"app='nope' is not one of the session's applications",
        ),
        (lambda s: s.submit(5), ValueError, r"app=5 is not an index"),
        (lambda s: s.submit(1.5), TypeError, r"app=1.5 must be"),
        (lambda s: s.submit("a", size=0), ValueError, r"size=0 must be in 1\.\."),
        (lambda s: s.submit("a", size=True), TypeError, r"size=True must be"),
        (
            lambda s: s.submit("a", np.zeros((3, 2)), size=2),
            ValueError,
            r"size=2 but inputs has 3 rows",
        ),
        (lambda s: s.submit("a", np.array(["x"])), ValueError, r"inputs=array\(<U1"),
    ],
)
def test_bad_submissions_are_refused_naming_the_field(call, error, match):
    with Session(_scenario(), scheduler="fcfs") as s:
        with pytest.raises(error, match=match):
            call(s)
        assert s.submit("a").result(timeout=30).completed  # the session serves on
    assert len(s.result) == 1


def test_a_querys_own_goals_replace_its_applications():
    profile = servelab.profiles.from_dict(
        {
            "format": "servelab.profile",
            "version": 1,
            "hardware": {"cpu": {"price_per_hour": 1.0}},
            "models": {"fast": {"accuracy": 0.6}, "good": {"accuracy": 0.9}},
            "latency": [
                {"hardware": "cpu", "model": m, "batch": 1, "samples_ms": [ms]}
                for m, ms in (("fast", 1.0), ("good", 3.0))
            ],
        }
    )
    sc = _scenario(workers=1)
    sc["profile"] = profile
    sc["workers"][0]["models"] = ["fast", "good"]
    with Session(sc, scheduler="infaas", service="mean") as s:
        plain = s.infer("a", timeout_s=30)
        strict = s.infer("a", slo_ms=20, accuracy=0.8, timeout_s=30)
    assert plain.deadline_s - plain.arrival_s == pytest.approx(0.2)
    assert strict.deadline_s - strict.arrival_s == pytest.approx(0.02)
    assert strict.completed and strict.model == "good"  # the only variant accurate enough
    c = s.result.columns
    assert c["accuracy"][strict.id] == pytest.approx(0.9)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"slo_ms": 0}, r"slo_ms=0 must be > 0"),
        ({"slo_ms": float("nan")}, r"slo_ms=nan must be > 0"),
        ({"accuracy": 1.5}, r"accuracy=1\.5 must be in \[0, 1\]"),
        ({"accuracy": -0.1}, r"accuracy=-0\.1 must be in \[0, 1\]"),
    ],
)
def test_bad_per_query_goals_are_refused(kwargs, match):
    with Session(_scenario(), scheduler="fcfs") as s:
        with pytest.raises(ValueError, match=match):
            s.submit("a", **kwargs)


@pytest.mark.parametrize(
    ("overrides", "match"),
    [
        ({"inputs": np.zeros((2, 2))}, "a session's inputs come with each submit"),
        ({"progress": True}, "a session has no known end"),
        ({"max_expected_duration_s": 5}, "a session lasts until it is closed"),
    ],
)
def test_serve_only_options_are_refused(overrides, match):
    with pytest.raises(ValueError, match=match):
        Session(_scenario(), **overrides)


def test_a_failing_scheduler_answers_every_query_and_close_raises():
    class Fails(servelab.Scheduler):
        def __init__(self):
            super().__init__()
            self.seen = 0

        def on_arrival(self, query, view, actions):
            self.seen += 1
            if self.seen == 3:
                raise RuntimeError("policy bug")
            actions.enqueue(query.id)

    s = Session(_scenario(workers=1), scheduler=Fails())
    futures = [s.submit("a") for _ in range(3)]
    outcomes = [f.result(timeout=30) for f in futures]
    # The policy queues and never dispatches: every query ends with the error as its reason.
    for o in outcomes:
        assert o.status == "dropped", o
        assert o.reason.startswith("the serving session failed: ") and "policy bug" in o.reason
    with pytest.raises(RuntimeError, match="policy bug"):
        s.close()


@pytest.mark.skipif(not backends.status("torch").usable, reason="torch backend not usable")
def test_torchscript_outputs_are_the_models_rows_for_each_query(tmp_path):
    import torch

    from .torch_models import save_mlp

    path, module = save_mlp(tmp_path)
    spec = f"torchscript(path={str(path)!r}, intra_op=1)"
    rng = np.random.default_rng(0)
    xs = [rng.standard_normal((k, 16)).astype(np.float32) for k in (1, 3, 2, 7)]
    with Session(_scenario(workers=1, executor=spec), scheduler="fcfs") as s:
        futures = [s.submit("a", x) for x in xs]
        one_row = s.submit("b", xs[0][0], size=3).result(timeout=30)  # (width,) repeated per item
        outs = [f.result(timeout=30) for f in futures]
    with torch.inference_mode():
        for x, o in zip(xs, outs, strict=True):
            assert o.completed and o.output.shape == (len(x), 4) and o.output.dtype == np.float32
            np.testing.assert_allclose(
                o.output, module(torch.from_numpy(x)).numpy(), rtol=1e-5, atol=1e-6
            )
        expected = module(torch.from_numpy(np.repeat(xs[0][:1], 3, axis=0))).numpy()
    np.testing.assert_allclose(one_row.output, expected, rtol=1e-5, atol=1e-6)
    # An input the executor cannot read is refused at submit: in a batch it would fail the
    # other clients' queries with it.
    with Session(_scenario(workers=1, executor=spec), scheduler="fcfs") as s:
        for bad in (np.zeros((2, 5), np.float32), np.zeros(16, np.float64), np.zeros((1, 2, 16))):
            with pytest.raises(ValueError, match=r"float32 rows of 16 features"):
                s.submit("a", bad)
        good = s.submit("a", xs[1]).result(timeout=30)
    assert good.completed and len(s.result) == 1


@pytest.mark.skipif(not backends.status("torch").usable, reason="torch backend not usable")
def test_a_remote_worker_process_returns_each_querys_output(tmp_path):
    import torch

    from servelab.worker_process import LocalWorkers

    from .torch_models import save_mlp

    path, module = save_mlp(tmp_path)
    rng = np.random.default_rng(1)
    xs = [rng.standard_normal((k, 16)).astype(np.float32) for k in (1, 3, 2)]
    with LocalWorkers(1, f"torchscript(path={str(path)!r}, intra_op=1)") as pool:
        with Session(_scenario(workers=1, executor=pool.spec(0)), scheduler="fcfs") as s:
            outs = [s.submit("a", x).result(timeout=60) for x in xs]
    with torch.inference_mode():
        for x, o in zip(xs, outs, strict=True):
            assert o.completed, o.reason
            np.testing.assert_allclose(
                o.output, module(torch.from_numpy(x)).numpy(), rtol=1e-5, atol=1e-6
            )
    assert np.all(s.result.columns["transport_ns"] >= 0)  # the batches went to the other process
