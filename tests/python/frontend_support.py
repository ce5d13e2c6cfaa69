"""A test double of `servelab.Session` for the front-end's tests (same API, answers from a thread
of its own), and fixtures' helpers. Tests only: the package never uses it."""

from __future__ import annotations

import itertools
import math
import threading
import time
from concurrent.futures import Future
from dataclasses import dataclass

import numpy as np

WIDTH = 4


@dataclass(frozen=True)
class FakeOutcome:
    id: int
    app: str
    status: str
    reason: str
    output: np.ndarray | None
    arrival_s: float
    start_s: float
    finish_s: float
    late: bool
    worker: int
    model: str


class FakeSession:
    """Answers each query with ``2 * inputs`` (float32 rows of WIDTH features) after ``delay_s``,
    or drops the queries of ``drop_app``. ``hold`` (an Event, set by default) pauses answers."""

    def __init__(self, apps=("rm2", "wnd"), delay_s=0.0, drop_app=None, outputs=True):
        self.apps = list(apps)
        self.delay_s = delay_s
        self.drop_app = drop_app
        self.outputs = outputs
        self.hold = threading.Event()
        self.hold.set()
        self._ids = itertools.count()
        self._t0 = time.perf_counter()
        self._lock = threading.Lock()
        self._pending: list[tuple[Future, FakeOutcome]] = []
        self._closed = False
        self.submitted = 0
        self._cv = threading.Condition(self._lock)
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def app_slo_ms(self, name):
        return {"rm2": 100.0}.get(name, 50.0)

    def _now(self):
        return time.perf_counter() - self._t0

    def submit(self, app, inputs=None, *, size=None):
        if self._closed:
            raise RuntimeError("the session is closed")
        if isinstance(app, int):
            app = self.apps[app]
        if app not in self.apps:
            raise ValueError(f"app={app!r} is not one of {self.apps}")
        if inputs is not None:
            inputs = np.asarray(inputs)
            if inputs.dtype != np.float32:
                raise ValueError(f"inputs=array({inputs.dtype}) is not float32")
            if inputs.ndim != 2 or inputs.shape[1] != WIDTH:
                raise ValueError(
                    f"inputs of shape {inputs.shape} do not fit rows of {WIDTH} features"
                )
            size = inputs.shape[0]
        fut: Future = Future()
        now = self._now()
        with self._cv:
            qid = next(self._ids)
            self.submitted += 1
            self._pending.append((fut, (qid, app, inputs, size or 1, now)))
            self._cv.notify()
        return fut

    def _loop(self):
        while True:
            with self._cv:
                while not self._pending and not self._closed:
                    self._cv.wait()
                if not self._pending and self._closed:
                    return
                batch, self._pending = self._pending, []
            if self.delay_s:
                time.sleep(self.delay_s)
            self.hold.wait()
            start = self._now()
            for fut, (qid, app, inputs, size, arrival) in batch:
                finish = self._now()
                if app == self.drop_app:
                    o = FakeOutcome(
                        qid,
                        app,
                        "dropped",
                        "queue full",
                        None,
                        arrival,
                        math.nan,
                        math.nan,
                        True,
                        -1,
                        "",
                    )
                else:
                    out = None
                    if self.outputs:
                        out = inputs * 2 if inputs is not None else np.zeros((size, 2), np.float32)
                    o = FakeOutcome(
                        qid,
                        app,
                        "completed",
                        "",
                        out,
                        arrival,
                        start,
                        finish,
                        False,
                        0,
                        app + "_v1",
                    )
                fut.set_result(o)

    def close(self):
        with self._cv:
            self._closed = True
            self._cv.notify()
        self.hold.set()
        self._thread.join()
        return None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def http_client(frontend, **kwargs):
    import tritonclient.http as httpclient

    return httpclient.InferenceServerClient(frontend.http_url.removeprefix("http://"), **kwargs)


def grpc_client(frontend, **kwargs):
    import tritonclient.grpc as grpcclient

    return grpcclient.InferenceServerClient(frontend.grpc_address, **kwargs)


def started(session, **kwargs):
    """A started Frontend on free loopback ports (stop it, or use it in a with block)."""
    from servelab.frontend import Frontend

    kwargs.setdefault("http_port", 0)
    kwargs.setdefault("grpc_port", 0)
    return Frontend(session, **kwargs).start()


def metrics_text(frontend, headers=None):
    """The front-end's /metrics as text (asserting a 200)."""
    import http.client

    conn = http.client.HTTPConnection("127.0.0.1", frontend.http_port, timeout=10)
    conn.request("GET", "/metrics", headers=headers or {})
    r = conn.getresponse()
    body = r.read().decode()
    conn.close()
    assert r.status == 200, body
    return body


def http_input(x, binary=True):
    """tritonclient's INPUT0 for float32 rows ``x`` (binary tensor extension by default)."""
    import tritonclient.http as httpclient

    i = httpclient.InferInput("INPUT0", list(x.shape), "FP32")
    i.set_data_from_numpy(x, binary_data=binary)
    return i


def raw_http(frontend, method, path, body=None, headers=None):
    """One request on a fresh connection, below tritonclient: (status, body bytes)."""
    import http.client

    conn = http.client.HTTPConnection("127.0.0.1", frontend.http_port, timeout=10)
    conn.request(method, path, body=body, headers=headers or {})
    r = conn.getresponse()
    data = r.read()
    conn.close()
    return r.status, data


def check_oversized_bodies_get_413(frontend, width):
    """For a front-end whose body limit is 4096 bytes: a larger body, and a chunked one (no
    Content-Length) that grows past it while read, are each 413 naming the limit. Both HTTP
    engines' tests run it."""
    import json

    import pytest
    from tritonclient.utils import InferenceServerException

    x = np.ones((300, width), np.float32)  # over 4096 bytes of binary data
    with pytest.raises(InferenceServerException, match="max_body_bytes=4096") as e:
        http_client(frontend).infer("rm2", [http_input(x)])
    assert e.value.status() == "413"
    import http.client

    # No Content-Length (chunked): refused while it is read, with the same message.
    conn = http.client.HTTPConnection("127.0.0.1", frontend.http_port, timeout=10)
    conn.request(
        "POST", "/v2/models/rm2/infer", body=iter([b"{" + b" " * 5000 + b"}"]), encode_chunked=True
    )
    r = conn.getresponse()
    assert r.status == 413 and "max_body_bytes=4096" in json.loads(r.read())["error"]
    conn.close()
