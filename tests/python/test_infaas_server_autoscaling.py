"""INFaaS's real server over time: the periodic monitor unloads idle instances after their load
latency, the Model-Autoscaler (the simulated policy's C++ decision) replicates or upgrades on a
burst, a worker whose executor fails is marked lost with every query still answered, an
instance slowed while co-located turns Interfered and back, offline work pauses above 40 %
online utilisation, and close() joins every thread. Faults and slowness are injected into the
loaded executors; waits are on conditions with generous bounds, nothing is timed."""

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


from servelab.systems.infaas.server import ServingError  # noqa: E402

from .infaas_server_support import (  # noqa: E402
    FAST,
    QUIET,
    wrap_runners,  # noqa: E402
)
from .infaas_server_support import decision_rows as _rows  # noqa: E402
from .infaas_server_support import slower_profile as _slower_profile  # noqa: E402
from .infaas_server_support import torch_out as _torch_out  # noqa: E402
from .infaas_server_support import wait_for as _wait_for  # noqa: E402
from .infaas_server_support import x_rows as _x  # noqa: E402
from .torch_models import save_mlp  # noqa: E402


@pytest.fixture(scope="module")
def mlp(tmp_path_factory):
    return save_mlp(tmp_path_factory.mktemp("mlp"), widths=(16, 32, 4), seed=3)


@pytest.fixture(scope="module")
def registry(mlp, tmp_path_factory):
    side, _ = save_mlp(tmp_path_factory.mktemp("side"), widths=(16, 8, 2), seed=4)
    reg = infaas.ModelRegistry()
    reg.register_model("mlp", mlp[0], app="rank", accuracy=0.8, batches=(1, 4), **FAST)
    reg.register_model("side", side, app="side", accuracy=0.5, batches=(1,), **FAST)
    return reg


class _Faults:
    """What the executors loaded on worker ``worker`` do to the variants of ``model``."""

    def __init__(self) -> None:
        self.mode = ""  # "", "raise", "exit" (the thread dies), "slow"
        self.worker = 0
        self.model = "mlp"


class _FaultyRunner:
    def __init__(self, runner, variant: str, faults: _Faults) -> None:
        self._runner, self._variant, self._faults = runner, variant, faults

    def forward(self, x):
        f = self._faults
        here = threading.current_thread().name == f"infaas-worker{f.worker}"
        if here and self._variant.startswith(f"{f.model}_"):
            if f.mode == "raise":
                raise RuntimeError("injected executor fault")
            if f.mode == "exit":
                raise SystemExit("injected thread death")
            if f.mode == "slow":
                time.sleep(0.05)
        return self._runner.forward(x)


@pytest.fixture
def faults(monkeypatch):
    state = _Faults()
    wrap_runners(monkeypatch, lambda runner, name: _FaultyRunner(runner, name, state))
    return state


# --- parameters -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"period_s": 0}, "period_s=0 must be a finite number > 0"),
        ({"period_s": -1.0}, "period_s=-1.0"),
        ({"period_s": float("nan")}, "period_s=nan"),
        ({"slack": 0.9}, "slack=0.9 must be a finite number >= 1"),
        ({"load_window_s": 0}, "load_window_s=0"),
        ({"period_s": 2.0, "load_window_s": 1.0}, "load_window_s=1.0 must be >= period_s=2.0"),
        ({"offline_util": 0}, "offline_util=0"),
        ({"offline_util": 1.5}, "offline_util=1.5"),
        ({"interference_tol": -0.1}, "interference_tol=-0.1"),
        ({"interference_floor_ms": -1}, "interference_floor_ms=-1"),
        ({"interference_floor_ms": float("inf")}, "interference_floor_ms=inf"),
        ({"lost_after": 0}, "lost_after=0 must be an integer >= 1"),
        ({"lost_after": 1.5}, "lost_after=1.5"),
        ({"autoscale": "yes"}, "autoscale='yes'"),
        ({"autoscaler": "foo"}, "autoscaler='foo' is not a scaling solver"),
        ({"autoscaler": 3}, "autoscaler=3 must be a scaling solver's name"),
    ],
)
def test_bad_parameters_raise_value_error_naming_the_parameter(registry, kwargs, message):
    before = {t for t in threading.enumerate() if t.name.startswith("infaas-")}
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        infaas.InfaasServer(registry, **kwargs)
    assert {t for t in threading.enumerate() if t.name.startswith("infaas-")} == before


def test_the_defaults_are_the_simulated_policys():
    policy = next(s for s in list_schedulers() if s["name"] == "infaas")
    default = {p["name"]: p["default"] for p in policy["params"]}
    settings = infaas.server.ServerSettings()
    assert settings.period_s == pytest.approx(float(default["autoscale_s"]))
    assert settings.slack == pytest.approx(float(default["slack"]))
    assert settings.load_window_s == pytest.approx(float(default["load_window_s"]))
    assert settings.offline_util == pytest.approx(float(default["offline_util"]))
    assert settings.interference_tol == pytest.approx(float(default["interference_tol"]))


# --- the decision the server shares with the simulated policy -------------------------------


def test_the_policys_scaling_decision_is_bound_with_its_checks():
    store = infaas.metadata_store(infaas.resnet50_variants())
    cpu = store.add_worker("cpu")
    store.add_worker("gpu")
    problem = _core.infaas.application_problem(store, "classification", 0.7, 50.0, 100.0)
    assert problem["load_qps"] == 100.0 and problem["slack_qps"] == pytest.approx(5.0)
    assert all(store.variant(n)["accuracy"] >= 0.7 for n in problem["names"])
    assert problem["running"] == [0] * len(problem["names"]) and problem["capacity"] == [1, 1]
    plan = _core.infaas.plan_scaling(problem)
    assert plan["feasible"] and sum(plan["delta"]) >= 1  # nothing runs: a new instance
    again = _core.infaas.plan_scaling(problem)  # deterministic (but for its solve time)
    assert {k: v for k, v in plan.items() if k != "solve_s"} == {
        k: v for k, v in again.items() if k != "solve_s"
    }
    first_cpu = next(n for n in problem["names"] if store.variant(n)["hardware"] == "cpu")
    store.load(first_cpu, cpu)
    running = _core.infaas.application_problem(store, "classification", 0.7, 50.0, 100.0)
    assert running["running"][running["names"].index(first_cpu)] == 1
    assert _core.infaas.application_problem(store, "classification", 0.99, 50.0, 1.0) is None
    for bad, message in [
        ({"slack": 0.5}, "slack=0.5 must be >= 1"),
        ({"load_qps": -1.0}, "load_qps=-1 must be >= 0"),
        ({"slo_ms": 0.0}, "slo_ms=0 must be > 0"),
        ({"accuracy": float("nan")}, "accuracy=nan"),
        ({"availability": [1.0, 1.5]}, r"availability\[1\]=1.5 must be in \[0, 1\]"),
    ]:
        args = {"task": "classification", "accuracy": 0.7, "slo_ms": 50.0, "load_qps": 1.0}
        with pytest.raises(ValueError, match=message):
            _core.infaas.application_problem(store, **{**args, **bad})
    with pytest.raises(KeyError, match="nope"):
        _core.infaas.application_problem(store, "nope", 0.7, 50.0, 1.0)


def test_the_bound_decision_takes_the_policys_solver_and_its_rule_while_loading():
    pytest.importorskip("servelab._lp", reason="autoscaler='ilp' needs the LP backend")
    store = infaas.metadata_store(infaas.resnet50_variants())
    cpu = store.add_worker("cpu")
    store.add_worker("gpu")
    problem = _core.infaas.application_problem(store, "classification", 0.7, 50.0, 100.0)
    names = problem["names"]
    greedy = _core.infaas.plan_scaling(problem)
    exact = _core.infaas.plan_scaling(problem, "ilp")
    assert greedy["feasible"] and exact["feasible"] and exact["strategy"] == "ilp"
    assert exact["objective"] <= greedy["objective"] + 1e-9  # the exact program's optimum
    # Loads under way: nothing runs yet, so no plan is replicas only and nothing goes ahead.
    for autoscaler in ("greedy", "ilp"):
        held = _core.infaas.plan_scaling(problem, autoscaler, loads_under_way=True)
        assert not held["replicas_only"] and not any(held["delta"])
    # With a CPU instance running and a load over it, only its replicas may go ahead.
    first_cpu = next(n for n in names if store.variant(n)["hardware"] == "cpu")
    store.load(first_cpu, cpu)
    busy = _core.infaas.application_problem(store, "classification", 0.7, 50.0, 1e4)
    for autoscaler in ("greedy", "ilp"):
        held = _core.infaas.plan_scaling(busy, autoscaler, loads_under_way=True)
        running = busy["running"]
        assert all(d <= 0 or running[i] > 0 for i, d in enumerate(held["delta"]))
        assert all(d >= 0 for d in held["delta"])
    with pytest.raises(ValueError, match="autoscaler='foo'"):
        _core.infaas.plan_scaling(problem, "foo")


# --- scaling --------------------------------------------------------------------------------


def test_an_idle_instance_is_unloaded_after_its_load_latency(registry, mlp):
    with infaas.InfaasServer(
        registry, workers={"cpu": 2}, period_s=0.1, load_window_s=0.2, **QUIET
    ) as server:
        first = server.online_query(_x(3), app="rank").record
        name, worker = first["variant"], first["worker"]
        _wait_for(lambda: _rows(server, "unload"), "an unload decision")
        unload = _rows(server, "unload")[0]
        assert (unload["variant"], unload["worker"]) == (name, worker)
        assert "remove" in unload["reason"] and "load latency" in unload["reason"]
        assert all(name not in w["loaded"] for w in server.workers)
        # The next query loads an instance again.
        again = server.online_query(_x(3), app="rank")
        assert again.record["kind"] == "inactive" and again.record["load_ms"] > 0
        np.testing.assert_allclose(again.outputs, _torch_out(mlp[1], _x(3)), rtol=1e-5, atol=1e-6)


def test_the_exact_program_scales_the_real_server_down_and_up(registry, mlp):
    pytest.importorskip("servelab._lp", reason="autoscaler='ilp' needs the LP backend")
    with infaas.InfaasServer(
        registry, workers={"cpu": 2}, period_s=0.1, load_window_s=0.2, autoscaler="ilp", **QUIET
    ) as server:
        assert server.settings.autoscaler == "ilp"
        first = server.online_query(_x(3), app="rank").record
        _wait_for(lambda: _rows(server, "unload"), "an unload decided by the exact program")
        unload = _rows(server, "unload")[0]
        assert (unload["variant"], unload["worker"]) == (first["variant"], first["worker"])
        assert unload["reason"].startswith("ilp: load") and "load latency" in unload["reason"]
        again = server.online_query(_x(3), app="rank")
        np.testing.assert_allclose(again.outputs, _torch_out(mlp[1], _x(3)), rtol=1e-5, atol=1e-6)


def test_a_burst_on_a_slow_variant_makes_the_autoscaler_replicate_or_upgrade(registry, mlp):
    slow = _slower_profile(registry, 1000.0)  # tens of ms per batch: ~100 items/s per instance
    xs, ys, stop = [], [], threading.Event()

    def client(seed: int) -> None:
        for i in range(50000):  # bounded; stops once the autoscaler decided
            if stop.is_set():
                return
            x = _x(1, seed=100000 * seed + i)
            ys.append(server.online_query(x, app="rank").outputs)
            xs.append(x)

    with infaas.InfaasServer(
        slow, workers={"cpu": 2}, period_s=0.2, load_window_s=0.4, **QUIET
    ) as server:
        # One instance first: the burst's queries then join it (Active) until the monitor acts.
        server.online_query(_x(1), app="rank")
        clients = [threading.Thread(target=client, args=(s,)) for s in range(2)]
        for c in clients:
            c.start()
        scaled = lambda: _rows(server, "replicate") + _rows(server, "upgrade")  # noqa: E731
        try:
            _wait_for(lambda: scaled() or not any(c.is_alive() for c in clients), "a scale-up")
        finally:
            stop.set()
            for c in clients:
                c.join()
        assert scaled(), server.decisions()
        decision = scaled()[0]
        assert "load" in decision["reason"] and "capacity" in decision["reason"]
        assert decision["variant"] in {v["name"] for v in slow.variants(app="rank")}
        _wait_for(
            lambda: (
                decision["variant"] in server.workers[decision["worker"]]["loaded"]
                or _rows(server, "unload")
            ),
            "the new instance loaded",
        )
    assert xs
    np.testing.assert_allclose(
        np.concatenate(ys), _torch_out(mlp[1], np.concatenate(xs)), rtol=1e-5, atol=1e-6
    )


# --- lost workers ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("mode", "why"),
    [("raise", "injected executor fault"), ("exit", "its thread died: SystemExit")],
)
def test_a_failing_worker_is_lost_and_every_query_is_answered(registry, mlp, faults, mode, why):
    faults.mode, faults.worker = mode, 0
    results, errors = [], []

    def client(seed: int) -> None:
        try:
            for i in range(6):
                x = _x(1 + i % 3, seed=100 * seed + i)
                results.append((x, server.online_query(x, app="rank")))
        except BaseException as e:  # noqa: BLE001  (reported below)
            errors.append(e)

    with infaas.InfaasServer(registry, workers={"cpu": 2}, lost_after=2, **QUIET) as server:
        clients = [threading.Thread(target=client, args=(s,)) for s in range(3)]
        for c in clients:
            c.start()
        for c in clients:
            c.join()
        assert not errors, errors
        lost = _rows(server, "lost")
        assert [r["worker"] for r in lost] == [0] and why in lost[0]["reason"]
        assert why in server.workers[0]["lost"] and not server.workers[0]["loaded"]
        assert _rows(server, "redispatch")
        after = server.online_query(_x(2), app="rank")  # getVariant skips the lost worker
        assert after.record["worker"] == 1
    assert len(results) == 18
    for x, out in results:
        assert out.record["worker"] == 1  # every answer came from the live worker
        np.testing.assert_allclose(out.outputs, _torch_out(mlp[1], x), rtol=1e-5, atol=1e-6)


def test_a_query_no_live_worker_can_serve_raises_naming_every_failure(registry, faults):
    faults.mode, faults.worker = "raise", 0
    with infaas.InfaasServer(registry, workers={"cpu": 1}, lost_after=1, **QUIET) as server:
        with pytest.raises(ServingError, match="injected executor fault") as info:
            server.online_query(_x(2), app="rank")
        assert "no live cpu worker" in str(info.value)
        with pytest.raises(ServingError, match="no live cpu worker"):
            server.online_query(_x(2), app="rank")
        assert server.workers[0]["lost"]


def test_an_offline_job_goes_on_when_its_worker_is_lost(registry, mlp, faults, tmp_path):
    faults.mode, faults.worker = "raise", 0
    (tmp_path / "in").mkdir()
    arrays = {f"x{i}": _x(5, seed=i) for i in range(3)}
    for name, x in arrays.items():
        np.save(tmp_path / "in" / f"{name}.npy", x)
    with infaas.InfaasServer(registry, workers={"cpu": 2}, lost_after=1, **QUIET) as server:
        job = server.offline_query(tmp_path / "in", tmp_path / "out", app="rank")
        assert job.wait(60) == "done", job.summary()
        assert job.worker == 1 and server.workers[0]["lost"]
    for name, x in arrays.items():
        out = np.load(tmp_path / "out" / f"{name}.npy")
        np.testing.assert_allclose(out, _torch_out(mlp[1], x), rtol=1e-5, atol=1e-6)


# --- states and offline throttling -------------------------------------------------------------


def test_a_slowed_colocated_instance_turns_interfered_and_back(registry, faults):
    faults.worker, faults.model = 0, "mlp"
    with infaas.InfaasServer(
        registry, workers={"cpu": 2}, period_s=0.2, interference_tol=20.0, autoscale=False
    ) as server:
        first = server.online_query(_x(1), app="rank").record
        assert first["worker"] == 0
        server.online_query(_x(1), model="side")  # a co-located instance
        faults.mode = "slow"
        name = first["variant"]
        hit = lambda: [r for r in _rows(server, "interfered") if r["worker"] == 0]  # noqa: E731
        for i in range(400):  # bounded: each slowed batch takes 50 ms
            if hit():
                break
            server.online_query(_x(1, seed=i), app="rank")
        assert hit(), server.decisions()
        assert hit()[0]["variant"] == name and "co-located" in hit()[0]["reason"]
        assert server.workers[0]["loaded"][name] == "interfered"
        # getVariant avoids it meanwhile: the next query goes elsewhere.
        assert server.online_query(_x(1), app="rank").record["worker"] == 1
        faults.mode = ""  # the interference stops: the monitor's probe measures it again
        back = lambda: [r for r in _rows(server, "active") if r["worker"] == 0]  # noqa: E731
        _wait_for(back, "the Interfered instance back to Active")
        assert back()[0]["variant"] == name and "within its profile" in back()[0]["reason"]
        assert server.workers[0]["loaded"][name] == "active"


def test_a_fraction_of_a_millisecond_over_a_tiny_profile_is_not_interference(registry):
    # 8x a 20 us profile is 0.14 ms more per batch: the Python call around the executor, not
    # co-location; 0.5 ms more per batch is over both the tolerance and the floor.
    with infaas.InfaasServer(registry, period_s=0.5, autoscale=False) as server:
        assert not server._slower_than_profile(0.00016, 0.00002, 1)
        assert server._slower_than_profile(0.00052, 0.00002, 1)
        assert not server._slower_than_profile(0.0104, 0.01, 1)  # 4 %: within the tolerance
    with infaas.InfaasServer(registry, period_s=0.5, autoscale=False, interference_floor_ms=0) as s:
        assert s._slower_than_profile(0.00016, 0.00002, 1)


def test_offline_work_pauses_above_the_online_utilisation_threshold(registry, tmp_path):
    # Each online row is predicted at seconds of work: one query per period keeps the online
    # utilisation far above 40 %, however slowly the client runs.
    slow = _slower_profile(registry, 1e5)
    inputs = tmp_path / "in"
    inputs.mkdir()
    for i in range(4):
        np.save(inputs / f"x{i}.npy", _x(2, seed=i))
    stop, sent = threading.Event(), []

    def online() -> None:
        while not stop.is_set() and len(sent) < 100000:
            sent.append(server.online_query(_x(1), app="rank").record["worker"])

    with infaas.InfaasServer(slow, period_s=2.0, autoscale=False, **QUIET) as server:
        load = threading.Thread(target=online)
        load.start()
        try:
            _wait_for(lambda: len(sent) > 0, "an online query")
            job = server.offline_query(inputs, tmp_path / "out", app="rank")
            _wait_for(lambda: _rows(server, "offline_pause"), "the offline pause")
            pause = _rows(server, "offline_pause")[0]
            assert "offline_util=0.4" in pause["reason"] and "online utilisation" in pause["reason"]
            held_at, seen = job.batches, len(sent)
            _wait_for(lambda: len(sent) >= seen + 20, "more online queries")
            assert job.batches == held_at and job.status == "running"
            # Cancelled while held back: it ends without writing.
            held = server.offline_query(inputs, tmp_path / "held", app="rank")
            held.cancel()
            assert held.wait(60) == "cancelled" and not list((tmp_path / "held").iterdir())
        finally:
            stop.set()
            load.join()
        assert job.wait(60) == "done", job.summary()  # the online load stopped: it resumes
        assert _rows(server, "offline_resume")
        assert len(list((tmp_path / "out").iterdir())) == 4


def test_close_joins_every_thread(registry, tmp_path):
    before = {t for t in threading.enumerate() if t.name.startswith("infaas-")}
    (tmp_path / "in").mkdir()
    for i in range(50):
        np.save(tmp_path / "in" / f"x{i}.npy", _x(8, seed=i))
    server = infaas.InfaasServer(registry, workers={"cpu": 2}, period_s=0.05, **QUIET)
    server.online_query(_x(2), app="rank")
    job = server.offline_query(tmp_path / "in", tmp_path / "out", app="rank")
    ours = {t for t in threading.enumerate() if t.name.startswith("infaas-")} - before
    assert {t.name for t in ours} >= {"infaas-worker0", "infaas-worker1", "infaas-monitor"}
    server.close()
    assert not any(t.is_alive() for t in ours)
    assert job.status in ("cancelled", "done")
    server.close()  # idempotent
    with pytest.raises(RuntimeError, match="closed"):
        server.online_query(_x(1), app="rank")
