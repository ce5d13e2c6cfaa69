"""What every `servelab` error must look like: exit code 2 and one line naming what is wrong."""

from __future__ import annotations

import subprocess
import sys

from servelab.cli import main


def assert_one_line_error(code: int, stderr: str, *parts: str) -> str:
    """Checks code 2, exactly one stderr line, no traceback, and each part in the line."""
    assert code == 2, stderr
    assert "Traceback" not in stderr, stderr
    lines = stderr.splitlines()
    assert len(lines) == 1, stderr
    for part in parts:
        assert part in lines[0], f"{part!r} not in {lines[0]!r}"
    return lines[0]


def run_main(capsys, argv: list[str], *parts: str) -> str:
    """servelab.cli.main(argv) in this process; returns its error line after the checks."""
    code = main(argv)
    return assert_one_line_error(code, capsys.readouterr().err, *parts)


def run_process(argv: list[str], *parts: str, timeout: float = 300) -> str:
    """`python -m servelab ...` in a child process, for inputs that could crash the interpreter."""
    proc = subprocess.run(
        [sys.executable, "-m", "servelab", *argv], capture_output=True, text=True, timeout=timeout
    )
    assert proc.returncode >= 0, f"killed by signal {-proc.returncode}: {proc.stderr}"
    return assert_one_line_error(proc.returncode, proc.stderr, *parts)
