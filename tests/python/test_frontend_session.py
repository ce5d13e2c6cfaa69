"""The front-end on the real in-process session, with Triton's clients over HTTP and gRPC: the
emulated executor (no outputs; every request a query in the session's records) and a TorchScript
model (outputs equal to the model run locally with torch), and `servelab frontend` as a process
stopped by SIGTERM."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("tritonclient.http")
pytest.importorskip("tritonclient.grpc")

import tritonclient.grpc as grpcclient  # noqa: E402
import tritonclient.http as httpclient  # noqa: E402
from prometheus_client.parser import text_string_to_metric_families  # noqa: E402
from tritonclient.utils import InferenceServerException  # noqa: E402

import servelab  # noqa: E402
from servelab import backends  # noqa: E402
from servelab.results import COMPLETED  # noqa: E402

from .frontend_support import grpc_client, http_client, metrics_text, started  # noqa: E402

if not hasattr(servelab, "Session"):
    pytest.skip("servelab.Session is not in this build", allow_module_level=True)

WIDTH = 16


@pytest.fixture(params=["python", "cpp"])
def http_engine(request):
    """Each HTTP test runs on both engines: aiohttp, and the C++ engine over the session."""
    return request.param


def _profile(models=("a", "b"), ms=1.0):
    return servelab.profiles.from_dict(
        {
            "format": "servelab.profile",
            "version": 1,
            "hardware": {"cpu": {"price_per_hour": 1.0}},
            "models": {m: {} for m in models},
            "latency": [
                {"hardware": "cpu", "model": m, "batch": b, "samples_ms": [ms]}
                for m in models
                for b in (1, 8, 32)
            ],
        }
    )


def _scenario(models=("a", "b"), executor=None):
    group = {"hardware": "cpu", "count": 2}
    if executor:
        group["executor"] = executor
    return {
        "profile": _profile(models),
        "workers": [group],
        "workload": {
            "arrivals": "poisson(rate=1)",
            "count": 1,
            "apps": [{"name": m, "slo_ms": 100 + 50 * i} for i, m in enumerate(models)],
        },
        "scheduler": "fcfs",
    }


def test_emulated_requests_are_the_sessions_queries(http_engine):
    with servelab.Session(_scenario()) as session:
        frontend = started(session, http_engine=http_engine)
        try:
            h, g = http_client(frontend), grpc_client(frontend)
            assert h.is_server_ready() and g.is_server_ready()
            assert h.get_model_metadata("b")["parameters"]["slo_ms"] == 150.0
            assert g.is_model_ready("a") and not h.is_model_ready("c")
            ids = []
            for c in (h, g):
                for app in ("a", "b"):
                    r = c.infer(app, [])  # no inputs: one item the executor makes up
                    resp = r.get_response() if c is h else r.get_response(as_json=True)
                    params = resp["parameters"]
                    if c is g:
                        params = {k: next(iter(v.values())) for k, v in params.items()}
                    ids.append(int(params["servelab_query"]))
                    assert r.as_numpy("OUTPUT0") is None  # emulated writes no outputs
            i = httpclient.InferInput("INPUT0", [3, 4], "FP32")
            i.set_data_from_numpy(np.ones((3, 4), np.float32))
            r = h.infer("a", [i])  # a query of 3 items
            ids.append(r.get_response()["parameters"]["servelab_query"])
            r = h.infer("b", [], parameters={"slo_ms": 7})  # the query's own goal
            goal_id = r.get_response()["parameters"]["servelab_query"]
            ids.append(goal_id)
            with pytest.raises(InferenceServerException, match="unknown model 'c'.*a, b"):
                h.infer("c", [])
            with pytest.raises(InferenceServerException, match="unknown model 'c'"):
                g.infer("c", [])
            text = metrics_text(frontend)
        finally:
            frontend.stop()
        result = session.close()
    c = result.columns
    assert len(c["status"]) == 6 and sorted(ids) == list(range(6))
    assert (c["status"] == COMPLETED).all()
    assert c["size"][ids[4]] == 3
    assert c["deadline_ns"][goal_id] - c["arrival_ns"][goal_id] == 7_000_000
    other = ids[1]  # app b with its application's SLO, 150 ms
    assert c["deadline_ns"][other] - c["arrival_ns"][other] == 150_000_000
    m = {f.name: {s.labels.get("model"): s.value for s in f.samples}
         for f in text_string_to_metric_families(text)}  # fmt: skip
    assert m["nv_inference_request_success"] == {"a": 3, "b": 3}
    assert m["nv_inference_count"] == {"a": 5, "b": 3}
    assert m["nv_inference_request_failure"] == {"a": 0, "b": 0}


@pytest.mark.skipif(
    not backends.status("torch").usable, reason="the torch backend is not usable here"
)
def test_torchscript_outputs_equal_the_model_run_locally(tmp_path, http_engine):
    import torch

    from .torch_models import save_mlp

    path, module = save_mlp(tmp_path, widths=(WIDTH, 32, 4))
    executor = f"torchscript(path={str(path)!r})"
    x = np.random.default_rng(0).uniform(-1, 1, (3, WIDTH)).astype(np.float32)
    with torch.no_grad():
        expected = module(torch.from_numpy(x)).numpy()
    with servelab.Session(_scenario(models=("mlp",), executor=executor)) as session:
        frontend = started(session, http_engine=http_engine)
        try:
            h, g = http_client(frontend), grpc_client(frontend)
            for binary in (True, False):
                i = httpclient.InferInput("INPUT0", [3, WIDTH], "FP32")
                i.set_data_from_numpy(x, binary_data=binary)
                out = [httpclient.InferRequestedOutput("OUTPUT0", binary_data=binary)]
                got = h.infer("mlp", [i], outputs=out).as_numpy("OUTPUT0")
                np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)
            gi = grpcclient.InferInput("INPUT0", [3, WIDTH], "FP32")
            gi.set_data_from_numpy(x)
            got = g.infer("mlp", [gi]).as_numpy("OUTPUT0")
            np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)
            # Without an input spec the session refuses the wrong width at submit (in a batch it
            # would fail the others): 400 with the shape and what it takes, the server serving on.
            bad = httpclient.InferInput("INPUT0", [2, 7], "FP32")
            bad.set_data_from_numpy(np.ones((2, 7), np.float32))
            with pytest.raises(InferenceServerException, match="shape=\\(2, 7\\)") as e:
                h.infer("mlp", [bad])
            assert e.value.status() == "400" and "takes float32 rows of 16" in e.value.message()
            got = g.infer("mlp", [gi]).as_numpy("OUTPUT0")
            np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)
        finally:
            frontend.stop()


@pytest.mark.skipif(
    not backends.status("torch").usable, reason="the torch backend is not usable here"
)
def test_an_input_spec_refuses_bad_inputs_before_they_reach_a_batch(tmp_path, http_engine):
    from .torch_models import save_mlp

    path, _ = save_mlp(tmp_path, widths=(WIDTH, 32, 4))
    scenario = _scenario(models=("mlp",), executor=f"torchscript(path={str(path)!r})")
    scenario["scheduler"] = "batching"
    with servelab.Session(scenario) as session:
        frontend = started(session, inputs={"mlp": f"FP32:{WIDTH}"}, http_engine=http_engine)
        try:
            h, g = http_client(frontend), grpc_client(frontend)
            meta = h.get_model_metadata("mlp")["inputs"][0]
            assert meta == {"name": "INPUT0", "datatype": "FP32", "shape": [-1, WIDTH]}
            assert g.get_model_config("mlp", as_json=True)["config"]["input"][0]["dims"] == [
                "-1",
                str(WIDTH),
            ]
            for shape, datatype, dtype in [
                ([2, 7], "FP32", np.float32),
                ([1, WIDTH], "FP64", np.float64),
                ([WIDTH], "FP32", np.float32),
            ]:
                bad = grpcclient.InferInput("INPUT0", shape, datatype)
                bad.set_data_from_numpy(np.ones(shape, dtype))
                want = f"takes FP32 of shape \\[-1, {WIDTH}\\] \\(items first\\); got {datatype}"
                with pytest.raises(InferenceServerException, match=want) as e:
                    g.infer("mlp", [bad])
                assert e.value.status() == "StatusCode.INVALID_ARGUMENT"
            # Good requests sent around a bad one are all served: none shared a batch with it.
            x = np.ones((1, WIDTH), np.float32)
            good = grpcclient.InferInput("INPUT0", [1, WIDTH], "FP32")
            good.set_data_from_numpy(x)
            bad = grpcclient.InferInput("INPUT0", [1, 7], "FP32")
            bad.set_data_from_numpy(np.ones((1, 7), np.float32))
            import concurrent.futures

            with concurrent.futures.ThreadPoolExecutor(4) as pool:
                calls = [
                    pool.submit(grpc_client(frontend).infer, "mlp", [bad if k == 3 else good])
                    for k in range(8)
                ]
                for k, call in enumerate(calls):
                    if k == 3:
                        with pytest.raises(InferenceServerException, match="got FP32 of shape"):
                            call.result(timeout=30)
                    else:
                        assert call.result(timeout=30).as_numpy("OUTPUT0").shape == (1, 4)
        finally:
            frontend.stop()
        result = session.close()
    assert len(result.columns["status"]) == 7 and (result.columns["status"] == COMPLETED).all()


def test_the_command_serves_until_sigterm_then_prints_the_summary(http_engine):
    """With the token from the environment: refused without it, served with it; SIGTERM ends the
    command with the session's summary of the served requests."""
    import os

    command = [
        sys.executable, "-m", "servelab", "frontend", "default",
        "--http-port", "0", "--grpc-port", "0", "--json", "--http-engine", http_engine,
    ]  # fmt: skip
    env = {**os.environ, "SERVELAB_FRONTEND_TOKEN": "t0ken"}
    proc = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )
    try:
        where = json.loads(proc.stdout.readline())
        assert where["models"] == ["rm2"] and where["token"] is True
        assert where["http"].startswith("http://127.0.0.1:")
        h = httpclient.InferenceServerClient(where["http"].removeprefix("http://"))
        g = grpcclient.InferenceServerClient(where["grpc"])
        with pytest.raises(InferenceServerException, match="Authorization"):
            h.infer("rm2", [])
        with pytest.raises(InferenceServerException, match="Authorization"):
            g.infer("rm2", [])
        auth = "Bearer t0ken"
        assert h.is_server_live(headers={"Authorization": auth})
        assert g.is_model_ready("rm2", headers={"authorization": auth})
        h.infer("rm2", [], headers={"Authorization": auth})
        g.infer("rm2", [], headers={"authorization": auth})
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, err
    summary = json.loads(out.strip().splitlines()[-1])["summary"]
    assert summary["queries"] == 2 and summary["completed"] == 2


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--host", "0.0.0.0"], "--host 0.0.0.0 is not a loopback address: pass --allow-remote"),
        (["--no-http", "--no-grpc"], "leaves nothing to serve"),
        (["--http-port", "70000"], "argument --http-port: must be at most 65535"),
        (["--input", "FP33:16"], "input spec 'FP33:16': datatype='FP33' is not a data type"),
        (["--input", "nope=FP32:16"], "inputs names model 'nope'"),
    ],
)
def test_the_command_refuses_remote_addresses_without_the_flag(argv, message):
    proc = subprocess.run(
        [sys.executable, "-m", "servelab", "frontend", "default", *argv],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2 and message in proc.stderr, proc.stderr


def test_the_latency_benchmark_runs_small():
    runner = Path(__file__).parents[2] / "benchmarks" / "python" / "bench_frontend.py"
    proc = subprocess.run(
        [sys.executable, str(runner), "--smoke"], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "over submit (p50)" in proc.stdout and "load average" in proc.stdout


def test_a_burst_of_good_bad_and_excess_requests_is_each_answered_once(http_engine):
    """8 clients at once, 4 requests in flight allowed: every request is served (200), refused
    as excess (503), or refused as bad (400/404); the session's records hold exactly the served
    ones, and the metrics count the same."""
    import concurrent.futures

    from servelab.frontend import Limits

    with servelab.Session(_scenario()) as session:
        frontend = started(
            session, grpc_port=None, limits=Limits(max_concurrent=4), http_engine=http_engine
        )
        try:

            def client(k: int) -> list[str]:
                c = http_client(frontend)
                answers = []
                for j in range(12):
                    model = "nope" if (k + j) % 5 == 0 else "a"
                    size = 0 if (k + j) % 7 == 0 else 2  # shape [0, 4]: refused
                    i = httpclient.InferInput("INPUT0", [size, 4], "FP32")
                    i.set_data_from_numpy(np.ones((size, 4), np.float32))
                    try:
                        c.infer(model, [i])
                        answers.append("200")
                    except InferenceServerException as e:
                        answers.append(e.status())
                return answers

            with concurrent.futures.ThreadPoolExecutor(8) as pool:
                answers = [
                    a for f in [pool.submit(client, k) for k in range(8)] for a in f.result()
                ]
            text = metrics_text(frontend)
        finally:
            frontend.stop()
        result = session.close()
    assert len(answers) == 96 and set(answers) <= {"200", "503", "400", "404"}, set(answers)
    served = answers.count("200")
    assert served > 0 and len(result.columns["status"]) == served
    assert (result.columns["status"] == COMPLETED).all()
    m = {f.name: {tuple(sorted(s.labels.items())): s.value for s in f.samples}
         for f in text_string_to_metric_families(text)}  # fmt: skip
    assert m["nv_inference_request_success"][(("model", "a"), ("version", "1"))] == served
    refused = m["servelab_frontend_refused"]
    assert refused.get((("reason", "overloaded"),), 0) == answers.count("503")
    assert refused[(("reason", "not_found"),)] == answers.count("404")
    assert refused[(("reason", "invalid"),)] == answers.count("400")
