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

from .infaas_server_support import slower_profile, wrap_runners  # noqa: E402
from .torch_models import save_mlp  # noqa: E402

FAST = {"batches": (1, 4), "threads": (1, 2), "repeats": 2, "warmup": 1}
#: Keeps measurement noise on a shared machine from marking instances Interfered.
QUIET = {"interference_tol": 100.0}


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


def test_online_query_runs_the_policys_choice_and_matches_torch(registry, mlp):
    """Which variant serves is the C++ policy's (test_infaas_session_agreement.py compares it
    with the simulator's); here: the outputs, the record, and the rows split into queries."""
    x = _x(10)
    # One worker, no Model-Autoscaler and no Interfered state (a loaded machine slows real
    # batches past the profile): the second query finds the first's instance for sure.
    with infaas.InfaasServer(registry, workers={"cpu": 1}, autoscale=False, **QUIET) as server:
        first = server.online_query(x, app="rank", latency_ms=50, accuracy=0.5)
        np.testing.assert_allclose(first.outputs, _torch_out(mlp[1], x), rtol=1e-5, atol=1e-6)
        r = first.record
        assert set(r) == set(infaas.server.RECORD_KEYS)
        assert r["kind"] == "inactive" and r["load_ms"] > 0  # a cold start: the batch loaded it
        assert r["latency_ms"] >= r["exec_ms"] > 0 and r["rows"] == 10
        # 10 rows, more than the largest batch limit (4): queries of 4, 4 and 2 rows.
        batch_opt = {v["name"]: v["batch_opt"] for v in registry.variants()}[r["variant"]]
        assert batch_opt == 4 and r["batches"] == 3
        again = server.online_query(x, app="rank", latency_ms=50, accuracy=0.5)
        assert again.record["kind"] == "active" and again.record["load_ms"] == 0
        assert again.record["variant"] in server.workers[again.record["worker"]]["loaded"]
        by_model = server.online_query(x[:1], model="mlp")  # one row ([1, 16]; 1-D is refused)
        np.testing.assert_allclose(by_model.outputs, _torch_out(mlp[1], x[:1]), rtol=1e-5)


def test_unsatisfiable_goals_serve_the_closest_variant_with_the_reason(registry, mlp):
    x = _x(3)
    with infaas.InfaasServer(registry) as server:
        out = server.online_query(x, app="rank", latency_ms=1e-6, accuracy=0.99)
        assert out.record["kind"] == "closest"
        assert "accuracy >= 0.99" in out.record["reason"]
        np.testing.assert_allclose(out.outputs, _torch_out(mlp[1], x), rtol=1e-5, atol=1e-6)
        met = server.online_query(x, app="rank", latency_ms=1e3, accuracy=0.5)
        assert met.record["kind"] != "closest" and met.record["reason"] == ""


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
        assert all(not w["loaded"] for w in server.workers)
        path.write_bytes(good)
        out = server.online_query(_x(2), app="a")
        np.testing.assert_allclose(out.outputs, _torch_out(module, _x(2)), rtol=1e-5, atol=1e-6)


def test_a_busy_instance_turns_overloaded_and_the_query_goes_elsewhere(registry, monkeypatch):
    """A profile 2000x slower (batches predicted at tens of ms) and an executor held for 0.5 s:
    a second query cannot finish within its goal behind the first, so the instance is
    Overloaded and the policy's per-query scaling (autoscale=False) places it on the idle
    worker."""
    release = threading.Event()

    class Held:
        def __init__(self, runner):
            self.runner, self.width = runner, runner.width

        def forward(self, x):
            release.wait(0.5)
            return self.runner.forward(x)

    wrap_runners(monkeypatch, lambda runner, name: Held(runner))
    slow = slower_profile(registry, 2000.0)
    fastest = min(v["latency_ms"][1] for v in slow.variants() if v["batch_opt"] >= 2)
    x = _x(2)
    with infaas.InfaasServer(slow, workers={"cpu": 2}, autoscale=False) as server:
        records = []
        first = threading.Thread(
            target=lambda: records.append(server.online_query(x, app="rank", latency_ms=1e5))
        )
        first.start()
        time.sleep(0.2)  # the first batch is running (held)
        second = server.online_query(x, app="rank", latency_ms=1.5 * fastest).record
        release.set()
        first.join()
        assert records[0].record["worker"] != second["worker"] and second["kind"] == "inactive"


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


def test_offline_work_waits_while_online_work_keeps_the_worker_busy(
    registry, monkeypatch, tmp_path
):
    """The policy's throttle (Sec. 4.2.3): a worker busier than offline_util over the last period
    serves no offline batch. Online batches held for 50 ms each, back to back, keep the one
    worker busy; the offline job waits until they stop."""
    hold = threading.Event()
    hold.set()

    class Slow:
        def __init__(self, runner):
            self.runner, self.width = runner, runner.width

        def forward(self, x):
            if hold.is_set() and len(x) == 3:  # the online queries' batches (3 rows)
                time.sleep(0.05)
            return self.runner.forward(x)

    wrap_runners(monkeypatch, lambda runner, name: Slow(runner))
    inputs = tmp_path / "in"
    inputs.mkdir()
    np.save(inputs / "x.npy", _x(9))
    stop = threading.Event()
    with infaas.InfaasServer(registry, period_s=0.5, load_window_s=1, **QUIET) as server:
        with pytest.raises(ValueError, match="no .npy"):
            server.offline_query(tmp_path, tmp_path / "o", model="mlp")

        def online() -> None:
            while not stop.is_set():
                server.online_query(_x(3), app="rank")

        hog = threading.Thread(target=online)
        hog.start()
        time.sleep(1.2)  # a period or two at ~100 % busy
        job = server.offline_query(inputs, tmp_path / "out", app="rank")
        time.sleep(1.0)
        held_back = job.status
        stop.set()
        hog.join()
        hold.clear()
        assert held_back == "running" and not (tmp_path / "out" / "x.npy").exists()
        assert job.wait(30) == "done" and (tmp_path / "out" / "x.npy").exists()
        # Cancelled while it waits: the job ends without writing.
        stop.clear()
        hold.set()
        hog = threading.Thread(target=online)
        hog.start()
        time.sleep(1.2)
        held = server.offline_query(inputs, tmp_path / "out2", app="rank")
        held.cancel()
        stop.set()
        hog.join()
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
