"""The test command smoke-runs Hera's benchmark: it checks servelab against the plain-Python
reference (same affinity table, same server sequence) before timing; times are printed only."""

import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).parents[2] / "benchmarks" / "python" / "bench_hera.py"


def test_hera_benchmark_smoke():
    proc = subprocess.run(
        [sys.executable, str(BENCH), "--smoke"], capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.count("identical True") == 3
    assert "ratio" in proc.stdout
