"""INFaaS under bad input: a query's own bad inputs fail that query alone (workers stay live and
serve the next queries), a hung executor does not abort the interpreter at exit, the scaling ILP
refuses loads beyond what CBC can take, and every silently accepted value of the bad-input
report is a clear error naming the field and the value."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest

import servelab
from servelab import _core, backends, infaas
from servelab.solvers import lp

if not backends.status("torch").usable:
    pytest.skip(
        f"torch backend not usable: {backends.status('torch').reason}", allow_module_level=True
    )

import torch  # noqa: E402  (only once the backend is known to be usable)

from servelab.systems.infaas import loading  # noqa: E402
from servelab.systems.infaas.server import ServingError  # noqa: E402

from .infaas_server_support import FAST, QUIET, decision_rows, torch_out, wrap_runners, x_rows  # noqa: E402
from .torch_models import save_mlp  # noqa: E402


class RejectsLargeValues(torch.nn.Module):
    """A linear layer whose forward raises on inputs over 100 (as a model checking its input
    range does): profiling's inputs in [-1, 1) and zeros pass."""

    def __init__(self, width: int) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.linear = torch.nn.Linear(width, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if bool((x.abs() > 100).any()):
            raise RuntimeError("input values over 100")
        return self.linear(x)


@pytest.fixture(scope="module")
def mlp(tmp_path_factory):
    return save_mlp(tmp_path_factory.mktemp("mlp"), widths=(16, 32, 4), seed=3)


@pytest.fixture(scope="module")
def registry(mlp):
    reg = infaas.ModelRegistry()
    reg.register_model("mlp", mlp[0], app="rank", accuracy=0.8, batches=(1, 4), **FAST)
    return reg


@pytest.fixture(scope="module")
def guarded(tmp_path_factory):
    module = torch.jit.script(RejectsLargeValues(16).eval())
    path = tmp_path_factory.mktemp("guard") / "guard.pt"
    torch.jit.save(module, str(path))
    reg = infaas.ModelRegistry()
    reg.register_model("guard", path, app="guard", accuracy=0.8, batches=(1,), **FAST)
    return reg, module


def _nothing_dropped(server: infaas.InfaasServer) -> bool:
    """No query the session dropped: a bad input failed its own query, not its batch."""
    return not decision_rows(server, "dropped")


# --- 1. a query's own bad input fails that query only ------------------------------------------


def test_a_model_raising_on_a_querys_inputs_fails_that_query_and_no_worker(guarded):
    reg, module = guarded
    bad = np.full((2, 16), 1e3, np.float32)
    with infaas.InfaasServer(reg, workers={"cpu": 2}, **QUIET) as server:
        for _ in range(5):
            with pytest.raises(ValueError, match="raised on its inputs") as info:
                server.online_query(bad, app="guard")
            message = str(info.value)
            assert "input values over 100" in message and "guard_torchscript_cpu_b1" in message
            assert "not the worker" in message
        assert _nothing_dropped(server), server.decisions()
        x = x_rows(3)
        out = server.online_query(x, app="guard")
        np.testing.assert_allclose(out.outputs, torch_out(module, x), rtol=1e-5, atol=1e-6)


def test_an_executor_rejecting_inputs_with_value_error_fails_that_query_only(
    registry, mlp, monkeypatch
):
    class Picky:  # rejects rows whose first value is 42, as an executor checking its input
        def __init__(self, runner) -> None:
            self._runner = runner

        def forward(self, x):
            if x[0, 0] == 42:
                raise ValueError("x[0, 0]=42 is not a valid feature")
            return self._runner.forward(x)

    wrap_runners(monkeypatch, lambda runner, name: Picky(runner))
    bad = x_rows(1)
    bad[0, 0] = 42
    with infaas.InfaasServer(registry, workers={"cpu": 1}, **QUIET) as server:
        for _ in range(3):
            with pytest.raises(ValueError, match=r"x\[0, 0\]=42 is not a valid feature"):
                server.online_query(bad, app="rank")
        assert _nothing_dropped(server)
        x = x_rows(2)
        np.testing.assert_allclose(
            server.online_query(x, app="rank").outputs, torch_out(mlp[1], x), rtol=1e-5, atol=1e-6
        )


def test_a_recsys_index_out_of_its_table_is_refused_before_dispatch():
    reg = infaas.ModelRegistry()
    reg.register_model(
        "ctr", "rm1", app="ctr", accuracy=0.7, scale=0.001, frameworks=["recsys-reference"],
        batches=(1,), **FAST,
    )  # fmt: skip
    source = reg.models["ctr"]["source"]
    dense_w, lookups = loading.input_shape(source)
    rng = np.random.default_rng(0)
    dense = rng.uniform(-1, 1, (2, dense_w)).astype(np.float32)
    sparse = np.zeros((2, lookups), np.int64)
    bad = sparse.copy()
    bad[1, 3] = 10**9
    with infaas.InfaasServer(reg, workers={"cpu": 2}, **QUIET) as server:
        for _ in range(4):
            with pytest.raises(ValueError, match=r"sparse\)\[1, 3\]=1000000000 is out of range"):
                server.online_query((dense, bad), app="ctr")
        assert _nothing_dropped(server)
        assert all(not w["loaded"] for w in server.workers)  # nothing was dispatched
        out = server.online_query((dense, sparse), app="ctr")
        assert out.outputs.shape[0] == 2 and np.all(np.isfinite(out.outputs))
    negative = sparse.copy()
    negative[0, 0] = -1
    with pytest.raises(ValueError, match=r"\[0, 0\]=-1 is out of range .* indices 0\.\."):
        loading.check_inputs((dense, negative), source)


def test_a_worker_failing_a_known_good_input_drops_the_batch_with_the_reason(
    registry, mlp, monkeypatch
):
    broken = {"on": True}

    class Broken:  # every call fails while on, the known-good input too: the worker's fault
        def __init__(self, runner) -> None:
            self._runner = runner

        def forward(self, x):
            if broken["on"]:
                raise RuntimeError("injected device fault")
            return self._runner.forward(x)

    wrap_runners(monkeypatch, lambda runner, name: Broken(runner))
    with infaas.InfaasServer(registry, workers={"cpu": 2}, **QUIET) as server:
        with pytest.raises(ServingError) as info:
            server.online_query(x_rows(1), app="rank")
        message = str(info.value)
        assert "not served" in message and "RuntimeError: injected device fault" in message
        dropped = decision_rows(server, "dropped")
        assert len(dropped) == 1 and "injected device fault" in dropped[0]["reason"]
        broken["on"] = False
        x = x_rows(2)
        np.testing.assert_allclose(
            server.online_query(x, app="rank").outputs, torch_out(mlp[1], x), rtol=1e-5, atol=1e-6
        )


# --- 2. a hung executor and the interpreter's exit ---------------------------------------------

# A TorchScript model whose forward loops int(x[0, 0]) times: 0 for the profiler's inputs in
# [-1, 1), "forever" in C++ (the GIL released) for the hung query. Its abandoned call ends only
# when the process exits: torch's operators are unregistered by C++ static destructors then, so
# the loop raises while the interpreter is gone, and taking the GIL back aborted the process
# ("terminate called without an active exception", exit code 134).
_HANG_SCRIPT = """
import numpy as np
import torch
from servelab import infaas
from servelab.systems.infaas.server import ServingError

class Loops(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(16, 2)

    def forward(self, x):
        y = x
        for _ in range(int(x[0, 0])):
            y = torch.tanh(y)
        return self.linear(y)

torch.jit.save(torch.jit.script(Loops().eval()), "loops.pt")
reg = infaas.ModelRegistry()
reg.register_model("loops", "loops.pt", app="a", accuracy=0.5, batches=(1,), threads=(1,),
                   repeats=1, warmup=0)
x = np.zeros((1, 16), np.float32)
x[0, 0] = 1e9
server = infaas.InfaasServer(reg, batch_timeout_ms=100)
try:
    server.online_query(x, app="a")
except ServingError as e:
    print("query raised:", "batch_timeout_ms=100" in str(e), flush=True)
server.close()
"""


def test_a_hung_executor_does_not_abort_the_interpreter_at_exit(tmp_path):
    script = tmp_path / "hang.py"  # a file: torch.jit.script reads the module's source
    script.write_text(textwrap.dedent(_HANG_SCRIPT), encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert "terminate called" not in proc.stderr, proc.stderr
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "query raised: True" in proc.stdout, proc.stdout


# --- 3. loads the MILP solver cannot take ------------------------------------------------------


def _run(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)


@pytest.mark.skipif(not lp.available(), reason="servelab was built without CBC/CLP")
def test_a_load_beyond_the_instance_limit_is_a_value_error_not_an_abort():
    # In a subprocess: before the bound, CBC aborted the interpreter on an assertion.
    proc = _run(
        "from servelab import infaas\n"
        "p = infaas.scaling_problem(infaas.table2_variants(), load_qps=1e20, slo_ms=300)\n"
        "for solve in (infaas.solve_exact, infaas.solve_greedy):\n"
        "    try:\n"
        "        solve(p)\n"
        "    except ValueError as e:\n"
        "        print('ValueError:', e)\n"
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = proc.stdout.splitlines()
    assert len(lines) == 2, proc.stdout
    for line in lines:
        assert "load_qps=1e+20" in line and "must be <= 8e+11" in line, line
        assert "'C', 800 qps" in line
    # Within the limit the ILP still solves.
    near = infaas.scaling_problem(infaas.table2_variants(), load_qps=1e11, slo_ms=300)
    assert infaas.solve_exact(near)["feasible"]


@pytest.mark.skipif(not lp.available(), reason="servelab was built without CBC/CLP")
def test_the_cli_autoscale_refuses_the_load_with_a_message():
    proc = subprocess.run(
        [sys.executable, "-m", "servelab", "infaas", "autoscale", "--qps", "1e20",
         "--slo-ms", "50"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode not in (0, -6, 134), proc.returncode
    assert "load_qps=1e+20" in proc.stderr and "must be <=" in proc.stderr, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr


# --- 4. threads beyond the executors' cap -------------------------------------------------------


def test_threads_beyond_the_executors_cap_are_refused_before_any_thread_starts(mlp, tmp_path):
    reg = infaas.ModelRegistry()
    with pytest.raises(ValueError, match=r"threads=\[100000\]: 100000 is above 4096"):
        reg.register_model("m", mlp[0], accuracy=0.8, threads=[100000], batches=(1,))
    assert len(reg) == 0
    with pytest.raises(ValueError, match=r"threads=\[1, 2000\]: 2000 is above 1024"):
        reg.register_model("r", "rm1", accuracy=0.8, threads=[1, 2000], scale=0.001)


def test_the_thread_cap_is_the_executors_own(registry, tmp_path):
    params = {e["name"]: {p["name"]: p for p in e["params"]} for e in servelab.list_executors()}
    assert loading.MAX_THREADS["torchscript"] == params["torchscript"]["intra_op"]["max"]
    assert loading.MAX_THREADS["recsys"] == params["recsys"]["intra_op_threads"]["max"]
    data = registry.to_dict()
    data["variants"][0]["threads"] = 100000
    with pytest.raises(ValueError, match=r"variants\[0\]\.threads=100000 must be <= 4096"):
        infaas.ModelRegistry.from_dict(data)


# --- 5. offline folders that would overwrite the inputs -----------------------------------------


def test_offline_query_refuses_output_folders_overlapping_the_inputs(registry, mlp, tmp_path):
    inputs = tmp_path / "in"
    inputs.mkdir()
    arrays = {f"q{i}": x_rows(3, seed=i) for i in range(2)}
    for name, x in arrays.items():
        np.save(inputs / f"{name}.npy", x)
    before = {p.name: p.read_bytes() for p in inputs.iterdir()}
    (tmp_path / "link").symlink_to(inputs, target_is_directory=True)
    (tmp_path / "a_file").write_text("not a folder")
    cases = [
        (inputs, inputs, r"output_dir=.* is input_dir="),
        (inputs, tmp_path / "link", r"output_dir=.*link' is input_dir="),  # a symlink to it
        (inputs, inputs / "out", r"output_dir=.* is inside input_dir="),
        (inputs, tmp_path, r"output_dir=.* holds input_dir="),
        (inputs, tmp_path / "a_file", r"output_dir=.*a_file' is a file, not a folder"),
        (inputs, tmp_path / "a_file" / "out", r"output_dir=.*a_file/out' cannot be made"),
    ]
    with infaas.InfaasServer(registry) as server:
        for src, dst, message in cases:
            with pytest.raises(ValueError, match=message):
                server.offline_query(src, dst, app="rank")
        assert {p.name: p.read_bytes() for p in inputs.iterdir()} == before
        assert not (inputs / "out").exists()
        job = server.offline_query(inputs, tmp_path / "out", app="rank")
        assert job.wait(60) == "done", job.summary()
    for name, x in arrays.items():
        np.testing.assert_allclose(
            np.load(tmp_path / "out" / f"{name}.npy"), torch_out(mlp[1], x), rtol=1e-5, atol=1e-6
        )


# --- 6. model names that are paths ---------------------------------------------------------------


@pytest.mark.parametrize("name", ["../escape", "a/b", "a\\b", ".hidden", "..", "a..b", "a\0b", ""])
def test_a_model_name_that_is_a_path_is_refused(mlp, tmp_path, name):
    frozen = tmp_path / "models"
    frozen.mkdir()
    reg = infaas.ModelRegistry()
    with pytest.raises(ValueError, match=r"name=") as info:
        reg.register_model(
            name, mlp[0], accuracy=0.8, frameworks=["torchscript", "torchscript-frozen"],
            frozen_dir=frozen, batches=(1,), **FAST,
        )  # fmt: skip
    if name:
        assert "not a path" in str(info.value) and "letters, digits" in str(info.value)
    assert len(reg) == 0
    # '../escape' wrote models/../escape.frozen.pt before: nothing is written anywhere now.
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["models"]


# --- 7. values accepted silently before ----------------------------------------------------------


def test_a_1d_input_is_a_value_error(registry):
    with infaas.InfaasServer(registry) as server:
        with pytest.raises(
            ValueError, match=r"inputs has shape \[16\]; .* reshape it to \[1, 16\]"
        ):
            server.online_query(np.zeros(16, np.float32), app="rank")
        one_row = server.online_query(np.zeros((1, 16), np.float32), app="rank")
        assert one_row.outputs.shape == (1, 4)


def test_offline_apps_beyond_the_workloads_applications_is_a_value_error():
    scenario = {
        "profile": infaas.to_profile(infaas.resnet50_variants()),
        "workers": [{"hardware": "cpu", "count": 1, "models": ["resnet50_tensorflow_cpu_b1"]}],
        "workload": {
            "arrivals": "poisson(rate=5)", "count": 20,
            "apps": [{"name": "classify", "slo_ms": 500, "accuracy_floor": 0.7}],
        },
    }  # fmt: skip
    with pytest.raises(ValueError, match=r"offline_apps has application index 5 .* 1 application"):
        servelab.simulate(scenario, scheduler="infaas(offline_apps='5')")
    ok = servelab.simulate(scenario, scheduler="infaas(offline_apps='0')")
    assert len(ok.columns["app"]) == 20


def test_to_profile_of_no_variant_is_a_value_error():
    with pytest.raises(ValueError, match="variants is empty"):
        infaas.to_profile([])


def test_a_worker_on_hardware_no_variant_runs_on_is_a_value_error(registry):
    store = infaas.metadata_store(infaas.table2_variants())
    with pytest.raises(ValueError, match=r"hardware='tpu' runs no variant .*'cpu'"):
        store.add_worker("tpu")
    assert store.num_workers == 0
    assert store.add_worker("gpu") == 0
    if not any(v["hardware"] == "gpu" for v in registry.variants()):
        with pytest.raises(
            ValueError, match=r"workers: no registered variant runs on hardware 'gpu'"
        ):
            infaas.InfaasServer(registry, workers={"cpu": 1, "gpu": 1})


def test_an_unknown_autoscaler_error_lists_every_registered_solver(registry):
    expected = ["'greedy'"] + (["'ilp'"] if lp.available() else [])
    with pytest.raises(ValueError, match="autoscaler='foo' is not a scaling solver") as server:
        infaas.InfaasServer(registry, autoscaler="foo")
    with pytest.raises(ValueError, match="autoscaler='foo' is not a scaling solver") as policy:
        servelab.make_scheduler("infaas(autoscaler='foo')")
    for info in (server, policy):
        assert all(name in str(info.value) for name in expected), str(info.value)
    assert set(_core.infaas.scaling_solvers()) >= {"greedy"}
