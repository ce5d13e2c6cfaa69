"""servelab.<paper> is an alias of servelab.systems.<paper>: the same module objects, whichever
name imports them first, with their real names and specs (relative imports inside them work)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest


@pytest.mark.parametrize(
    ("short", "real"),
    [
        ("servelab.kairos.bounds", "servelab.systems.kairos.bounds"),
        ("servelab.ramsis.experiments", "servelab.systems.ramsis.experiments"),
    ],
)
def test_the_short_name_gives_the_real_module_with_its_spec(short, real):
    # A fresh interpreter, so that the short name is the first to import the module.
    probe = textwrap.dedent(
        f"""
        import importlib, sys
        short = importlib.import_module("{short}")
        real = importlib.import_module("{real}")
        assert short is real, (short, real)
        assert short.__name__ == "{real}" and short.__spec__.name == "{real}", short.__spec__
        assert sys.modules["{short}"] is real
        """
    )
    result = subprocess.run(
        [sys.executable, "-W", "error", "-c", probe], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr


def test_a_name_that_is_not_a_system_is_not_aliased():
    with pytest.raises(ModuleNotFoundError):
        __import__("servelab.no_such_system")
