"""Where the papers' measured data lives (../shared/data next to the repository).

Tests call shared_path(...) and are skipped, saying which path is missing, when it is absent.
"""

from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parents[3] / "shared" / "data"


def shared_path(*parts: str) -> Path:
    """The path under ../shared/data, or skips the calling test when it does not exist."""
    path = DATA.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"shared data {path} is absent (fidelity tests need ../shared/data)")
    return path
