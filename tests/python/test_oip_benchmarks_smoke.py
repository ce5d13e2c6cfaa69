"""The Open Inference Protocol benchmarks (transport against servelab's remote workers, the
front-end against Triton), smoke-run: each must run and print its table. Triton is left out
here (it needs its own Python; the benchmark's header says how)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("tritonclient.grpc")

BENCHMARKS = Path(__file__).parents[2] / "benchmarks" / "python"


def _smoke(name: str) -> str:
    env = {k: v for k, v in os.environ.items() if k != "SERVELAB_TRITON_PYTHON"}
    proc = subprocess.run(
        [sys.executable, str(BENCHMARKS / name), "--smoke"],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def test_transport_benchmark_smoke():
    out = _smoke("bench_transport.py")
    assert "load average" in out
    for way in ("remote tcp", "remote unix", "OIP gRPC tritonclient", "bare server"):
        assert f"{way} | 1 |" in out and f"{way} | 64 |" in out, out


def test_frontend_vs_triton_benchmark_smoke():
    out = _smoke("bench_frontend_vs_triton.py")
    assert "| 1 | 2 |" in out and "Triton not measured" in out, out


def test_frontend_overload_smoke():
    # 2x capacity over 200 connections against a limit of 64 in flight: every request answered
    # (served or refused with 503 naming the limit), none lost, the server serving on.
    out = _smoke("bench_frontend_overload.py")
    assert "verdict: every request answered or refused; serving on (lost 0)" in out, out
    assert "| 200 |" in out and "| 503 |" in out and "max_concurrent=64" in out, out
