"""The lazy public surface every system package shares: its names are imported from their
submodules on first use, so ``import servelab.<system>`` stays cheap (no pandas, no solvers)."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Mapping
from typing import Any


def lazy_exports(
    package: str,
    namespace: dict[str, Any],
    exports: Mapping[str, str],
    modules: Iterable[str] = (),
) -> tuple[list[str], Callable[[str], Any], Callable[[], list[str]]]:
    """``__all__``, ``__getattr__`` and ``__dir__`` for ``package``: ``exports`` maps each public
    name to the submodule defining it; ``modules`` are submodules also reachable as attributes
    (``servelab.kairos.cli``). A name, once resolved, is cached in ``namespace`` (the package's
    globals) so later lookups skip ``__getattr__``."""
    exports = dict(exports)
    modules = tuple(modules)

    def __getattr__(name: str) -> Any:
        if name in exports:
            value = getattr(importlib.import_module(f"{package}.{exports[name]}"), name)
        elif name in modules:
            value = importlib.import_module(f"{package}.{name}")
        else:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *exports, *modules})

    return sorted(exports), __getattr__, __dir__
