"""Short public names for the systems: ``servelab.kairos`` is ``servelab.systems.kairos``.

The systems live in ``servelab/systems/<paper>/`` (see docs/architecture.md); researchers type the
short name. A meta-path finder maps ``servelab.<paper>[.<module>]`` to the real module, so
``import servelab.kairos``, ``from servelab.kairos.bounds import upper_bounds`` and
``servelab.kairos.upper_bounds`` all give the very same module objects (no copies, one state).
"""

from __future__ import annotations

import importlib
import importlib.machinery
import sys
from types import ModuleType

#: short package -> real package
SYSTEMS = {
    "servelab.kairos": "servelab.systems.kairos",
    "servelab.ramsis": "servelab.systems.ramsis",
    "servelab.rrl": "servelab.systems.rrl",
    "servelab.hera": "servelab.systems.hera",
    "servelab.infaas": "servelab.systems.infaas",
}


def real_name(fullname: str) -> str | None:
    """The real module behind a short name, or None when the name is not an alias."""
    for short, real in SYSTEMS.items():
        if fullname == short or fullname.startswith(short + "."):
            return real + fullname[len(short) :]
    return None


# Plain classes following the finder/loader protocols: importlib.abc alone costs 10 ms to import.
class _AliasLoader:
    def __init__(self, real: str) -> None:
        self.real = real

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        module = importlib.import_module(self.real)
        self.real_spec = module.__spec__
        return module

    def exec_module(self, module: ModuleType) -> None:
        """The real module is already executed. The import system has just set its __spec__ to
        the alias's; the real one goes back, or relative imports inside it would resolve
        against the alias."""
        module.__spec__ = self.real_spec


class _AliasFinder:
    def find_spec(self, fullname, path=None, target=None):  # noqa: ANN001 (the finder protocol)
        real = real_name(fullname)
        if real is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, _AliasLoader(real))


def install() -> None:
    """Adds the finder once (idempotent: a reloaded servelab does not stack finders)."""
    if not any(isinstance(f, _AliasFinder) for f in sys.meta_path):
        # First: the path finder would otherwise load a second copy of a submodule under the alias.
        sys.meta_path.insert(0, _AliasFinder())
