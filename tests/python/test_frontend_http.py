"""The front-end over HTTP/REST with Triton's own client (tritonclient.http) and raw requests:
health, metadata, inference in JSON and binary, and every kind of bad input and overload answered
with a protocol error naming the problem while the server keeps serving. The session here is a
test double (frontend_support.FakeSession); test_frontend_session.py runs the real one."""

from __future__ import annotations

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

from servelab.frontend import Limits  # noqa: E402

from .frontend_support import (  # noqa: E402
    WIDTH,
    FakeSession,
    check_oversized_bodies_get_413,
    http_client,
    http_input,
    raw_http,
    started,
)


@pytest.fixture
def served():
    session = FakeSession(drop_app="wnd")
    frontend = started(
        session,
        grpc_port=None,
        limits=Limits(max_body_bytes=4096, max_concurrent=4, request_timeout_s=2.0),
    )
    yield frontend, session
    frontend.stop(grace_s=0)
    session.close()


def _alive(frontend):
    assert http_client(frontend).is_server_live()
    x = np.ones((1, WIDTH), np.float32)
    assert np.array_equal(
        http_client(frontend).infer("rm2", [http_input(x)]).as_numpy("OUTPUT0"), 2 * x
    )


def test_health_metadata_and_readiness(served):
    frontend, _ = served
    c = http_client(frontend)
    assert c.is_server_live() and c.is_server_ready()
    assert c.is_model_ready("rm2") and c.is_model_ready("wnd", "1")
    meta = c.get_server_metadata()
    assert meta["name"] == "servelab" and "binary_tensor_data" in meta["extensions"]
    m = c.get_model_metadata("rm2")
    assert m["name"] == "rm2" and m["versions"] == ["1"]
    assert m["inputs"][0]["name"] == "INPUT0" and m["outputs"][0]["name"] == "OUTPUT0"
    assert m["parameters"]["slo_ms"] == 100.0
    assert c.get_model_config("wnd")["name"] == "wnd"
    assert {e["name"] for e in c.get_model_repository_index()} == {"rm2", "wnd"}


@pytest.mark.parametrize("binary", [True, False])
def test_infer_json_and_binary_match_the_session(served, binary):
    frontend, _ = served
    x = np.arange(3 * WIDTH, dtype=np.float32).reshape(3, WIDTH)
    r = http_client(frontend).infer(
        "rm2",
        [http_input(x, binary)],
        outputs=[httpclient.InferRequestedOutput("OUTPUT0", binary_data=binary)],
        request_id="req-7",
    )
    assert np.array_equal(r.as_numpy("OUTPUT0"), 2 * x)
    resp = r.get_response()
    assert resp["id"] == "req-7" and resp["model_name"] == "rm2"
    assert resp["parameters"]["servelab_model"] == "rm2_v1"
    assert ("data" in resp["outputs"][0]) == (not binary)


def test_unknown_model_version_route_and_output_are_named(served):
    frontend, _ = served
    c = http_client(frontend)
    x = np.ones((1, WIDTH), np.float32)
    with pytest.raises(InferenceServerException, match="unknown model 'nope'.*rm2, wnd") as e:
        c.infer("nope", [http_input(x)])
    assert e.value.status() == "404"
    with pytest.raises(InferenceServerException, match="unknown model 'nope'"):
        c.get_model_metadata("nope")
    with pytest.raises(InferenceServerException, match="no version '3'"):
        c.get_model_metadata("rm2", "3")
    assert not c.is_model_ready("nope")
    with pytest.raises(InferenceServerException, match="no output 'OUT'; its output is OUTPUT0"):
        c.infer("rm2", [http_input(x)], outputs=[httpclient.InferRequestedOutput("OUT")])
    status, body = raw_http(frontend, "POST", "/v2/models/nope/infer", b"{not even json")
    assert status == 404 and "unknown model 'nope'" in json.loads(body)["error"]
    status, body = raw_http(frontend, "GET", "/v2/nothing")
    assert status == 404 and "no route GET /v2/nothing" in json.loads(body)["error"]
    status, body = raw_http(frontend, "DELETE", "/v2/models/rm2/infer")
    assert status == 405 and "DELETE" in json.loads(body)["error"]


def test_wrong_shape_dtype_and_input_name_are_refused_by_name(served):
    frontend, _ = served
    c = http_client(frontend)
    with pytest.raises(InferenceServerException, match="do not fit rows of 4 features") as e:
        c.infer("rm2", [http_input(np.ones((2, 3), np.float32))])
    assert e.value.status() == "400"
    i = httpclient.InferInput("INPUT0", [1, WIDTH], "FP64")
    i.set_data_from_numpy(np.ones((1, WIDTH)))
    with pytest.raises(InferenceServerException, match="float64.*not float32"):
        c.infer("rm2", [i])
    i = httpclient.InferInput("INPUT0", [1], "BYTES")
    i.set_data_from_numpy(np.array([b"a"], dtype=np.object_))
    with pytest.raises(InferenceServerException, match="'BYTES' is not supported"):
        c.infer("rm2", [i])
    i = httpclient.InferInput("X", [1, WIDTH], "FP32")
    i.set_data_from_numpy(np.ones((1, WIDTH), np.float32))
    with pytest.raises(InferenceServerException, match="no input 'X'; its input is INPUT0"):
        c.infer("rm2", [i])
    with pytest.raises(InferenceServerException, match=r"shape=\[0, 4\]: the first dimension"):
        c.infer("rm2", [http_input(np.ones((0, WIDTH), np.float32))])
    _alive(frontend)


def test_malformed_json_and_bad_header_length(served):
    frontend, _ = served
    for body, headers, message in [
        (b'{"inputs": [', {}, "not valid JSON"),
        (b"\xff\xfe", {}, "not valid JSON"),
        (b"{}", {"Inference-Header-Content-Length": "x"}, "Inference-Header-Content-Length='x'"),
        (b"{}", {"Inference-Header-Content-Length": "99"}, "outside the body of 2 bytes"),
    ]:
        status, data = raw_http(frontend, "POST", "/v2/models/rm2/infer", body, headers)
        assert status == 400 and message in json.loads(data)["error"], data
    # Not HTTP at all: refused by the HTTP parser with 400, the connection closed.
    junk = socket.create_connection(("127.0.0.1", frontend.http_port), timeout=10)
    junk.sendall(b"\x00\x01 garbage \xff\r\n\r\n")
    reply = junk.recv(4096)
    assert reply.startswith(b"HTTP/1.") and b" 400 " in reply and b"Invalid method" in reply
    junk.close()
    _alive(frontend)


def test_oversized_bodies_get_413_naming_the_limit(served):
    frontend, _ = served
    check_oversized_bodies_get_413(frontend, WIDTH)
    _alive(frontend)


def test_compressed_bodies_are_read_and_bombs_and_bad_ones_refused(served):
    frontend, _ = served
    c = http_client(frontend)
    x = np.ones((2, WIDTH), np.float32)
    for algorithm in ("gzip", "deflate"):
        r = c.infer(
            "rm2",
            [http_input(x)],
            request_compression_algorithm=algorithm,
            response_compression_algorithm=algorithm,
        )
        assert np.array_equal(r.as_numpy("OUTPUT0"), 2 * x)
    bomb = gzip.compress(b"{" + b" " * 1_000_000 + b"}")  # 1 KB that inflates to 1 MB
    status, data = raw_http(
        frontend, "POST", "/v2/models/rm2/infer", bomb, {"Content-Encoding": "gzip"}
    )
    assert status == 413 and "max_body_bytes=4096" in json.loads(data)["error"]
    status, data = raw_http(
        frontend, "POST", "/v2/models/rm2/infer", b"xx", {"Content-Encoding": "gzip"}
    )
    assert status == 400 and "could not be read" in json.loads(data)["error"]
    _alive(frontend)


def test_token_required_when_set():
    session = FakeSession()
    frontend = started(session, grpc_port=None, token="s3cret")
    try:
        c = http_client(frontend)
        x = np.ones((1, WIDTH), np.float32)
        with pytest.raises(InferenceServerException, match="no Authorization") as e:
            c.infer("rm2", [http_input(x)])
        assert e.value.status() == "401"
        with pytest.raises(InferenceServerException, match="a wrong Authorization"):
            c.get_model_metadata("rm2", headers={"Authorization": "Bearer nope"})
        assert not c.is_server_live()  # 401
        ok = {"Authorization": "Bearer s3cret"}
        assert c.is_server_live(headers=ok)
        r = c.infer("rm2", [http_input(x)], headers=ok)
        assert np.array_equal(r.as_numpy("OUTPUT0"), 2 * x)
        status, _ = raw_http(frontend, "GET", "/metrics")
        assert status == 401
        status, _ = raw_http(frontend, "GET", "/metrics", headers=ok)
        assert status == 200
    finally:
        frontend.stop(grace_s=0)
        session.close()


def test_dropped_queries_are_answered_with_the_reason(served):
    frontend, _ = served
    with pytest.raises(InferenceServerException, match="query \\d+ dropped: queue full") as e:
        http_client(frontend).infer("wnd", [http_input(np.ones((1, WIDTH), np.float32))])
    assert e.value.status() == "503"


def test_overload_is_refused_and_timeouts_answered_while_the_server_keeps_serving(served):
    frontend, session = served
    session.hold.clear()  # the session answers nothing for now
    import concurrent.futures

    x = np.ones((1, WIDTH), np.float32)
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        pending = [
            pool.submit(http_client(frontend).infer, "rm2", [http_input(x)]) for _ in range(4)
        ]
        deadline = time.monotonic() + 5
        while session.submitted < 4 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert session.submitted == 4
        with pytest.raises(InferenceServerException, match="max_concurrent=4") as e:
            http_client(frontend).infer("rm2", [http_input(x)])
        assert e.value.status() == "503"
        for f in pending:  # request_timeout_s=2: each gets 504 naming the limit
            with pytest.raises(InferenceServerException, match="request_timeout_s=2"):
                f.result(timeout=20)
    session.hold.set()  # the queries end; their places are free again
    deadline = time.monotonic() + 5
    while frontend.service.metrics.value("nv_inference_request_success", "rm2") < 4:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    _alive(frontend)


def test_slow_and_vanishing_clients_leave_the_server_serving(served):
    frontend, _ = served
    head = b"POST /v2/models/rm2/infer HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n"
    # One that leaves halfway through its body.
    gone = socket.create_connection(("127.0.0.1", frontend.http_port), timeout=10)
    gone.sendall(head + b"{")
    gone.close()
    _alive(frontend)
    # Four whose bodies stall: each holds a place among max_concurrent=4 while it is read, so a
    # fifth request is refused 503, and each gets 504 after request_timeout_s=2.
    slow = []
    for _ in range(4):
        s = socket.create_connection(("127.0.0.1", frontend.http_port), timeout=10)
        s.sendall(head + b"{" * 10)
        slow.append(s)
    deadline = time.monotonic() + 5
    while frontend.service.reading < 4:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    with pytest.raises(InferenceServerException, match="max_concurrent=4") as e:
        http_client(frontend).infer("rm2", [http_input(np.ones((1, WIDTH), np.float32))])
    assert e.value.status() == "503"
    for s in slow:
        reply = s.recv(4096)
        s.close()
        assert reply.startswith(b"HTTP/1.1 504") and b"did not arrive within" in reply
    _alive(frontend)


def test_stopping_answers_the_requests_still_waiting():
    session = FakeSession()
    session.hold.clear()
    frontend = started(session)
    import concurrent.futures

    x = np.ones((1, WIDTH), np.float32)
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        h = pool.submit(http_client(frontend).infer, "rm2", [http_input(x)])
        g = pool.submit(grpc_infer, frontend, x)
        deadline = time.monotonic() + 5
        while session.submitted < 2:
            assert time.monotonic() < deadline
            time.sleep(0.01)
        frontend.stop(grace_s=0.1)
        with pytest.raises(InferenceServerException, match="server stopped before") as e:
            h.result(timeout=10)
        assert e.value.status() == "503"
        with pytest.raises(InferenceServerException, match="server stopped before"):
            g.result(timeout=10)
    session.close()


def grpc_infer(frontend, x):
    import tritonclient.grpc as grpcclient

    from .frontend_support import grpc_client

    i = grpcclient.InferInput("INPUT0", list(x.shape), "FP32")
    i.set_data_from_numpy(x)
    return grpc_client(frontend).infer("rm2", [i])


def test_addresses_ports_and_tokens_are_checked_when_made_and_bound():
    from servelab.frontend import Frontend

    session = FakeSession()
    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen()
    port = busy.getsockname()[1]
    try:
        with pytest.raises(ValueError, match="host='0.0.0.0' is not a loopback address"):
            Frontend(session, host="0.0.0.0")
        with pytest.raises(ValueError, match="http_port=70000 must be a port number"):
            Frontend(session, http_port=70000)
        with pytest.raises(ValueError, match="both None"):
            Frontend(session, http_port=None, grpc_port=None)
        with pytest.raises(ValueError, match="token must be a non-empty string"):
            Frontend(session, token=" ")
        with pytest.raises(ValueError, match="names model 'x'"):
            Frontend(session, inputs={"x": "FP32:4"})
        with pytest.raises(OSError, match="address already in use"):
            Frontend(session, http_port=port, grpc_port=None).start()
        with pytest.raises(OSError, match=f"gRPC could not bind 127.0.0.1:{port}"):
            Frontend(session, http_port=0, grpc_port=port).start()
        Frontend(session, host="0.0.0.0", allow_remote=True)  # allowed (not started here)
        if socket.has_ipv6:  # IPv6 loopback is loopback too
            f = started(session, host="::1", grpc_port=None)
            try:
                assert f.http_url.startswith("http://[::1]:") and http_client(f).is_server_live()
            finally:
                f.stop(grace_s=0)
    finally:
        busy.close()
        session.close()


def test_per_request_goals_reach_submit_when_the_session_takes_them():
    class GoalSession(FakeSession):
        def submit(self, app, inputs=None, *, size=None, slo_ms=None, accuracy=None):
            self.goals = (slo_ms, accuracy)
            return super().submit(app, inputs, size=size)

    for session, takes in ((GoalSession(), True), (FakeSession(), False)):
        frontend = started(session)
        try:
            x = np.ones((1, WIDTH), np.float32)
            h = http_client(frontend)
            if takes:
                h.infer("rm2", [http_input(x)], parameters={"slo_ms": 20, "accuracy": 0.7})
                assert session.goals == (20.0, 0.7)
                import tritonclient.grpc as grpcclient

                from .frontend_support import grpc_client

                i = grpcclient.InferInput("INPUT0", [1, WIDTH], "FP32")
                i.set_data_from_numpy(x)
                grpc_client(frontend).infer("rm2", [i], parameters={"slo_ms": 35.5})
                assert session.goals == (35.5, None)
                with pytest.raises(InferenceServerException, match="slo_ms='x' must be a number"):
                    h.infer("rm2", [http_input(x)], parameters={"slo_ms": "x"})
            else:
                with pytest.raises(InferenceServerException, match="takes no per-request slo_ms"):
                    h.infer("rm2", [http_input(x)], parameters={"slo_ms": 20})
        finally:
            frontend.stop(grace_s=0)
            session.close()
