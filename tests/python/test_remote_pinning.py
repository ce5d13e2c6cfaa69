"""Pinning worker processes: ``servelab worker --cores``, ``run_worker(cores=...)`` and
``LocalWorkers(n, executor, cores=... or pin=...)``. The affinity is checked inside a Python
executor the worker hosts (os.sched_getaffinity on the thread that runs each batch) and in
/proc/<pid>/task/*/status for every thread of the worker process."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
from pathlib import Path

import pytest

import servelab
from servelab.pinning import cpu_order, process_affinity
from servelab.worker_process import LocalWorkers, run_worker

ROOT = Path(__file__).parents[2]
EXECUTORS = "tests.python.remote_pinning_executors"
ALLOWED = sorted(os.sched_getaffinity(0))
MISSING = (os.cpu_count() or len(ALLOWED)) + 7  # a core this machine does not have


@pytest.fixture(autouse=True)
def importable(monkeypatch):
    """Worker processes import the executors module from the repository root."""
    path = [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(path))


def _scenario(executors: list[str], count: int = 30) -> dict:
    return {
        "profile": "example:hetero_cpu_gpu",
        "workers": [
            {"hardware": "c5n.2xlarge", "count": 1, "models": ["rm2"], "executor": e}
            for e in executors
        ],
        "workload": {
            "arrivals": "poisson(rate=300)",
            "count": count,
            "apps": [{"name": "rm2", "slo_ms": 350, "sizes": "constant(value=1)"}],
        },
        "drain_s": 5,
    }


def _threads_allowed(pid: int) -> dict[int, str]:
    """Cpus_allowed_list of every thread of process ``pid``, by thread id."""
    out = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        for line in (task / "status").read_text().splitlines():
            if line.startswith("Cpus_allowed_list:"):
                out[int(task.name)] = line.split(":", 1)[1].strip()
    return out


def test_each_worker_process_runs_its_batches_on_its_core(tmp_path):
    cores = [ALLOWED[0], ALLOWED[-1]]  # {0} and {1} on a two-CPU machine
    log = tmp_path / "affinity.log"
    with LocalWorkers(2, f"affinity_log(path='{log}')", imports=[EXECUTORS], cores=cores) as pool:
        pids = [p.pid for p in pool.processes]
        for pid, core in zip(pids, cores, strict=True):
            assert set(_threads_allowed(pid).values()) == {str(core)}
        r = servelab.serve(_scenario([pool.spec(0), pool.spec(1)]), scheduler="fcfs")
        remote = [p for p in r.meta["pinning"] if p.get("address")]
        assert pool.pinning == [
            {"worker": i, "address": pool.addresses[i], "pid": pids[i], "core": c, "applied": [c]}
            for i, c in enumerate(cores)
        ]
    assert r.summary()["completed"] == 30
    assert [(p["group"], p["core"], p["applied"], p["pid"]) for p in remote] == [
        (0, cores[0], [cores[0]], pids[0]),
        (1, cores[1], [cores[1]], pids[1]),
    ]
    seen: dict[int, set[str]] = {}
    for line in log.read_text().splitlines():
        pid, cpus = line.split()
        seen.setdefault(int(pid), set()).add(cpus)
    assert seen == {pid: {str(core)} for pid, core in zip(pids, cores, strict=True)}


def test_pin_compact_hands_out_the_allowed_cpus_in_order():
    order = cpu_order("compact")
    with LocalWorkers(len(order) + 1, "constant(latency_ms=1)", pin="compact") as pool:
        expected = [order[i % len(order)] for i in range(len(order) + 1)]
        assert pool.cores == expected
        for p, core in zip(pool.processes, expected, strict=True):
            assert set(_threads_allowed(p.pid).values()) == {str(core)}
            assert process_affinity(p.pid) == [core]


def test_an_unpinned_pool_adds_nothing_to_the_run():
    with LocalWorkers(1, "constant(latency_ms=1)", pin="none") as pool:
        assert pool.cores == [None] and pool.pinning == []
        r = servelab.serve(_scenario([pool.spec(0)], count=5), scheduler="fcfs")
        assert "pinning" not in r.meta
        assert process_affinity(pool.processes[0].pid) == ALLOWED


def test_cli_worker_pins_itself_and_says_so_on_its_ready_line(tmp_path):
    core = ALLOWED[-1]
    sock = tmp_path / "w.sock"
    command = [sys.executable, "-m", "servelab", "worker", "--json", "--listen", f"unix:{sock}"]
    command += ["--executor", "constant(latency_ms=1)", "--cores", str(core)]
    p = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, start_new_session=True)
    try:
        readable, _, _ = select.select([p.stdout], [], [], 60)
        assert readable, "no ready line within 60 s"
        ready = json.loads(p.stdout.readline())
        assert ready["cores"] == [core] and ready["affinity"] == [core]
        assert set(_threads_allowed(p.pid).values()) == {str(core)}
    finally:
        p.terminate()
        p.wait(timeout=10)
        p.stdout.close()


def test_a_core_that_does_not_exist_or_is_not_allowed_is_named_before_the_run(tmp_path):
    allowed = str(set(ALLOWED)).replace("{", r"\{").replace("}", r"\}")
    with pytest.raises(ValueError, match=rf"cores=\[{MISSING}\]: core {MISSING} does not exist"):
        LocalWorkers(1, "constant", cores=[MISSING])
    with pytest.raises(ValueError, match=f"this process may use {allowed}"):
        LocalWorkers(1, "constant", cores=[MISSING])
    with pytest.raises(ValueError, match=r"cores=\[-1\]: -1 is not a core number"):
        LocalWorkers(1, "constant", cores=[-1])
    with pytest.raises(ValueError, match="give cores=.* or pin='compact', not both"):
        LocalWorkers(1, "constant", cores=[ALLOWED[0]], pin="compact")
    with pytest.raises(ValueError, match="pin='tight' must be one of none, compact, spread"):
        LocalWorkers(1, "constant", pin="tight")
    sock = tmp_path / "w.sock"
    with pytest.raises(ValueError, match=f"core {MISSING} does not exist"):
        run_worker(f"unix:{sock}", "constant", cores=[MISSING])
    assert not sock.exists()  # refused before it bound


def test_cli_rejects_bad_cores(tmp_path):
    for value, why in (
        ("a,b", "must be core numbers separated by commas"),
        (str(MISSING), "does not exist"),
    ):
        command = [
            sys.executable,
            "-m",
            "servelab",
            "worker",
            "--listen",
            f"unix:{tmp_path}/w.sock",
        ]
        done = subprocess.run(
            [*command, "--executor", "constant", "--cores", value],
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert done.returncode != 0 and why in done.stderr, done.stderr
