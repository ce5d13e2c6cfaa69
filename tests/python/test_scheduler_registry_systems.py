"""The systems' policies written in Python are in the scheduler registry like the C++ ones: listed
and buildable by name in a fresh process, without calling their register functions."""

from __future__ import annotations

import subprocess
import sys

CODE = """
import servelab
names = {e["name"] for e in servelab.list_schedulers()}
assert {"rrl_tuner", "rrl_batch_tuner"} <= names, sorted(names)
print(servelab.make_scheduler("rrl_tuner(cores=2)").describe())
"""

SCENARIO = """
import servelab
r = servelab.simulate("default", scheduler="rrl_tuner(cores=2, episode_requests=20)",
                      workload={"arrivals": "poisson(rate=20)", "count": 60,
                                "apps": [{"name": "rm2", "slo_ms": 350, "sizes": "kairos_mix"}]})
print(r.summary()["completed"])
"""


def test_rrl_tuners_are_listed_and_built_in_a_fresh_process():
    out = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("rrl_tuner(")


def test_a_scenario_names_an_rrl_tuner_without_registering_it():
    out = subprocess.run(
        [sys.executable, "-c", SCENARIO], capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert int(out.stdout.strip()) == 60
