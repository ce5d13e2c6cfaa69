"""The test command smoke-runs INFaaS's benchmark: getVariant must choose exactly what the brute
force chooses before both are timed; times and ratios are printed only."""

import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).parents[2] / "benchmarks" / "python" / "bench_infaas.py"


def test_infaas_benchmark_smoke():
    proc = subprocess.run(
        [sys.executable, str(BENCH), "--smoke"], capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "identical True" in proc.stdout
    assert "ratio" in proc.stdout
