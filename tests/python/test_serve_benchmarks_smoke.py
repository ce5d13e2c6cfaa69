"""The real-serving benchmarks, smoke-run: each checks its own agreement first, then prints."""

import subprocess
import sys
from pathlib import Path

BENCHMARKS = Path(__file__).parents[2] / "benchmarks" / "python"


def _smoke(name: str) -> str:
    proc = subprocess.run(
        [sys.executable, str(BENCHMARKS / name), "--smoke"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def test_serve_torch_benchmark_smoke():
    out = _smoke("bench_serve_torch.py")
    assert "ratio servelab / python" in out or "skipped:" in out


def test_serve_overhead_benchmark_smoke():
    out = _smoke("bench_serve_overhead.py")
    assert "us/query" in out and "ratio python / servelab" in out


def test_sim_vs_real_benchmark_smoke():
    out = _smoke("bench_sim_vs_real.py")
    assert "| executor | workers | load |" in out and "held out" in out
