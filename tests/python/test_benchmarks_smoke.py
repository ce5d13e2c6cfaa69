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
