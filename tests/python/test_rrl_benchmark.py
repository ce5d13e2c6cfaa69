"""The RRL benchmark runs small: it checks servelab's episodes and oracle against the numpy
reference first, then prints the timings (never asserted)."""

import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).parents[2] / "benchmarks" / "python" / "bench_rrl.py"


def test_rrl_benchmark_smoke():
    proc = subprocess.run(
        [sys.executable, str(BENCH), "--smoke"], capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "identical to the reference's" in proc.stdout
    assert "ratio reference / servelab" in proc.stdout


def test_inter_op_serving_and_gpu_space_benchmarks_smoke():
    for name, expect in (
        ("bench_rrl_inter_op.py", "vs (1, 1)"),
        ("bench_rrl_serving.py", "ratio"),
        ("bench_rrl_gpu_space.py", "ratio default / tuned"),
    ):
        proc = subprocess.run(
            [sys.executable, str(BENCH.parent / name), "--smoke"],
            capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert expect in proc.stdout or "skipped" in proc.stdout, proc.stdout
