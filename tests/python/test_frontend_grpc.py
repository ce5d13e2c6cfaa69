"""The front-end over gRPC with Triton's own client (tritonclient.grpc) and a raw channel:
health, metadata, inference, malformed protobuf, oversized messages, tokens and unknown
models, each answered with a status code and a message naming the problem. The session is a test
double (frontend_support.FakeSession); test_frontend_session.py runs the real one."""

from __future__ import annotations

import time

import numpy as np
import pytest

pytest.importorskip("tritonclient.grpc")
pytest.importorskip("grpc")

import grpc  # noqa: E402
import tritonclient.grpc as grpcclient  # noqa: E402
from tritonclient.grpc import service_pb2 as pb2  # noqa: E402
from tritonclient.utils import InferenceServerException  # noqa: E402

from servelab.frontend import Limits  # noqa: E402

from .frontend_support import WIDTH, FakeSession, grpc_client, started  # noqa: E402


@pytest.fixture
def served():
    session = FakeSession(drop_app="wnd")
    frontend = started(session, http_port=None, limits=Limits(max_body_bytes=4096))
    yield frontend, session
    frontend.stop(grace_s=0)
    session.close()


def _input(x, dtype="FP32"):
    i = grpcclient.InferInput("INPUT0", list(x.shape), dtype)
    i.set_data_from_numpy(x)
    return i


def _alive(frontend):
    x = np.ones((2, WIDTH), np.float32)
    assert np.array_equal(
        grpc_client(frontend).infer("rm2", [_input(x)]).as_numpy("OUTPUT0"), 2 * x
    )


def test_health_metadata_config_and_index(served):
    frontend, _ = served
    c = grpc_client(frontend)
    assert c.is_server_live() and c.is_server_ready() and c.is_model_ready("wnd")
    meta = c.get_server_metadata(as_json=True)
    assert meta["name"] == "servelab" and "binary_tensor_data" in meta["extensions"]
    m = c.get_model_metadata("rm2", as_json=True)
    assert m["versions"] == ["1"] and m["inputs"][0]["name"] == "INPUT0"
    assert c.get_model_config("rm2", as_json=True)["config"]["name"] == "rm2"
    index = c.get_model_repository_index(as_json=True)["models"]
    assert [e["name"] for e in index] == ["rm2", "wnd"]
    with pytest.raises(InferenceServerException, match="UNIMPLEMENTED"):
        c.get_system_shared_memory_status()


def test_infer_matches_the_session_and_carries_its_parameters(served):
    frontend, _ = served
    x = np.arange(3 * WIDTH, dtype=np.float32).reshape(3, WIDTH)
    r = grpc_client(frontend).infer("rm2", [_input(x)], request_id="g1")
    assert np.array_equal(r.as_numpy("OUTPUT0"), 2 * x)
    resp = r.get_response(as_json=True)
    assert resp["id"] == "g1" and resp["parameters"]["servelab_model"]["string_param"] == "rm2_v1"


def test_errors_name_the_model_shape_dtype_and_reason(served):
    frontend, _ = served
    c = grpc_client(frontend)
    x = np.ones((1, WIDTH), np.float32)
    with pytest.raises(InferenceServerException, match="unknown model 'nope'") as e:
        c.infer("nope", [_input(x)])
    assert e.value.status() == "StatusCode.NOT_FOUND"
    with pytest.raises(InferenceServerException, match="unknown model 'nope'"):
        c.get_model_metadata("nope")
    with pytest.raises(InferenceServerException, match="do not fit rows of 4 features") as e:
        c.infer("rm2", [_input(np.ones((1, 5), np.float32))])
    assert e.value.status() == "StatusCode.INVALID_ARGUMENT"
    with pytest.raises(InferenceServerException, match="int32.*not float32"):
        c.infer("rm2", [_input(np.ones((1, WIDTH), np.int32), "INT32")])
    with pytest.raises(InferenceServerException, match="'BYTES' is not supported"):
        c.infer("rm2", [_input(np.array([b"a"], dtype=np.object_), "BYTES")])
    with pytest.raises(InferenceServerException, match="dropped: queue full") as e:
        c.infer("wnd", [_input(x)])
    assert e.value.status() == "StatusCode.UNAVAILABLE"
    _alive(frontend)


def test_malformed_protobuf_and_oversized_messages(served):
    frontend, _ = served
    with grpc.insecure_channel(frontend.grpc_address) as channel:
        call = channel.unary_unary(
            "/inference.GRPCInferenceService/ModelInfer",
            request_serializer=lambda b: b,
            response_deserializer=pb2.ModelInferResponse.FromString,
        )
        with pytest.raises(grpc.RpcError) as e:
            call(b"\xff\xff\xff\xff garbage", timeout=10)
        assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert "not a valid inference.ModelInferRequest protobuf" in e.value.details()
    big = np.ones((300, WIDTH), np.float32)  # 4800 bytes, over 4096
    with pytest.raises(InferenceServerException, match="larger than max") as e:
        grpc_client(frontend).infer("rm2", [_input(big)])
    assert e.value.status() == "StatusCode.RESOURCE_EXHAUSTED"
    _alive(frontend)


def test_token_required_in_metadata():
    session = FakeSession()
    frontend = started(session, http_port=None, token="s3cret")
    try:
        c = grpc_client(frontend)
        x = np.ones((1, WIDTH), np.float32)
        with pytest.raises(InferenceServerException, match="no Authorization") as e:
            c.infer("rm2", [_input(x)])
        assert e.value.status() == "StatusCode.UNAUTHENTICATED"
        with pytest.raises(InferenceServerException, match="a wrong Authorization"):
            c.is_server_live(headers={"authorization": "Bearer nope"})
        r = c.infer("rm2", [_input(x)], headers={"authorization": "Bearer s3cret"})
        assert np.array_equal(r.as_numpy("OUTPUT0"), 2 * x)
        import queue

        answers: queue.Queue = queue.Queue()
        for headers, expect in (
            (None, "no Authorization"),
            ({"authorization": "Bearer s3cret"}, None),
        ):
            stream = grpc_client(frontend)
            stream.start_stream(
                callback=lambda result, error: answers.put((result, error)), headers=headers
            )
            try:
                stream.async_stream_infer("rm2", [_input(x)])
            except InferenceServerException:  # refused at once: the stream already ended
                assert expect
            result, error = answers.get(timeout=10)
            stream.stop_stream()
            if expect:
                assert error is not None and expect in str(error)
            else:
                assert error is None and np.array_equal(result.as_numpy("OUTPUT0"), 2 * x)
    finally:
        frontend.stop(grace_s=0)
        session.close()


def test_a_client_that_gives_up_leaves_its_query_counted_and_the_server_serving(served):
    frontend, session = served
    session.hold.clear()
    x = np.ones((1, WIDTH), np.float32)
    with pytest.raises(InferenceServerException, match="Deadline"):
        grpc_client(frontend).infer("rm2", [_input(x)], client_timeout=1.0)
    session.hold.set()
    metrics = frontend.service.metrics
    deadline = time.monotonic() + 5
    while session.submitted and metrics.value("nv_inference_request_success", "rm2") < 1:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    assert metrics.value("nv_inference_pending_request_count", "rm2") == 0
    _alive(frontend)


def test_streaming_answers_every_request_of_the_stream_by_id(served):
    import queue

    frontend, _ = served
    answers: queue.Queue = queue.Queue()
    c = grpc_client(frontend)
    c.start_stream(callback=lambda result, error: answers.put((result, error)))
    try:
        x = np.arange(2 * WIDTH, dtype=np.float32).reshape(2, WIDTH)
        for k in range(6):
            model = "nope" if k == 2 else "wnd" if k == 4 else "rm2"
            c.async_stream_infer(model, [_input(x * k)], request_id=f"r{k}")
        got = {}
        for _ in range(6):
            result, error = answers.get(timeout=10)
            if error is not None:
                got[str(error)] = None
            else:
                got[result.get_response().id] = result.as_numpy("OUTPUT0")
    finally:
        c.stop_stream()
    for k in (0, 1, 3, 5):
        assert np.array_equal(got[f"r{k}"], 2 * x * k)
    errors = [k for k, v in got.items() if v is None]
    assert any("unknown model 'nope'" in e for e in errors)
    assert any("dropped: queue full" in e for e in errors)
    _alive(frontend)
