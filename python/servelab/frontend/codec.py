"""Open Inference Protocol tensors <-> numpy: the HTTP/REST JSON body with its binary tensor
extension, and the gRPC ``ModelInferRequest`` / ``ModelInferResponse`` messages.

Data types are the protocol's names: BOOL, UINT8..UINT64, INT8..INT64, FP16, FP32, FP64. BYTES and
BF16 are refused as unsupported (no executor reads strings; numpy has no bfloat16). Every refusal is
a `FrontendError` of kind "invalid" naming the field (``inputs[0].shape``) and the value.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .errors import FrontendError

DTYPES: dict[str, np.dtype] = {
    "BOOL": np.dtype(np.bool_),
    "UINT8": np.dtype(np.uint8),
    "UINT16": np.dtype(np.uint16),
    "UINT32": np.dtype(np.uint32),
    "UINT64": np.dtype(np.uint64),
    "INT8": np.dtype(np.int8),
    "INT16": np.dtype(np.int16),
    "INT32": np.dtype(np.int32),
    "INT64": np.dtype(np.int64),
    "FP16": np.dtype(np.float16),
    "FP32": np.dtype(np.float32),
    "FP64": np.dtype(np.float64),
}
UNSUPPORTED = {
    "BYTES": "strings are not served (the executors read numeric rows)",
    "BF16": "numpy has no bfloat16; send FP32",
}
_NAMES = {v: k for k, v in DTYPES.items()}
# The most dimensions a tensor may have (numpy's own limit is 64).
MAX_RANK = 32
# gRPC's typed contents field per data type (FP16 travels only as raw bytes).
_CONTENTS = {
    "BOOL": "bool_contents",
    "UINT8": "uint_contents",
    "UINT16": "uint_contents",
    "UINT32": "uint_contents",
    "UINT64": "uint64_contents",
    "INT8": "int_contents",
    "INT16": "int_contents",
    "INT32": "int_contents",
    "INT64": "int64_contents",
    "FP32": "fp32_contents",
    "FP64": "fp64_contents",
}


@dataclass
class RequestedOutput:
    name: str
    binary: bool | None = None  # HTTP only: None = the request's binary_data_output default


@dataclass
class InferRequest:
    """A decoded inference request: its inputs as numpy arrays, in the order sent."""

    id: str = ""
    inputs: list[tuple[str, np.ndarray]] = field(default_factory=list)
    outputs: list[RequestedOutput] | None = None  # None: every output
    binary_output: bool = False  # HTTP's "binary_data_output" request parameter
    parameters: dict[str, Any] = field(default_factory=dict)  # the request's parameters


@dataclass
class InferResponse:
    model_name: str
    model_version: str
    id: str
    outputs: list[tuple[str, np.ndarray]]
    parameters: dict[str, bool | int | float | str] = field(default_factory=dict)


def invalid(message: str) -> FrontendError:
    return FrontendError("invalid", message)


def numpy_dtype(name: Any, where: str) -> np.dtype:
    """The numpy dtype of a protocol data type name; FrontendError naming ``where`` otherwise."""
    if not isinstance(name, str):
        raise invalid(f"{where}={name!r} must be a data type name such as 'FP32'")
    if name in DTYPES:
        return DTYPES[name]
    if name in UNSUPPORTED:
        raise invalid(f"{where}={name!r} is not supported: {UNSUPPORTED[name]}")
    raise invalid(f"{where}={name!r} is not a data type; one of {', '.join(DTYPES)}")


def datatype_name(dtype: np.dtype) -> str:
    """The protocol's name of a numpy dtype (ValueError for one it has none for)."""
    try:
        return _NAMES[np.dtype(dtype)]
    except KeyError:
        raise ValueError(f"dtype {np.dtype(dtype)} has no Open Inference Protocol name") from None


def check_shape(shape: Any, where: str) -> tuple[int, ...]:
    if not isinstance(shape, list | tuple) or not all(
        isinstance(d, int) and not isinstance(d, bool) for d in shape
    ):
        raise invalid(f"{where}={shape!r} must be a list of integers")
    if any(d < 0 for d in shape):
        raise invalid(f"{where}={list(shape)} has a negative dimension")
    if len(shape) > MAX_RANK:
        raise invalid(f"{where} has {len(shape)} dimensions; at most {MAX_RANK}")
    return tuple(int(d) for d in shape)


def _count(shape: tuple[int, ...]) -> int:
    return math.prod(shape)


def _check_range(values: np.ndarray, dtype: np.dtype, where: str) -> None:
    """Values (wider integers or floats) that fit ``dtype``, else a FrontendError."""
    if values.size == 0:
        return
    if dtype.kind == "f" and values.dtype.kind in "iuf":
        finite = np.abs(values[np.isfinite(values)].astype(np.float64))
        if finite.size and finite.max() > np.finfo(dtype).max:
            raise invalid(f"{where} holds {finite.max():g}, out of range for {_NAMES[dtype]}")
        return
    if dtype.kind not in "iu":
        return
    info = np.iinfo(dtype)
    low, high = int(values.min()), int(values.max())
    if low < info.min or high > info.max:
        bad = low if low < info.min else high
        raise invalid(f"{where} holds {bad}, out of range for {_NAMES[dtype]}")


def _from_json_data(data: Any, dtype: np.dtype, shape: tuple[int, ...], where: str) -> np.ndarray:
    if not isinstance(data, list):
        raise invalid(f"{where}.data must be a list of values, got {type(data).__name__}")
    try:
        raw = np.asarray(data)
    except (ValueError, TypeError, OverflowError):
        raise invalid(f"{where}.data is not a regular list of numbers") from None
    kind = raw.dtype.kind
    name = _NAMES[dtype]
    if raw.size and kind not in "biuf":
        raise invalid(f"{where}.data holds values that are not numbers ({raw.dtype}) for {name}")
    if raw.size and dtype.kind == "b" and kind != "b":
        raise invalid(f"{where}.data holds non-boolean values for BOOL (use true/false)")
    if raw.size and dtype.kind in "iu" and kind not in "biu":
        raise invalid(f"{where}.data holds non-integer values for {name}")
    if raw.size != _count(shape):
        raise invalid(
            f"{where}.data has {raw.size} values but shape={list(shape)} needs {_count(shape)}"
        )
    _check_range(raw, dtype, f"{where}.data")
    return raw.astype(dtype).reshape(shape)


def _parameters(value: Any, where: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise invalid(f"{where} must be an object, got {type(value).__name__}")
    return value


def decode_http(body: bytes, header_length: int | None) -> InferRequest:
    """The JSON request body, and with ``header_length`` (the ``Inference-Header-Content-Length``
    header) the binary tensor extension: the JSON is the first ``header_length`` bytes and each
    input with ``parameters.binary_data_size`` takes its bytes, in input order, from the rest."""
    if header_length is None:
        header, rest = body, b""
    else:
        if header_length < 0 or header_length > len(body):
            raise invalid(
                f"Inference-Header-Content-Length={header_length} is outside the body of "
                f"{len(body)} bytes"
            )
        header, rest = body[:header_length], memoryview(body)[header_length:]
    try:
        doc = json.loads(header)
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise invalid(f"the request body is not valid JSON: {e}") from None
    except RecursionError:
        raise invalid("the request body is JSON nested too deeply") from None
    if not isinstance(doc, dict):
        raise invalid(f"the request body must be a JSON object, got {type(doc).__name__}")
    request = InferRequest()
    rid = doc.get("id", "")
    if not isinstance(rid, str):
        raise invalid(f"id={rid!r} must be a string")
    request.id = rid
    params = _parameters(doc.get("parameters"), "parameters")
    request.parameters = params
    request.binary_output = bool(params.get("binary_data_output", False))
    inputs = doc.get("inputs")
    if not isinstance(inputs, list):
        raise invalid(f"inputs must be a list of tensors, got {inputs!r:.80}")
    offset = 0
    for i, tensor in enumerate(inputs):
        where = f"inputs[{i}]"
        if not isinstance(tensor, dict):
            raise invalid(f"{where} must be an object with name, datatype, shape and data")
        name = tensor.get("name")
        if not isinstance(name, str) or not name:
            raise invalid(f"{where}.name={name!r} must be a non-empty string")
        where = f"inputs[{i}] ({name})"
        dtype = numpy_dtype(tensor.get("datatype"), f"{where}.datatype")
        shape = check_shape(tensor.get("shape"), f"{where}.shape")
        tparams = _parameters(tensor.get("parameters"), f"{where}.parameters")
        size = tparams.get("binary_data_size")
        if size is not None:
            if not isinstance(size, int) or isinstance(size, bool) or size < 0:
                raise invalid(
                    f"{where}.parameters.binary_data_size={size!r} must be an integer >= 0"
                )
            if "data" in tensor:
                raise invalid(f"{where} has both data and binary_data_size")
            need = _count(shape) * dtype.itemsize
            if size != need:
                raise invalid(
                    f"{where}.parameters.binary_data_size={size} but shape={list(shape)} of "
                    f"{tensor['datatype']} needs {need} bytes"
                )
            if offset + size > len(rest):
                raise invalid(
                    f"{where}.parameters.binary_data_size={size}: the body has only "
                    f"{len(rest) - offset} binary bytes left"
                )
            array = np.frombuffer(rest[offset : offset + size], dtype=dtype).reshape(shape).copy()
            offset += size
        else:
            if "data" not in tensor:
                raise invalid(f"{where} has neither data nor parameters.binary_data_size")
            array = _from_json_data(tensor["data"], dtype, shape, where)
        request.inputs.append((name, array))
    if offset != len(rest):
        raise invalid(
            f"the body has {len(rest) - offset} binary bytes that no input's binary_data_size "
            "claims"
        )
    outputs = doc.get("outputs")
    if outputs is not None:
        if not isinstance(outputs, list):
            raise invalid(f"outputs must be a list, got {type(outputs).__name__}")
        request.outputs = []
        for i, out in enumerate(outputs):
            if not isinstance(out, dict) or not isinstance(out.get("name"), str):
                raise invalid(f"outputs[{i}] must be an object with a name")
            oparams = _parameters(out.get("parameters"), f"outputs[{i}].parameters")
            binary = oparams.get("binary_data")
            request.outputs.append(
                RequestedOutput(out["name"], None if binary is None else bool(binary))
            )
    return request


def encode_http(
    response: InferResponse, request: InferRequest | None = None
) -> tuple[bytes, int | None]:
    """The JSON response body and, when any output goes as binary data, the header length to send
    as ``Inference-Header-Content-Length`` (None: the body is all JSON)."""
    binary_by_name = {}
    default = request.binary_output if request is not None else False
    if request is not None and request.outputs is not None:
        binary_by_name = {o.name: o.binary for o in request.outputs}
    tensors, blobs = [], []
    for name, array in response.outputs:
        array = np.ascontiguousarray(array)
        tensor: dict[str, Any] = {
            "name": name,
            "datatype": datatype_name(array.dtype),
            "shape": list(array.shape),
        }
        binary = binary_by_name.get(name)
        if binary is None:
            binary = default
        if binary:
            blob = array.tobytes()
            tensor["parameters"] = {"binary_data_size": len(blob)}
            blobs.append(blob)
        else:
            tensor["data"] = array.ravel().tolist()
        tensors.append(tensor)
    doc: dict[str, Any] = {
        "model_name": response.model_name,
        "model_version": response.model_version,
        "outputs": tensors,
    }
    if response.id:
        doc["id"] = response.id
    if response.parameters:
        doc["parameters"] = response.parameters
    header = json.dumps(doc, separators=(",", ":")).encode()
    if not blobs:
        return header, None
    return header + b"".join(blobs), len(header)


def decode_grpc(message: Any) -> InferRequest:
    """A ``ModelInferRequest``: inputs from ``raw_input_contents`` (one per input, in order) or
    from each input's typed ``contents``."""
    request = InferRequest(id=message.id)
    for key, value in message.parameters.items():
        kind = value.WhichOneof("parameter_choice")
        request.parameters[key] = getattr(value, kind) if kind else None
    raw = list(message.raw_input_contents)
    if raw and len(raw) != len(message.inputs):
        raise invalid(f"raw_input_contents has {len(raw)} entries for {len(message.inputs)} inputs")
    for i, tensor in enumerate(message.inputs):
        where = f"inputs[{i}] ({tensor.name})" if tensor.name else f"inputs[{i}]"
        if not tensor.name:
            raise invalid(f"{where}.name='' must be a non-empty string")
        dtype = numpy_dtype(tensor.datatype, f"{where}.datatype")
        shape = check_shape(list(tensor.shape), f"{where}.shape")
        count = _count(shape)
        if raw:
            data = raw[i]
            need = count * dtype.itemsize
            if len(data) != need:
                raise invalid(
                    f"raw_input_contents[{i}] ({tensor.name}) has {len(data)} bytes but "
                    f"shape={list(shape)} of {tensor.datatype} needs {need}"
                )
            array = np.frombuffer(data, dtype=dtype).reshape(shape).copy()
        else:
            name = _CONTENTS.get(tensor.datatype)
            if name is None:
                raise invalid(f"{where}: {tensor.datatype} travels only in raw_input_contents")
            values = getattr(tensor.contents, name)
            if len(values) != count:
                raise invalid(
                    f"{where}.contents.{name} has {len(values)} values but shape={list(shape)} "
                    f"needs {count}"
                )
            wide = np.asarray(values, dtype=np.float64 if dtype.kind == "f" else None)
            _check_range(wide, dtype, f"{where}.contents.{name}")
            array = wide.astype(dtype).reshape(shape)
        request.inputs.append((tensor.name, array))
    request.outputs = [RequestedOutput(o.name) for o in message.outputs] or None
    return request


def infer_parameter(pb2: Any, value: bool | int | float | str) -> Any:
    """A value as a gRPC ``InferParameter``."""
    if isinstance(value, bool):
        return pb2.InferParameter(bool_param=value)
    if isinstance(value, int):
        return pb2.InferParameter(int64_param=value)
    if isinstance(value, float):
        return pb2.InferParameter(double_param=value)
    return pb2.InferParameter(string_param=str(value))


def encode_grpc(response: InferResponse, pb2: Any) -> Any:
    """A ``ModelInferResponse`` with every output as ``raw_output_contents``."""
    message = pb2.ModelInferResponse(
        model_name=response.model_name, model_version=response.model_version, id=response.id
    )
    for name, array in response.outputs:
        array = np.ascontiguousarray(array)
        message.outputs.add(name=name, datatype=datatype_name(array.dtype), shape=array.shape)
        message.raw_output_contents.append(array.tobytes())
    for key, value in response.parameters.items():
        message.parameters[key].CopyFrom(infer_parameter(pb2, value))
    return message
