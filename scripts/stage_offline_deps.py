#!/usr/bin/env python3
"""Stage the C++ dependencies servelab needs into one folder, for a machine without them.

A GPU node often has Python, torch, a CUDA toolkit, CMake and pybind11, but neither Debian's -dev
packages nor a network to fetch them. The core needs only header-only libraries from them (Boost's
random, math and asio headers, Eigen, nlohmann-json) plus GoogleTest's sources for the C++ tests.
This script copies exactly the headers the sources include (found with the compiler's own
dependency scan, so nothing is guessed), writes a small CMake package config for each, and copies
GoogleTest's sources. Point CMake at the result with CMAKE_PREFIX_PATH (scripts/gpu_check.sh does).

    python scripts/stage_offline_deps.py build/offline-deps
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SYSTEM_INCLUDE = Path("/usr/include")
EIGEN_INCLUDE = SYSTEM_INCLUDE / "eigen3"
GTEST_SOURCES = Path("/usr/src/googletest")
WHOLE_BOOST_FOLDERS = ("config", "asio", "system", "predef")
INCLUDE_LINE = re.compile(r"^\s*#\s*include\s*<((?:boost|nlohmann|Eigen)/[^>]+)>", re.MULTILINE)

CONFIG = """\
# Written by scripts/stage_offline_deps.py: the header-only {package} staged beside this file.
if(NOT TARGET {target})
  add_library({target} INTERFACE IMPORTED)
  set_target_properties({target} PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${{CMAKE_CURRENT_LIST_DIR}}/../../../{include}")
endif()
set({package}_FOUND TRUE)
set({package}_VERSION "{version}")
"""

VERSION_FILE = """\
set(PACKAGE_VERSION "{version}")
if(PACKAGE_FIND_VERSION VERSION_GREATER PACKAGE_VERSION)
  set(PACKAGE_VERSION_COMPATIBLE FALSE)
else()
  set(PACKAGE_VERSION_COMPATIBLE TRUE)
  if(PACKAGE_FIND_VERSION STREQUAL PACKAGE_VERSION)
    set(PACKAGE_VERSION_EXACT TRUE)
  endif()
endif()
"""


def included_headers() -> list[str]:
    """Every Boost/Eigen/nlohmann header named by an #include in the project's C++ sources."""
    names = set()
    for folder in ("cpp", "tests/cpp", "benchmarks/cpp"):
        for path in (ROOT / folder).rglob("*"):
            if path.suffix in {".hpp", ".cpp", ".cu", ".h"}:
                names.update(INCLUDE_LINE.findall(path.read_text(errors="replace")))
    return sorted(names)


def header_closure(headers: list[str]) -> set[Path]:
    """The files those headers pull in under /usr/include, from `g++ -M` (C++17 and C++20)."""
    with tempfile.TemporaryDirectory() as tmp:
        unit = Path(tmp) / "all.cpp"
        unit.write_text("".join(f"#include <{h}>\n" for h in headers))
        files: set[Path] = set()
        for std in ("c++17", "c++20"):
            cmd = ["g++", f"-std={std}", "-pthread", "-M", f"-I{EIGEN_INCLUDE}", str(unit)]
            out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
            for token in out.replace("\\\n", " ").split()[1:]:
                path = Path(token).resolve()
                if path.is_relative_to(SYSTEM_INCLUDE) and path != unit:
                    files.add(path)
    return files


def copy_into(files: set[Path], base: Path, dest: Path) -> int:
    count = 0
    for f in files:
        if f.is_relative_to(base):
            target = dest / f.relative_to(base)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(f, target)
            count += 1
    return count


def version_from(path: Path, *patterns: str) -> str:
    text = path.read_text()
    parts = [re.search(p, text, re.MULTILINE).group(1) for p in patterns]
    return ".".join(parts)


def write_config(prefix: Path, package: str, target: str, include: str, version: str) -> None:
    folder = prefix / "lib" / "cmake" / package
    folder.mkdir(parents=True, exist_ok=True)
    config_name = f"{package}Config.cmake"
    config = CONFIG.format(package=package, target=target, include=include, version=version)
    (folder / config_name).write_text(config)
    (folder / f"{package}ConfigVersion.cmake").write_text(VERSION_FILE.format(version=version))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("prefix", type=Path, help="folder to create (replaced if it exists)")
    args = parser.parse_args()
    prefix: Path = args.prefix.resolve()
    if prefix.exists():
        shutil.rmtree(prefix)
    include = prefix / "include"

    files = header_closure(included_headers())
    # These pick files by compiler version and platform feature macros at preprocessing time;
    # another compiler on the target may pick others, so each travels whole.
    for folder in WHOLE_BOOST_FOLDERS:
        files.update(p for p in (SYSTEM_INCLUDE / "boost" / folder).rglob("*") if p.is_file())
    boost_count = copy_into({f for f in files if "boost" in f.parts}, SYSTEM_INCLUDE, include)
    json_count = copy_into({f for f in files if "nlohmann" in f.parts}, SYSTEM_INCLUDE, include)
    # Eigen selects SIMD headers by the target CPU's flags: take the whole (small) library.
    shutil.copytree(EIGEN_INCLUDE / "Eigen", include / "eigen3" / "Eigen")

    boost_version = version_from(
        SYSTEM_INCLUDE / "boost/version.hpp", r"^#define BOOST_LIB_VERSION \"([0-9_]+)\""
    ).replace("_", ".")
    eigen_version = version_from(
        EIGEN_INCLUDE / "Eigen/src/Core/util/Macros.h",
        r"^#define EIGEN_WORLD_VERSION (\d+)",
        r"^#define EIGEN_MAJOR_VERSION (\d+)",
        r"^#define EIGEN_MINOR_VERSION (\d+)",
    )
    json_version = version_from(
        SYSTEM_INCLUDE / "nlohmann/detail/abi_macros.hpp",
        r"^#define NLOHMANN_JSON_VERSION_MAJOR (\d+)",
        r"^#define NLOHMANN_JSON_VERSION_MINOR (\d+)",
        r"^#define NLOHMANN_JSON_VERSION_PATCH (\d+)",
    )
    write_config(prefix, "Boost", "Boost::headers", "include", boost_version)
    write_config(prefix, "Eigen3", "Eigen3::Eigen", "include/eigen3", eigen_version)
    write_config(prefix, "nlohmann_json", "nlohmann_json::nlohmann_json", "include", json_version)

    if GTEST_SOURCES.is_dir():
        shutil.copytree(GTEST_SOURCES, prefix / "src" / "googletest")
    else:
        print(
            f"note: {GTEST_SOURCES} is absent (Debian's libgtest-dev); C++ tests cannot be staged"
        )
    size = sum(p.stat().st_size for p in prefix.rglob("*") if p.is_file()) / 2**20
    print(
        f"staged into {prefix}: Boost {boost_version} ({boost_count} headers), "
        f"Eigen {eigen_version}, nlohmann-json {json_version} ({json_count} headers), "
        f"GoogleTest sources: {(prefix / 'src' / 'googletest').is_dir()}; {size:.1f} MiB"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
