"""INFaaS's real server is one serving session of the C++ ``infaas`` policy: its parameters are
the policy's (bad values named, defaults shared), a hung executor is taken out by the serving
loop's ``batch_timeout_ms`` with its query answered once, the queries queued behind it placed
again and the other worker serving on, and the policy's VM-Autoscaler starts a worker that
serves when a busy worker asks for one (and not without ``max_workers``). Which variant each
query gets is compared with the simulator in test_infaas_session_agreement.py. Slowness and hangs
are injected into the loaded executors; waits poll conditions with generous bounds, nothing is
timed."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

import servelab
from servelab import backends, infaas
from servelab.schedulers import list_schedulers

if not backends.status("torch").usable:
    pytest.skip(
        f"torch backend not usable: {backends.status('torch').reason}", allow_module_level=True
    )

from servelab.systems.infaas.server import ServingError  # noqa: E402
from servelab.systems.infaas.server_settings import ServerSettings  # noqa: E402

from .infaas_server_support import (  # noqa: E402
    FAST,
    QUIET,
    decision_rows,
    slower_profile,
    torch_out,
    wait_for,
    wrap_runners,
    x_rows,
)
from .torch_models import save_mlp  # noqa: E402


@pytest.fixture(scope="module")
def mlp(tmp_path_factory):
    return save_mlp(tmp_path_factory.mktemp("mlp"), widths=(16, 32, 4), seed=3)


@pytest.fixture(scope="module")
def registry(mlp):
    reg = infaas.ModelRegistry()
    reg.register_model("mlp", mlp[0], app="rank", accuracy=0.8, batches=(1, 4), **FAST)
    return reg


def _executors() -> set[str]:
    return {e["name"] for e in servelab.list_executors() if e["name"].startswith("infaas_server")}


# --- parameters --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"period_s": 0}, "period_s=0 must be a finite number > 0"),
        ({"period_s": float("nan")}, "period_s=nan"),
        ({"slack": 0.9}, "slack=0.9 must be a finite number >= 1"),
        ({"period_s": 2.0, "load_window_s": 1.0}, "load_window_s=1.0 must be >= period_s=2.0"),
        ({"offline_util": 1.5}, "offline_util=1.5"),
        ({"interference_tol": -0.1}, "interference_tol=-0.1"),
        ({"interference_floor_ms": float("inf")}, "interference_floor_ms=inf"),
        ({"autoscale": "yes"}, "autoscale='yes'"),
        ({"autoscaler": "foo"}, "autoscaler='foo' is not a scaling solver"),
        ({"max_workers": 0}, "max_workers=0 must be an integer >= 1"),
        ({"max_workers": 1}, "max_workers=1 must be >= the 2 initial workers"),
        ({"startup_s": 0}, "startup_s=0 must be a finite number > 0"),
        ({"threshold": 1.5}, "threshold=1.5 must be a finite number > 0 and <= 1"),
        ({"batch_timeout_ms": 0}, "batch_timeout_ms=0 must be > 0 and finite"),
        ({"lost_after": 3}, "unexpected keyword argument 'lost_after'"),
    ],
)
def test_bad_parameters_are_named_and_leave_nothing_registered(registry, kwargs, message):
    error = TypeError if "unexpected" in message else ValueError
    with pytest.raises(error, match=message.replace("(", r"\(").replace(")", r"\)")):
        infaas.InfaasServer(registry, workers={"cpu": 2}, **kwargs)
    assert not _executors()


def test_the_defaults_are_the_simulated_policys_and_the_spec_carries_them(registry):
    policy = next(s for s in list_schedulers() if s["name"] == "infaas")
    default = {p["name"]: p["default"] for p in policy["params"]}
    s = ServerSettings()
    assert s.period_s == pytest.approx(float(default["autoscale_s"]))
    for name in ("slack", "load_window_s", "offline_util", "interference_tol", "startup_s",
                 "poll_s", "threshold", "idle_s"):  # fmt: skip
        assert getattr(s, name) == pytest.approx(float(default[name])), name
    assert s.autoscaler == default["autoscaler"] and s.max_workers is None
    with infaas.InfaasServer(registry, workers={"cpu": 2}, period_s=2, load_window_s=4) as server:
        spec = server.scheduler
        assert spec.startswith("infaas(") and "autoscale_s=2.0" in spec
        assert "load_window_s=4.0" in spec and "max_workers=0" in spec  # the VM-Autoscaler off
        assert "app_models='rank@*,rank@*,@mlp@*,@mlp@*'" in spec  # an app, a model, twins
        assert "offline_apps='1,3'" in spec and "warmup_batch=true" in spec
        assert server.online_query(x_rows(2), app="rank").outputs.shape == (2, 4)
    assert not _executors()


# --- a hung executor ---------------------------------------------------------------------------


class _Hang:
    """The first call blocks on ``release`` (at most 30 s, so that a failed test leaves no thread
    behind for long); the others run."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.calls = 0
        self.returned = threading.Event()
        self._lock = threading.Lock()

    def wrap(self, runner):
        hang = self

        class Runner:
            width = runner.width

            def forward(self, x):
                with hang._lock:
                    hang.calls += 1
                    first = hang.calls == 1
                if first:
                    hang.release.wait(30)
                    out = runner.forward(x)
                    hang.returned.set()
                    return out
                return runner.forward(x)

        return Runner()


def test_a_hung_executor_is_taken_out_and_its_query_answered_once(registry, mlp, monkeypatch):
    hang = _Hang()
    wrap_runners(monkeypatch, lambda runner, name: hang.wrap(runner))
    server = infaas.InfaasServer(registry, workers={"cpu": 2}, batch_timeout_ms=300, **QUIET)
    errors: list[BaseException] = []
    served: list = []  # queries sent while the first hangs: queued behind it, then placed again

    def send(rows: int, seed: int) -> None:
        try:
            served.append(server.online_query(x_rows(rows, seed=seed), app="rank"))
        except ServingError as e:
            errors.append(e)

    try:
        first = threading.Thread(target=send, args=(1, 0))
        first.start()
        wait_for(lambda: hang.calls, "the hung call")
        later = [threading.Thread(target=send, args=(1, s)) for s in range(1, 6)]
        for t in later:
            t.start()
        for t in [first, *later]:
            t.join(60)
        assert len(errors) == 1 and "batch_timeout_ms=300" in str(errors[0])
        assert len(served) == 5  # none of them lost with the worker
        # Some queued behind the hung batch: moved back by the loop, placed again by the policy.
        assert any(out.record["latency_ms"] > 200 for out in served)
        dropped = decision_rows(server, "dropped")
        assert len(dropped) == 1 and "batch_timeout_ms=300" in dropped[0]["reason"]
        hung = dropped[0]["worker"]
        assert all(out.record["worker"] != hung for out in served)
        for seed in range(6):  # the other worker serves on
            x = x_rows(1 + seed % 3, seed=seed)
            out = server.online_query(x, app="rank")
            assert out.record["worker"] != hung
            np.testing.assert_allclose(out.outputs, torch_out(mlp[1], x), rtol=1e-5, atol=1e-6)
    finally:
        t0 = time.monotonic()
        hang.release.set()  # the hung call returns late: its result must not answer again
        server.close()
        closed_in = time.monotonic() - t0
    assert closed_in < 20, closed_in  # a bound against hanging, not a timing
    assert hang.returned.wait(30)
    result = server.result
    assert len(result) == 12 and int((result.columns["status"] == 0).sum()) == 11
    assert not _executors()


# --- the VM-Autoscaler -------------------------------------------------------------------------


def _busy(server: infaas.InfaasServer, latency_ms: float, seconds: float) -> list[dict]:
    """Four clients sending back to back for ``seconds``; their records."""
    records: list[dict] = []
    errors: list[BaseException] = []
    end = time.monotonic() + seconds

    def client(seed: int) -> None:
        try:
            while time.monotonic() < end:
                out = server.online_query(x_rows(1, seed), app="rank", latency_ms=latency_ms)
                records.append(out.record)
        except BaseException as e:  # noqa: BLE001  (reported below)
            errors.append(e)

    threads = [threading.Thread(target=client, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors, errors
    return records


@pytest.fixture
def slow(registry, monkeypatch):
    """The registry's profile 1000x slower (tens of ms a batch) and executors that take about
    as long, so that queued queries are a predicted wait the VM-Autoscaler's rule 1 reads."""
    slowed = slower_profile(registry, 1000.0)
    by_name = {v["name"]: v for v in slowed.variants()}

    def wrap(runner, name):
        class Runner:
            width = runner.width

            def forward(self, x):
                time.sleep(by_name[name]["latency_ms"][len(x) - 1] / 1e3)
                return runner.forward(x)

        return Runner()

    wrap_runners(monkeypatch, wrap)
    return slowed


def test_a_busy_worker_makes_the_vm_autoscaler_start_one_that_serves(slow):
    fastest = min(v["latency_ms"][0] for v in slow.variants())
    vm = {"startup_s": 0.2, "poll_s": 0.1, "threshold": 0.5, "idle_s": 30}
    with infaas.InfaasServer(slow, max_workers=2, autoscale=False, **vm, **QUIET) as server:
        records = _busy(server, 3 * fastest, 3.0)
        wait_for(lambda: decision_rows(server, "add_worker"), "a started worker's first batch")
        started = decision_rows(server, "add_worker")
        assert [r["worker"] for r in started] == [1]
        assert any(r["worker"] == 1 for r in records)
        assert [w["worker"] for w in server.workers] == [0, 1]
        assert server.workers[1]["hardware"] == "cpu" and server.workers[1]["loaded"]
    # Without max_workers the same load stays on the one worker.
    with infaas.InfaasServer(slow, autoscale=False, **vm, **QUIET) as server:
        records = _busy(server, 3 * fastest, 1.5)
        assert {r["worker"] for r in records} == {0} and not decision_rows(server, "add_worker")
