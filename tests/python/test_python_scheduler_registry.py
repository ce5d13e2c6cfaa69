"""A Python policy joins the one scheduler registry: the same spec grammar, typed and range-checked
parameters, documentation in list_schedulers(), and use by name in scenarios."""

from __future__ import annotations

import pytest

import servelab
from servelab.schedulers import Param

from . import conformance_policies as cp

SCENARIO = {
    "profile": "example:hetero_cpu_gpu",
    "workers": [{"hardware": "c5n.2xlarge", "count": 2, "models": ["rm2"]}],
    "workload": {
        "arrivals": "poisson(rate=20)",
        "count": 30,
        "apps": [{"name": "rm2", "slo_ms": 350, "sizes": "constant(value=10)"}],
    },
}


class Recorded(cp.PyFcfs):
    """PyFcfs that remembers the parameters it was built with."""

    made: list[dict] = []

    def __init__(self, flag: bool = False, weight: float = 1.0, tag: str = "x") -> None:
        super().__init__()
        Recorded.made.append({"flag": flag, "weight": weight, "tag": tag})


@pytest.fixture
def registered():
    Recorded.made.clear()
    servelab.register_scheduler("recorded", Recorded, doc="FCFS that records its parameters")
    yield "recorded"
    servelab.unregister_scheduler("recorded")


def test_the_spec_grammar_is_the_one_of_cpp_policies(registered):
    servelab.make_scheduler("recorded(flag=true, weight=2, tag='a,b')")
    assert Recorded.made[-1] == {"flag": True, "weight": 2.0, "tag": "a,b"}
    servelab.make_scheduler("recorded", weight=0.5)
    assert Recorded.made[-1] == {"flag": False, "weight": 0.5, "tag": "x"}


def test_parameters_are_listed_with_types_defaults_and_origin(registered):
    entry = next(e for e in servelab.list_schedulers() if e["name"] == registered)
    assert entry["origin"] == "python"
    assert entry["doc"] == "FCFS that records its parameters"
    params = {p["name"]: p for p in entry["params"]}
    assert (params["flag"]["type"], params["flag"]["default"]) == ("bool", False)
    assert (params["weight"]["type"], params["weight"]["default"]) == ("float", 1.0)
    assert params["tag"]["type"] == "str"
    builtin = next(e for e in servelab.list_schedulers() if e["name"] == "fcfs")
    assert builtin["origin"] == "c++"


def test_values_are_type_checked_like_cpp_ones(registered):
    with pytest.raises(ValueError, match=r"recorded: flag='yes' is not a bool"):
        servelab.make_scheduler("recorded(flag='yes')")
    with pytest.raises(KeyError, match=r"recorded.*colour"):
        servelab.make_scheduler("recorded(colour=1)")


def test_declared_ranges_and_docs_are_enforced():
    servelab.register_scheduler(
        "ranged",
        lambda share: cp.PyFcfs(),
        params=[Param("share", float, 0.5, "fraction of the load", min=0.0, max=1.0)],
    )
    try:
        servelab.make_scheduler("ranged(share=1)")
        with pytest.raises(ValueError, match=r"ranged.*share=1.5"):
            servelab.make_scheduler("ranged(share=1.5)")
        entry = next(e for e in servelab.list_schedulers() if e["name"] == "ranged")
        assert entry["params"][0]["doc"] == "fraction of the load"
        assert entry["params"][0]["max"] == 1.0
    finally:
        servelab.unregister_scheduler("ranged")


def test_a_default_outside_the_declared_range_is_refused():
    with pytest.raises(ValueError, match=r"share=2"):
        servelab.register_scheduler(
            "bad_default", lambda share: cp.PyFcfs(), params=[Param("share", float, 2.0, max=1.0)]
        )
    assert "bad_default" not in {e["name"] for e in servelab.list_schedulers()}


def test_an_untyped_required_parameter_must_be_declared():
    with pytest.raises(TypeError, match=r"parameter 'x' needs a type annotation"):
        servelab.register_scheduler("untyped", lambda x: cp.PyFcfs())


def test_a_python_policy_runs_by_spec_in_a_scenario_in_both_worlds(registered):
    sim = servelab.simulate(SCENARIO, scheduler="recorded(flag=true)")
    assert sim.summary()["completed"] == 30
    assert Recorded.made[-1]["flag"] is True
    real = servelab.serve(SCENARIO, scheduler="recorded(weight=3)")
    assert real.summary()["completed"] == 30
    assert Recorded.made[-1]["weight"] == 3.0
