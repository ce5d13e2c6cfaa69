"""Runs pytest with servelab's extension modules from another build folder (a sanitizer build).

    python tests/sanitizers/pytest_on_build.py build/asan tests/python/test_x.py -q

The editable install points `import servelab` at the ordinary build; this script drops that
redirect, stages a package folder (the Python sources plus the other build's modules, as
symlinks) under <build>/stage/ and puts it first on sys.path, then runs pytest in this process.
Tests that start a new interpreter would load the ordinary build again: leave them out.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def stage(build: Path) -> Path:
    source = ROOT / "python" / "servelab"
    package = build / "stage" / "servelab"
    package.mkdir(parents=True, exist_ok=True)
    for old in package.iterdir():
        old.unlink()
    for entry in source.iterdir():
        if entry.suffix != ".so" and entry.name != "__pycache__":
            (package / entry.name).symlink_to(entry)
    modules = sorted((build / "cpp" / "bindings").glob("_*.so"))
    if not any(m.name.startswith("_core.") for m in modules):
        raise SystemExit(f"{build}/cpp/bindings holds no _core module: build that folder first")
    for module in modules:
        (package / module.name).symlink_to(module.resolve())
    return package.parent


def main() -> int:
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    build = Path(sys.argv[1]).resolve()
    if not build.is_dir():
        raise SystemExit(f"build folder {sys.argv[1]!r} does not exist")
    path = stage(build)
    # The editable install's finders sit in sys.meta_path ahead of the path-based one.
    sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in (type(f).__module__ or "")]
    sys.path.insert(0, str(path))
    import servelab._core

    if not servelab._core.__file__.startswith(str(path)):
        raise SystemExit(f"servelab._core came from {servelab._core.__file__}, not {path}")
    print(f"servelab from {path} ({os.environ.get('LD_PRELOAD', 'no preload')})", flush=True)
    import pytest

    return pytest.main(sys.argv[2:])


if __name__ == "__main__":
    sys.exit(main())
