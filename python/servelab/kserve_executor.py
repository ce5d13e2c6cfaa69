"""The ``kserve`` executor: a worker group whose batches go to an Open Inference Protocol server.

``kserve(url='grpc://host:8001', model='resnet')`` sends each batch as one inference request to
any server that speaks the Open Inference Protocol (KServe v2): a servelab front-end on another
host (``servelab frontend``), Triton, KServe's model servers. So servelab's schedulers (batching,
SLOs, model selection) drive real inference servers::

    spec = "kserve(url='http://10.0.0.5:8000', model='mlp')"
    with servelab.Session(scenario, executor=spec) as s:
        s.infer("app0", inputs=rows).output      # the remote model's output rows

``run(batch)`` stacks the batch's inputs (one array per query, a row per item) into one request
and returns the answer's output, a row per item, which the serving loop splits per query.
Unreachable server, unknown model, an error answer: the batch fails with a message naming the
url and the model. Clients come from ``tritonclient`` (``pip install 'servelab[kserve]'``), one
per worker thread, made on its first batch; the input and output names are read from the model's
metadata once unless given. The GIL is held only to encode and decode: the network wait (gRPC's
channel, gevent's loop for HTTP) releases it, so a Python executor is enough here.

The token is sent as ``Authorization: Bearer <token>``. A spec's text appears in the run's
records (``meta["executors"]``, drop reasons), so prefer the ``SERVELAB_KSERVE_TOKEN``
environment variable to ``token=``.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import numpy as np

from .schedulers import Param

TOKEN_ENV = "SERVELAB_KSERVE_TOKEN"
_SCHEMES = ("http", "grpc")


@dataclass(frozen=True)
class Endpoint:
    """A parsed ``url``: the protocol and the ``host:port`` tritonclient takes."""

    scheme: str  # "http" | "grpc"
    address: str  # host:port ([v6]:port)


def parse_url(url: str) -> Endpoint:
    """``http://host:port`` or ``grpc://host:port``; ValueError naming ``url`` otherwise."""
    if not isinstance(url, str) or not url:
        raise ValueError(f"url={url!r} must be http://host:port or grpc://host:port")
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme not in _SCHEMES:
        why = (
            "TLS is not supported: put a TLS-terminating proxy or a tunnel in front of the server"
            if scheme in ("https", "grpcs")
            else f"scheme {parts.scheme or '(none)'!r} is not http or grpc"
        )
        raise ValueError(f"url={url!r}: {why}; give http://host:port or grpc://host:port")
    try:
        port = parts.port
    except ValueError as e:  # a port that is not a number or is out of range
        raise ValueError(f"url={url!r}: {e}") from None
    if not parts.hostname or port is None:
        raise ValueError(f"url={url!r} needs a host and a port ({scheme}://host:port)")
    if parts.path not in ("", "/") or parts.query or parts.fragment or parts.username:
        raise ValueError(f"url={url!r}: only {scheme}://host:port is taken (no path, query, user)")
    host = parts.hostname
    return Endpoint(scheme, f"[{host}]:{port}" if ":" in host else f"{host}:{port}")


class KServe:
    """Sends each batch to a model of an Open Inference Protocol server (HTTP or gRPC)."""

    def __init__(
        self,
        url: str,
        model: str,
        input_name: str = "",
        output_name: str = "",
        timeout_ms: float = 60000.0,
        token: str = "",
    ) -> None:
        self.endpoint = parse_url(url)
        if not model.strip():
            raise ValueError(f"model={model!r} must name a model of the server at {url}")
        self.url, self.model = url, model
        self.timeout_s = timeout_ms / 1e3
        token = token or os.environ.get(TOKEN_ENV, "")
        self.headers = {"authorization": f"Bearer {token}"} if token else None
        self._names: tuple[str, str] | None = (
            (input_name, output_name) if input_name and output_name else None
        )
        self._given = (input_name, output_name)
        self._local = threading.local()
        self._lock = threading.Lock()
        # Fails now, not at the first batch, when tritonclient is missing.
        self._client_module()

    # --- one client per worker thread ---
    def _client_module(self) -> Any:
        try:
            if self.endpoint.scheme == "http":
                import tritonclient.http as module
            else:
                import tritonclient.grpc as module
        except ImportError as e:
            raise ImportError(
                f"executor kserve(url={self.url!r}) needs tritonclient[{self.endpoint.scheme}]: "
                f"pip install 'servelab[kserve]' ({e})"
            ) from e
        return module

    def _client(self) -> Any:
        client = getattr(self._local, "client", None)
        if client is None:
            module = self._client_module()
            if self.endpoint.scheme == "http":
                client = module.InferenceServerClient(
                    self.endpoint.address,
                    connection_timeout=self.timeout_s,
                    network_timeout=self.timeout_s,
                )
            else:
                client = module.InferenceServerClient(self.endpoint.address)
            self._local.client = client
        return client

    def _where(self) -> str:
        return f"url={self.url!r} model={self.model!r}"

    def _call(self, what: str, fn: Any, *args: Any, **kwargs: Any) -> Any:
        """fn's answer; any failure as a RuntimeError naming url, model and what was asked."""
        if self.headers:
            kwargs["headers"] = self.headers
        if self.endpoint.scheme == "grpc":
            kwargs["client_timeout"] = self.timeout_s
        try:
            return fn(*args, **kwargs)
        except Exception as e:  # tritonclient's, gevent's and grpc's errors alike
            self._drop_client()  # the next batch starts on a fresh connection
            raise RuntimeError(f"{what} at {self._where()} failed: {_describe(e)}") from None

    def _drop_client(self) -> None:
        client, self._local.client = getattr(self._local, "client", None), None
        if client is not None:
            try:
                client.close()
            except Exception:  # a broken connection may fail to close: it is gone anyway
                pass

    # --- the model's input and output names ---
    def _io_names(self, client: Any) -> tuple[str, str]:
        if self._names is not None:
            return self._names
        if self.endpoint.scheme == "grpc":
            meta = self._call("model metadata", client.get_model_metadata, self.model, as_json=True)
        else:
            meta = self._call("model metadata", client.get_model_metadata, self.model)
        names = (
            self._given[0] or _only(meta.get("inputs", []), "input", self._where()),
            self._given[1] or _only(meta.get("outputs", []), "output", self._where()),
        )
        with self._lock:
            self._names = names
        return names

    # --- serving ---
    def run(self, batch: Any) -> np.ndarray:
        rows = _stack(batch.inputs, list(batch.sizes), self._where())
        module = self._client_module()
        client = self._client()
        input_name, output_name = self._io_names(client)
        datatype = _triton_dtype(rows.dtype, self._where())
        request = module.InferInput(input_name, list(rows.shape), datatype)
        request.set_data_from_numpy(rows)
        wanted = module.InferRequestedOutput(output_name)
        answer = self._call("inference", client.infer, self.model, [request], outputs=[wanted])
        out = answer.as_numpy(output_name)
        if out is None:
            raise RuntimeError(f"the answer from {self._where()} has no output {output_name!r}")
        if out.ndim == 0 or out.shape[0] != rows.shape[0]:
            raise RuntimeError(
                f"the answer from {self._where()} has output {output_name!r} of shape "
                f"{list(out.shape)}: expected a row per item ({rows.shape[0]} rows)"
            )
        return out


def _describe(e: BaseException) -> str:
    message = e.message() if callable(getattr(e, "message", None)) else str(e)
    return f"{type(e).__name__}: {message or repr(e)}"


def _only(tensors: list[dict[str, Any]], kind: str, where: str) -> str:
    """The one input (output) a model's metadata lists; else say which name to give."""
    names = [str(t.get("name", "")) for t in tensors]
    if len(names) != 1 or not names[0]:
        raise RuntimeError(
            f"model metadata at {where} lists {len(names)} {kind}s {names}: kserve sends one "
            f"input and reads one output; give {kind}_name="
        )
    return names[0]


def _stack(inputs: Any, sizes: list[int], where: str) -> np.ndarray:
    """The batch's inputs as one array, a row per item (queries in batch order)."""
    if inputs is None or any(x is None for x in inputs):
        raise ValueError(
            f"kserve ({where}) sends each query's input rows: submit inputs with every query "
            "(Session.submit(app, inputs=...) or serve(inputs=...))"
        )
    parts = []
    for q, (x, size) in enumerate(zip(inputs, sizes, strict=True)):
        a = np.asarray(x)
        a = a.reshape(1, *a.shape) if a.ndim < 2 else a
        if a.shape[0] != size:
            raise ValueError(
                f"kserve ({where}): query {q} of the batch has {a.shape[0]} input rows "
                f"for {size} items"
            )
        parts.append(a)
    first = parts[0]
    for q, a in enumerate(parts):
        if a.dtype != first.dtype or a.shape[1:] != first.shape[1:]:
            raise ValueError(
                f"kserve ({where}): query {q} of the batch has input {a.dtype} rows of shape "
                f"{list(a.shape[1:])}, query 0 {first.dtype} rows of shape {list(first.shape[1:])}"
                ": one request needs one dtype and row shape"
            )
    return np.ascontiguousarray(parts[0] if len(parts) == 1 else np.concatenate(parts))


def _triton_dtype(dtype: np.dtype, where: str) -> str:
    from tritonclient.utils import np_to_triton_dtype

    name = np_to_triton_dtype(dtype)
    if name is None or name == "BYTES":
        raise ValueError(f"kserve ({where}): inputs of dtype {dtype} have no protocol datatype")
    return name


PARAMS = [
    Param("url", str, doc="the server: http://host:port or grpc://host:port"),
    Param("model", str, doc="the model's name on the server"),
    Param("input_name", str, "", doc="the model's input ('': the one its metadata lists)"),
    Param("output_name", str, "", doc="the model's output ('': the one its metadata lists)"),
    Param("timeout_ms", float, 60000.0, doc="per request (and connection)", min=1.0),
    Param("token", str, "", doc=f"sent as 'Authorization: Bearer' ('': ${TOKEN_ENV} if set)"),
]


def register() -> None:
    """Adds ``kserve`` to the executor registry (servelab.executors does, on first use)."""
    from .executors import register_executor

    register_executor(
        "kserve",
        KServe,
        doc="Each batch as one request to a model of an Open Inference Protocol server.",
        params=PARAMS,
    )
