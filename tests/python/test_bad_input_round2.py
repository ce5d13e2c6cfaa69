"""Bad input, second round: inputs that hung, grew memory without bound, were silently accepted or
ended in a raw traceback. Each case checks the exception type, that the message names the field
and the value, and that nothing was lost or written on the way."""

from __future__ import annotations

import json
import os
import re
import socket
import struct
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import servelab
from servelab import backends, plotting
from servelab.results import COMPLETED
from servelab.worker_process import LocalWorkers

from . import conformance_policies as cp

REPO = Path(__file__).parents[2]
TORCH = backends.status("torch").usable


def _default(**workload):
    sc = servelab.load_scenario("default")
    return sc, dict(sc.workload, **workload)


def _free_port() -> int:
    """A loopback port where nothing listens (bound, then closed)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ---- sweeps on Ray -----------------------------------------------------------------------------


def _point(x):
    return {"x": x}


@pytest.fixture
def fresh_ray():
    ray = pytest.importorskip("ray", reason="Ray is not installed: pip install 'servelab[ray]'")
    if ray.is_initialized():
        pytest.skip("Ray already runs in this process: ray_address and ray_init are not used")
    return ray


def test_an_unreachable_ray_address_fails_within_seconds_naming_it(fresh_ray):
    address = f"127.0.0.1:{_free_port()}"
    start = time.monotonic()
    with pytest.raises(RuntimeError, match=rf"ray_address='{address}': no Ray cluster answers"):
        servelab.sweep(_point, {"x": [1]}, backend="ray", ray_address=address, progress=False)
    assert time.monotonic() - start < 30  # Ray's own retries take a quarter of an hour
    assert not fresh_ray.is_initialized()
    with pytest.raises(RuntimeError, match=r"ray_address='ray://127\.0\.0\.1:1': no Ray cluster"):
        servelab.sweep(_point, {"x": [1]}, backend="ray", ray_address="ray://127.0.0.1:1")


@pytest.mark.parametrize("address", ["", "  "])
def test_an_empty_ray_address_is_refused_before_ray_starts(address):
    with pytest.raises(ValueError, match=rf"ray_address='{address}' must be a string such as"):
        servelab.sweep(_point, {"x": [1]}, backend="ray", ray_address=address)


@pytest.mark.parametrize(
    ("ray_init", "message"),
    [
        ({"nope": 1}, r"ray_init\['nope'\] is not an argument of ray\.init \(known: address, "),
        ({3: 1}, r"ray_init\[3\] is not an argument of ray\.init"),
        ({"address": "auto"}, r"ray_init\['address'\]: give the address as ray_address="),
    ],
)
def test_a_ray_init_key_ray_does_not_take_is_named(fresh_ray, ray_init, message):
    with pytest.raises(ValueError, match=message):
        servelab.sweep(_point, {"x": [1]}, backend="ray", ray_init=ray_init, progress=False)
    assert not fresh_ray.is_initialized()


# ---- the profiler ------------------------------------------------------------------------------

HUGE_PROFILE = """
import resource, servelab
def peak():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
before = peak()
try:
    servelab.profile({spec!r}, batches=[4, {batch}])
except MemoryError as e:
    print("MemoryError:", e)
print("grew", peak() - before)
"""


@pytest.mark.parametrize(
    ("spec", "batch", "bytes_each"),
    [
        ("constant(latency_ms=0)", 10**12, 20),  # query ids and the sizes lists
        pytest.param(
            "torchscript(path={mlp})",
            10**11,
            84,  # and 16 float32 inputs per item
            marks=pytest.mark.skipif(not TORCH, reason="torch backend not usable"),
        ),
    ],
)
def test_a_batch_too_large_for_memory_is_refused_before_it_is_made(
    tmp_path, spec, batch, bytes_each
):
    if "{mlp}" in spec:
        from .torch_models import save_mlp

        spec = spec.format(mlp=repr(str(save_mlp(tmp_path)[0])))
    out = subprocess.run(
        [sys.executable, "-c", HUGE_PROFILE.format(spec=spec, batch=batch)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert re.search(
        rf"MemoryError: batches\[1\]={batch}: a batch of {batch} items for "
        rf".* would need about .* \({bytes_each} bytes each\), more than the .* of memory "
        r"available: lower batches",
        out.stdout,
    ), out.stdout
    grew = int(re.search(r"grew (\d+)", out.stdout).group(1))
    assert grew < 300e6, f"the process grew by {grew / 1e6:.0f} MB before refusing"


def test_profile_repeats_too_many_to_keep_are_refused_naming_repeats():
    with pytest.raises(
        MemoryError, match=r"repeats=10000000000000: the timings would need about .*: lower repeats"
    ):
        servelab.profile("constant", batches=[1], repeats=10**13)


def test_profile_model_must_be_a_non_empty_name():
    for model in ("", 5):
        with pytest.raises(ValueError, match=rf"model={model!r} must be a non-empty name"):
            servelab.profile("constant", batches=[1], model=model)


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("nodir/p.json", r"path='{tmp}/nodir/p\.json': its folder '{tmp}/nodir' does not exist"),
        (".", r"path='{tmp}' is a directory, not a file"),
        ("f.txt/p.json", r"path='{tmp}/f\.txt/p\.json': its folder '{tmp}/f\.txt' is not a folder"),
    ],
)
def test_a_profile_path_that_cannot_be_written_is_refused_before_measuring(tmp_path, path, message):
    (tmp_path / "f.txt").write_text("not a folder")
    target = str(tmp_path / path) if path != "." else str(tmp_path)
    start = time.monotonic()
    # 50 batches of 200 ms: refusing after measuring would take 10 s.
    with pytest.raises(ValueError, match=message.format(tmp=re.escape(str(tmp_path)))):
        servelab.profile("constant(latency_ms=200)", batches=[1], repeats=50, path=target)
    assert time.monotonic() - start < 5
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.txt"]  # nothing written


@pytest.mark.skipif(not TORCH, reason="torch backend not usable")
def test_torchscript_inputs_refuse_a_negative_first_query(tmp_path):
    from .torch_models import save_mlp

    ex = servelab.make_executor(f"torchscript(path={str(save_mlp(tmp_path)[0])!r})")
    with pytest.raises(ValueError, match=r"first_query=-5 must be >= 0"):
        ex.inputs([1], first_query=-5)
    assert ex.inputs([2], first_query=3).shape == (2, 16)


# ---- results -----------------------------------------------------------------------------------


def test_a_timeseries_window_that_makes_too_many_windows_is_refused():
    sc, load = _default(count=50)
    r = servelab.simulate(sc, workload=load)
    end_ns = max(r.meta["duration_ns"], int(r.columns["finish_ns"].max()) + 1)
    with pytest.raises(
        ValueError,
        match=rf"window_s=1e-09 cuts the run's .* s into {end_ns} windows, more "
        r"than 1000000: choose window_s >= ",
    ) as info:
        r.timeseries(window_s=1e-9)
    least = float(str(info.value).rsplit(">= ", 1)[1])
    assert len(r.timeseries(window_s=least)) <= 1_000_000  # the advice is enough
    with pytest.raises(ValueError, match=r"window_s=True must be a finite number of seconds"):
        r.timeseries(window_s=True)
    with pytest.raises(ValueError, match=r"window_s=1e\+300 is beyond the longest time int64"):
        r.timeseries(window_s=1e300)
    assert len(r.timeseries(window_s=1e9)) == 1


# ---- serving: a workload that would last for ever ----------------------------------------------


def test_serve_refuses_a_workload_expected_to_last_absurdly_long():
    sc, load = _default(arrivals="poisson(rate=1e-9)", count=5)
    start = time.monotonic()
    with pytest.raises(
        ValueError,
        match=r"poisson\(rate=1e-09\): 5 queries at 1e-09 queries/s would take about 5e\+09 s "
        r"to arrive on the wall clock, more than max_expected_duration_s=86400",
    ):
        servelab.serve(sc, workload=load)
    assert time.monotonic() - start < 5
    # The limit is the caller's: a short run passes the default, a tighter limit refuses it.
    sc, load = _default(arrivals="poisson(rate=2000)", count=10)
    with pytest.raises(ValueError, match=r"about 0\.005 s .* max_expected_duration_s=0\.001"):
        servelab.serve(sc, workload=load, max_expected_duration_s=0.001)
    r = servelab.serve(sc, workload=load, max_expected_duration_s=None)
    assert (r.columns["status"] == COMPLETED).all()
    for bad in (0, -1, float("nan"), "1", True):
        with pytest.raises(ValueError, match=rf"max_expected_duration_s={bad!r} must be"):
            servelab.serve(sc, workload=load, max_expected_duration_s=bad)
    with pytest.raises(ValueError, match=r"max_expected_duration_s= is for servelab\.serve"):
        servelab.simulate(sc, workload=load, max_expected_duration_s=10)


# ---- Hera --------------------------------------------------------------------------------------


def test_a_hera_model_given_as_a_mapping_needs_the_fields_that_define_it():
    from servelab import hera

    with pytest.raises(
        ValueError, match=r"model 'mine': missing sla_ms, memory_gb, compute_ms \(a model given"
    ):
        hera.model({"name": "mine"})
    with pytest.raises(ValueError, match=r"model 'mine': missing compute_ms"):
        hera.model({"name": "mine", "sla_ms": 20, "memory_gb": 2})
    mine = hera.model({"name": "mine", "sla_ms": 20, "memory_gb": 2}, compute_ms=3)
    assert (mine.sla_ms, mine.memory_gb, mine.compute_ms) == (20, 2, 3)
    assert hera.model("ncf").sla_ms == 5  # Table I names need nothing more


def test_a_hera_pair_of_one_model_is_refused_and_alone_gives_it():
    from servelab import hera
    from servelab.systems.hera import selection

    off = hera.build(["ncf", "dien", "dlrm_b"])
    with pytest.raises(ValueError, match=r"pair\(a='ncf', b='ncf'\): a pair is two different"):
        off.pair("ncf", "ncf")
    alone = off.alone("ncf")
    assert alone["workers_b"] == 0 and alone["emu"] == 1.0
    assert alone["workers_a"] == off.tables[off.index("ncf")].max_workers
    assert off.pair("ncf", "dien")["workers_b"] > 0
    assert np.allclose(np.diag(off.emu_matrix()), 1.0)
    summary = selection.emu_summary(off)  # DeepRecSys serves each model alone
    assert summary["deeprecsys"]["min"] == summary["deeprecsys"]["max"] == 1.0


# ---- recommendation models: float indices ------------------------------------------------------


def _usable(backend: str) -> bool:
    return backend == "reference" or backends.status(backend).usable


@pytest.mark.parametrize("backend", ["reference", "onednn"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_float_sparse_indices_are_refused_not_truncated(backend, dtype):
    if not _usable(backend):
        pytest.skip(f"the {backend} backend is not usable here")
    model = servelab.recsys.build("rm1", backend=backend, scale=0.001)
    dense, sparse = model.inputs(4)
    with pytest.raises(
        ValueError,
        match=rf"recsys model rm1: sparse \(embedding indices\) must hold integers, got dtype "
        rf"{np.dtype(dtype).name}",
    ):
        model.run(dense, sparse.astype(dtype) + 0.7)
    # Other integer dtypes are indices too.
    assert np.array_equal(model.run(dense, sparse.astype(np.int32)), model.run(dense, sparse))
    gen = servelab.recsys.generator("rm1", scale=0.001)
    with pytest.raises(ValueError, match=r"query_ids must hold integers, got dtype float64"):
        gen.queries(np.array([1.5]))
    with pytest.raises(ValueError, match=r"sizes must hold integers, got dtype float64"):
        gen.batch(np.array([1]), np.array([2.5]))
    # 2**32 + 2 would wrap round to a plausible 2 in int32.
    with pytest.raises(ValueError, match=r"sizes holds 4294967298, out of the range of 32-bit"):
        gen.batch(np.array([1]), np.array([2**32 + 2]))


@pytest.mark.skipif(not TORCH, reason="torch backend not usable")
def test_the_torch_recsys_module_refuses_float_indices():
    import torch

    model = servelab.recsys.build("rm1", scale=0.001)
    dense, sparse = model.inputs(4)
    module = model.to_torch()
    with pytest.raises(
        ValueError,
        match=r"sparse \(embedding indices\) must hold integers, got dtype torch\.float64",
    ):
        module(torch.from_numpy(dense), torch.from_numpy(sparse.astype(np.float64)))
    with torch.no_grad():
        out = module(torch.from_numpy(dense), torch.from_numpy(sparse)).numpy()
    assert np.allclose(out, model.run(dense, sparse), atol=1e-5)


# ---- thread knobs out of range -----------------------------------------------------------------


class _SetsKnob(cp.PyFcfs):
    """FCFS that sets one knob on every worker before the first batch."""

    def __init__(self, key: str, value: int) -> None:
        super().__init__()
        self.key, self.value = key, value

    def on_start(self, view, actions) -> None:
        for w in range(view.num_workers):
            actions.set_config(w, self.key, self.value)


def _served_with_knob(executor: str, key: str, value: int) -> servelab.Result:
    sc = {
        "profile": "example:hetero_cpu_gpu",
        "workers": [{"hardware": "c5n.2xlarge", "count": 1, "models": ["rm2"]}],
        "workload": {
            "arrivals": "poisson(rate=200)",
            "count": 6,
            "apps": [{"name": "rm2", "slo_ms": 350, "sizes": "constant(value=2)"}],
        },
        "drain_s": 10,
    }
    return servelab.serve(sc, executor=executor, scheduler=_SetsKnob(key, value))


def _only_reason(r: servelab.Result) -> str:
    c = r.columns
    assert (c["status"] != COMPLETED).all() and len(c["status"]) == 6  # every record kept
    reasons = set(r.to_pandas()["drop_reason"])
    assert len(reasons) == 1, reasons
    return reasons.pop()


@pytest.mark.skipif(not TORCH, reason="torch backend not usable")
@pytest.mark.parametrize(
    ("key", "value", "why"),
    [
        ("intra_op_threads", -1, r"intra_op_threads=-1 must be in \[0, 4096\]"),
        ("intra_op_threads", 5000, r"intra_op_threads=5000 must be in \[0, 4096\]"),
        ("max_batch_items", -3, r"max_batch_items=-3 must be >= 0 \(0: no limit\)"),
    ],
)
def test_a_torchscript_worker_refuses_a_knob_out_of_range(tmp_path, key, value, why):
    from .torch_models import save_mlp

    spec = f"torchscript(path={str(save_mlp(tmp_path)[0])!r})"
    assert re.search(why, _only_reason(_served_with_knob(spec, key, value)))
    session = servelab.make_executor(spec).open()
    with pytest.raises(ValueError, match=why):
        session.time_batches([2], config={key: value})


@pytest.mark.parametrize("value", [-1, 2**32 + 1])
def test_a_recsys_worker_refuses_a_thread_count_out_of_range(value):
    if not _usable("onednn"):
        pytest.skip("the onednn backend is not usable here")
    spec = "recsys(model='rm1', backend='onednn', scale=0.001)"
    why = rf"intra_op_threads={value} must be in \[0, 1024\]"
    assert re.search(why, _only_reason(_served_with_knob(spec, "intra_op_threads", value)))


# ---- the worker wire protocol ------------------------------------------------------------------

HEADER = struct.Struct("<4sHHQI")  # magic, version, type, batch id, body length
VERSION, HELLO, BATCH = 3, 1, 3


def _frame(kind: int, batch: int, body: bytes) -> bytes:
    return HEADER.pack(b"SLRW", VERSION, kind, batch, len(body)) + body


def _text(s: str) -> bytes:
    return struct.pack("<I", len(s)) + s.encode()


def _reply(s: socket.socket) -> bytes:
    def read(n: int) -> bytes:
        out = b""
        while len(out) < n:
            chunk = s.recv(n - len(out))
            assert chunk, "the worker closed the connection"
            out += chunk
        return out

    *_, length = HEADER.unpack(read(HEADER.size))
    return read(length)


def _batch_reply(address: str, config: dict[str, int]) -> tuple[int, str]:
    """Sends a hello and one batch of two queries carrying ``config``; (status, error text)."""
    hello = struct.pack("<qqQI", 0, 0, 1, 0) + _text("")
    body = struct.pack("<qqIIIIII", 0, 2, 2, 0, len(config), 0, 0, 0) + struct.pack("<qq", 0, 1)
    for name, value in config.items():
        body += _text(name) + struct.pack("<q", value)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(10)
        s.connect(address.removeprefix("unix:"))
        s.sendall(_frame(HELLO, 0, hello))
        assert struct.unpack_from("<I", _reply(s))[0] == 0  # hello accepted
        s.sendall(_frame(BATCH, 7, body))
        reply = _reply(s)
    status, _, _, length = struct.unpack_from("<IqqI", reply)
    return status, reply[24 : 24 + length].decode()


def test_a_remote_batch_with_a_knob_its_executor_does_not_read_fails_naming_it():
    with LocalWorkers(1, "constant(latency_ms=1)") as pool:
        status, error = _batch_reply(pool.addresses[0], {"intra_op_threads": -7})
        assert status == 1  # executor failed; the connection stays usable
        assert "intra_op_threads=-7 is not one of its knobs (it has none)" in error, error
        assert _batch_reply(pool.addresses[0], {}) == (0, "")


def test_a_remote_batch_with_a_negative_thread_count_fails_naming_it():
    if not _usable("onednn"):
        pytest.skip("the onednn backend is not usable here")
    spec = "recsys(model='rm1', backend='onednn', scale=0.001)"
    with LocalWorkers(1, spec) as pool:
        status, error = _batch_reply(pool.addresses[0], {"intra_op_threads": -7})
        assert status == 1 and "intra_op_threads=-7 must be in [0, 1024]" in error, error
        assert _batch_reply(pool.addresses[0], {"intra_op_threads": 1}) == (0, "")


def test_the_worker_command_imports_a_module_from_the_current_folder(tmp_path):
    (tmp_path / "my_lab_executors.py").write_text(
        "import servelab\n"
        "class Mine:\n"
        "    def run(self, batch):\n"
        "        pass\n"
        "servelab.register_executor('mine_from_cwd', lambda: Mine())\n"
    )
    script = Path(sys.executable).with_name("servelab")
    if not script.exists():
        pytest.skip(f"no servelab script next to {sys.executable}")
    listen = f"unix:{tmp_path}/w.sock"
    argv = [str(script), "worker", "--listen", listen, "--executor", "mine_from_cwd", "--json"]
    p = subprocess.Popen(
        [*argv, "--import", "my_lab_executors"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO / "python")},
    )
    try:
        line = p.stdout.readline()
        assert line, p.stderr.read() if p.poll() is not None else "no ready line"
        assert json.loads(line)["executor"].startswith("mine_from_cwd")
    finally:
        p.terminate()
        p.communicate(timeout=30)


# ---- RRL sweeps --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"radii": []}, r"radii=\[\] is empty: give at least one of the region radii"),
        ({"radii": 2}, r"radii=2 must be a list of region radii"),
        ({"radii": [True]}, r"radii: True is not a finite radius >= 0"),
        ({"radii": [1], "seeds": ()}, r"seeds=\(\) is empty"),
    ],
)
def test_region_sweep_names_an_empty_or_bad_list(kwargs, message):
    from servelab import rrl

    with pytest.raises(ValueError, match=message):
        rrl.region_sweep(rrl.cpu_space(2), "poisson(rate=2)", steps=5, **kwargs)


@pytest.mark.parametrize(
    ("methods", "message"),
    [
        ([], r"methods=\[\] is empty: give at least one of the methods \(rrl, qlearning"),
        ("rrl", r"methods='rrl' must be a list of methods"),
        (["rrl", "rrl"], r"methods=\['rrl', 'rrl'\] repeats 'rrl'"),
    ],
)
def test_compare_methods_names_an_empty_or_repeated_method_list(methods, message):
    from servelab import rrl

    with pytest.raises(ValueError, match=message):
        rrl.compare_methods(rrl.cpu_space(2), "poisson(rate=2)", methods, steps=5)


# ---- plots -------------------------------------------------------------------------------------


def test_save_all_names_a_folder_it_cannot_make(tmp_path):
    sc, load = _default(count=20)
    r = servelab.simulate(sc, workload=load)
    with pytest.raises(ValueError, match=r"folder='/proc/nope' cannot be created \("):
        plotting.save_all(r, "/proc/nope")
    (tmp_path / "file").write_text("")
    with pytest.raises(ValueError, match=rf"folder='{re.escape(str(tmp_path))}/file/plots' cannot"):
        plotting.save_all(r, tmp_path / "file" / "plots")
    with pytest.raises(ValueError, match=r"folder=None must be a folder path"):
        plotting.save_all(r, None)
    # A bad argument is refused before the first plot is written.
    for kwargs, message in [
        ({"dpi": 0}, r"dpi=0 must be a number of dots per inch > 0"),
        ({"window_s": 0}, r"window_s=0 must be a finite number of seconds > 0"),
        ({"warmup_s": float("nan")}, r"warmup_s=nan must be a finite number of seconds >= 0"),
    ]:
        with pytest.raises(ValueError, match=message):
            plotting.save_all(r, tmp_path / "not_written", **kwargs)
        assert not (tmp_path / "not_written").exists()
    assert len(plotting.save_all(r, tmp_path / "plots")) == 4
