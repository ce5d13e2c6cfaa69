"""The ``infaas`` policy with ``autoscaler='ilp'``: the Model-Autoscaler solves Sec. 4.2.1's
integer program exactly (CBC, through servelab._lp, loaded when a policy asks for it) instead of
Sec. 4.2.2's greedy. It runs the Fig. 6 scenarios and Table 3's catalogue, agrees with the greedy
where the greedy is optimal, never pays more per decision, does not collapse on a sweep of loads,
repeats itself for a seed, and runs in the real serving loop too."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import servelab
from servelab import backends
from servelab.results import COMPLETED
from servelab.systems.infaas import autoscaler, catalogue, paper
from servelab.systems.infaas import experiments as ex

try:
    backends.require("lp")
    LP_REASON = ""
except backends.BackendUnavailable as error:
    LP_REASON = str(error)
needs_lp = pytest.mark.skipif(bool(LP_REASON), reason=LP_REASON or "the LP backend is usable")

GREEDY = "infaas"
ILP = "infaas(autoscaler='ilp')"
SPECS = {"greedy": GREEDY, "ilp": ILP}
#: Sweep margins (absolute shares): the exact plan may trade a little headroom for cost.
SWEEP_VIOLATION_MARGIN = 0.02
SWEEP_SERVED_MARGIN = 0.01
#: Fig. 6 collapse guards: violations (absolute share) and cost (factor) against the greedy's.
FIG6_VIOLATION_MARGIN = 0.10
FIG6_COST_FACTOR = 1.25


def outcome(result, horizon_s: float, variants=None) -> dict:
    c = result.columns
    return {
        "cost": ex.variant_cost(result, horizon_s, variants=variants),
        "served": float(np.mean(c["status"] == COMPLETED)),
        "violations": result.summary()["slo_violation_rate"],
        "queries": len(c["status"]),
    }


def test_bad_autoscaler_names_the_field_and_the_value():
    with pytest.raises(ValueError, match=r"autoscaler='foo'.*greedy"):
        servelab.make_scheduler("infaas", autoscaler="foo")
    with pytest.raises(ValueError, match="autoscaler='foo'"):
        servelab.simulate(ex.fig6_scenario("flat"), scheduler="infaas(autoscaler='foo')")


def test_greedy_is_the_default_and_built_in():
    assert servelab._core.infaas.scaling_solvers()["greedy"] == "servelab._core"
    assert servelab.make_scheduler("infaas", autoscaler="greedy").describe() == "infaas"


@needs_lp
def test_asking_for_the_ilp_loads_the_lp_backend():
    code = (
        "import sys, servelab\n"
        "assert 'servelab._lp' not in sys.modules\n"
        "s = servelab.make_scheduler(\"infaas(autoscaler='ilp')\")\n"
        "print(s.describe(), 'servelab._lp' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["infaas(autoscaler='ilp')", "True"]
    assert servelab._core.infaas.scaling_solvers()["ilp"] == "servelab._lp"


@needs_lp
@pytest.mark.parametrize("load", sorted(ex.FIG6_LOADS))
def test_fig6_scenarios_run_with_the_ilp(load):
    interval, rates = ex.FIG6_LOADS[load]
    horizon = interval * len(rates)
    rows = {
        name: outcome(servelab.simulate(ex.fig6_scenario(load), scheduler=spec, seed=0), horizon)
        for name, spec in SPECS.items()
    }
    print(f"\n{load}: {rows}")
    assert rows["ilp"]["queries"] == rows["greedy"]["queries"] > 0
    assert rows["ilp"]["served"] == pytest.approx(1.0)
    # Collapse guards, not targets (docs/infaas.md has the numbers): the exact plans ramp to
    # "steady"'s 650 QPS from cold a few periods later than the greedy's all-in upgrade, and on
    # "fluctuating" hold mixed configurations that cost more over the run than the greedy's.
    assert rows["ilp"]["violations"] <= rows["greedy"]["violations"] + FIG6_VIOLATION_MARGIN
    assert rows["ilp"]["cost"] <= rows["greedy"]["cost"] * FIG6_COST_FACTOR


def table3_scenario(qps: float, slo_ms: float) -> dict:
    return {
        "profile": catalogue.to_profile(catalogue.table2_variants()),
        "workers": [
            {"hardware": "cpu", "count": 4, "models": ["A"]},
            {"hardware": "inferentia", "count": 10, "models": ["B"]},
            {"hardware": "gpu", "count": 2, "models": ["C"]},
        ],
        "workload": {
            "arrivals": f"poisson(rate={qps:g})",
            "horizon_s": 20,
            "apps": [{"name": "r", "slo_ms": slo_ms, "accuracy_floor": 0.7}],
        },
        "drain_s": 10,
    }


def main_variant(result) -> str:
    shares = ex.served_by(result)
    return max(shares, key=shares.get)


@needs_lp
def test_table3_catalogue_agrees_where_the_greedy_is_optimal():
    variants = catalogue.table2_variants()
    for (qps, slo), _ in paper.TABLE3.items():
        problem = autoscaler.scaling_problem(variants, load_qps=qps, slo_ms=slo)
        greedy_optimal = autoscaler.cost_gap(
            autoscaler.solve_exact(problem), autoscaler.solve_greedy(problem)
        ) == pytest.approx(0.0)
        runs = {
            name: servelab.simulate(table3_scenario(qps, slo), scheduler=spec, seed=0)
            for name, spec in SPECS.items()
        }
        rows = {name: outcome(r, 20.0, variants) for name, r in runs.items()}
        print(f"\n{qps} QPS, SLO {slo} ms (greedy optimal: {greedy_optimal}): {rows}")
        assert rows["ilp"]["queries"] == rows["greedy"]["queries"] > 0
        if greedy_optimal:
            assert main_variant(runs["ilp"]) == main_variant(runs["greedy"])
            assert rows["ilp"]["cost"] == pytest.approx(rows["greedy"]["cost"], rel=1e-9)
            assert rows["ilp"]["violations"] == pytest.approx(rows["greedy"]["violations"])
        else:  # Table 3's last row is beyond these workers at the profile's batch-1 speeds
            assert rows["ilp"]["served"] >= rows["greedy"]["served"] - SWEEP_SERVED_MARGIN


@needs_lp
def test_ilp_never_pays_more_per_decision():
    lp = backends.require("lp")
    variants = catalogue.resnet50_variants()
    for qps in (4.0, 20.0, 60.0, 150.0, 400.0, 700.0):
        for slo in (50.0, 300.0, 1000.0):
            problem = autoscaler.scaling_problem(variants, load_qps=qps, slo_ms=slo)
            exact = servelab._core.infaas.plan_scaling(problem, autoscaler="ilp")
            greedy = servelab._core.infaas.plan_scaling(problem)
            direct = lp.infaas.solve_scaling_ilp(problem)
            assert exact["feasible"] == direct["feasible"]
            if greedy["feasible"]:
                assert exact["feasible"]
                assert exact["running_cost_per_s"] <= greedy["running_cost_per_s"] * (1 + 1e-9)


@needs_lp
def test_sweep_of_loads_does_not_collapse():
    for rate in (4, 20, 60, 150, 400):
        for seed in (0, 1):
            scenario = ex.fig6_scenario("flat")
            scenario["workload"]["arrivals"] = f"poisson(rate={rate})"
            scenario["workload"]["horizon_s"] = 30
            rows = {
                name: outcome(servelab.simulate(scenario, scheduler=spec, seed=seed), 30.0)
                for name, spec in SPECS.items()
            }
            print(f"\n{rate} QPS seed {seed}: {rows}")
            assert rows["ilp"]["served"] >= rows["greedy"]["served"] - SWEEP_SERVED_MARGIN
            assert (
                rows["ilp"]["violations"] <= rows["greedy"]["violations"] + SWEEP_VIOLATION_MARGIN
            )


@needs_lp
def test_same_seed_same_records():
    first = servelab.simulate(ex.fig6_scenario("fluctuating"), scheduler=ILP, seed=3)
    second = servelab.simulate(ex.fig6_scenario("fluctuating"), scheduler=ILP, seed=3)
    first.check_consistency()
    for name, column in first.columns.items():
        np.testing.assert_array_equal(column, second.columns[name], err_msg=name)


@needs_lp
def test_runs_in_the_real_serving_loop():
    scenario = {
        "profile": "example:hetero_cpu_gpu",
        "workers": [
            {"hardware": "g4dn.xlarge", "count": 1, "models": ["rm2"]},
            {"hardware": "c5n.2xlarge", "count": 2, "models": ["rm2"]},
        ],
        "workload": {
            "arrivals": "poisson(rate=40)",
            "count": 60,
            "apps": [{"name": "rm2", "slo_ms": 350, "sizes": "uniform(low=1, high=100)"}],
        },
        "drain_s": 5,
    }
    spec = "infaas(models='rm2', autoscaler='ilp')"
    served = servelab.serve(scenario, scheduler=spec, seed=0)
    simulated = servelab.simulate(scenario, scheduler=spec, seed=0)
    c = served.columns
    assert len(c["status"]) == len(simulated.columns["status"]) == 60
    served.check_consistency()
    assert np.mean(c["status"] == COMPLETED) >= 0.95
