"""The shape of the servelab.ramsis package: lazy public names, one module object per name."""

from __future__ import annotations

import inspect
import pkgutil
import subprocess
import sys

import servelab.ramsis
import servelab.systems.ramsis


def test_importing_the_package_and_the_cli_loads_no_heavy_library():
    code = (
        "import sys, servelab.ramsis, servelab.systems.ramsis.cli\n"
        "heavy = [m for m in ('pandas', 'matplotlib', 'scipy') if m in sys.modules]\n"
        "mine = [m for m in sys.modules if m.startswith('servelab.systems.ramsis.')]\n"
        "print(heavy, mine)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[] ['servelab.systems.ramsis.cli']", out.stdout


def test_short_name_and_real_name_are_the_same_modules():
    import servelab.ramsis.experiments
    import servelab.systems.ramsis.experiments

    assert servelab.ramsis is servelab.systems.ramsis
    assert servelab.ramsis.experiments is servelab.systems.ramsis.experiments
    assert servelab.ramsis.run_experiment is servelab.systems.ramsis.experiments.run_experiment


def test_every_public_name_resolves_and_no_function_is_named_like_a_module():
    package = servelab.systems.ramsis
    modules = {m.name for m in pkgutil.iter_modules(package.__path__)}
    assert {"policy", "experiments", "schedulers", "paper", "data", "cli", "plotting"} <= modules
    assert not set(package.__all__) & modules
    assert sorted(package.__all__) == package.__all__
    for name in package.__all__:
        value = getattr(package, name)
        if inspect.isfunction(value):
            assert value.__module__.startswith("servelab.systems.ramsis."), name
    assert set(package.__all__) <= set(dir(package))
