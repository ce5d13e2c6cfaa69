"""The C++ core's layering, checked: every area (a ``servelab_add_area`` target) includes only the
headers of the areas it declares in DEPENDS (or what they depend on). Include directories are
shared by all targets, so the compiler alone would let a system include the simulator; this test
is what keeps "systems never include sim" true (docs/architecture.md)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SRC, INCLUDE = ROOT / "cpp" / "src", ROOT / "cpp" / "include" / "servelab"

_AREA = re.compile(r"servelab_add_area\((\w+)(.*?)\)\s*$", re.S | re.M)
_INCLUDE = re.compile(r'^#include "servelab/([^"]+)"', re.M)


def _areas() -> dict[str, dict]:
    """target -> {dir, sources, depends} from every servelab_add_area call."""
    areas = {}
    for cmake in SRC.rglob("CMakeLists.txt"):
        text = re.sub(r"#.*", "", cmake.read_text())
        for name, body in _AREA.findall(text):
            words = body.split()
            section, parts = None, {"SOURCES": [], "DEPENDS": [], "PRIVATE_DEPENDS": []}
            for w in words:
                if w in parts:
                    section = w
                elif section:
                    parts[section].append(w)
            areas[name] = {
                "dir": cmake.parent,
                "sources": [cmake.parent / s for s in parts["SOURCES"]],
                "depends": [d for d in parts["DEPENDS"] if "::" not in d],
            }
    return areas


AREAS = _areas()


def _closure(target: str) -> set[str]:
    seen, todo = set(), [target]
    while todo:
        t = todo.pop()
        if t in seen or t not in AREAS:
            continue
        seen.add(t)
        todo.extend(AREAS[t]["depends"])
    return seen


def _owner(header: str) -> str | None:
    """The area a header "servelab/<path>" belongs to: the target that compiles the .cpp (or .cu)
    of the same path, else the target named after its folder."""
    rel = Path(header)
    for suffix in (".cpp", ".cu"):
        source = SRC / rel.with_suffix(suffix)
        for t, a in AREAS.items():
            if source in a["sources"]:
                return t
    folder = SRC / rel.parent
    for t, a in AREAS.items():
        if t in (folder.name, f"{folder.parent.name}_{folder.name}") and a["dir"] == folder:
            return t
    return next((t for t, a in AREAS.items() if a["dir"] == folder), None)


# Header-only uses across areas that are meant, with why.
EXCEPTIONS = {
    ("rrl_torch", "systems/rrl/estimator_backend.hpp"): (
        "the estimator plugin interface: types only; the torch module must not link rrl's own "
        "table (cpp/bindings/estimator_plugin.hpp)"
    ),
}


def _files_of(target: str) -> list[Path]:
    """The target's sources and the public headers of the same names."""
    area = AREAS[target]
    out = []
    for src in area["sources"]:
        out.append(src)
        header = INCLUDE / src.parent.relative_to(SRC) / (src.stem + ".hpp")
        if header.exists():
            out.append(header)
    return out


def test_the_areas_were_found():
    assert {"core", "sim", "serve", "ramsis", "ramsis_offline", "kairos"} <= set(AREAS)


@pytest.mark.parametrize("target", sorted(AREAS))
def test_an_area_includes_only_what_it_depends_on(target):
    allowed = _closure(target)
    wrong = []
    for path in _files_of(target):
        for header in _INCLUDE.findall(path.read_text()):
            owner = _owner(header)
            if owner is not None and owner not in allowed and (target, header) not in EXCEPTIONS:
                wrong.append(f"{path.relative_to(ROOT)} includes servelab/{header} ({owner})")
    assert not wrong, f"{target} depends on {sorted(allowed - {target})} but:\n" + "\n".join(wrong)


def test_systems_never_depend_on_the_worlds():
    systems = [t for t, a in AREAS.items() if (SRC / "systems") in a["dir"].parents]
    # Targets whose job is to run the simulator offline say so in their name.
    for t in systems:
        if t.endswith("_offline"):
            continue
        assert not {"sim", "serve"} & _closure(t), f"system area {t} depends on a world"
