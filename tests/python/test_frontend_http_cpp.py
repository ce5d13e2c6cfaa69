"""The C++ HTTP engine (``http_engine="cpp"``) on a real session answers bad input, limits, the
token and shutdown as the aiohttp engine does (test_frontend_http.py, whose test double of the
session the C++ engine cannot serve): the same status codes and messages naming the field and
value, every request answered, the server serving on."""

from __future__ import annotations

import concurrent.futures
import gzip
import json
import socket
import time

import numpy as np
import pytest

pytest.importorskip("tritonclient.http")
pytest.importorskip("aiohttp")

import tritonclient.http as httpclient  # noqa: E402
from tritonclient.utils import InferenceServerException  # noqa: E402

import servelab  # noqa: E402
from servelab.frontend import Frontend, Limits  # noqa: E402

from .frontend_support import (  # noqa: E402
    FakeSession,
    check_oversized_bodies_get_413,
    http_client,
    http_input,
    metrics_text,
    raw_http,
    started,
)

if not hasattr(servelab, "Session"):
    pytest.skip("servelab.Session is not in this build", allow_module_level=True)


def _scenario(ms: float = 0.01) -> dict:
    """Two applications on one worker whose batches take ``ms`` (emulated)."""
    return {
        "profile": servelab.profiles.from_dict(
            {
                "format": "servelab.profile",
                "version": 1,
                "hardware": {"cpu": {"price_per_hour": 1.0}},
                "models": {"a": {}},
                "latency": [
                    {"hardware": "cpu", "model": "a", "batch": b, "samples_ms": [ms]}
                    for b in (1, 8)
                ],
            }
        ),
        "workers": [{"hardware": "cpu", "count": 1}],
        "workload": {
            "arrivals": "poisson(rate=1)",
            "count": 1,
            "apps": [{"name": "rm2", "slo_ms": 100}, {"name": "wnd", "slo_ms": 50}],
        },
        "scheduler": "fcfs",
    }


@pytest.fixture
def served():
    with servelab.Session(_scenario()) as session:
        frontend = started(
            session,
            grpc_port=None,
            http_engine="cpp",
            limits=Limits(max_body_bytes=4096, max_concurrent=4, request_timeout_s=2.0),
        )
        yield frontend
        frontend.stop(grace_s=0)


def _infer_in_thread(frontend):
    # The client made in the thread that uses it (tritonclient's gevent state is per thread).
    return http_client(frontend).infer("rm2", [])


def _alive(frontend):
    c = http_client(frontend)
    assert c.is_server_live()
    r = c.infer("rm2", [http_input(np.ones((1, 4), np.float32))])
    assert r.get_response()["parameters"]["servelab_model"] == "a"


def test_metadata_routes_and_unknown_names_answer_as_the_python_engine(served):
    c = http_client(served)
    assert c.is_server_live() and c.is_server_ready() and c.is_model_ready("wnd", "1")
    assert c.get_server_metadata()["name"] == "servelab"
    m = c.get_model_metadata("rm2")
    assert m["versions"] == ["1"] and m["parameters"]["slo_ms"] == 100.0
    assert c.get_model_config("wnd")["name"] == "wnd"
    assert {e["name"] for e in c.get_model_repository_index()} == {"rm2", "wnd"}
    assert c.get_inference_statistics("rm2")["model_stats"][0]["name"] == "rm2"
    x = np.ones((1, 4), np.float32)
    with pytest.raises(InferenceServerException, match="unknown model 'nope'.*rm2, wnd") as e:
        c.infer("nope", [http_input(x)])
    assert e.value.status() == "404"
    with pytest.raises(InferenceServerException, match="no version '3'"):
        c.get_model_metadata("rm2", "3")
    assert not c.is_model_ready("nope")
    with pytest.raises(InferenceServerException, match="no output 'OUT'; its output is OUTPUT0"):
        c.infer("rm2", [http_input(x)], outputs=[httpclient.InferRequestedOutput("OUT")])
    status, body = raw_http(served, "POST", "/v2/models/nope/infer", b"{not even json")
    assert status == 404 and "unknown model 'nope'" in json.loads(body)["error"]
    status, body = raw_http(served, "GET", "/v2/nothing")
    assert status == 404 and "no route GET /v2/nothing" in json.loads(body)["error"]
    status, body = raw_http(served, "DELETE", "/v2/models/rm2/infer")
    assert status == 405 and "DELETE" in json.loads(body)["error"]
    status, body = raw_http(served, "HEAD", "/v2/models/rm2")  # GET's answer without its body
    assert status == 200 and body == b""
    _alive(served)


def test_bad_bodies_shapes_and_goals_are_refused_by_name(served):
    c = http_client(served)
    for body, headers, message in [
        (b'{"inputs": [', {}, "not valid JSON"),
        (b"\xff\xfe", {}, "not valid JSON"),
        (b"{}", {"Inference-Header-Content-Length": "x"}, "Inference-Header-Content-Length='x'"),
        (b"{}", {"Inference-Header-Content-Length": "99"}, "outside the body of 2 bytes"),
        (b'{"inputs": 3}', {}, "inputs must be a list of tensors, got 3"),
    ]:
        status, data = raw_http(served, "POST", "/v2/models/rm2/infer", body, headers)
        assert status == 400 and message in json.loads(data)["error"], data
    i = httpclient.InferInput("INPUT0", [1], "BYTES")
    i.set_data_from_numpy(np.array([b"a"], dtype=np.object_))
    with pytest.raises(InferenceServerException, match="'BYTES' is not supported"):
        c.infer("rm2", [i])
    with pytest.raises(InferenceServerException, match=r"shape=\[0, 4\]: the first dimension"):
        c.infer("rm2", [http_input(np.ones((0, 4), np.float32))])
    with pytest.raises(InferenceServerException, match="slo_ms='x' must be a number") as e:
        c.infer("rm2", [], parameters={"slo_ms": "x"})
    assert e.value.status() == "400"
    junk = socket.create_connection(("127.0.0.1", served.http_port), timeout=10)
    junk.sendall(b"\x00\x01 garbage \xff\r\n\r\n")
    reply = junk.recv(4096)
    assert reply.startswith(b"HTTP/1.1 400 ") and b"not valid HTTP" in reply
    junk.close()
    text = metrics_text(served)
    assert 'servelab_frontend_refused{reason="invalid"}' in text
    _alive(served)


def test_oversized_bodies_get_413_naming_the_limit(served):
    check_oversized_bodies_get_413(served, 4)
    _alive(served)


def test_compressed_bodies_are_read_and_bombs_and_bad_ones_refused(served):
    c = http_client(served)
    x = np.ones((1, 4), np.float32)
    for algorithm in ("gzip", "deflate"):
        r = c.infer(
            "rm2",
            [http_input(x)],
            request_compression_algorithm=algorithm,
            response_compression_algorithm=algorithm,
        )
        assert r.get_response()["parameters"]["servelab_model"] == "a"
    bomb = gzip.compress(b"{" + b" " * 1_000_000 + b"}")  # 1 KB that inflates to 1 MB
    status, data = raw_http(
        served, "POST", "/v2/models/rm2/infer", bomb, {"Content-Encoding": "gzip"}
    )
    assert status == 413 and "max_body_bytes=4096" in json.loads(data)["error"]
    status, data = raw_http(
        served, "POST", "/v2/models/rm2/infer", b"xx", {"Content-Encoding": "gzip"}
    )
    assert status == 400 and "could not be read" in json.loads(data)["error"]
    _alive(served)


def test_token_required_when_set():
    with servelab.Session(_scenario()) as session:
        frontend = started(session, grpc_port=None, token="s3cret", http_engine="cpp")
        try:
            c = http_client(frontend)
            with pytest.raises(InferenceServerException, match="no Authorization") as e:
                c.infer("rm2", [])
            assert e.value.status() == "401"
            with pytest.raises(InferenceServerException, match="a wrong Authorization"):
                c.get_model_metadata("rm2", headers={"Authorization": "Bearer nope"})
            assert not c.is_server_live()
            ok = {"Authorization": "Bearer s3cret"}
            assert c.is_server_live(headers=ok)
            c.infer("rm2", [], headers=ok)
            assert raw_http(frontend, "GET", "/metrics")[0] == 401
            assert raw_http(frontend, "GET", "/metrics", headers=ok)[0] == 200
        finally:
            frontend.stop(grace_s=0)


def test_overload_timeouts_slow_bodies_and_stopping_are_each_answered():
    """Batches of 3 s on one worker: requests wait. Past max_concurrent=2: 503; after
    request_timeout_s=1: 504; a body that stalls: 504; stopping answers the rest with 503."""
    with servelab.Session(_scenario(ms=3000)) as session:
        frontend = started(
            session,
            grpc_port=None,
            http_engine="cpp",
            limits=Limits(max_concurrent=2, request_timeout_s=1.0),
        )
        try:
            with concurrent.futures.ThreadPoolExecutor(2) as pool:
                pending = [pool.submit(_infer_in_thread, frontend) for _ in range(2)]
                deadline = time.monotonic() + 5
                while frontend._cpp.inflight() < 2:
                    assert time.monotonic() < deadline
                    time.sleep(0.01)
                with pytest.raises(InferenceServerException, match="max_concurrent=2") as e:
                    http_client(frontend).infer("rm2", [])
                assert e.value.status() == "503"
                for f in pending:
                    with pytest.raises(InferenceServerException, match="request_timeout_s=1") as e:
                        f.result(timeout=20)
                    assert e.value.status() == "504"
            # A client that leaves halfway through its body, and one whose body stalls.
            head = b"POST /v2/models/rm2/infer HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n"
            deadline = time.monotonic() + 20
            while frontend._cpp.inflight() > 0:  # the two timed-out queries end (3 s each)
                assert time.monotonic() < deadline
                time.sleep(0.05)
            gone = socket.create_connection(("127.0.0.1", frontend.http_port), timeout=10)
            gone.sendall(head + b"{")
            gone.close()
            slow = socket.create_connection(("127.0.0.1", frontend.http_port), timeout=10)
            slow.sendall(head + b"{" * 10)
            reply = slow.recv(4096)
            slow.close()
            assert reply.startswith(b"HTTP/1.1 504") and b"did not arrive within" in reply
            text = metrics_text(frontend)
            assert 'servelab_frontend_refused{reason="disconnected"} 1' in text
            assert 'servelab_frontend_refused{reason="overloaded"} 1' in text
            assert 'nv_inference_request_success{model="rm2",version="1"} 2' in text
            with concurrent.futures.ThreadPoolExecutor(1) as pool:
                waiting = pool.submit(_infer_in_thread, frontend)
                deadline = time.monotonic() + 5
                while frontend._cpp.inflight() < 1:
                    assert time.monotonic() < deadline
                    time.sleep(0.01)
                frontend.stop(grace_s=0.1)
                with pytest.raises(InferenceServerException, match="server stopped before") as e:
                    waiting.result(timeout=10)
                assert e.value.status() == "503"
        finally:
            frontend.stop(grace_s=0)
            session.abort()


def test_max_concurrent_bounds_the_cpp_engine_and_grpc_together():
    import tritonclient.grpc as grpcclient

    from .frontend_support import grpc_client

    with servelab.Session(_scenario(ms=3000)) as session:
        frontend = started(session, http_engine="cpp", limits=Limits(max_concurrent=2))
        try:
            with concurrent.futures.ThreadPoolExecutor(2) as pool:
                h = pool.submit(_infer_in_thread, frontend)
                g = pool.submit(lambda: grpc_client(frontend).infer("rm2", []))
                deadline = time.monotonic() + 5
                while frontend._cpp.inflight() + frontend.service._inflight < 2:
                    assert time.monotonic() < deadline
                    time.sleep(0.01)
                with pytest.raises(InferenceServerException, match="max_concurrent=2") as e:
                    http_client(frontend).infer("rm2", [])
                assert e.value.status() == "503"
                with pytest.raises(InferenceServerException, match="max_concurrent=2") as e:
                    grpc_client(frontend).infer("rm2", [])
                assert e.value.status() == str(grpcclient.grpc.StatusCode.RESOURCE_EXHAUSTED)
                frontend.stop(grace_s=0)
                for call in (h, g):
                    with pytest.raises(InferenceServerException, match="server stopped before"):
                        call.result(timeout=10)
        finally:
            frontend.stop(grace_s=0)
            session.abort()


def test_the_cpp_engine_needs_a_real_session_and_a_free_port():
    with pytest.raises(ValueError, match="http_engine='cpp' serves a servelab.Session"):
        Frontend(FakeSession(), http_engine="cpp")
    with pytest.raises(ValueError, match="http_engine='rust' must be one of python, cpp"):
        Frontend(FakeSession(), http_engine="rust")
    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen()
    try:
        with servelab.Session(_scenario()) as session:
            port = busy.getsockname()[1]
            with pytest.raises(OSError, match="address already in use"):
                Frontend(session, http_port=port, grpc_port=None, http_engine="cpp").start()
            if socket.has_ipv6:  # IPv6 loopback is loopback too
                f = started(session, host="::1", grpc_port=None, http_engine="cpp")
                try:
                    assert f.http_url.startswith("http://[::1]:")
                    assert http_client(f).is_server_live()
                finally:
                    f.stop(grace_s=0)
    finally:
        busy.close()
