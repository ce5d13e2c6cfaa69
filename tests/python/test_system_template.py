"""The system template of docs/architecture.md, checked: every re-implemented paper has the same
shape in C++ and Python, so the next person finds each part where the last one was."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PY = ROOT / "python" / "servelab" / "systems"
CPP, INCLUDE = ROOT / "cpp" / "src" / "systems", ROOT / "cpp" / "include" / "servelab" / "systems"

SYSTEMS = sorted(p.name for p in PY.iterdir() if (p / "__init__.py").exists())
# Every system's Python package has these modules (docs/architecture.md, "Python").
REQUIRED = ("__init__.py", "schedulers.py", "experiments.py", "paper.py", "cli.py")


def test_the_five_papers_are_there():
    assert SYSTEMS == ["hera", "infaas", "kairos", "ramsis", "rrl"]
    assert sorted(p.name for p in CPP.iterdir() if p.is_dir()) == SYSTEMS


@pytest.mark.parametrize("system", SYSTEMS)
def test_the_python_package_has_the_templates_modules(system):
    missing = [m for m in REQUIRED if not (PY / system / m).exists()]
    assert not missing, f"servelab/systems/{system} lacks {missing} (docs/architecture.md)"


@pytest.mark.parametrize("system", SYSTEMS)
def test_schedulers_py_names_what_the_system_registers(system):
    import servelab

    tree = ast.parse((PY / system / "schedulers.py").read_text())
    names = [
        n
        for node in tree.body
        if isinstance(node, ast.Assign | ast.AnnAssign)
        for n in ([node.target] if isinstance(node, ast.AnnAssign) else node.targets)
        if isinstance(n, ast.Name) and n.id == "SCHEDULERS"
    ]
    assert names, f"systems/{system}/schedulers.py has no SCHEDULERS table"
    module = __import__(f"servelab.systems.{system}.schedulers", fromlist=["SCHEDULERS"])
    registered = {s["name"] for s in servelab.list_schedulers()}
    assert set(module.SCHEDULERS) <= registered


@pytest.mark.parametrize("system", SYSTEMS)
def test_the_cpp_area_registers_in_register_cpp(system):
    register_cpp, register_hpp = CPP / system / "register.cpp", INCLUDE / system / "register.hpp"
    assert register_cpp.exists() and register_hpp.exists(), (
        f"systems/{system} lacks register.cpp/.hpp"
    )
    declared = re.findall(r"void (register_\w+)\(", register_hpp.read_text())
    assert declared, f"{register_hpp} declares no register_* function"
    defined = re.findall(r"void (register_\w+)\(", register_cpp.read_text())
    assert set(declared) <= set(defined), f"{register_cpp} defines {defined}, the header {declared}"
    # The catalogue calls each of them: nothing registers itself by a static initialiser.
    catalogue = (ROOT / "cpp" / "src" / "catalogue" / "catalogue.cpp").read_text()
    for name in declared:
        assert f"{system}::{name}(" in catalogue, f"catalogue.cpp never calls {system}::{name}"


@pytest.mark.parametrize("system", SYSTEMS)
def test_python_systems_import_no_other_systems_internals(system):
    others = set(SYSTEMS) - {system}
    wrong = []
    for path in (PY / system).glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                module = ("." * node.level) + (node.module or "")
                parts = module.lstrip(".").split(".")
                relative_other = node.level == 2 and parts[0] in others
                absolute_other = module.startswith("servelab.systems.") and parts[2] in others
                if relative_other or absolute_other:
                    wrong.append(f"{path.name}: from {module} import ...")
    # The one left: INFaaS's Sec. 6.1 reads the Twitter load trace through RAMSIS's data module.
    allowed = {"infaas": {"sec61.py: from ..ramsis import ..."}}
    wrong = [w for w in wrong if w not in allowed.get(system, set())]
    assert not wrong, f"systems/{system} imports other systems' internals: {wrong}"
