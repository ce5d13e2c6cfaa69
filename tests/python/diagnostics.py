"""servelab._testing, the C++ diagnostics built only with SERVELAB_BUILD_TESTS=ON."""

from __future__ import annotations

from types import ModuleType

import pytest


def cpp_diagnostics() -> ModuleType:
    """The module, or a skip saying why it is absent (a build without the tests)."""
    return pytest.importorskip(
        "servelab._testing", reason="servelab was built without SERVELAB_BUILD_TESTS=ON"
    )
