"""Serving workers in separate processes: the ``remote`` executor and ``servelab worker``.

Every test runs on loopback only (Unix sockets and 127.0.0.1). Worker processes host ``constant``
executors, so a batch's work is known and no optional backend is needed.
"""

from __future__ import annotations

import io
import os
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from contextlib import redirect_stderr
from pathlib import Path

import numpy as np
import pytest

import servelab
from servelab import _core
from servelab.cli import main
from servelab.results import COMPLETED
from servelab.worker_process import LocalWorkers, remote_spec, transport_times

MS = 1_000_000
HEADER = struct.Struct("<4sHHQI")  # magic, version, type, batch id, body length (docs/scale-out.md)
VERSION = 3
BATCH_REPLY = 4
MALFORMED = 2


def _scenario(executors: list, count: int, rate: float = 200.0) -> dict:
    return {
        "profile": "example:hetero_cpu_gpu",
        "workers": [
            {"hardware": "c5n.2xlarge", "count": 1, "models": ["rm2"], "executor": e}
            for e in executors
        ],
        "workload": {
            "arrivals": f"poisson(rate={rate})",
            "count": count,
            "apps": [{"name": "rm2", "slo_ms": 350, "sizes": "uniform(low=1, high=8)"}],
        },
        "drain_s": 5,
    }


def _threads() -> int:
    return len(os.listdir("/proc/self/task"))


def _reasons(r: servelab.Result) -> set[str]:
    c = r.columns
    dropped = c["status"] != COMPLETED
    return {str(x) for x in r.to_pandas()["drop_reason"][dropped].unique()}


def test_remote_is_registered_with_typed_parameters_and_checks_them():
    (entry,) = [e for e in servelab.list_executors() if e["name"] == "remote"]
    params = {p["name"]: p for p in entry["params"]}
    assert {"address", "executor", "connect_timeout_ms", "reply_timeout_ms"} <= set(params)
    ex = servelab.make_executor("remote(address='unix:/tmp/x.sock', reply_timeout_ms=50)")
    assert "reply_timeout_ms=50" in ex.describe()
    with pytest.raises(ValueError, match=r"remote: address='tcp:127.0.0.1' has no port"):
        servelab.make_executor("remote(address='tcp:127.0.0.1')")
    with pytest.raises(ValueError, match=r"address='http://x' is not an address"):
        servelab.make_executor("remote(address='http://x')")
    with pytest.raises(ValueError, match="reply_timeout_ms"):
        servelab.make_executor("remote(address='unix:/tmp/x.sock', reply_timeout_ms=0)")
    with pytest.raises(ValueError, match="address"):
        servelab.make_executor("remote")  # the address is required
    with pytest.raises(ValueError, match=r"remote: executor=\"constant\(\": spec 'constant\('"):
        servelab.make_executor("remote(address='unix:/tmp/x.sock', executor='constant(')")
    with pytest.raises(ValueError, match="transport='udp'"):
        LocalWorkers(1, transport="udp")


def test_an_unreachable_worker_fails_the_run_naming_its_address():
    spec = remote_spec("unix:/nonexistent/w.sock", connect_timeout_ms=500)
    with pytest.raises(
        RuntimeError, match=r"cannot reach the worker process at unix:/nonexistent/w.sock"
    ):
        servelab.serve(_scenario([spec], count=5))


@pytest.mark.parametrize(
    ("scheduler", "workers", "transport"),
    [("fcfs", 2, "unix"), ("jsq", 3, "tcp"), ("fcfs", 4, "tcp")],
)
def test_worker_processes_serve_every_query(scheduler, workers, transport):
    with LocalWorkers(workers, "constant(latency_ms=1)", transport=transport) as pool:
        sc = _scenario([pool.spec(i) for i in range(workers)], count=300, rate=1000)
        r = servelab.serve(sc, scheduler=scheduler)
    r.check_consistency()
    c = r.columns
    assert len(c["status"]) == 300 and np.all(c["status"] == COMPLETED), _reasons(r)
    used = set(np.unique(c["worker"]))
    assert used <= set(range(workers)) and len(used) >= 2  # the processes shared the work
    # exec_ns is the worker's own time for the batch: the constant 1 ms and a little.
    assert np.all(c["exec_ns"] >= MS) and np.all(c["exec_ns"] < 100 * MS)
    service = c["finish_ns"] - c["start_ns"]
    assert np.all(service >= c["exec_ns"])  # the controller's wall time adds the transport
    # The records gain each batch's transport time: the round trip less the worker's own time.
    assert np.all(c["transport_ns"] > 0)
    assert np.all(c["transport_ns"] <= service - c["exec_ns"])


def test_transport_times_cover_every_query_and_split_the_round_trip():
    transport_times()  # empties the log
    with LocalWorkers(2, "constant(latency_ms=1)") as pool:
        r = servelab.serve(_scenario([pool.spec(0), pool.spec(1)], count=100), scheduler="fcfs")
    t = transport_times()
    assert sorted(t["id"]) == list(range(100)) and t.attrs["batches_not_kept"] == 0
    assert set(t["address"]) == set(pool.addresses)
    assert t["ok"].all() and (t["worker_ns"] >= MS).all()
    assert (t["transport_ns"] > 0).all()
    assert (t["transport_ns"] == t["round_trip_ns"] - t["worker_ns"]).all()
    merged = r.to_pandas().merge(t, on="id")
    assert (merged["exec_ns"] <= merged["worker_ns"]).all()
    assert (merged["finish_ns"] - merged["start_ns"] >= merged["round_trip_ns"]).all()
    # The records' own column holds the same split, batch by batch.
    assert (merged["transport_ns_x"] == merged["transport_ns_y"]).all()
    assert len(transport_times()) == 0  # the log was taken


def test_a_worker_killed_mid_run_drops_its_queries_naming_its_address():
    transport_times()  # empties the log
    with LocalWorkers(2, "constant(latency_ms=4)") as pool:
        sc = _scenario([pool.spec(0), pool.spec(1)], count=600, rate=300)
        killer = threading.Timer(0.5, pool.kill, args=(1,))
        start = time.monotonic()
        killer.start()
        try:
            r = servelab.serve(sc, scheduler="fcfs")
        finally:
            killer.cancel()
        elapsed = time.monotonic() - start
        dead = pool.addresses[1]
    assert elapsed < 30  # no hang: a lost connection fails at once
    r.check_consistency()
    c = r.columns
    done = c["status"] == COMPLETED
    assert len(done) == 600 and 0 < done.sum() < 600  # every query ended once; the rest served
    # The lost worker left the cluster: only the batch it had in flight (or the one sent as it
    # died) failed, not every later arrival fcfs would have sent to an always-idle dead worker.
    assert (~done).sum() <= 4, (~done).sum()
    reasons = _reasons(r)
    assert reasons and all(dead in reason for reason in reasons), reasons
    assert (c["worker"][done] == 0).sum() > 0
    # The batches that failed were all sent to the killed worker.
    t = transport_times()
    failed = t[~t["ok"]]
    assert len(failed) > 0 and set(failed["address"]) == {dead}
    assert set(failed["id"]) <= set(np.flatnonzero(~done))


def test_a_slow_worker_is_waited_for_and_a_reply_timeout_drops_its_batches():
    with (
        LocalWorkers(1, "constant(latency_ms=1)") as fast,
        LocalWorkers(1, "constant(latency_ms=40)") as slow,
    ):
        r = servelab.serve(
            _scenario([fast.spec(0), slow.spec(0)], count=150, rate=100), scheduler="jsq"
        )
        r.check_consistency()
        c = r.columns
        assert np.all(c["status"] == COMPLETED), _reasons(r)
        on_slow = c["worker"] == 1
        assert on_slow.any() and np.all(c["exec_ns"][on_slow] >= 40 * MS)
        assert np.all(c["exec_ns"][~on_slow] < 40 * MS)

        impatient = slow.spec(0, reply_timeout_ms=10)
        start = time.monotonic()
        r = servelab.serve(
            _scenario([fast.spec(0), impatient], count=150, rate=100), scheduler="jsq"
        )
        assert time.monotonic() - start < 30
        r.check_consistency()
        c = r.columns
        done = c["status"] == COMPLETED
        assert 0 < done.sum() < 150 and np.all(c["worker"][done] == 0)
        (reason,) = _reasons(r)
        assert "sent no reply within reply_timeout_ms=10" in reason and slow.addresses[0] in reason
        # The slow worker is still there for the next run.
        assert slow.processes[0].poll() is None


def test_the_emulated_executor_waits_the_runs_profile_in_a_worker_process():
    # The worker has no profile of its own: a 20 ms floor in every batch shows the run's arrived.
    profile = servelab.profiles.from_dict(
        {
            "format": "servelab.profile",
            "version": 1,
            "hardware": {"cpu": {"price_per_hour": 1.0}},
            "models": {"m": {}},
            "latency": [
                {"hardware": "cpu", "model": "m", "batch": b, "samples_ms": [20 + b, 21 + b]}
                for b in (1, 8)
            ],
        }
    )
    with LocalWorkers(2, "emulated") as pool:
        sc = {
            "profile": profile,
            "workers": [
                {"hardware": "cpu", "count": 1, "models": ["m"], "executor": pool.spec(i)}
                for i in range(2)
            ],
            "workload": {
                "arrivals": "poisson(rate=50)",
                "count": 60,
                "apps": [{"name": "m", "slo_ms": 500, "sizes": "uniform(low=1, high=4)"}],
            },
            "drain_s": 10,
        }
        for service in ("sample", "p99"):
            r = servelab.serve(sc, scheduler="fcfs", service=service)
            r.check_consistency()
            c = r.columns
            assert np.all(c["status"] == COMPLETED), _reasons(r)
            assert np.all(c["exec_ns"] >= 21 * MS) and set(c["worker"].tolist()) == {0, 1}
        # Asked outside a serving run (no profile to send), it refuses, saying why.
        with pytest.raises(ValueError, match="waits the latencies of a run's profile"):
            servelab.make_executor(pool.spec(0)).open()


def _exchange(address: str, data: bytes) -> tuple[tuple, bytes, bytes]:
    """Sends raw bytes to a worker and reads one reply frame, then what follows until it closes."""
    kind, _, where = address.partition(":")
    if kind == "unix":
        family, target = socket.AF_UNIX, where
    else:
        host, _, port = where.rpartition(":")
        family, target = socket.AF_INET, (host, int(port))
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.settimeout(10)
        s.connect(target)
        s.sendall(data)
        head = _read(s, HEADER.size)
        fields = HEADER.unpack(head)
        body = _read(s, fields[4])
        try:
            rest = s.recv(1)  # b"": the worker closed the connection
        except ConnectionResetError:  # closed before reading all that was sent: closed too
            rest = b""
    return fields, body, rest


def _read(s: socket.socket, n: int) -> bytes:
    out = b""
    while len(out) < n:
        chunk = s.recv(n - len(out))
        assert chunk, f"connection closed after {len(out)} of {n} bytes"
        out += chunk
    return out


@pytest.mark.parametrize(
    ("data", "why"),
    [
        (b"HTTP/1.1 GET / ......", "is not 'SLRW'"),
        (HEADER.pack(b"SLRW", 9, 3, 1, 0), "version=9 is not supported"),
        (HEADER.pack(b"SLRW", 2, 3, 1, 0), "version=2 is not supported (this side speaks 3)"),
        (HEADER.pack(b"SLRW", VERSION, 7, 1, 0), "type=7 is not a message type (1..5)"),
        (HEADER.pack(b"SLRW", VERSION, 1, 0, 1 << 31), "is over the limit"),
        (HEADER.pack(b"SLRW", VERSION, 3, 5, 4) + b"\0" * 4, "a batch before hello"),
        (HEADER.pack(b"SLRW", VERSION, 1, 0, 3) + b"\0" * 3, "hello: the body ends inside worker"),
        (HEADER.pack(b"SLRW", VERSION, 4, 0, 0), "is a reply, never sent to a worker"),
        (HEADER.pack(b"SLRW", VERSION, 5, 0, 1) + b"\0", "a run profile the worker did not ask"),
    ],
)
def test_a_malformed_message_gets_an_error_reply_and_the_worker_goes_on(data, why):
    with LocalWorkers(1, "constant(latency_ms=1)") as pool:
        fields, body, rest = _exchange(pool.addresses[0], data)
        magic, version, kind, _, _ = fields
        assert (magic, version, kind) == (b"SLRW", VERSION, BATCH_REPLY)
        status, exec_ns, worker_ns, length = struct.unpack_from("<IqqI", body)
        assert status == MALFORMED and exec_ns == -1 and worker_ns == -1
        assert why in body[24 : 24 + length].decode()
        assert rest == b""  # the connection is closed
        r = servelab.serve(_scenario([pool.spec(0)], count=20), scheduler="fcfs")
        assert pool.processes[0].poll() is None  # no crash
    assert r.summary()["completed"] == 20


def test_an_emulated_worker_asks_for_the_profile_and_names_a_malformed_one():
    hello = struct.pack("<qqQI", 0, 0, 1, 2) + struct.pack("<I", 0)  # flags 2: offers a profile
    bad_profile = struct.pack("<B", 9)  # service=9
    with LocalWorkers(1, "emulated") as pool:
        path = pool.addresses[0].removeprefix("unix:")
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(10)
            s.connect(path)
            s.sendall(HEADER.pack(b"SLRW", VERSION, 1, 0, len(hello)) + hello)
            fields = HEADER.unpack(_read(s, HEADER.size))
            body = _read(s, fields[4])
            assert fields[2] == 2 and struct.unpack_from("<I", body)[0] == 0  # HelloReply, ok
            assert struct.unpack_from("<I", body, len(body) - 4)[0] == 1  # needs the run's profile
            s.sendall(HEADER.pack(b"SLRW", VERSION, 5, 0, len(bad_profile)) + bad_profile)
            fields = HEADER.unpack(_read(s, HEADER.size))
            body = _read(s, fields[4])
        status, _, _, length = struct.unpack_from("<IqqI", body)
        assert fields[2] == BATCH_REPLY and status == MALFORMED
        error = body[24 : 24 + length].decode()
        assert "run profile: service=9 is not 0 (sampled) or 1..5" in error
        assert pool.processes[0].poll() is None


def test_over_tcp_the_error_reply_arrives_before_the_worker_closes():
    # The worker reads what is left of a bad message before closing, so no reset destroys the reply.
    with LocalWorkers(1, "constant", transport="tcp") as pool:
        for _ in range(5):
            fields, body, rest = _exchange(pool.addresses[0], b"GET / HTTP/1.1\r\n" + b"x" * 5000)
            assert fields[2] == BATCH_REPLY and b"is not 'SLRW'" in body and rest == b""


def test_a_worker_hosting_another_executor_refuses_the_run():
    with LocalWorkers(1, "constant(latency_ms=1)") as pool:
        wrong = remote_spec(pool.addresses[0], executor="constant(latency_ms=2)")
        with pytest.raises(
            ValueError, match=r"hosts constant\(latency_ms=1\), not constant\(latency_ms=2\)"
        ):
            servelab.serve(_scenario([wrong], count=5))
        right = remote_spec(pool.addresses[0], executor="constant(latency_ms=1.0)")
        assert servelab.serve(_scenario([right], count=5)).summary()["completed"] == 5


def test_ctrl_c_during_a_run_joins_its_threads_and_leaves_the_workers_usable():
    with LocalWorkers(2, "constant(latency_ms=5)") as pool:
        sc = _scenario(
            [pool.spec(0), pool.spec(1)], count=100_000, rate=200
        )  # 500 s if not stopped
        before = _threads()
        timer = threading.Timer(0.5, os.kill, args=(os.getpid(), signal.SIGINT))
        start = time.monotonic()
        timer.start()
        try:
            with pytest.raises(KeyboardInterrupt):
                servelab.serve(sc, scheduler="fcfs")
        finally:
            timer.cancel()
        assert time.monotonic() - start < 10
        timer.join()
        assert _threads() == before  # the worker threads were joined
        r = servelab.serve(_scenario([pool.spec(0), pool.spec(1)], count=20), scheduler="fcfs")
        assert r.summary()["completed"] == 20
        # SIGINT ends a worker process cleanly: exit code 0 and its socket file removed.
        path = pool.addresses[0].removeprefix("unix:")
        pool.kill(0, signal.SIGINT)
        assert pool.processes[0].wait(timeout=10) == 0
        assert not os.path.exists(path)


def test_an_in_process_worker_stops_from_another_thread():
    ex = servelab.make_executor("constant(latency_ms=1)")
    worker = _core.RemoteWorker("tcp:127.0.0.1:0", ex)
    assert worker.address.startswith("tcp:127.0.0.1:") and not worker.address.endswith(":0")
    thread = threading.Thread(target=worker.serve)
    thread.start()
    try:
        r = servelab.serve(_scenario([remote_spec(worker.address)], count=30), scheduler="fcfs")
        assert r.summary()["completed"] == 30
    finally:
        worker.stop()
        thread.join(timeout=10)
    assert not thread.is_alive()


def test_a_non_loopback_address_needs_allow_remote():
    ex = servelab.make_executor("constant")
    with pytest.raises(
        ValueError, match=r"listen='tcp:0.0.0.0:0' is not a loopback address.*allow_remote"
    ):
        _core.RemoteWorker("tcp:0.0.0.0:0", ex)
    with pytest.raises(ValueError, match="listens on a host name"):
        _core.RemoteWorker("tcp:example.org:7000", ex)
    err = io.StringIO()
    with redirect_stderr(err):
        code = main(["worker", "--listen", "tcp:0.0.0.0:0", "--executor", "constant"])
    assert code == 2 and "--allow-remote" in err.getvalue()


def test_the_worker_command_names_a_bad_import_or_executor():
    for argv, why in [
        (
            ["--executor", "constant", "--import", "no_such_module_xyz"],
            "--import 'no_such_module_xyz'",
        ),
        (["--executor", "nope"], "unknown executor 'nope'"),
        (["--executor", "constant", "--listen", "tcp:127.0.0.1:70000"], "a port is 0..65535"),
    ]:
        err = io.StringIO()
        with redirect_stderr(err):
            code = main(["worker", "--listen", "unix:/tmp/servelab-unused.sock", *argv])
        assert code == 2 and why in err.getvalue(), err.getvalue()


def test_the_benchmark_runs_in_smoke_mode():
    bench = Path(__file__).parents[2] / "benchmarks" / "python" / "bench_remote_workers.py"
    proc = subprocess.run(
        [sys.executable, str(bench), "--smoke"], capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "worker process vs in-process" in proc.stdout and "speed-up 2 / 1" in proc.stdout
