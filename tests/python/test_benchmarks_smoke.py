"""The test command only smoke-runs the benchmarks; `make bench` runs them at full size."""

import subprocess
import sys
from pathlib import Path

RUNNER = Path(__file__).parents[2] / "benchmarks" / "python" / "run.py"


def test_python_benchmark_runner_smoke():
    proc = subprocess.run(
        [sys.executable, str(RUNNER), "--smoke"], capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "ratio" in proc.stdout


def test_simulator_benchmark_smoke():
    """Runs the FCFS benchmark small: it checks servelab against both plain-Python references."""
    runner = RUNNER.parent / "bench_sim.py"
    proc = subprocess.run(
        [sys.executable, str(runner), "--smoke"], capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "identical" in proc.stdout
    assert "bytes per query record" in proc.stdout


def test_recsys_benchmark_smoke():
    """Runs the recommendation-model benchmark small: it checks oneDNN against torch first."""
    runner = RUNNER.parent / "bench_recsys.py"
    proc = subprocess.run(
        [sys.executable, str(runner), "--smoke"], capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "ratio torch / servelab" in proc.stdout or "skipped:" in proc.stdout


def test_gpu_benchmark_smoke():
    """The GPU benchmark runs small where a GPU is usable, and says why it skips where not."""
    runner = RUNNER.parent / "bench_gpu.py"
    proc = subprocess.run(
        [sys.executable, str(runner), "--smoke"], capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "ratio torch / servelab" in proc.stdout or "skipped: " in proc.stdout


def test_colocated_benchmark_smoke():
    """Runs the co-located benchmark small: it checks servelab's re-timed finish times against
    the plain-Python simulator of the same world first."""
    runner = RUNNER.parent / "bench_colocated.py"
    proc = subprocess.run(
        [sys.executable, str(runner), "--smoke"], capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "finish times within 0 ns" in proc.stdout
    assert "re-timing cost" in proc.stdout
