"""The front-end's codec: Open Inference Protocol tensors (JSON, the binary tensor extension,
gRPC messages) to numpy and back, and every refusal naming the field and the value."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("tritonclient.grpc")

from tritonclient.grpc import service_pb2 as pb2  # noqa: E402

from servelab.frontend.codec import (  # noqa: E402
    DTYPES,
    InferResponse,
    decode_grpc,
    decode_http,
    encode_grpc,
    encode_http,
)
from servelab.frontend.errors import FrontendError  # noqa: E402


def _body(inputs, **extra):
    return json.dumps({"inputs": inputs, **extra}).encode()


@pytest.mark.parametrize("name", sorted(DTYPES))
def test_every_dtype_round_trips_as_json_and_binary(name):
    dtype = DTYPES[name]
    x = (np.arange(6) % 2).astype(dtype).reshape(2, 3)
    values = x.ravel().tolist()
    req = decode_http(
        _body([{"name": "INPUT0", "datatype": name, "shape": [2, 3], "data": values}]), None
    )
    ((got_name, got),) = req.inputs
    assert got_name == "INPUT0" and got.dtype == dtype and np.array_equal(got, x)
    header = _body(
        [
            {
                "name": "INPUT0",
                "datatype": name,
                "shape": [2, 3],
                "parameters": {"binary_data_size": x.nbytes},
            }
        ]
    )
    req = decode_http(header + x.tobytes(), len(header))
    assert np.array_equal(req.inputs[0][1], x) and req.inputs[0][1].dtype == dtype
    for binary in (False, True):
        resp = InferResponse("m", "1", "r1", [("OUTPUT0", x)], {"k": 1})
        req.binary_output = binary
        body, length = encode_http(resp, req)
        assert (length is not None) == binary
        doc = json.loads(body[:length] if length else body)
        assert doc["outputs"][0]["datatype"] == name and doc["outputs"][0]["shape"] == [2, 3]
        assert doc["id"] == "r1" and doc["parameters"] == {"k": 1}
        if binary:
            assert np.array_equal(np.frombuffer(body[length:], dtype).reshape(2, 3), x)
        else:
            assert np.array_equal(np.asarray(doc["outputs"][0]["data"], dtype).reshape(2, 3), x)


def test_nested_json_data_and_two_binary_inputs_in_order():
    req = decode_http(
        _body([{"name": "a", "datatype": "INT32", "shape": [2, 2], "data": [[1, 2], [3, 4]]}]),
        None,
    )
    assert req.inputs[0][1].tolist() == [[1, 2], [3, 4]]
    a, b = np.ones(3, np.float32), np.arange(2, dtype=np.int64)
    header = _body(
        [
            {"name": "a", "datatype": "FP32", "shape": [3], "parameters": {"binary_data_size": 12}},
            {
                "name": "b",
                "datatype": "INT64",
                "shape": [2],
                "parameters": {"binary_data_size": 16},
            },
        ]
    )
    req = decode_http(header + a.tobytes() + b.tobytes(), len(header))
    assert [n for n, _ in req.inputs] == ["a", "b"]
    assert np.array_equal(req.inputs[1][1], b)


@pytest.mark.parametrize(
    ("body", "header_length", "message"),
    [
        (b"{not json", None, "not valid JSON"),
        (b"[1, 2]", None, "must be a JSON object"),
        (b"{}", None, "inputs must be a list"),
        (_body([5]), None, "inputs[0] must be an object"),
        (_body([{"datatype": "FP32", "shape": [1], "data": [1]}]), None, "inputs[0].name=None"),
        (
            _body([{"name": "x", "datatype": "BYTES", "shape": [1], "data": ["a"]}]),
            None,
            "inputs[0] (x).datatype='BYTES' is not supported",
        ),
        (
            _body([{"name": "x", "datatype": "BF16", "shape": [1], "data": [1]}]),
            None,
            "'BF16' is not supported",
        ),
        (
            _body([{"name": "x", "datatype": "FLOAT", "shape": [1], "data": [1]}]),
            None,
            "datatype='FLOAT' is not a data type; one of BOOL",
        ),
        (
            _body([{"name": "x", "datatype": "FP32", "shape": [1, -2], "data": [1]}]),
            None,
            "shape=[1, -2] has a negative dimension",
        ),
        (
            _body([{"name": "x", "datatype": "FP32", "shape": "2", "data": [1]}]),
            None,
            "shape='2' must be a list of integers",
        ),
        (
            _body([{"name": "x", "datatype": "FP32", "shape": [2, 2], "data": [1, 2, 3]}]),
            None,
            "data has 3 values but shape=[2, 2] needs 4",
        ),
        (
            _body([{"name": "x", "datatype": "FP32", "shape": [1], "data": ["a"]}]),
            None,
            "not numbers",
        ),
        (
            _body([{"name": "x", "datatype": "INT8", "shape": [1], "data": [300]}]),
            None,
            "holds 300, out of range for INT8",
        ),
        (
            _body([{"name": "x", "datatype": "INT32", "shape": [1], "data": [1.5]}]),
            None,
            "non-integer values for INT32",
        ),
        (
            _body([{"name": "x", "datatype": "BOOL", "shape": [1], "data": [2]}]),
            None,
            "non-boolean values for BOOL",
        ),
        (
            _body([{"name": "x", "datatype": "FP32", "shape": [2], "data": [[1], [2, 3]]}]),
            None,
            "not a regular list",
        ),
        (
            _body([{"name": "x", "datatype": "FP32", "shape": [1]}]),
            None,
            "neither data nor parameters.binary_data_size",
        ),
        (
            _body(
                [
                    {
                        "name": "x",
                        "datatype": "FP32",
                        "shape": [2],
                        "parameters": {"binary_data_size": 4},
                    }
                ]
            ),
            0,
            "binary_data_size=4 but shape=[2] of FP32 needs 8 bytes",
        ),
        (b"{}", 10, "Inference-Header-Content-Length=10 is outside the body of 2 bytes"),
        (
            _body([{"name": "x", "datatype": "FP32", "shape": [1] * 100, "data": [1]}]),
            None,
            "shape has 100 dimensions; at most 32",
        ),
        (
            _body([{"name": "x", "datatype": "FP16", "shape": [1], "data": [1e10]}]),
            None,
            "holds 1e+10, out of range for FP16",
        ),
        (
            _body([{"name": "x", "datatype": "INT64", "shape": [1], "data": [2**64]}]),
            None,
            "not numbers",
        ),
        (b"[" * 5000 + b"]" * 5000, None, "nested too deeply"),
        (_body([], id=5), None, "id=5 must be a string"),
        (_body([], parameters=[]), None, "parameters must be an object, got list"),
    ],
)
def test_bad_http_bodies_name_the_field_and_value(body, header_length, message):
    if header_length == 0:
        header_length = len(body)
    with pytest.raises(FrontendError, match=None) as e:
        decode_http(body, header_length)
    assert e.value.kind == "invalid" and message in e.value.message, e.value.message


def test_binary_bytes_short_or_left_over_are_refused():
    header = _body(
        [{"name": "x", "datatype": "FP32", "shape": [2], "parameters": {"binary_data_size": 8}}]
    )
    with pytest.raises(FrontendError, match="only 4 binary bytes left"):
        decode_http(header + b"\0" * 4, len(header))
    with pytest.raises(FrontendError, match="3 binary bytes that no input"):
        decode_http(header + b"\0" * 11, len(header))


def test_grpc_raw_and_typed_contents_and_their_refusals():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    msg = pb2.ModelInferRequest(model_name="m", id="q")
    msg.inputs.add(name="INPUT0", datatype="FP32", shape=[2, 3])
    msg.raw_input_contents.append(x.tobytes())
    req = decode_grpc(msg)
    assert req.id == "q" and np.array_equal(req.inputs[0][1], x)
    typed = pb2.ModelInferRequest(model_name="m")
    t = typed.inputs.add(name="INPUT0", datatype="INT16", shape=[3])
    t.contents.int_contents.extend([1, -2, 3])
    assert decode_grpc(typed).inputs[0][1].tolist() == [1, -2, 3]
    t.contents.int_contents.append(40000)
    with pytest.raises(FrontendError, match="has 4 values but shape=\\[3\\] needs 3"):
        decode_grpc(typed)
    t.shape[:] = [4]
    with pytest.raises(FrontendError, match="holds 40000, out of range for INT16"):
        decode_grpc(typed)
    msg.raw_input_contents[0] = x.tobytes()[:-4]
    with pytest.raises(FrontendError, match="raw_input_contents\\[0\\] \\(INPUT0\\) has 20 bytes"):
        decode_grpc(msg)
    bad = pb2.ModelInferRequest(model_name="m")
    bad.inputs.add(name="INPUT0", datatype="BYTES", shape=[1])
    with pytest.raises(FrontendError, match="'BYTES' is not supported"):
        decode_grpc(bad)
    out = encode_grpc(InferResponse("m", "1", "q", [("OUTPUT0", x)], {"late": True, "n": 2}), pb2)
    assert out.outputs[0].datatype == "FP32" and list(out.outputs[0].shape) == [2, 3]
    assert np.array_equal(np.frombuffer(out.raw_output_contents[0], np.float32).reshape(2, 3), x)
    assert out.parameters["late"].bool_param and out.parameters["n"].int64_param == 2


# --- fuzzing: any body is decoded or refused with a FrontendError, nothing else ---------------

hypothesis = pytest.importorskip("hypothesis", reason="hypothesis is not installed")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

FUZZ = settings(
    max_examples=150, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)
tensor = st.fixed_dictionaries(
    {
        "name": st.sampled_from(["INPUT0", "", 5]),
        "datatype": st.sampled_from([*DTYPES, "BYTES", "X", 3]),
        "shape": st.lists(st.integers(-2, 4), max_size=4) | json_values,
    },
    optional={
        "data": json_values,
        "parameters": st.fixed_dictionaries({"binary_data_size": st.integers(-1, 64)})
        | json_values,
    },
)


@FUZZ
@given(
    inputs=st.lists(tensor, max_size=3) | json_values,
    extra=st.binary(max_size=64),
    header=st.booleans(),
)
def test_fuzzed_http_bodies_decode_or_refuse(inputs, extra, header):
    head = json.dumps({"inputs": inputs}).encode()
    try:
        decode_http(head + extra if header else head, len(head) if header else None)
    except FrontendError as e:
        assert e.kind == "invalid" and e.message


@FUZZ
@given(data=st.binary(max_size=200))
def test_fuzzed_grpc_messages_decode_or_refuse(data):
    from google.protobuf.message import DecodeError

    try:
        message = pb2.ModelInferRequest.FromString(data)
    except DecodeError:
        return  # the server answers INVALID_ARGUMENT before decoding (test_frontend_grpc)
    try:
        decode_grpc(message)
    except FrontendError as e:
        assert e.kind == "invalid" and e.message


@FUZZ
@given(
    tensors=st.lists(
        st.tuples(
            st.sampled_from([*DTYPES, "BYTES", "", "X"]),
            st.lists(st.integers(-2, 5), max_size=4),
            st.binary(max_size=40),
            st.lists(st.integers(-(2**40), 2**40), max_size=6),
            st.lists(st.floats(width=32), max_size=6),
        ),
        max_size=3,
    ),
    raw=st.booleans(),
)
def test_fuzzed_grpc_tensors_decode_or_refuse(tensors, raw):
    message = pb2.ModelInferRequest(model_name="m")
    for datatype, shape, blob, ints, floats in tensors:
        t = message.inputs.add(name="INPUT0", datatype=datatype, shape=shape)
        if raw:
            message.raw_input_contents.append(blob)
        else:
            t.contents.int64_contents.extend(ints)
            t.contents.int_contents.extend([max(-(2**31), min(2**31 - 1, v)) for v in ints])
            t.contents.fp32_contents.extend(floats)
    try:
        decode_grpc(message)
    except FrontendError as e:
        assert e.kind == "invalid" and e.message
