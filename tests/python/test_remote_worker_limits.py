"""What peers can make a worker process hold: bodies allocated as their bytes arrive, a cap on
connections, deadlines for a hello and for a message once started. Each case ends with the worker
still serving a run."""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
import time

import pytest

import servelab
from servelab import _core
from servelab.worker_process import remote_spec

HEADER = struct.Struct("<4sHHQI")  # magic, version, type, batch id, body length
VERSION, HELLO, HELLO_REPLY = 3, 1, 2
REFUSED = 3  # Status::Refused


def _rss_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


@contextlib.contextmanager
def _worker(**options):
    worker = _core.RemoteWorker(
        "tcp:127.0.0.1:0", servelab.make_executor("constant(latency_ms=1)"), **options
    )
    thread = threading.Thread(target=worker.serve)
    thread.start()
    try:
        yield worker
    finally:
        worker.stop()
        thread.join(timeout=10)
    assert not thread.is_alive()


def _connect(address: str) -> socket.socket:
    host, _, port = address.removeprefix("tcp:").rpartition(":")
    s = socket.create_connection((host, int(port)), timeout=10)
    return s


def _closed_within(s: socket.socket, seconds: float) -> bool:
    s.settimeout(seconds)
    try:
        while True:
            if not s.recv(4096):
                return True
    except TimeoutError:
        return False
    except ConnectionResetError:
        return True


def _still_serves(worker) -> None:
    sc = {
        "profile": servelab.profile(
            "constant(latency_ms=1)", batches=[1], repeats=3, hardware="cpu"
        ),
        "workers": [{"hardware": "cpu", "count": 1, "executor": remote_spec(worker.address)}],
        "workload": {
            "arrivals": "poisson(rate=200)",
            "count": 20,
            "apps": [{"name": "model", "slo_ms": 1000, "sizes": "constant(value=1)"}],
        },
        "scheduler": "fcfs",
    }
    assert servelab.serve(sc).summary()["completed"] == 20


def test_announced_bodies_cost_only_the_bytes_sent():
    # 30 peers each announce a 60 MiB hello and send 100 bytes of it: before, the worker held
    # 1.7-1.9 GB (each body allocated in full at its header).
    with _worker(hello_timeout_s=30) as worker:
        before = _rss_mb()
        peers = [_connect(worker.address) for _ in range(30)]
        for s in peers:
            s.sendall(HEADER.pack(b"SLRW", VERSION, HELLO, 0, 60 << 20) + b"\0" * 100)
        time.sleep(0.5)
        grown = _rss_mb() - before
        for s in peers:
            s.close()
        assert grown < 120, f"the worker grew by {grown:.0f} MB for 3 KB received"
        _still_serves(worker)


def test_one_connection_over_the_limit_is_refused_naming_it():
    with _worker(max_connections=3) as worker:
        idle = [_connect(worker.address) for _ in range(3)]
        time.sleep(0.1)
        extra = _connect(worker.address)
        head = HEADER.unpack(extra.recv(HEADER.size, socket.MSG_WAITALL))
        assert head[2] == HELLO_REPLY
        body = extra.recv(head[4], socket.MSG_WAITALL)
        assert struct.unpack_from("<I", body)[0] == REFUSED
        assert b"max_connections=3" in body
        assert _closed_within(extra, 2)
        extra.close()
        for s in idle:
            s.close()
        time.sleep(0.1)
        _still_serves(worker)  # a slot is free again


def test_a_peer_that_never_says_hello_is_closed_after_the_hello_timeout():
    with _worker(hello_timeout_s=0.3) as worker:
        silent = _connect(worker.address)
        t = time.monotonic()
        assert _closed_within(silent, 5)
        assert 0.25 < time.monotonic() - t < 3
        silent.close()
        half = _connect(worker.address)
        half.sendall(HEADER.pack(b"SLRW", VERSION, HELLO, 0, 1000) + b"\0" * 10)  # a slow hello
        assert _closed_within(half, 5)
        half.close()
        _still_serves(worker)


def test_a_controller_idle_between_batches_is_not_closed():
    # The message deadline covers a message once started, never the wait for the next one:
    # arrivals 0.8 s apart leave the connection idle well past both 0.3 s deadlines.
    with _worker(hello_timeout_s=0.3, message_timeout_s=0.3) as worker:
        sc = {
            "profile": servelab.profile(
                "constant(latency_ms=1)", batches=[1], repeats=3, hardware="cpu"
            ),
            "workers": [{"hardware": "cpu", "count": 1, "executor": remote_spec(worker.address)}],
            "workload": {
                "arrivals": "replay(timestamps_s=[0.0, 0.8, 1.6])",
                "count": 3,
                "apps": [{"name": "model", "slo_ms": 1000, "sizes": "constant(value=1)"}],
            },
            "scheduler": "fcfs",
        }
        r = servelab.serve(sc)
        assert r.summary()["completed"] == 3, r.summary()["dropped_by_reason"]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"max_connections": 0}, "max_connections=0"),
        ({"hello_timeout_s": 0}, "hello_timeout_s=0"),
        ({"message_timeout_s": float("nan")}, "message_timeout_s=nan"),
    ],
)
def test_bad_limits_name_the_option(options, message):
    with pytest.raises((ValueError, TypeError), match=message):
        _core.RemoteWorker(
            "tcp:127.0.0.1:0", servelab.make_executor("constant(latency_ms=1)"), **options
        )
