"""INFaaS's real-serving API: register_model (variants profiled on the real executors, persisted),
online_query (getVariant's choice run on a worker, outputs checked against torch), offline_query
(folders of .npy served from spare capacity, throttled by online latency), the CLI, and every kind
of bad input as a clear exception or an explicit result."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from servelab import backends, infaas, recsys
from servelab.cli import main
from servelab.systems.infaas import api

if not backends.status("torch").usable:
    pytest.skip(
        f"torch backend not usable: {backends.status('torch').reason}", allow_module_level=True
    )

import torch  # noqa: E402  (only once the backend is known to be usable)

from .torch_models import save_mlp  # noqa: E402

FAST = {"batches": (1, 4), "threads": (1, 2), "repeats": 2, "warmup": 1}


def _torch_out(module: torch.nn.Module, x: np.ndarray) -> np.ndarray:
    with torch.no_grad():
        return module(torch.from_numpy(x)).numpy()


@pytest.fixture(scope="module")
def mlp(tmp_path_factory):
    folder = tmp_path_factory.mktemp("mlp")
    path, module = save_mlp(folder, widths=(16, 32, 4), seed=3)
    return path, module


@pytest.fixture(scope="module")
def registry(mlp):
    reg = infaas.ModelRegistry()
    reg.register_model("mlp", mlp[0], app="rank", accuracy=0.8, **FAST)
    return reg


def _x(rows: int, width: int = 16, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).uniform(-1, 1, (rows, width)).astype(np.float32)


# --- registration -----------------------------------------------------------------------------


def test_register_model_profiles_one_variant_per_batch_and_thread_setting(registry):
    variants = registry.variants(app="rank")
    cpu = sorted(v["name"] for v in variants)
    assert cpu == [f"mlp_torchscript_cpu_b{b}_t{t}" for b in (1, 4) for t in (1, 2)]
    for v in variants:
        assert len(v["latency_ms"]) == v["batch_opt"]  # profiled up to the batch it serves
        assert all(ms > 0 for ms in v["latency_ms"])
        assert v["load_s"] > 0 and v["memory_mb"] > 0
        assert v["accuracy"] == pytest.approx(0.8) and v["task"] == "rank"
        assert (
            v["executor"].startswith("torchscript(") and f"intra_op={v['threads']}" in v["executor"]
        )
    # A CPU variant costs its threads: two threads, twice the price.
    by = {v["name"]: v for v in variants}
    assert by["mlp_torchscript_cpu_b1_t2"]["cost_per_s"] == pytest.approx(
        2 * by["mlp_torchscript_cpu_b1_t1"]["cost_per_s"]
    )
    gpu_skipped = [s for s in registry.skipped if "cuda" in s["variant"]]
    if torch.cuda.is_available():
        assert not gpu_skipped
    else:
        assert gpu_skipped and all("no CUDA GPU" in s["reason"] for s in gpu_skipped)


def test_frozen_variants_are_opt_in_and_serve_the_same_outputs(tmp_path):
    path, module = save_mlp(tmp_path, widths=(16, 8, 3), seed=7)
    reg = infaas.ModelRegistry()
    out = reg.register_model(
        "m", path, app="a", accuracy=0.6, batches=(2,), threads=(1,), repeats=2,
        frameworks=["torchscript-frozen"], frozen_dir=tmp_path,
    )  # fmt: skip
    assert out["variants"] == ["m_torchscript-frozen_cpu_b2_t1"]
    assert (tmp_path / "m.frozen.pt").is_file()
    x = _x(5)
    with infaas.InfaasServer(reg) as server:
        res = server.online_query(x, model="m")
        assert res.record["variant"] == "m_torchscript-frozen_cpu_b2_t1"
        assert res.record["batches"] == 3
        np.testing.assert_allclose(res.outputs, _torch_out(module, x), rtol=1e-5, atol=1e-6)
    # By default no frozen variant is made (it writes a file).
    plain = infaas.ModelRegistry().register_model(
        "n", path, accuracy=0.5, batches=(1,), threads=(1,), repeats=1
    )
    assert plain["variants"] == ["n_torchscript_cpu_b1_t1"]


def test_registry_round_trips_through_its_json_file(registry, tmp_path):
    path = tmp_path / "reg.json"
    registry.save(path)
    same = infaas.ModelRegistry.load(path)
    assert same.variants() == registry.variants()
    assert same.models == registry.models
    goals = {"app": "rank", "accuracy": 0.5, "latency_ms": 1.0, "batch": 4}
    assert same.get_variant(**goals) == registry.get_variant(**goals)
    # The file holds a native servelab profile: the profile reader takes it as is.
    data = json.loads(path.read_text())
    assert infaas.ModelRegistry.from_dict(data).profile() == registry.profile()


def test_a_registry_file_with_a_bad_field_is_named(registry, tmp_path):
    data = registry.to_dict()
    data["variants"][0]["batch_opt"] = 0
    with pytest.raises(ValueError, match=r"variants\[0\]\.batch_opt=0"):
        infaas.ModelRegistry.from_dict(data)
    data = registry.to_dict()
    data["models"]["mlp"]["accuracy"] = 1.5
    with pytest.raises(ValueError, match=r"accuracy=1.5"):
        infaas.ModelRegistry.from_dict(data)
    (tmp_path / "bad.json").write_text('{"format": "nope"}')
    with pytest.raises(ValueError, match="format='nope'"):
        infaas.ModelRegistry.load(tmp_path / "bad.json")


def test_register_model_rejects_bad_input_naming_the_field(registry, mlp, tmp_path):
    reg = infaas.ModelRegistry()
    with pytest.raises(ValueError, match="accuracy=1.2"):
        reg.register_model("m", mlp[0], accuracy=1.2)
    with pytest.raises(ValueError, match="batches"):
        reg.register_model("m", mlp[0], accuracy=0.5, batches=(0, 4))
    with pytest.raises(ValueError, match="repeats=0"):
        reg.register_model("m", mlp[0], accuracy=0.5, repeats=0)
    with pytest.raises(ValueError, match=r"prices\['cpu'\]=-1"):
        reg.register_model("m", mlp[0], accuracy=0.5, prices={"cpu": -1})
    with pytest.raises(ValueError, match="scale=0"):
        reg.register_model("m", "rm1", accuracy=0.5, scale=0)
    with pytest.raises(ValueError, match="neither a TorchScript file"):
        reg.register_model("m", "no_such_model", accuracy=0.5)
    with pytest.raises(ValueError, match="frameworks"):
        reg.register_model("m", mlp[0], accuracy=0.5, frameworks=["recsys-onednn"])
    corrupt = tmp_path / "corrupt.pt"
    corrupt.write_bytes(b"not a torchscript archive")
    with pytest.raises(ValueError, match="corrupt.pt"):
        reg.register_model("m", corrupt, accuracy=0.5)
    with pytest.raises(ValueError, match="already registered"):
        registry.register_model("mlp", mlp[0], accuracy=0.5, **FAST)
    narrow, _ = save_mlp(tmp_path, widths=(8, 4), seed=1)
    with pytest.raises(ValueError, match="same inputs"):
        registry.register_model("narrow", narrow, app="rank", accuracy=0.5, **FAST)
    assert len(reg) == 0 and "narrow" not in registry.models


# --- online queries -----------------------------------------------------------------------------


def test_online_query_runs_getvariants_choice_and_matches_torch(registry, mlp):
    x = _x(10)
    with infaas.InfaasServer(registry, workers={"cpu": 2}) as server:
        expected = registry.metadata_store({"cpu"})
        expected.add_worker("cpu"), expected.add_worker("cpu")
        choice = expected.get_variant(task="rank", accuracy=0.5, latency_ms=50, batch=4)
        first = server.online_query(x, app="rank", latency_ms=50, accuracy=0.5)
        np.testing.assert_allclose(first.outputs, _torch_out(mlp[1], x), rtol=1e-5, atol=1e-6)
        r = first.record
        assert set(r) == set(infaas.server.RECORD_KEYS)
        assert (r["variant"], r["worker"], r["kind"]) == (
            choice["variant"], choice["worker"], choice["kind"]
        )  # fmt: skip
        assert r["load_ms"] > 0 and r["latency_ms"] >= r["exec_ms"] > 0
        batch_opt = {v["name"]: v["batch_opt"] for v in registry.variants()}[r["variant"]]
        assert r["batches"] == -(-10 // batch_opt)  # 10 rows in batches of batch_opt
        again = server.online_query(x, app="rank", latency_ms=50, accuracy=0.5)
        assert again.record["kind"] == "active" and again.record["load_ms"] == 0
        assert server.workers[again.record["worker"]]["loaded"][again.record["variant"]] in (
            "active", "overloaded"
        )  # fmt: skip
        by_model = server.online_query(x[:1], model="mlp")  # one row ([1, 16]; 1-D is refused)
        np.testing.assert_allclose(by_model.outputs, _torch_out(mlp[1], x[:1]), rtol=1e-5)


def test_unsatisfiable_goals_serve_the_closest_variant_with_the_reason(registry, mlp):
    x = _x(3)
    with infaas.InfaasServer(registry) as server:
        out = server.online_query(x, app="rank", latency_ms=1e-6, accuracy=0.99)
        assert out.record["kind"] == "closest"
        assert "accuracy >= 0.99" in out.record["reason"]
        np.testing.assert_allclose(out.outputs, _torch_out(mlp[1], x), rtol=1e-5, atol=1e-6)
        poor = server.online_query(x, app="rank", cost=1e-12)
        assert poor.record["kind"] == "closest" and "cost=1e-12" in poor.record["reason"]
        one_thread = min(v["cost_per_s"] for v in registry.variants())
        cheap = server.online_query(x, app="rank", cost=one_thread)
        assert cheap.record["cost_per_s"] <= one_thread and cheap.record["variant"].endswith("_t1")


def test_online_query_bad_input_is_a_clear_exception(registry):
    with infaas.InfaasServer(registry) as server:
        with pytest.raises(KeyError, match="app='nope' is not registered"):
            server.online_query(_x(1), app="nope")
        with pytest.raises(KeyError, match="model='nope' is not registered"):
            server.online_query(_x(1), model="nope")
        with pytest.raises(ValueError, match="exactly one of app= and model="):
            server.online_query(_x(1), app="rank", model="mlp")
        with pytest.raises(ValueError, match=r"shape \[2, 7\]; the model takes \[rows >= 1, 16\]"):
            server.online_query(_x(2, width=7), app="rank")
        with pytest.raises(ValueError, match="accuracy=2"):
            server.online_query(_x(1), app="rank", accuracy=2)
        with pytest.raises(ValueError, match="latency_ms=-1"):
            server.online_query(_x(1), app="rank", latency_ms=-1)
        ok = server.online_query(_x(2), app="rank")  # the server goes on after bad queries
        assert ok.outputs.shape == (2, 4)
    with pytest.raises(RuntimeError, match="closed"):
        server.online_query(_x(1), app="rank")
    with pytest.raises(ValueError, match="workers"):
        infaas.InfaasServer(registry, workers={"tpu": 1})


def test_a_variant_that_fails_to_load_is_named_and_the_server_goes_on(mlp, tmp_path):
    path, module = save_mlp(tmp_path, widths=(16, 8, 2), seed=5)
    reg = infaas.ModelRegistry()
    reg.register_model("fragile", path, app="a", accuracy=0.7, **FAST)
    good = path.read_bytes()
    path.write_bytes(b"corrupted after registration")
    with infaas.InfaasServer(reg) as server:
        with pytest.raises(infaas.VariantLoadError, match=r"variant 'fragile_torchscript_cpu_b"):
            server.online_query(_x(2), app="a")
        assert all(not w["loaded"] and w["queued_s"] == 0 for w in server.workers)
        path.write_bytes(good)
        out = server.online_query(_x(2), app="a")
        np.testing.assert_allclose(out.outputs, _torch_out(module, _x(2)), rtol=1e-5, atol=1e-6)


def test_a_busy_instance_turns_overloaded_and_the_query_goes_elsewhere(registry):
    x = _x(2)
    # A long period: the monitor's rules (tested in test_infaas_server_autoscaling.py) stay out.
    with infaas.InfaasServer(registry, workers={"cpu": 2}, period_s=60, load_window_s=60) as server:
        first = server.online_query(x, app="rank", latency_ms=50).record
        busy = server._workers[first["worker"]]
        with server._lock:  # as if 10 s of work were queued on that worker
            busy.queued_s = 10.0
            server._store.set_utilisation(busy.id, 10.0)
        second = server.online_query(x, app="rank", latency_ms=50).record
        assert second["worker"] != busy.id
        assert server.workers[busy.id]["loaded"][first["variant"]] == "overloaded"
        with server._lock:
            busy.queued_s = 0.0
            server._store.set_utilisation(busy.id, 0.0)


def test_concurrent_online_queries_all_complete_with_correct_outputs(registry, mlp):
    results: dict[int, np.ndarray] = {}
    errors: list[BaseException] = []

    def client(seed: int) -> None:
        try:
            for i in range(5):
                x = _x(1 + (seed + i) % 6, seed=100 * seed + i)
                out = server.online_query(x, app="rank", latency_ms=20)
                results[100 * seed + i] = (x, out.outputs)
        except BaseException as e:  # noqa: BLE001  (reported below)
            errors.append(e)

    with infaas.InfaasServer(registry, workers={"cpu": 2}) as server:
        threads = [threading.Thread(target=client, args=(s,)) for s in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert all(w["queued_s"] == 0 for w in server.workers)
    assert not errors and len(results) == 20
    for x, y in results.values():
        np.testing.assert_allclose(y, _torch_out(mlp[1], x), rtol=1e-5, atol=1e-6)


# --- offline queries ----------------------------------------------------------------------------


def test_offline_query_writes_outputs_and_reports_bad_files(registry, mlp, tmp_path):
    inputs = tmp_path / "in"
    inputs.mkdir()
    arrays = {f"q{i}": _x(3 + 4 * i, seed=i) for i in range(3)}
    for name, x in arrays.items():
        np.save(inputs / f"{name}.npy", x)
    np.save(inputs / "wide.npy", _x(2, width=9))
    (inputs / "junk.npy").write_bytes(b"not numpy")
    with infaas.InfaasServer(registry) as server:
        job = server.offline_query(inputs, tmp_path / "out", app="rank", accuracy=0.5)
        assert job.wait(60) == "failed"  # two bad files; the others done
    s = job.summary()
    assert (s["done"], s["total"]) == (3, 5)
    assert "shape [2, 9]" in s["errors"]["wide.npy"] and "junk.npy" in s["errors"]
    for name, x in arrays.items():
        out = np.load(tmp_path / "out" / f"{name}.npy")
        np.testing.assert_allclose(out, _torch_out(mlp[1], x), rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="is not a folder"):
        server.offline_query(tmp_path / "missing", tmp_path / "o", app="rank")


def test_offline_batches_wait_while_online_latency_exceeds_the_profile(registry, tmp_path):
    inputs = tmp_path / "in"
    inputs.mkdir()
    np.save(inputs / "x.npy", _x(9))
    # A long period: the slow online batch below stays in the throttle's window until reset.
    with infaas.InfaasServer(registry, period_s=60, load_window_s=60) as server:
        with pytest.raises(ValueError, match="no .npy"):
            server.offline_query(tmp_path, tmp_path / "o", model="mlp")
        with server._lock:  # an online batch slower than its profile, as the worker records it
            server._slow_online_at = server._now()
        job = server.offline_query(inputs, tmp_path / "out", model="mlp")
        time.sleep(0.3)
        assert job.status == "running" and job.batches == 0
        pause = server.decisions()
        assert pause["action"] == ["offline_pause"] and "profiled p99" in pause["reason"][0]
        with server._lock:
            server._slow_online_at = -float("inf")
        assert job.wait(30) == "done" and job.batches >= 1
        assert server.decisions()["action"][-1] == "offline_resume"
        # Cancelled while held back: the job ends without writing.
        with server._lock:
            server._slow_online_at = server._now()
        held = server.offline_query(inputs, tmp_path / "out2", model="mlp")
        held.cancel()
        assert held.wait(30) == "cancelled" and not (tmp_path / "out2" / "x.npy").exists()


# --- recommendation models, the module-level API, the CLI -----------------------------------


def test_a_builtin_recsys_model_serves_the_same_scores_as_recsys(tmp_path):
    frameworks = ["recsys-reference"]
    if backends.status("onednn").usable:
        frameworks.append("recsys-onednn")
    reg = infaas.ModelRegistry()
    out = reg.register_model(
        "rm1", "rm1", app="ctr", accuracy=0.7, batches=(1, 4), threads=(1,),
        frameworks=frameworks, repeats=2, warmup=1,
    )  # fmt: skip
    assert out["variants"] == [f"rm1_{f}_cpu_b{b}_t1" for f in frameworks for b in (1, 4)]
    model = recsys.build("rm1", backend="reference")
    dense, sparse = model.inputs(6, seed=4)
    expected = model.run(dense, sparse)
    with infaas.InfaasServer(reg) as server:
        res = server.online_query((dense, sparse), app="ctr")
        np.testing.assert_allclose(res.outputs, expected, rtol=1e-4, atol=1e-6)
        (tmp_path / "in").mkdir()
        np.savez(tmp_path / "in" / "q.npz", dense=dense, sparse=sparse)
        job = server.offline_query(tmp_path / "in", tmp_path / "out", model="rm1")
        assert job.wait(60) == "done", job.summary()
        np.testing.assert_allclose(
            np.load(tmp_path / "out" / "q.npy"), expected, rtol=1e-4, atol=1e-6
        )
        with pytest.raises(ValueError, match="sparse"):
            server.online_query((dense, sparse[:, :1]), app="ctr")
        with pytest.raises(ValueError, match=r"\(dense, sparse\)"):
            server.online_query(dense, app="ctr")


def test_module_level_api_uses_a_default_registry_and_server(mlp, monkeypatch):
    monkeypatch.setattr(api, "_registry", infaas.ModelRegistry())
    monkeypatch.setattr(api, "_server", None)
    infaas.register_model("mlp", mlp[0], app="rank", accuracy=0.9, **FAST)
    x = _x(5)
    try:
        out = infaas.online_query(x, app="rank", accuracy=0.9)
        np.testing.assert_allclose(out.outputs, _torch_out(mlp[1], x), rtol=1e-5, atol=1e-6)
        assert infaas.default_server() is infaas.default_server()
    finally:
        infaas.default_server().close()


def test_cli_register_then_query_serves_on_the_real_executor(mlp, tmp_path, capsys):
    reg = tmp_path / "reg.json"
    argv = ["infaas", "register", str(mlp[0]), "--app", "rank", "--accuracy", "0.8"]
    argv += ["--registry", str(reg), "--batches", "1,4", "--threads", "1", "--repeats", "2"]
    assert main([*argv, "--json"]) == 0
    registered = json.loads(capsys.readouterr().out)
    assert registered["variants"] == ["mlp_torchscript_cpu_b1_t1", "mlp_torchscript_cpu_b4_t1"]
    x = _x(6)
    np.save(tmp_path / "x.npy", x)
    query = ["infaas", "query", "--registry", str(reg), "--app", "rank", "--json"]
    assert (
        main([*query, "--inputs", str(tmp_path / "x.npy"), "--out", str(tmp_path / "y.npy")]) == 0
    )
    record = json.loads(capsys.readouterr().out)
    assert record["outputs_shape"] == [6, 4] and record["variant"] in registered["variants"]
    y = np.load(tmp_path / "y.npy")
    np.testing.assert_allclose(y, _torch_out(mlp[1], x), rtol=1e-5, atol=1e-6)
    assert main(["infaas", "query", "--registry", str(reg), "--app", "nope"]) != 0
    assert "app='nope' is not registered" in capsys.readouterr().err
    assert main(["infaas", "query", "--app", "rank"]) == 2  # --app means nothing without it
    assert "--app needs --registry" in capsys.readouterr().err
    # Without --registry, query is getVariant over the catalogue, as before.
    assert main(["infaas", "query", "--accuracy", "0.7", "--latency-ms", "50", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["kind"] in ("active", "inactive", "closest")


def test_the_overhead_benchmark_smoke_runs():
    """The benchmark checks that the three calls agree before it times them; nothing timed here."""
    bench = Path(__file__).parents[2] / "benchmarks" / "python" / "bench_infaas_api.py"
    proc = subprocess.run(
        [sys.executable, str(bench), "--smoke"], capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = [line.split() for line in proc.stdout.splitlines()[2:]]
    assert [int(r[0]) for r in rows] == [1, 8, 32] and all(len(r) == 7 for r in rows)
