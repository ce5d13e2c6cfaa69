"""Optional-backend detection can never fail the configure: a backend whose CMake package does not
load (Debian's oneDNN config requires OpenCL, which a fresh machine may lack) is reported off,
with the reason, in the generated build configuration that build_info() reads."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pybind11
import pytest

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def _tool(name: str) -> str:
    path = shutil.which(name, path=str(BIN)) or shutil.which(name)
    if path is None:
        pytest.skip(f"{name} is not installed; the configure test needs it")
    return path


def _fake_dnnl(prefix: Path) -> None:
    """A dnnl package that is found but fails to load, as Debian's does without OpenCL."""
    config = prefix / "lib" / "cmake" / "dnnl"
    config.mkdir(parents=True)
    (config / "dnnl-config.cmake").write_text("find_package(ServelabNoSuchDependency REQUIRED)\n")
    (config / "dnnl-config-version.cmake").write_text(
        'set(PACKAGE_VERSION "9.9.9")\nset(PACKAGE_VERSION_COMPATIBLE TRUE)\n'
    )


def _configure(tmp_path: Path, *defines: str) -> subprocess.CompletedProcess[str]:
    """Configures servelab against a prefix holding the broken dnnl package."""
    prefix = tmp_path / "prefix"
    _fake_dnnl(prefix)
    command = [
        _tool("cmake"),
        "-S",
        str(ROOT),
        "-B",
        str(tmp_path / "build"),
        "-G",
        "Ninja",
        f"-DCMAKE_MAKE_PROGRAM={_tool('ninja')}",
        f"-DCMAKE_PREFIX_PATH={prefix};{pybind11.get_cmake_dir()}",
        f"-DPython_EXECUTABLE={sys.executable}",
        "-DSERVELAB_WITH_TORCH=OFF",
        "-DSERVELAB_WITH_CUDA=OFF",
        "-DSERVELAB_WITH_LP=OFF",
        *defines,
    ]
    return subprocess.run(command, capture_output=True, text=True, timeout=300)


def test_a_backend_whose_config_fails_is_reported_off_not_a_configure_error(tmp_path):
    result = _configure(tmp_path)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "ONEDNN backend not compiled" in result.stdout
    config = (tmp_path / "build" / "generated" / "servelab" / "build_config.hpp").read_text()
    assert re.search(r"#define SERVELAB_HAS_ONEDNN 0\b", config)
    why = re.search(r'#define SERVELAB_ONEDNN_WHY_OFF "(.*)"', config).group(1)
    assert "does not load" in why and "ServelabNoSuchDependency" in why, why


def test_the_same_backend_forced_on_fails_with_the_reason(tmp_path):
    result = _configure(tmp_path, "-DSERVELAB_WITH_ONEDNN=ON")
    assert result.returncode != 0
    assert "SERVELAB_WITH_ONEDNN=ON but" in result.stderr
    assert "ServelabNoSuchDependency" in result.stderr
