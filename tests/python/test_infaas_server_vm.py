"""INFaaS's real server with its VM-Autoscaler (Sec. 4.2.3) and the Interfered mitigation
(Sec. 4.1): a busy worker makes rule 1 start a worker that serves once its start-up is over and
stops once idle, ``max_workers`` caps the workers, instances all Interfered make rule 2 start
one, and an Interfered instance migrates to it. Slowness is injected into the loaded executors
by worker thread; waits poll conditions with generous bounds, nothing is timed."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from servelab import _core, backends, infaas, list_schedulers

if not backends.status("torch").usable:
    pytest.skip(
        f"torch backend not usable: {backends.status('torch').reason}", allow_module_level=True
    )


from .infaas_server_support import (
    FAST,  # noqa: E402
    wrap_runners,  # noqa: E402
)
from .infaas_server_support import decision_rows as _rows  # noqa: E402
from .infaas_server_support import slower_profile as _slower_profile  # noqa: E402
from .infaas_server_support import torch_out as _torch_out  # noqa: E402
from .infaas_server_support import wait_for as _wait_for  # noqa: E402
from .infaas_server_support import x_rows as _x  # noqa: E402
from .torch_models import save_mlp  # noqa: E402

#: The VM-Autoscaler on a short clock: one worker more at most.
VM = {"max_workers": 2, "startup_s": 0.3, "poll_s": 0.2, "period_s": 0.1, "load_window_s": 0.2}


@pytest.fixture(scope="module")
def mlp(tmp_path_factory):
    return save_mlp(tmp_path_factory.mktemp("mlp"), widths=(16, 32, 4), seed=3)


@pytest.fixture(scope="module")
def side(tmp_path_factory):
    return save_mlp(tmp_path_factory.mktemp("side"), widths=(16, 8, 2), seed=4)


@pytest.fixture(scope="module")
def registry(mlp, side):
    """One CPU variant per model, so that getVariant has no other variant to fall back on."""
    reg = infaas.ModelRegistry()
    reg.register_model("mlp", mlp[0], app="rank", accuracy=0.8, batches=(1,), **FAST)
    reg.register_model("side", side[0], app="side", accuracy=0.5, batches=(1,), **FAST)
    return reg


class _Slowdown:
    """Which workers' executors of which models sleep ``sleep_s`` per batch."""

    def __init__(self) -> None:
        self.workers: set[int] = set()
        self.models: set[str] = set()
        self.sleep_s = 0.05


class _SlowRunner:
    def __init__(self, runner, variant: str, slow: _Slowdown) -> None:
        self._runner, self._model, self._slow = runner, variant.split("_")[0], slow

    def forward(self, x):
        s = self._slow
        here = {f"infaas-worker{w}" for w in s.workers}
        if threading.current_thread().name in here and self._model in s.models:
            time.sleep(s.sleep_s)
        return self._runner.forward(x)


def _only_the_sleeps_interfere(registry: infaas.ModelRegistry, slow: _Slowdown) -> dict:
    """Interference settings under which only the injected sleeps count, whatever the profile
    measured on a busy machine: a batch of these tiny models stalled for tens of milliseconds
    must not turn an unslowed instance Interfered (the floor), and a slowed batch sleeps twice
    what the monitor needs to see (the profile's p99 x (1 + tol), plus the floor)."""
    p99_ms = max(
        max(v["latency_ms"]) for v in _core.infaas.variants_from_profile(registry.profile(), "p99")
    )
    settings = {"interference_tol": 3.0, "interference_floor_ms": 50.0}
    need_ms = (1 + settings["interference_tol"]) * p99_ms + settings["interference_floor_ms"]
    slow.sleep_s = 2 * need_ms / 1e3
    return settings


@pytest.fixture
def slow(monkeypatch):
    state = _Slowdown()
    wrap_runners(monkeypatch, lambda runner, name: _SlowRunner(runner, name, state))
    return state


class _Clients:
    """Threads sending online queries in a closed loop until stopped; keeps (x, result)."""

    def __init__(self, server: infaas.InfaasServer, n: int, **goals) -> None:
        self.results: list = []
        self.errors: list = []
        self._stop = threading.Event()
        self._threads = [
            threading.Thread(target=self._run, args=(server, s, goals)) for s in range(n)
        ]
        for t in self._threads:
            t.start()

    def _run(self, server, seed: int, goals: dict) -> None:
        try:
            for i in range(100000):  # bounded; stopped by the test
                if self._stop.is_set():
                    return
                x = _x(1, seed=100000 * seed + i)
                self.results.append((x, server.online_query(x, **goals)))
        except BaseException as e:  # noqa: BLE001  (reported by the test)
            self.errors.append(e)

    def stop(self) -> None:
        self._stop.set()
        for t in self._threads:
            t.join()


# --- parameters -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"max_workers": 0}, "max_workers=0 must be an integer >= 1"),
        ({"max_workers": 2.5}, "max_workers=2.5"),
        ({"max_workers": True}, "max_workers=True"),
        ({"max_workers": 1}, "max_workers=1 must be >= the 2 initial workers"),
        ({"startup_s": -1}, "startup_s=-1 must be a finite number >= 0"),
        ({"startup_s": float("inf")}, "startup_s=inf"),
        ({"poll_s": 0}, "poll_s=0 must be a finite number > 0"),
        ({"threshold": 0}, "threshold=0 must be a finite number > 0 and <= 1"),
        ({"threshold": 1.5}, "threshold=1.5"),
        ({"idle_s": -0.5}, "idle_s=-0.5"),
        ({"batch_timeout_ms": 0}, "batch_timeout_ms=0 must be > 0 and finite"),
        ({"batch_timeout_ms": float("nan")}, "batch_timeout_ms=nan"),
        ({"batch_timeout_ms": "1"}, "batch_timeout_ms='1'"),
    ],
)
def test_bad_vm_parameters_raise_value_error_naming_the_parameter(registry, kwargs, message):
    before = {t for t in threading.enumerate() if t.name.startswith("infaas-")}
    with pytest.raises(ValueError, match=message):
        infaas.InfaasServer(registry, workers={"cpu": 2}, **kwargs)
    assert {t for t in threading.enumerate() if t.name.startswith("infaas-")} == before


def test_the_vm_defaults_are_the_simulated_policys():
    policy = next(s for s in list_schedulers() if s["name"] == "infaas")
    default = {p["name"]: p["default"] for p in policy["params"]}
    settings = infaas.server.ServerSettings()
    for name in ("startup_s", "poll_s", "threshold", "idle_s"):
        assert getattr(settings, name) == pytest.approx(float(default[name])), name
    assert settings.max_workers is None and settings.batch_timeout_ms is None  # off


def test_without_max_workers_the_workers_stay_fixed(registry, slow):
    slow.workers, slow.models = {0}, {"mlp"}
    with infaas.InfaasServer(
        registry, workers={"cpu": 1}, **{**VM, "max_workers": None}, interference_tol=1e6
    ) as server:
        clients = _Clients(server, 3, app="rank")
        try:
            _wait_for(lambda: len(clients.results) >= 30, "30 answers")  # 1.5 s busy
        finally:
            clients.stop()
        assert not clients.errors, clients.errors
        assert len(server.workers) == 1 and not _rows(server, "add_worker")


# --- rule 1, max_workers, idle_s ---------------------------------------------------------------


def test_rule_1_starts_a_worker_that_serves_and_stops_once_idle(registry, mlp, side, slow):
    # Every batch on either worker takes 50 ms: worker 0 busy with 'rank', worker 1 (once up)
    # with 'side', so rule 1 keeps holding and max_workers=2 alone stops a third worker.
    slow.workers, slow.models = {0, 1}, {"mlp", "side"}
    with infaas.InfaasServer(
        registry, workers={"cpu": 1}, **VM, idle_s=0.5, interference_tol=1e6
    ) as server:
        rank = _Clients(server, 3, app="rank")
        others = None
        try:
            _wait_for(lambda: _rows(server, "worker_ready"), "a started worker")
            add = _rows(server, "add_worker")[0]
            assert add["worker"] == 1 and add["reason"].startswith("rule 1: every live cpu")
            assert "threshold=0.8" in add["reason"] and "startup_s=0.3" in add["reason"]
            ready = _rows(server, "worker_ready")[0]
            assert ready["worker"] == 1 and ready["time_s"] - add["time_s"] >= 0.3 - 0.01
            # Worker 0 has queries queued: a new instance goes to the idle new worker.
            others = _Clients(server, 1, model="side")
            _wait_for(lambda: others.results, "an answer for 'side'")
            assert others.results[0][1].record["worker"] == 1
            assert server.workers[1]["status"] == "live"
            # Both workers busy (rule 1 holds): max_workers=2 starts no third one.
            seen = len(others.results)
            _wait_for(lambda: len(others.results) >= seen + 10, "10 more answers")  # >= 5 polls
            assert len(_rows(server, "add_worker")) == 1 and len(server.workers) == 2
        finally:
            rank.stop()
            if others is not None:
                others.stop()
        assert not rank.errors and not others.errors
        _wait_for(lambda: _rows(server, "remove_worker"), "the idle worker stopped")
        stop = _rows(server, "remove_worker")[0]
        assert stop["worker"] == 1 and "idle_s=0.5" in stop["reason"]
        workers = server.workers
        assert workers[1]["status"] == "stopped" and not workers[1]["loaded"]
        assert workers[0]["status"] == "live"  # an initial worker stays
        after = server.online_query(_x(2), model="side")  # served on the one left
        assert after.record["worker"] == 0
    assert {out.record["worker"] for _, out in others.results} == {1}
    for x, out in rank.results + others.results:
        module = mlp[1] if out.record["model"] == "mlp" else side[1]
        np.testing.assert_allclose(out.outputs, _torch_out(module, x), rtol=1e-5, atol=1e-6)


# --- the Model-Autoscaler's needs_vm ----------------------------------------------------------


def test_a_plan_needing_more_workers_starts_one_that_serves(registry, mlp):
    # A profile 1000x slower than the executor: a closed-loop client exceeds the one instance's
    # saturation throughput, and the replica the plan asks for has no worker to go to.
    # threshold=1 leaves the Model-Autoscaler's request (no utilisation or share is over 1).
    slow = _slower_profile(registry, 1000.0)
    with infaas.InfaasServer(
        slow, workers={"cpu": 1}, **VM, threshold=1.0, interference_tol=1e6
    ) as server:
        clients = _Clients(server, 2, app="rank")
        try:
            _wait_for(lambda: _rows(server, "add_worker"), "a started worker")
            add = _rows(server, "add_worker")[0]
            assert add["worker"] == 1 and add["reason"].startswith("needs_vm: ")
            assert "another cpu worker" in add["reason"]
            # The replica goes there: the Model-Autoscaler's, or getVariant's when the Overloaded
            # instance sends a query to a new one first.
            _wait_for(
                lambda: any(out.record["worker"] == 1 for _, out in clients.results[-50:]),
                "a query served on the new worker",
            )
        finally:
            clients.stop()
        assert not clients.errors, clients.errors
    for x, out in clients.results[-20:]:
        np.testing.assert_allclose(out.outputs, _torch_out(mlp[1], x), rtol=1e-5, atol=1e-6)


# --- rule 2 and the migration of Interfered instances ------------------------------------------


def test_rule_2_starts_a_worker_and_interfered_instances_migrate_to_it(registry, mlp, slow):
    # Both models slowed on worker 0 while co-located: every instance there turns Interfered.
    # threshold=1 leaves rule 2 alone (no utilisation is over 100 %).
    slow.workers, slow.models = {0}, {"mlp", "side"}
    with infaas.InfaasServer(
        registry,
        workers={"cpu": 1},
        **VM,
        threshold=1.0,
        **_only_the_sleeps_interfere(registry, slow),
    ) as server:
        assert server.online_query(_x(1), app="rank").record["worker"] == 0
        assert server.online_query(_x(1), model="side").record["worker"] == 0
        # Queries keep coming: each slowed batch takes slow.sleep_s (about 0.1 s).
        clients = [_Clients(server, 1, app="rank"), _Clients(server, 1, model="side")]
        try:
            _wait_for(lambda: _rows(server, "add_worker"), "a started worker")
            add = _rows(server, "add_worker")[0]
            assert add["worker"] == 1 and add["reason"].startswith("rule 2: every instance on cpu")
            hit = {r["variant"].split("_")[0] for r in _rows(server, "interfered")}
            assert hit == {"mlp", "side"}
            # Once worker 1 is up, the Interfered instances move there and leave worker 0 (or
            # leave at once if getVariant placed a new instance there first).
            moved = lambda: {r["variant"].split("_")[0] for r in _rows(server, "migrate")}  # noqa: E731
            _wait_for(lambda: moved() >= {"mlp", "side"}, "both migrations")
            for move in _rows(server, "migrate"):
                assert move["worker"] == 1 and "Interfered on worker 0" in move["reason"]
                name = move["variant"]
                gone = lambda n=name: n not in server.workers[0]["loaded"]  # noqa: E731
                _wait_for(gone, f"{name} moved")
                assert any(
                    r["variant"] == name
                    and r["worker"] == 0
                    and r["reason"].startswith("migrate: ")
                    for r in _rows(server, "unload")
                )
            x = _x(3, seed=7)
            out = server.online_query(x, app="rank")
            assert out.record["worker"] == 1 and out.record["model"] == "mlp"
            np.testing.assert_allclose(out.outputs, _torch_out(mlp[1], x), rtol=1e-5, atol=1e-6)
        finally:
            for c in clients:
                c.stop()
        for c in clients:
            assert not c.errors, c.errors
        assert len(server.workers) == 2  # max_workers=2


def test_an_interfered_instance_is_loaded_on_another_worker_and_leaves(registry, mlp, slow):
    # Two workers from the start: the monitor loads the variant on worker 1 in the period it
    # finds worker 0's instance Interfered, and retires that one once the new one is ready.
    with infaas.InfaasServer(
        registry,
        workers={"cpu": 2},
        period_s=0.1,
        load_window_s=0.2,
        **_only_the_sleeps_interfere(registry, slow),
    ) as server:
        first = server.online_query(_x(1), app="rank").record
        assert first["worker"] == 0
        server.online_query(_x(1), model="side")  # a co-located instance
        slow.workers, slow.models = {0}, {"mlp"}
        name = first["variant"]
        clients = _Clients(server, 1, app="rank")
        try:
            _wait_for(lambda: _rows(server, "migrate"), "a migration")
            move = _rows(server, "migrate")[0]
            assert (move["variant"], move["worker"]) == (name, 1)
            assert "Interfered on worker 0" in move["reason"]
            assert "least-loaded cpu worker without it" in move["reason"]
            _wait_for(lambda: name not in server.workers[0]["loaded"], "the instance moved")
            assert server.workers[1]["loaded"][name] == "active"
            unload = [r for r in _rows(server, "unload") if r["variant"] == name]
            assert unload[0]["worker"] == 0
            assert unload[0]["reason"] == f"migrate: replaced by {name!r} on worker 1"
            x = _x(3, seed=7)
            out = server.online_query(x, app="rank")
            assert out.record["worker"] == 1
            np.testing.assert_allclose(out.outputs, _torch_out(mlp[1], x), rtol=1e-5, atol=1e-6)
        finally:
            clients.stop()
        assert not clients.errors, clients.errors
        assert not _rows(server, "add_worker")  # max_workers defaults to the initial workers
