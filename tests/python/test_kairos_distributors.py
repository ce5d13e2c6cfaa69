"""Kairos's distributor and the baselines from Python: registry entries, parameters and errors,
the evaluation function, ORCL's offline throughput and DRS's threshold tuning (no shared data
needed: the embedded example profile and small hand-made ones)."""

from __future__ import annotations

import math
import pkgutil
import subprocess
import sys

import numpy as np
import pytest

import servelab
from servelab import kairos

EXAMPLE = "example:hetero_cpu_gpu"
CONFIG = {"g4dn.xlarge": 1, "c5n.2xlarge": 1, "r5n.large": 2}


def gpu_cpu_profile() -> servelab.Profile:
    """gpu: 20 + b ms, cpu: 2 + 4b ms (b = 1..100, one sample each)."""
    p = servelab.Profile()
    p.set_price("gpu", 0.5)
    p.set_price("cpu", 0.15)
    for b in (1, 100):
        p.set_latency("gpu", "m", b, samples_s=[(20.0 + b) / 1e3])
        p.set_latency("cpu", "m", b, samples_s=[(2.0 + 4.0 * b) / 1e3])
    return p


def test_no_public_name_is_also_a_module_name():
    # Every submodule imported first: one bound on the package must not hide a public function.
    modules = {m.name for m in pkgutil.iter_modules(kairos.__path__)}
    for name in modules:
        assert getattr(kairos, name).__name__ == f"servelab.systems.kairos.{name}"
    assert not modules & set(kairos.__all__)
    for name in kairos.__all__:
        assert not isinstance(getattr(kairos, name), type(kairos)), name
    assert callable(kairos.evaluate_config) and callable(kairos.search)


def test_the_package_and_its_cli_import_without_pandas():
    code = (
        "import sys, servelab.kairos, servelab.systems.kairos.cli; "
        "assert 'pandas' not in sys.modules, 'pandas imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_the_distributors_are_registered_with_documented_parameters():
    entries = {e["name"]: e for e in servelab.list_schedulers()}
    for name in kairos.DISTRIBUTORS:
        assert name in entries and entries[name]["origin"] == "c++", name
        assert entries[name]["doc"]
    params = {p["name"]: p for p in entries["kairos"]["params"]}
    assert params["variant"]["choices"] == ["paper", "artifact"]
    assert params["xi"]["default"] == pytest.approx(0.98)
    assert params["penalty"]["default"] == 10.0
    assert {"qos_ms", "base", "noise", "predictor", "window", "table_after", "coef_batch"} <= set(
        params
    )
    assert {p["name"] for p in entries["drs"]["params"]} == {"threshold", "base", "qos_ms"}
    assert {p["name"] for p in entries["clockwork"]["params"]} == {"qos_ms", "reject_late"}


def test_describe_names_every_parameter():
    s = servelab.make_scheduler("kairos", variant="artifact", noise=0.05)
    assert s.describe().startswith("kairos(variant='artifact'")
    assert "noise=0.05" in s.describe()
    assert servelab.make_scheduler("ribbon").describe() == "ribbon(base='')"
    assert servelab.make_scheduler("drs(threshold=300)").describe().startswith("drs(threshold=300")


@pytest.mark.parametrize(
    ("spec", "field"),
    [
        ("kairos(variant='clever')", "variant"),
        ("kairos(xi=1.5)", "xi"),
        ("kairos(noise=-0.1)", "noise"),
        ("kairos(penalty=0)", "penalty"),
        ("kairos(window=-3)", "window"),
        ("kairos(predictor='psychic')", "predictor"),
        ("drs(threshold=-5)", "threshold"),
        ("clockwork(qos_ms=-1)", "qos_ms"),
    ],
)
def test_bad_parameters_are_value_errors_naming_the_field(spec, field):
    with pytest.raises(ValueError, match=field):
        servelab.make_scheduler(spec)


def test_unknown_parameter_and_unknown_base_type_are_key_errors():
    with pytest.raises(KeyError, match="speed"):
        servelab.make_scheduler("kairos(speed=2)")
    scenario = kairos.evaluation_scenario(EXAMPLE, CONFIG, "kairos(base='tpu')", 5, queries=20)
    with pytest.raises(KeyError, match="tpu"):
        servelab.simulate(scenario)


@pytest.mark.parametrize(
    "spec", ["kairos", "kairos(variant='artifact')", "kairos(noise=0.05)", "drs", "oracle"]
)
def test_same_seed_same_decisions(spec):
    runs = [
        servelab.simulate(
            kairos.evaluation_scenario(EXAMPLE, CONFIG, spec, 40, queries=800, seed=3)
        )
        for _ in range(2)
    ]
    for key in ("worker", "start_ns", "finish_ns"):
        np.testing.assert_array_equal(runs[0].columns[key], runs[1].columns[key], err_msg=key)
    assert runs[0].meta["scheduler"].split("(")[0] == spec.split("(")[0]


def test_scenario_is_the_artifacts_workload():
    sc = kairos.evaluation_scenario(
        EXAMPLE, {"g4dn.xlarge": 2, "r5n.large": 0}, "kairos", 90, model="rm2"
    )
    assert sc["workers"] == [{"hardware": "g4dn.xlarge", "count": 2, "models": ["rm2"]}]
    assert sc["workload"]["arrivals"] == "poisson_integer_ms(rate=90.0)"
    assert sc["workload"]["apps"] == [{"name": "rm2", "slo_ms": 350.0, "sizes": "kairos_mix"}]
    assert sc["workload"]["count"] == 20000
    r = servelab.simulate(dict(sc, workload=dict(sc["workload"], count=300)))
    assert np.all(r.columns["size"] % 10 == 0)  # sizes rounded up to multiples of 10


def test_evaluate_finds_the_rate_where_p99_meets_qos():
    found = kairos.evaluate_config(EXAMPLE, CONFIG, "kairos", queries=1500, rel_tol=0.02)
    assert found.feasible and found.converged
    lo, hi = found.bracket
    assert found.rate == lo and (hi - lo) / hi <= 0.02
    passed = [ev for ev in found.evaluations if ev.passed]
    assert all(ev.metrics[0]["p99_ms"] <= 350 for ev in passed)
    assert all(ev.metrics[0]["p99_ms"] > 350 for ev in found.evaluations if not ev.passed)
    again = kairos.evaluate_config(EXAMPLE, CONFIG, "kairos", queries=1500, rel_tol=0.02)
    assert again.rate == found.rate  # deterministic


def test_evaluate_accepts_a_factory_and_reports_infeasible_configs():
    found = kairos.evaluate_config(
        EXAMPLE, CONFIG, lambda: servelab.make_scheduler("ribbon"), queries=600, rel_tol=0.05
    )
    assert found.rate > 0
    # CPUs alone miss 350 ms on the largest queries (5% of the mix): no rate meets p99.
    none = kairos.evaluate_config(EXAMPLE, {"t3.xlarge": 3}, "kairos", queries=400)
    assert not none.feasible and none.rate == 0.0


@pytest.mark.parametrize(
    ("config", "error", "match"),
    [
        ({}, ValueError, "config"),
        ({"g4dn.xlarge": -1}, ValueError, "g4dn.xlarge"),
        ({"g4dn.xlarge": 1.5}, ValueError, "g4dn.xlarge"),
        ({"g4dn.xlarge": 0}, ValueError, "every count is 0"),
        ({"p3.2xlarge": 1}, KeyError, "p3.2xlarge"),
    ],
)
def test_evaluate_rejects_bad_configs(config, error, match):
    with pytest.raises(error, match=match):
        kairos.evaluate_config(EXAMPLE, config, "kairos", queries=10)


def test_evaluate_rejects_bad_arguments():
    with pytest.raises(ValueError, match="qos_ms"):
        kairos.evaluate_config(EXAMPLE, CONFIG, "kairos", qos_ms=-3, queries=10)
    with pytest.raises(ValueError, match="qos_ms=None"):
        kairos.evaluate_config(
            EXAMPLE, {"g4dn.xlarge": 1}, "kairos", model="unknown_model", queries=10
        )
    with pytest.raises(ValueError, match="distributor"):
        kairos.evaluate_config(EXAMPLE, CONFIG, servelab.make_scheduler("kairos"), queries=10)
    with pytest.raises(ValueError, match="queries"):
        kairos.evaluate_config(EXAMPLE, CONFIG, "kairos", queries=0)


def test_oracle_throughput_by_hand():
    # Twelve queries of 10 items: 30 ms on the GPU, 42 ms on the CPU. The GPU finishes at 30, 60,
    # 90, 120, 150, 180 and 210 ms, the CPU at 42, 84, 126, 168 and 210 ms: 12 queries / 210 ms.
    p = gpu_cpu_profile()
    kw = {"model": "m", "qos_ms": 100, "queries": 12, "sizes": "constant(value=10)"}
    res = kairos.OracleSequence(p, **{k: v for k, v in kw.items()}).throughput({"gpu": 1, "cpu": 1})
    assert res.base == "gpu" and res.served == 12
    assert res.makespan_s == pytest.approx(0.210)
    assert kairos.oracle_throughput(p, {"gpu": 1, "cpu": 1}, **kw) == pytest.approx(12 / 0.210)
    # With QoS 40 ms the CPU (42 ms) serves nothing: the GPU alone, 12 x 30 ms.
    assert kairos.oracle_throughput(
        p, {"gpu": 1, "cpu": 1}, **dict(kw, qos_ms=40)
    ) == pytest.approx(12 / 0.360)


def test_oracle_serves_large_queries_on_the_base_and_small_ones_elsewhere():
    p = gpu_cpu_profile()
    seq = kairos.OracleSequence(
        p, model="m", qos_ms=151, queries=500, sizes="uniform(low=1, high=100)"
    )
    both = seq.throughput({"gpu": 1, "cpu": 2}).throughput
    gpu_only = seq.throughput({"gpu": 1}).throughput
    assert both > gpu_only > 0
    # Without a GPU the CPUs are the base type: they serve every query they can within QoS, the
    # largest first (2 + 4 x 37 = 150 ms <= 151 ms; 38 items and more miss it).
    alone = seq.throughput({"cpu": 2})
    assert alone.base == "cpu"
    assert alone.served == int(np.count_nonzero(seq.sizes <= 37))


def test_default_drs_threshold_and_tuning_climb_uphill():
    assert (
        kairos.default_drs_threshold(gpu_cpu_profile(), {"gpu": 1, "cpu": 1}, model="m", qos_ms=200)
        == 40
    )
    tuned = kairos.tune_drs_threshold(EXAMPLE, CONFIG, queries=600, rel_tol=0.05, steps=(160, 40))
    start = kairos.default_drs_threshold(EXAMPLE, CONFIG)
    assert start in tuned.tried
    assert tuned.rate == max(tuned.tried.values()) or tuned.rate >= tuned.tried[start]
    assert tuned.rate >= tuned.tried[start]
    assert tuned.distributor == f"drs(threshold={tuned.threshold})"
    for t in tuned.tried:
        assert 0 <= t <= 1000
    with pytest.raises(ValueError, match="steps"):
        kairos.tune_drs_threshold(EXAMPLE, CONFIG, steps=(0,))
    with pytest.raises(ValueError, match="start"):
        kairos.tune_drs_threshold(EXAMPLE, CONFIG, start=5000)


def test_base_type_is_the_fastest_on_the_largest_query():
    assert kairos.base_type(EXAMPLE, CONFIG) == "g4dn.xlarge"
    assert kairos.base_type(gpu_cpu_profile(), {"cpu": 2, "gpu": 1}, model="m") == "gpu"
    assert kairos.base_type(gpu_cpu_profile(), {"cpu": 2}, model="m") == "cpu"


def test_capacity_estimate_is_positive_and_grows_with_instances():
    one = kairos.capacity_estimate(EXAMPLE, {"g4dn.xlarge": 1})
    two = kairos.capacity_estimate(EXAMPLE, {"g4dn.xlarge": 2})
    assert 0 < one and two == pytest.approx(2 * one)
    assert math.isfinite(kairos.capacity_estimate(EXAMPLE, CONFIG))
