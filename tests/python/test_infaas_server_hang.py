"""INFaaS's real server with an executor that hangs (never returns while the test holds it):
``batch_timeout_ms`` marks its worker lost, the hung query and the worker's queue are answered
by the other worker exactly once, close() returns without the stuck thread, and the hung call's
late result is discarded. Waits poll conditions with generous bounds, nothing is timed."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from servelab import backends, infaas

if not backends.status("torch").usable:
    pytest.skip(
        f"torch backend not usable: {backends.status('torch').reason}", allow_module_level=True
    )


from .infaas_server_support import (  # noqa: E402
    FAST,
    QUIET,
    wrap_runners,  # noqa: E402
)
from .infaas_server_support import decision_rows as _rows  # noqa: E402
from .infaas_server_support import torch_out as _torch_out  # noqa: E402
from .infaas_server_support import wait_for as _wait_for  # noqa: E402
from .infaas_server_support import x_rows as _x  # noqa: E402
from .torch_models import save_mlp  # noqa: E402


@pytest.fixture(scope="module")
def mlp(tmp_path_factory):
    return save_mlp(tmp_path_factory.mktemp("mlp"), widths=(16, 32, 4), seed=3)


@pytest.fixture(scope="module")
def registry(mlp):
    reg = infaas.ModelRegistry()
    reg.register_model("mlp", mlp[0], app="rank", accuracy=0.8, batches=(1, 4), **FAST)
    return reg


class _Hang:
    """Worker 0's executors block on ``release`` (at most ``bound_s``, so that a failed test
    leaves no thread behind for long); ``calls`` counts the calls that hung."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.bound_s = 30.0
        self.calls = 0
        self.returned = threading.Event()


class _HangingRunner:
    def __init__(self, runner, hang: _Hang) -> None:
        self._runner, self._hang = runner, hang

    def forward(self, x):
        h = self._hang
        if threading.current_thread().name == "infaas-worker0" and not h.release.is_set():
            h.calls += 1
            h.release.wait(h.bound_s)
            out = self._runner.forward(x)
            h.returned.set()
            return out
        return self._runner.forward(x)


@pytest.fixture
def hang(monkeypatch):
    state = _Hang()
    wrap_runners(monkeypatch, lambda runner, name: _HangingRunner(runner, state))
    yield state
    state.release.set()


def test_a_hanging_executor_loses_its_worker_and_every_query_is_answered_once(registry, mlp, hang):
    results, errors = [], []

    def client(seed: int) -> None:
        try:
            for i in range(5):
                x = _x(1 + i % 3, seed=100 * seed + i)
                results.append((x, server.online_query(x, app="rank")))
        except BaseException as e:  # noqa: BLE001  (reported below)
            errors.append(e)

    server = infaas.InfaasServer(
        registry, workers={"cpu": 2}, period_s=0.1, batch_timeout_ms=300, **QUIET
    )
    try:
        # The first query goes to worker 0 (the least utilised, lowest id) and hangs there;
        # the clients' queries queue behind it or go to worker 1.
        first = threading.Thread(target=client, args=(0,))
        first.start()
        _wait_for(lambda: hang.calls, "the hung call")
        clients = [threading.Thread(target=client, args=(s,)) for s in range(1, 4)]
        for c in clients:
            c.start()
        for c in [first, *clients]:
            c.join(60)
        assert not errors, errors
        lost = _rows(server, "lost")
        assert [r["worker"] for r in lost] == [0]
        assert "batch_timeout_ms=300" in lost[0]["reason"] and "mlp_" in lost[0]["reason"]
        assert "on worker 0 has run" in lost[0]["reason"]
        assert server.workers[0]["status"] == "lost"
        redispatched = _rows(server, "redispatch")
        assert redispatched and "batch_timeout_ms=300" in redispatched[0]["reason"]
        assert server.online_query(_x(2), app="rank").record["worker"] == 1
    finally:
        t0 = time.monotonic()
        server.close()  # worker 0's thread still hangs: abandoned, not joined
        closed_in = time.monotonic() - t0
    assert closed_in < 20, closed_in  # a bound against hanging, not a timing
    assert hang.calls == 1
    assert len(results) == 20  # every query answered once, none lost
    for x, out in results:
        assert out.record["worker"] == 1
        np.testing.assert_allclose(out.outputs, _torch_out(mlp[1], x), rtol=1e-5, atol=1e-6)
    # The hung call returns late: its result is discarded, not given to the query again.
    hang.release.set()
    assert hang.returned.wait(30)
    _wait_for(lambda: _rows(server, "discarded"), "the late result discarded")
    late = _rows(server, "discarded")
    assert (
        len(late) == 1
        and late[0]["worker"] == 0
        and "once its worker was lost" in late[0]["reason"]
    )
    assert len(results) == 20


def test_a_hang_of_an_offline_batch_moves_the_job_to_another_worker(registry, mlp, hang, tmp_path):
    (tmp_path / "in").mkdir()
    arrays = {f"x{i}": _x(5, seed=i) for i in range(3)}
    for name, x in arrays.items():
        np.save(tmp_path / "in" / f"{name}.npy", x)
    with infaas.InfaasServer(
        registry, workers={"cpu": 2}, period_s=0.1, batch_timeout_ms=200, **QUIET
    ) as server:
        job = server.offline_query(tmp_path / "in", tmp_path / "out", app="rank")
        assert job.wait(60) == "done", job.summary()
        assert server.workers[0]["status"] == "lost" and job.worker == 1
    for name, x in arrays.items():
        out = np.load(tmp_path / "out" / f"{name}.npy")
        np.testing.assert_allclose(out, _torch_out(mlp[1], x), rtol=1e-5, atol=1e-6)


def test_without_batch_timeout_a_slow_batch_is_waited_for(registry, mlp, hang):
    # The default: no timeout, a batch of a few hundred ms is served where it runs.
    with infaas.InfaasServer(registry, workers={"cpu": 2}, period_s=0.1, **QUIET) as server:
        timer = threading.Timer(0.5, hang.release.set)
        timer.start()
        x = _x(2)
        out = server.online_query(x, app="rank")
        timer.join()
        assert out.record["worker"] == 0 and not _rows(server, "lost")
        np.testing.assert_allclose(out.outputs, _torch_out(mlp[1], x), rtol=1e-5, atol=1e-6)
