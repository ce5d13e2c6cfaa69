"""`import servelab` needs no optional runtime library: oneDNN and CBC/CLP live in their own
extension modules (servelab._onednn, servelab._lp), loaded on first use. A machine without them
(simulated here by unloadable copies of the libraries first on the loader's path) still imports
servelab and simulates; the backend reports itself unusable, naming the library and the package."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import servelab
from servelab import _core

OPTIONAL_LIBRARIES = ("libdnnl", "libCbc", "libClp", "libCoinUtils", "liblapack", "libtorch")


def _needed(library: Path) -> list[str]:
    readelf = shutil.which("readelf")
    if readelf is None:
        pytest.skip("readelf (binutils) is not installed")
    out = subprocess.run([readelf, "-d", str(library)], capture_output=True, text=True, check=True)
    return [
        line.split("[", 1)[1].rstrip("]") for line in out.stdout.splitlines() if "(NEEDED)" in line
    ]


def test_the_core_module_links_no_optional_library():
    needed = _needed(Path(_core.__file__))
    assert needed, "readelf listed no dependencies at all"
    assert not [n for n in needed if n.startswith(OPTIONAL_LIBRARIES)], needed


def test_servelab_works_where_the_optional_libraries_cannot_load(tmp_path):
    compiled = servelab.build_info()["backends"]["onednn"]["compiled"]
    if not compiled:
        pytest.skip("this build has no oneDNN backend to lose")
    # Empty files named like the libraries, first on the search path: the loader finds them and
    # fails, exactly as when the library is absent.
    for name in ("libdnnl.so.2", "libCbc.so.3"):
        (tmp_path / name).write_bytes(b"")
    probe = textwrap.dedent(
        """
        import json
        import servelab
        from servelab.solvers import lp
        s = servelab.load_scenario("default")
        r = servelab.simulate(s, workload={**s.workload, "count": 50})
        info = servelab.build_info()
        try:
            lp.solve_lp([1.0], A_ub=[[1.0]], b_ub=[1.0])
            solve_error = ""
        except servelab.BackendUnavailable as e:
            solve_error = str(e)
        print(json.dumps({"completed": r.summary()["completed"], "lp_available": lp.available(),
                          "lp_solver": info["lp_solver"], "onednn": info["backends"]["onednn"],
                          "solve_error": solve_error}))
        """
    )
    env = {"LD_LIBRARY_PATH": str(tmp_path), "PATH": "/usr/bin:/bin"}
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, env=env, timeout=120
    )
    assert result.returncode == 0, result.stderr[-2000:]
    out = json.loads(result.stdout.strip().splitlines()[-1])
    assert out["completed"] == 50
    assert out["lp_available"] is False
    assert "libCbc.so.3" in out["lp_solver"] and "coinor-libcbc3" in out["lp_solver"]
    assert "libCbc.so.3" in out["solve_error"]
    assert out["onednn"]["usable"] is False
    assert "libdnnl.so.2" in out["onednn"]["reason"] and "libdnnl2" in out["onednn"]["reason"]
