"""The kserve executor: a Session whose worker group sends its batches to an Open Inference
Protocol server, here a servelab front-end (in this process, on free loopback ports) serving a
TorchScript model. Outputs equal torch's over HTTP and gRPC; an unreachable server, an unknown
model and a server's error fail their batch with reasons naming url and model; bad parameters
are refused naming the field. Against Triton too where $SERVELAB_TRITON_PYTHON names a Python
with nvidia-pytriton and torch (see benchmarks/python/bench_frontend_vs_triton.py's header)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("tritonclient.http")
pytest.importorskip("tritonclient.grpc")

import servelab  # noqa: E402
from servelab import backends  # noqa: E402
from servelab.kserve_executor import KServe, parse_url  # noqa: E402

from .frontend_support import WIDTH as FAKE_WIDTH  # noqa: E402
from .frontend_support import FakeSession, started  # noqa: E402
from .test_frontend_session import _scenario  # noqa: E402

if not hasattr(servelab, "Session"):
    pytest.skip("servelab.Session is not in this build", allow_module_level=True)

WIDTH = 16
BATCHING = "batching(max_batch=8, timeout_ms=20)"  # several queries per request


def _urls(frontend):
    return {"http": frontend.http_url, "grpc": f"grpc://{frontend.grpc_address}"}


def _kserve(url, model="mlp", **params):
    extra = "".join(f", {k}={v!r}" for k, v in params.items())
    return _scenario(models=("mlp",), executor=f"kserve(url={url!r}, model={model!r}{extra})")


@pytest.fixture(scope="module")
def served_mlp(tmp_path_factory):
    """A front-end serving a TorchScript MLP as model 'mlp'; yields (frontend, torch module)."""
    if not backends.status("torch").usable:
        pytest.skip("the torch backend is not usable here")
    from .torch_models import save_mlp

    path, module = save_mlp(tmp_path_factory.mktemp("kserve"), widths=(WIDTH, 32, 4))
    scenario = _scenario(models=("mlp",), executor=f"torchscript(path={str(path)!r})")
    with servelab.Session(scenario) as session:
        frontend = started(session)
        try:
            yield frontend, module
        finally:
            frontend.stop()


def _expected(module, x):
    import torch

    with torch.no_grad():
        return module(torch.from_numpy(x)).numpy()


@pytest.mark.parametrize("protocol", ["http", "grpc"])
def test_outputs_equal_the_remote_models_for_queries_of_several_sizes(served_mlp, protocol):
    frontend, module = served_mlp
    rng = np.random.default_rng(1)
    queries = [rng.standard_normal((n, WIDTH)).astype(np.float32) for n in (1, 3, 8, 2, 5, 1, 4)]
    queries.append(rng.standard_normal(WIDTH).astype(np.float32))  # one item as a flat row
    url = _urls(frontend)[protocol]
    with servelab.Session(_kserve(url), scheduler=BATCHING) as client:
        futures = [client.submit("mlp", x) for x in queries]
        outcomes = [f.result(timeout=60) for f in futures]
    for x, o in zip(queries, outcomes, strict=True):
        assert o.completed, o.reason
        np.testing.assert_allclose(o.output, _expected(module, x.reshape(-1, WIDTH)), rtol=1e-5)
    assert client.result.to_pandas()["batch_queries"].max() > 1  # queries shared a request


def test_given_names_skip_the_metadata_and_a_token_is_sent():
    """The fake session's front-end requires a token: names given, no metadata request."""
    x = np.arange(2 * FAKE_WIDTH, dtype=np.float32).reshape(2, FAKE_WIDTH)
    with FakeSession(apps=("rm2",)) as fake:
        frontend = started(fake, token="s3cret")
        try:
            for url in _urls(frontend).values():
                names = {"input_name": "INPUT0", "output_name": "OUTPUT0"}
                ex = KServe(url, "rm2", token="s3cret", **names)
                np.testing.assert_array_equal(ex.run(_Batch([x, x[0]])), 2 * np.vstack([x, x[:1]]))
                without = KServe(url, "rm2", **names)
                with pytest.raises(RuntimeError, match=f"inference at url='{url}' model='rm2'"):
                    without.run(_Batch([x]))
        finally:
            frontend.stop()


@pytest.mark.parametrize("protocol", ["http", "grpc"])
def test_a_server_that_does_not_answer_in_timeout_ms_fails_the_batch(protocol):
    x = np.ones((1, FAKE_WIDTH), np.float32)
    with FakeSession(apps=("rm2",)) as fake:
        frontend = started(fake)
        try:
            url = _urls(frontend)[protocol]
            names = {"input_name": "INPUT0", "output_name": "OUTPUT0"}
            ex = KServe(url, "rm2", timeout_ms=300, **names)
            fake.hold.clear()  # answers wait
            with pytest.raises(RuntimeError, match=f"inference at url='{url}' model='rm2' failed"):
                ex.run(_Batch([x]))
            fake.hold.set()
            np.testing.assert_array_equal(ex.run(_Batch([x])), 2 * x)  # a fresh connection
        finally:
            fake.hold.set()
            frontend.stop()


class _Batch:
    """What run(batch) reads of an ExecutorBatch."""

    def __init__(self, inputs):
        self.inputs = inputs
        self.sizes = [1 if np.ndim(x) < 2 else len(x) for x in inputs]


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _dropped_reasons(scenario):
    x = np.ones((2, WIDTH), np.float32)
    with servelab.Session(scenario) as client:
        outcomes = [client.submit("mlp", x).result(timeout=60) for _ in range(2)]
    assert all(o.status == "dropped" for o in outcomes)
    return {o.reason for o in outcomes}


@pytest.mark.parametrize("protocol", ["http", "grpc"])
def test_an_unreachable_server_fails_the_batch_naming_url_and_model(protocol):
    url = f"{protocol}://127.0.0.1:{_free_port()}"
    for reason in _dropped_reasons(_kserve(url, timeout_ms=2000)):
        assert reason.startswith("executor failed: kserve(")
        assert f"model metadata at url='{url}' model='mlp' failed" in reason


@pytest.mark.parametrize("protocol", ["http", "grpc"])
def test_an_unknown_model_fails_the_batch_naming_url_and_model(served_mlp, protocol):
    url = _urls(served_mlp[0])[protocol]
    for reason in _dropped_reasons(_kserve(url, model="nope")):
        assert f"model metadata at url='{url}' model='nope' failed" in reason
        assert "nope" in reason.split("failed:", 2)[-1]  # the server's own message
    names = {"input_name": "INPUT0", "output_name": "OUTPUT0"}  # straight to inference
    for reason in _dropped_reasons(_kserve(url, model="nope", **names)):
        assert f"inference at url='{url}' model='nope' failed" in reason


@pytest.mark.parametrize("protocol", ["http", "grpc"])
def test_an_error_answer_fails_the_batch_with_the_servers_message(served_mlp, protocol):
    url = _urls(served_mlp[0])[protocol]
    bad = np.ones((1, WIDTH + 1), np.float32)  # a width the model does not take
    with servelab.Session(_kserve(url)) as client:
        outcome = client.submit("mlp", bad).result(timeout=60)
        good = client.submit("mlp", np.ones((1, WIDTH), np.float32)).result(timeout=60)
    assert outcome.status == "dropped"
    assert f"inference at url='{url}' model='mlp' failed" in outcome.reason
    assert good.completed, good.reason  # the next batch is served


def test_a_query_without_inputs_fails_its_batch_saying_so(served_mlp):
    with servelab.Session(_kserve(served_mlp[0].http_url)) as client:
        outcome = client.submit("mlp").result(timeout=60)
    assert outcome.status == "dropped" and "submit inputs with every query" in outcome.reason


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"url": "https://h:1"}, "url='https://h:1': TLS is not supported"),
        ({"url": "tcp:h:1"}, "url='tcp:h:1': scheme 'tcp' is not http or grpc"),
        ({"url": "h:8000"}, "url='h:8000': scheme 'h' is not http or grpc"),
        ({"url": "grpc://h"}, r"url='grpc://h' needs a host and a port"),
        ({"url": "http://h:70000"}, "url='http://h:70000': Port out of range"),
        ({"url": "http://h:1/v2"}, r"url='http://h:1/v2': only http://host:port"),
        ({"model": ""}, "model='' must name a model"),
    ],
)
def test_bad_params_are_refused_naming_the_field(params, message):
    spec = {"name": "kserve", "url": "http://127.0.0.1:1", "model": "m", **params}
    with pytest.raises(ValueError, match=message):
        servelab.make_executor(spec).open()


def test_registered_with_typed_parameters():
    entry = next(e for e in servelab.list_executors() if e["name"] == "kserve")
    assert entry["module"] == "servelab.kserve_executor"
    params = {p["name"]: p for p in entry["params"]}
    assert list(params) == ["url", "model", "input_name", "output_name", "timeout_ms", "token"]
    assert params["url"]["required"] and params["model"]["required"]
    with pytest.raises(ValueError, match="timeout_ms=0 must be >= 1"):
        servelab.make_executor("kserve(url='http://h:1', model='m', timeout_ms=0)")
    with pytest.raises(ValueError, match="'url' is required"):
        servelab.make_executor("kserve(model='m')")
    assert parse_url("grpc://[::1]:8001").address == "[::1]:8001"


TRITON_PYTHON = os.environ.get("SERVELAB_TRITON_PYTHON", "")


@pytest.mark.skipif(
    not TRITON_PYTHON, reason="$SERVELAB_TRITON_PYTHON (a Python with nvidia-pytriton) is not set"
)
def test_outputs_equal_the_models_served_by_triton(tmp_path):
    """The benchmark's Triton server (pytriton, the model run by torch) serving the test MLP."""
    if not backends.status("torch").usable:
        pytest.skip("the torch backend is not usable here")
    from .torch_models import save_mlp

    path, module = save_mlp(tmp_path, widths=(WIDTH, 32, 4))
    http, grpc, metrics = (_free_port() for _ in range(3))
    bench = Path(__file__).parents[2] / "benchmarks" / "python" / "bench_frontend_vs_triton.py"
    command = [TRITON_PYTHON, str(bench), "--serve-triton", str(path), str(http), str(grpc)]
    with open(tmp_path / "triton.log", "w") as log:
        proc = subprocess.Popen(
            [*command, str(metrics)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log
        )
    try:
        line = proc.stdout.readline()
        assert line, (tmp_path / "triton.log").read_text()[-3000:]
        assert json.loads(line)["grpc"] == f"127.0.0.1:{grpc}"
        rng = np.random.default_rng(2)
        queries = [rng.standard_normal((n, WIDTH)).astype(np.float32) for n in (1, 4, 2, 7)]
        for url in (f"http://127.0.0.1:{http}", f"grpc://127.0.0.1:{grpc}"):
            with servelab.Session(_kserve(url), scheduler=BATCHING) as client:
                futures = [client.submit("mlp", x) for x in queries]
                outcomes = [f.result(timeout=60) for f in futures]
            for x, o in zip(queries, outcomes, strict=True):
                assert o.completed, o.reason
                np.testing.assert_allclose(o.output, _expected(module, x), rtol=1e-5, atol=1e-6)
            reasons = _dropped_reasons(_kserve(url, model="nope"))
            assert all(f"url='{url}' model='nope' failed" in r for r in reasons), reasons
    finally:
        proc.stdin.close()  # the server stops Triton and exits
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        proc.stdout.close()
