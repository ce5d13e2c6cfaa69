"""Bad input across the run API: scenarios, run keywords, workers, workload, applications,
arrivals, sizes, profiles, schedulers, Actions misused by a Python policy, results and the CLI.

Every case checks the exception type AND that the message names the field and the offending
value. Cases whose message is not yet clear are strict xfails that state the expected behaviour.
"""

from __future__ import annotations

import copy
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import servelab
from servelab import cli

from . import conformance_policies as cp

# Five queries, 0.16 ms apart on average, each of 100 items (37 ms on the GPU): a run that fails
# fails within milliseconds, in either world.
BASE: dict[str, Any] = {
    "profile": "example:hetero_cpu_gpu",
    "workers": [
        {"hardware": "g4dn.xlarge", "count": 1, "models": ["rm2"]},
        {"hardware": "c5n.2xlarge", "count": 2, "models": ["rm2"]},
    ],
    "workload": {
        "arrivals": "poisson(rate=1000)",
        "count": 5,
        "apps": [{"name": "rm2", "slo_ms": 350, "sizes": "constant(value=100)"}],
    },
    "scheduler": "fcfs",
    "drain_s": 10,
}
DELETE = object()


def scenario(**changes: Any) -> dict[str, Any]:
    """BASE with changes at dotted paths (``workload__apps__0__slo_ms=0``); DELETE removes."""
    out = copy.deepcopy(BASE)
    for path, value in changes.items():
        *parents, last = path.split("__")
        node: Any = out
        for key in parents:
            node = node[int(key)] if isinstance(node, list) else node[key]
        if isinstance(node, list):
            node[int(last)] = value
        elif value is DELETE:
            del node[last]
        else:
            node[last] = value
    return out


def sim(**changes: Any):
    return lambda: servelab.simulate(scenario(**changes))


def sim_kw(**kwargs: Any):
    return lambda: servelab.simulate(scenario(), **kwargs)


def serve_kw(**kwargs: Any):
    return lambda: servelab.serve(scenario(), **kwargs)


def with_profile(build):
    """A run on a one-hardware profile that build(profile) prepares."""

    def go():
        p = servelab.Profile()
        build(p)
        return servelab.simulate(
            scenario(profile=p, workers=[{"hardware": "x", "models": ["rm2"]}])
        )

    return go


def profile_call(fn):
    return lambda: fn(servelab.Profile())


def example_call(fn):
    return lambda: fn(servelab.profiles.example("hetero_cpu_gpu"))


def unclear(reason: str) -> pytest.MarkDecorator:
    return pytest.mark.xfail(strict=True, reason=reason)


def no_price(p):
    p.add_hardware("x")
    p.set_latency("x", "rm2", 1, samples_s=[0.01])


def latency_dict_bad_batch():
    d = servelab.profiles.example("hetero_cpu_gpu").to_dict()
    d["latency"][0]["batch"] = -1
    return servelab.simulate(scenario(profile=d))


def register_bad_factory():
    servelab.register_scheduler("bad_input_factory", lambda: 5)
    try:
        servelab.make_scheduler("bad_input_factory")
    finally:
        servelab.unregister_scheduler("bad_input_factory")


def make_py_fcfs(spec: str, **params: Any):
    cp.register()
    return servelab.make_scheduler(spec, **params)


CASES = [
    # --- scenario structure -------------------------------------------------------------------
    pytest.param(sim(bogus=1), KeyError, r"unknown key 'bogus'", id="scenario-unknown-key"),
    pytest.param(
        sim(workload__bogus=1),
        KeyError,
        r"workload: unknown key 'bogus'",
        id="workload-unknown-key",
    ),
    pytest.param(
        sim(workload__apps__0={"name": "rm2", "slo_ms": 350, "sla": 1}),
        KeyError,
        r"workload\.apps\[0\]: unknown key 'sla'",
        id="app-unknown-key",
    ),
    pytest.param(
        sim(workers=[{"hardware": "g4dn.xlarge", "cnt": 1}]),
        KeyError,
        r"workers\[0\]: unknown key 'cnt'",
        id="worker-unknown-key",
    ),
    pytest.param(sim(profile=DELETE), KeyError, r"missing key 'profile'", id="no-profile"),
    pytest.param(
        sim(workload__arrivals=DELETE), KeyError, r"missing key 'arrivals'", id="no-arrivals"
    ),
    pytest.param(
        sim(workload__apps__0={"name": "rm2"}),
        KeyError,
        r"workload\.apps\[0\]: missing key 'slo_ms'",
        id="app-no-slo",
    ),
    pytest.param(
        sim(workers=[{"count": 1}]),
        KeyError,
        r"workers\[0\]: missing key 'hardware'",
        id="worker-no-hardware",
    ),
    pytest.param(
        lambda: servelab.simulate([1, 2]),
        TypeError,
        r"scenario=\[1, 2\] must be",
        id="scenario-a-list",
    ),
    pytest.param(
        lambda: servelab.simulate(42), TypeError, r"scenario=42 must be", id="scenario-an-int"
    ),
    pytest.param(
        lambda: servelab.simulate("missing.yaml"),
        FileNotFoundError,
        r"'missing\.yaml' is neither a file nor a built-in scenario",
        id="scenario-missing-file",
    ),
    pytest.param(sim_kw(bogus=1), KeyError, r"unknown key 'bogus'", id="simulate-unknown-keyword"),
    # --- workers ------------------------------------------------------------------------------
    pytest.param(sim(workers=[]), ValueError, r"workers=\[\] must be", id="workers-empty"),
    pytest.param(
        sim(workers={"hardware": "g4dn.xlarge"}),
        ValueError,
        r"workers=\{'hardware': 'g4dn\.xlarge'\} must be a non-empty list",
        id="workers-a-dict",
    ),
    pytest.param(
        sim(workers__0__count=0), ValueError, r"workers\[0\]\.count=0 must be", id="workers-count-0"
    ),
    pytest.param(
        sim(workers__1__count=-1),
        ValueError,
        r"workers\[1\]\.count=-1 must be",
        id="workers-count-negative",
    ),
    pytest.param(
        sim(workers__0__count=1.5),
        ValueError,
        r"workers\[0\]\.count=1\.5 must be an integer",
        id="workers-count-float",
    ),
    pytest.param(
        sim(workers__0__hardware="tpu9"),
        KeyError,
        r"hardware 'tpu9' is not in the profile",
        id="workers-unknown-hardware",
    ),
    pytest.param(
        sim(workers__0__models=["gpt9"]),
        KeyError,
        r"model 'gpt9' is not in the profile",
        id="workers-unknown-model",
    ),
    pytest.param(
        sim(workers__0__models="rm2"),
        ValueError,
        r"workers\[0\]\.models='rm2' must be a list",
        id="workers-models-a-string",
    ),
    pytest.param(
        sim(workers__0__models=[]),
        ValueError,
        r"workers\[0\]\.models=\[\] is empty; omit it for all the profile's models",
        id="workers-models-empty",
    ),
    pytest.param(
        sim(workers__0__models=["rm2", "rm2"]),
        ValueError,
        r"workers\[0\]\.models=\['rm2', 'rm2'\] names 'rm2' twice",
        id="workers-models-repeated",
    ),
    pytest.param(sim(name=5), ValueError, r"^name=5 must be a string", id="name-an-int"),
    pytest.param(
        sim(description=["a"]),
        ValueError,
        r"description=\['a'\] must be a string",
        id="description-a-list",
    ),
    pytest.param(
        sim(workload__apps__0__name=7),
        ValueError,
        r"workload\.apps\[0\]\.name=7 must be a string",
        id="app-name-an-int",
    ),
    pytest.param(
        sim(workers__0__config={"intra_op_threads": "x"}),
        ValueError,
        r"workers\[0\]\.config.*intra_op_threads.*'x'",
        id="workers-config-not-int",
    ),
    # --- workload: arrivals and counts --------------------------------------------------------
    pytest.param(
        sim(workload__arrivals="poisson(rate=-5)"),
        ValueError,
        r"rate=-5 must be > 0",
        id="rate-neg",
    ),
    pytest.param(
        sim(workload__arrivals={"name": "poisson", "rate": float("nan")}),
        ValueError,
        r"rate=nan",
        id="rate-nan",
    ),
    pytest.param(
        sim(workload__arrivals="poisson(rate=inf)"), ValueError, r"rate=inf", id="rate-inf"
    ),
    pytest.param(
        sim(workload__arrivals="poisson(rate=0)"), ValueError, r"rate=0 must be > 0", id="rate-0"
    ),
    pytest.param(
        sim(workload__arrivals={"name": "gamma", "rate": 10, "cv": -1}),
        ValueError,
        r"gamma: cv=-1",
        id="gamma-cv-negative",
    ),
    pytest.param(
        sim(workload__arrivals="bogus(rate=1)"),
        KeyError,
        r"unknown arrival process 'bogus'",
        id="arrivals-unknown-name",
    ),
    pytest.param(
        sim(workload__arrivals="poisson(rat=1)"),
        KeyError,
        r"poisson has no parameter 'rat'",
        id="arrivals-unknown-param",
    ),
    pytest.param(
        sim(workload__arrivals=5), ValueError, r"workload\.arrivals=5 must be", id="arrivals-an-int"
    ),
    pytest.param(
        sim(workload__arrivals={"rate": 10}),
        ValueError,
        r"workload\.arrivals=\{'rate': 10\} must be",
        id="arrivals-dict-without-name",
    ),
    pytest.param(
        sim(workload__arrivals="poisson(rate="),
        ValueError,
        r"spec 'poisson\(rate=' at character",
        id="arrivals-malformed-spec",
    ),
    pytest.param(sim(workload__count=-3), ValueError, r"count=-3 must be", id="count-negative"),
    pytest.param(
        sim(workload__count=DELETE),
        ValueError,
        r"count=None and horizon_s=None",
        id="count-and-horizon-missing",
    ),
    pytest.param(
        sim(workload__count=None, workload__horizon_s=-1),
        ValueError,
        r"horizon_s=-1 must be",
        id="horizon-negative",
    ),
    pytest.param(
        sim(workload__count=None, workload__horizon_s=float("nan")),
        ValueError,
        r"horizon_s=nan must be",
        id="horizon-nan",
    ),
    pytest.param(
        sim(workload__count=2.5),
        (TypeError, ValueError),
        r"count=2\.5 must be",
        id="count-float",
    ),
    pytest.param(
        sim(workload__count="10"),
        (TypeError, ValueError),
        r"count='10' must be",
        id="count-string",
    ),
    pytest.param(
        sim(workload__count=True),
        ValueError,
        r"count=True must be",
        id="count-bool",
    ),
    # --- applications, SLOs, sizes ------------------------------------------------------------
    pytest.param(sim(workload__apps=[]), ValueError, r"apps=\[\] must be", id="apps-empty"),
    pytest.param(
        sim(workload__apps="rm2"), ValueError, r"apps='rm2' must be a non-empty list", id="apps-str"
    ),
    pytest.param(
        sim(workload__apps=[BASE["workload"]["apps"][0]] * 2),
        ValueError,
        r"name='rm2' is used twice",
        id="apps-duplicate-name",
    ),
    pytest.param(
        sim(workload__apps__0__name=""), ValueError, r"name='' is empty", id="app-no-name"
    ),
    pytest.param(
        sim(workload__apps__0__slo_ms=0),
        ValueError,
        r"workload\.apps\[0\]\.slo_ms=0 must be",
        id="slo-0",
    ),
    pytest.param(
        sim(workload__apps__0__slo_ms=-5),
        ValueError,
        r"workload\.apps\[0\]\.slo_ms=-5 must be",
        id="slo-negative",
    ),
    pytest.param(
        sim(workload__apps__0__slo_ms=float("nan")), ValueError, r"slo_ms=nan must be", id="slo-nan"
    ),
    pytest.param(
        sim(workload__apps__0__slo_ms="fast"),
        ValueError,
        r"workload\.apps\[0\]\.slo_ms='fast' must be a positive number",
        id="slo-string",
    ),
    pytest.param(
        sim(workload__apps__0__share=-1), ValueError, r"share=-1 must be", id="share-negative"
    ),
    pytest.param(sim(workload__apps__0__share=0), ValueError, r"share=0 must be", id="share-0"),
    pytest.param(
        sim(workload__apps__0__accuracy_floor=2),
        ValueError,
        r"accuracy_floor=2 must be in \[0, 1\]",
        id="accuracy-floor-2",
    ),
    pytest.param(
        sim(workload__apps__0__accuracy_floor=-1),
        ValueError,
        r"accuracy_floor=-1 must be",
        id="accuracy-floor-negative",
    ),
    pytest.param(
        sim(workload__apps__0__sizes="bogus()"),
        KeyError,
        r"unknown size distribution 'bogus'",
        id="sizes-unknown-name",
    ),
    pytest.param(
        sim(workload__apps__0__sizes="constant(value=0)"),
        ValueError,
        r"constant: value=0 must be >= 1",
        id="sizes-0",
    ),
    pytest.param(
        sim(workload__apps__0__sizes="uniform(low=10, high=2)"),
        ValueError,
        r"low=10 is above high=2",
        id="sizes-low-above-high",
    ),
    pytest.param(
        sim(workload__apps__0__sizes="kairos_mix(round_to=0)"),
        ValueError,
        r"round_to=0 must be >= 1",
        id="sizes-round-to-0",
    ),
    pytest.param(
        sim(workload__apps__0__sizes=5),
        ValueError,
        r"workload\.apps\[0\]\.sizes=5 must be",
        id="sizes-an-int",
    ),
    # --- run keywords (both worlds validate before anything runs) -----------------------------
    pytest.param(sim_kw(seed=-1), ValueError, r"seed=-1 must be", id="seed-negative"),
    pytest.param(sim_kw(seed="x"), ValueError, r"seed='x' must be", id="seed-string"),
    pytest.param(sim_kw(seed=1.5), ValueError, r"seed=1\.5 must be", id="seed-float"),
    pytest.param(
        sim_kw(seed=2**64), ValueError, r"seed=18446744073709551616 must be", id="seed-2**64"
    ),
    pytest.param(
        sim_kw(decision_statistic="p42"),
        ValueError,
        r"decision_statistic='p42' is not a statistic",
        id="decision-statistic-p42",
    ),
    pytest.param(
        sim_kw(decision_statistic=5),
        (TypeError, ValueError),
        r"decision_statistic=5 ",
        id="decision-statistic-int",
    ),
    pytest.param(
        sim_kw(service="bogus"), ValueError, r"service='bogus' is not a statistic", id="service"
    ),
    pytest.param(sim_kw(drain_s=-1), ValueError, r"drain_s=-1 must be", id="drain-negative"),
    pytest.param(sim_kw(drain_s=float("nan")), ValueError, r"drain_s=nan must be", id="drain-nan"),
    pytest.param(
        sim_kw(drain_s="long"),
        ValueError,
        r"drain_s='long'",
        id="drain-string",
    ),
    pytest.param(serve_kw(seed=-1), ValueError, r"seed=-1 must be", id="serve-seed-negative"),
    pytest.param(
        serve_kw(decision_statistic="p42"),
        ValueError,
        r"decision_statistic='p42'",
        id="serve-decision-statistic-p42",
    ),
    pytest.param(
        serve_kw(service="bogus"), ValueError, r"service='bogus'", id="serve-service-bogus"
    ),
    pytest.param(serve_kw(drain_s=-1), ValueError, r"drain_s=-1 must be", id="serve-drain-neg"),
    # --- profiles -----------------------------------------------------------------------------
    pytest.param(
        sim(profile="example:nope"),
        KeyError,
        r"example 'nope' does not exist",
        id="profile-example",
    ),
    pytest.param(
        sim(profile="/nonexistent/p.json"),
        FileNotFoundError,
        r"/nonexistent/p\.json",
        id="profile-missing-file",
    ),
    pytest.param(sim(profile=5), ValueError, r"profile=5 must be", id="profile-an-int"),
    pytest.param(
        lambda: servelab.simulate(scenario(profile=servelab.Profile())),
        KeyError,
        r"hardware 'g4dn\.xlarge' is not in the profile \(known: none\)",
        id="profile-empty",
    ),
    pytest.param(with_profile(no_price), KeyError, r"hardware 'x' has no price", id="no-price"),
    pytest.param(
        latency_dict_bad_batch,
        ValueError,
        r"latency\[0\]\.batch=-1 must be",
        id="profile-dict-batch-negative",
    ),
    pytest.param(
        profile_call(lambda p: p.add_hardware("x", price_per_hour=-1)),
        ValueError,
        r"price_per_hour=-1 for hardware 'x'",
        id="price-negative",
    ),
    pytest.param(
        profile_call(lambda p: p.add_hardware("x", price_per_hour=float("nan"))),
        ValueError,
        r"price_per_hour=nan",
        id="price-nan",
    ),
    pytest.param(
        profile_call(lambda p: p.set_latency("x", "m", 1, samples_s=[-0.1])),
        ValueError,
        r"samples\[0\]=-0\.1 must be",
        id="latency-negative-sample",
    ),
    pytest.param(
        profile_call(lambda p: p.set_latency("x", "m", 1, samples_s=[])),
        ValueError,
        r"samples=\[\] must hold",
        id="latency-no-samples",
    ),
    pytest.param(
        profile_call(lambda p: p.set_latency("x", "m", 0, samples_s=[0.1])),
        ValueError,
        r"batch=0 must be >= 1",
        id="latency-batch-0",
    ),
    pytest.param(
        example_call(lambda p: p.latency("g4dn.xlarge", "rm2", 5000)),
        ValueError,
        r"batch=5000 exceeds the largest profiled batch 1000",
        id="latency-beyond-max-batch",
    ),
    pytest.param(
        example_call(lambda p: p.latency("g4dn.xlarge", "rm2", 5, statistic="p42")),
        ValueError,
        r"statistic='p42' is not a statistic",
        id="latency-statistic-p42",
    ),
    pytest.param(
        example_call(lambda p: p.latency("tpu", "rm2", 5)),
        KeyError,
        r"hardware 'tpu' is not in the profile",
        id="latency-unknown-hardware",
    ),
    pytest.param(
        lambda: servelab.profiles.loads(b'{"format": "x"}'),
        ValueError,
        r'format="x" must be "servelab\.profile"',
        id="profile-json-format",
    ),
    pytest.param(
        lambda: servelab.profiles.loads(b"{not json"),
        ValueError,
        r":1:2: malformed JSON",
        id="profile-json-malformed",
    ),
    # --- schedulers ---------------------------------------------------------------------------
    pytest.param(
        sim(scheduler="bogus"), KeyError, r"unknown scheduler 'bogus'", id="scheduler-unknown"
    ),
    pytest.param(
        sim(scheduler="fcfs(bogus=1)"),
        KeyError,
        r"fcfs has no parameter 'bogus'",
        id="scheduler-unknown-param",
    ),
    pytest.param(
        sim(scheduler="fcfs(prefer='tpu')"),
        KeyError,
        r"hardware 'tpu' is not in the profile",
        id="fcfs-prefer-unknown",
    ),
    pytest.param(
        sim(scheduler="fcfs(prefer='a,,b')"),
        ValueError,
        r"prefer='a,,b' has an empty item",
        id="fcfs-prefer-empty-item",
    ),
    pytest.param(
        sim(scheduler="batching(max_batch=0)"),
        ValueError,
        r"max_batch=0 must be >= 1",
        id="batching-max-batch-0",
    ),
    pytest.param(
        sim(scheduler="batching(timeout_ms=-1)"),
        ValueError,
        r"timeout_ms=-1 must be >= 0",
        id="batching-timeout-negative",
    ),
    pytest.param(
        sim(scheduler="batching(max_batch='big')"),
        ValueError,
        r"max_batch='big' is not a int",
        id="batching-max-batch-string",
    ),
    pytest.param(
        sim(scheduler={"name": "edf", "drop_late": "maybe"}),
        ValueError,
        r"drop_late='maybe' is not a bool",
        id="edf-drop-late-string",
    ),
    pytest.param(
        sim(scheduler="fcfs(prefer="),
        ValueError,
        r"spec 'fcfs\(prefer=' at character 13",
        id="scheduler-malformed-spec",
    ),
    pytest.param(sim(scheduler=5), ValueError, r"scheduler=5 must be", id="scheduler-an-int"),
    pytest.param(
        sim(scheduler={"prefer": "x"}),
        ValueError,
        r"scheduler=\{'prefer': 'x'\} must be",
        id="scheduler-dict-without-name",
    ),
    pytest.param(
        lambda: servelab.make_scheduler("bogus"),
        KeyError,
        r"unknown scheduler 'bogus'",
        id="make-scheduler-unknown",
    ),
    pytest.param(
        lambda: servelab.register_scheduler("fcfs", cp.PyFcfs),
        ValueError,
        r"scheduler 'fcfs' is already registered",
        id="register-duplicate",
    ),
    pytest.param(
        lambda: servelab.register_scheduler("", cp.PyFcfs),
        ValueError,
        r"name='' must be",
        id="register-empty-name",
    ),
    pytest.param(
        lambda: servelab.unregister_scheduler("fcfs"),
        KeyError,
        r"'fcfs' is not a scheduler registered as an extension \(it is built in\)",
        id="unregister-builtin",
    ),
    pytest.param(
        register_bad_factory,
        TypeError,
        r"factory of scheduler 'bad_input_factory' returned 5, not a servelab.Scheduler",
        id="factory-returns-non-scheduler",
    ),
    pytest.param(
        lambda: make_py_fcfs("py_fcfs(x=1)", x=2),
        ValueError,
        r"parameter 'x' is given in the spec and as a keyword",
        id="python-scheduler-param-twice",
    ),
    pytest.param(
        lambda: make_py_fcfs("py_fcfs(x=)"),
        ValueError,
        r"spec 'py_fcfs\(x=\)' at character 11: expected a value",
        id="python-scheduler-malformed-spec",
    ),
    pytest.param(
        lambda: make_py_fcfs("py_fcfs(x=1)"),
        (KeyError, TypeError),
        r"py_fcfs.*'x'",
        id="python-scheduler-unknown-param",
    ),
    pytest.param(
        sim(scheduler=cp.NoOnArrival()),
        TypeError,
        r"NoOnArrival must override on_arrival",
        id="python-policy-without-on-arrival",
    ),
    pytest.param(
        lambda: servelab.simulate(scenario(scheduler=cp.NoSuperInit())),
        TypeError,
        r"Scheduler\.__init__\(\) must be called",
        id="python-policy-without-super-init",
    ),
    # --- results ------------------------------------------------------------------------------
    pytest.param(
        lambda: servelab.simulate(scenario()).summary(warmup_s=-1),
        ValueError,
        r"warmup_s=-1 must be >= 0",
        id="summary-warmup-negative",
    ),
    pytest.param(
        lambda: servelab.simulate(scenario()).summary(warmup_s=100),
        ValueError,
        r"warmup_s=100 must be < the run's duration_s",
        id="summary-warmup-beyond-run",
    ),
    pytest.param(
        lambda: servelab.simulate(scenario()).summary(by="hw"),
        ValueError,
        r"by='hw' must be None or 'app'",
        id="summary-by-unknown",
    ),
    pytest.param(
        lambda: servelab.simulate(scenario()).timeseries(window_s=0),
        ValueError,
        r"window_s=0 must be > 0",
        id="timeseries-window-0",
    ),
]


@pytest.mark.parametrize(("call", "error", "match"), CASES)
def test_bad_input_raises_naming_field_and_value(call, error, match):
    with pytest.raises(error, match=match):
        call()


# --- Actions misused inside a Python policy, in both worlds -------------------------------------

MISUSES = [
    pytest.param(
        cp.dispatch_to_busy_worker,
        1,
        {},
        ValueError,
        r"dispatch: worker=0 is busy",
        id="dispatch-busy-worker",
    ),
    pytest.param(
        cp.dispatch_unknown_model_name,
        0,
        {},
        KeyError,
        r"model 'no_such_model' is not in the profile",
        id="dispatch-unknown-model-name",
    ),
    pytest.param(
        cp.dispatch_unknown_model_index,
        0,
        {},
        ValueError,
        r"dispatch: model=99 is not a model id",
        id="dispatch-unknown-model-index",
    ),
    pytest.param(
        cp.dispatch_model_not_loaded,
        0,
        {},
        ValueError,
        r"model 'dien' is not loaded on worker=0",
        id="dispatch-model-not-loaded",
    ),
    pytest.param(
        cp.dispatch_unknown_worker,
        0,
        {},
        ValueError,
        r"worker=99 is not a worker id",
        id="dispatch-unknown-worker",
    ),
    pytest.param(
        cp.dispatch_empty_batch,
        0,
        {},
        ValueError,
        r"empty batch for worker=0",
        id="dispatch-empty-batch",
    ),
    pytest.param(
        cp.dispatch_query_twice,
        0,
        {},
        ValueError,
        r"query=0 appears twice",
        id="dispatch-query-twice",
    ),
    pytest.param(
        cp.dispatch_dropped_query,
        0,
        {},
        ValueError,
        r"query=0 has already ended",
        id="dispatch-ended-query",
    ),
    pytest.param(
        cp.dispatch_running_query,
        1,
        {},
        ValueError,
        r"query=0 is already running",
        id="dispatch-running-query",
    ),
    pytest.param(
        cp.dispatch_future_query,
        0,
        {},
        ValueError,
        r"query=1 has not arrived",
        id="dispatch-future-query",
    ),
    pytest.param(
        cp.dispatch_beyond_max_batch,
        0,
        {"workload__apps__0__sizes": "constant(value=5000)"},
        ValueError,
        r"batch of 5000 items on worker=0 exceeds .*\(max 1000\)",
        id="dispatch-beyond-max-batch",
    ),
    pytest.param(
        cp.drop_twice, 0, {}, ValueError, r"drop: query=0 has already ended", id="drop-twice"
    ),
    pytest.param(
        cp.drop_without_reason,
        0,
        {},
        ValueError,
        r"query=0 needs a non-empty reason",
        id="drop-without-reason",
    ),
    pytest.param(
        cp.timer_in_the_past,
        1,
        {},
        ValueError,
        r"set_timer: at=-\d+ ns is before now=",
        id="timer-in-the-past",
    ),
    pytest.param(
        cp.timer_at_nan, 0, {}, ValueError, r"at_s=nan is not a finite time", id="timer-at-nan"
    ),
    pytest.param(
        cp.enqueue_to_unknown_worker,
        0,
        {},
        ValueError,
        r"worker=99 is not a worker id",
        id="enqueue-to-unknown-worker",
    ),
    pytest.param(
        cp.predicted_latency_beyond_max,
        0,
        {},
        ValueError,
        r"batch=1000000 is outside the profile",
        id="predicted-latency-beyond-max",
    ),
    pytest.param(
        cp.add_worker_unknown_hardware,
        0,
        {},
        KeyError,
        r"hardware 'no_such_hw' is not in the profile",
        id="add-worker-unknown-hw",
    ),
    pytest.param(
        cp.raise_from_hook, 0, {}, RuntimeError, r"policy bug on purpose", id="hook-raises"
    ),
]


@pytest.mark.parametrize("world", ["sim", "serve"])
@pytest.mark.parametrize(("action", "on_arrival", "changes", "error", "match"), MISUSES)
def test_actions_misuse_raises_naming_action_and_value(
    world, action, on_arrival, changes, error, match
):
    go = servelab.simulate if world == "sim" else servelab.serve
    policy = cp.Misuse(action, on_arrival_id=on_arrival)
    with pytest.raises(error, match=match):
        go(scenario(**changes), scheduler=policy)


def test_a_failed_run_leaves_the_world_usable():
    with pytest.raises(ValueError, match=r"empty batch"):
        servelab.serve(scenario(), scheduler=cp.Misuse(cp.dispatch_empty_batch))
    res = servelab.serve(scenario(), scheduler=cp.PyFcfs())
    assert res.summary()["completed"] == 5
    res.check_consistency()


# --- files and the command line ----------------------------------------------------------------

MALFORMED_YAML = "profile: example:hetero_cpu_gpu\nworkers: [ {hardware: g4dn.xlarge\n"
UNKNOWN_KEY_YAML = (
    "profile: example:hetero_cpu_gpu\n"
    "workers: [{hardware: g4dn.xlarge}]\n"
    "workload: {arrivals: poisson(rate=10), count: 5, apps: [{name: a, slo_ms: 100}]}\n"
    "schedular: fcfs\n"
)


def test_load_scenario_malformed_yaml_names_the_file_and_line(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text(MALFORMED_YAML)
    at = rf"{re.escape(str(path))}:3:1: malformed YAML: while parsing a flow mapping at line 2"
    with pytest.raises(ValueError, match=at):
        servelab.load_scenario(path)


def test_load_scenario_unknown_key_names_the_file_and_key(tmp_path):
    path = tmp_path / "typo.yaml"
    path.write_text(UNKNOWN_KEY_YAML)
    with pytest.raises(KeyError, match=rf"{re.escape(str(path))}: .*unknown key 'schedular'"):
        servelab.load_scenario(path)


def test_load_scenario_malformed_json_names_the_file(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text('{"profile": ')
    with pytest.raises(ValueError, match=rf"{re.escape(str(path))}:1:13: malformed JSON"):
        servelab.load_scenario(path)


def test_load_scenario_on_a_directory_names_the_path(tmp_path):
    with pytest.raises(IsADirectoryError, match=re.escape(str(tmp_path))):
        servelab.load_scenario(tmp_path)


# A YAML scenario with every required key, as text: the file cases below change one thing.
GOOD_YAML = (
    "name: ok\n"
    "profile: example:hetero_cpu_gpu\n"
    "workers: [{hardware: g4dn.xlarge}]\n"
    "workload: {arrivals: poisson(rate=10), count: 5, apps: [{name: rm2, slo_ms: 100}]}\n"
)
ALIAS_BOMB_NAME = (
    "a0: &a0 [x, x, x, x, x, x, x, x, x]\n"
    + "".join(f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]\n" for i in range(1, 9))
    + "name: *a8\n"
)
SCENARIO_FILES = [
    pytest.param(
        "deep.yaml",
        "[" * 100_000 + "]" * 100_000,
        ValueError,
        r"deep\.yaml:1: nesting is too deep: more than 64 levels",
        id="yaml-100k-deep",
    ),
    pytest.param(
        "deep.json",
        '{"name": ' + "[" * 100_000 + "]" * 100_000 + "}",
        ValueError,
        r"deep\.json:1: nesting is too deep: more than 64 levels",
        id="json-100k-deep",
    ),
    pytest.param(
        "twice.yaml",
        GOOD_YAML + "seed: 1\nseed: 2\n",
        ValueError,
        r"twice\.yaml:6: duplicate key 'seed' in one mapping \(first on line 5\)",
        id="yaml-duplicate-key",
    ),
    pytest.param(
        "twice.json",
        '{"seed": 1,\n "profile": "example:hetero_cpu_gpu",\n "seed": 2}',
        ValueError,
        r'twice\.json:3: duplicate key "seed" in one object \(first on line 1\)',
        id="json-duplicate-key",
    ),
    pytest.param(
        "bomb.yaml",
        ALIAS_BOMB_NAME,
        ValueError,
        r"bomb\.yaml:\d+: the document expands to more than 100000 values through its aliases",
        id="yaml-alias-bomb-in-name",
    ),
    pytest.param(
        "listname.yaml",
        GOOD_YAML.replace("name: ok", "name: [1, 2]"),
        ValueError,
        r"listname\.yaml: name=\[1, 2\] must be a string",
        id="yaml-name-a-list",
    ),
    pytest.param(
        "random.yaml",
        b"name: ok\n\x89PNG\r\n\x1a\n\x00\xff",
        ValueError,
        r"random\.yaml:2: not UTF-8 text \(byte 9\)",
        id="binary-file",
    ),
]


@pytest.mark.parametrize(("name", "content", "error", "match"), SCENARIO_FILES)
def test_load_scenario_bad_file_names_the_file_and_line(tmp_path, name, content, error, match):
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    with pytest.raises(error, match=rf"{re.escape(str(tmp_path))}/{match}"):
        servelab.load_scenario(path)


def test_load_scenario_keeps_ordinary_yaml_aliases(tmp_path):
    path = tmp_path / "aliases.yaml"
    path.write_text(
        GOOD_YAML.replace("[{hardware: g4dn.xlarge}]", "[&w {hardware: t3.xlarge}, *w]")
    )
    assert servelab.load_scenario(path).workers == [{"hardware": "t3.xlarge"}] * 2


def test_unknown_top_level_key_message_is_not_doubled():
    with pytest.raises(KeyError) as info:
        servelab.simulate(scenario(bogus=1))
    assert "scenario: scenario:" not in str(info.value)


def servelab_command() -> list[str]:
    script = Path(sys.executable).with_name("servelab")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "servelab"]


def test_cli_simulate_missing_file_exits_nonzero_with_a_message(tmp_path):
    proc = subprocess.run(
        [*servelab_command(), "simulate", "missing.yaml"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert proc.returncode != 0
    assert "servelab simulate: error:" in proc.stderr
    assert "'missing.yaml' is neither a file nor a built-in scenario" in proc.stderr
    assert "Traceback" not in proc.stderr


CLI_CASES = [
    pytest.param(
        ["serve", "missing.yaml"],
        None,
        r"'missing\.yaml' is neither a file",
        id="serve-missing-file",
    ),
    pytest.param(
        ["simulate", "{file}"],
        MALFORMED_YAML,
        r"bad\.yaml:3:1: malformed YAML: .* at line 2",
        id="malformed-yaml",
    ),
    pytest.param(
        ["simulate", "{file}"], UNKNOWN_KEY_YAML, r"unknown key 'schedular'", id="unknown-key"
    ),
    pytest.param(["simulate", "{file}"], "", r"scenario=None must be a mapping", id="empty-file"),
    pytest.param(
        ["simulate", "{file}"], "[1, 2]\n", r"scenario=\[1, 2\] must be a mapping", id="yaml-list"
    ),
    pytest.param(
        ["simulate", "default", "--scheduler", "bogus"],
        None,
        r"unknown scheduler 'bogus'",
        id="unknown-scheduler",
    ),
    pytest.param(
        ["simulate", "default", "--seed", "-1"],
        None,
        r"argument --seed: must be a non-negative integer, got -1",
        id="seed-negative",
    ),
    pytest.param(
        ["simulate", "default", "--warmup-s", "-1"],
        None,
        r"argument --warmup-s: must be a non-negative number, got -1",
        id="warmup-negative",
    ),
]


@pytest.mark.parametrize(("argv", "content", "match"), CLI_CASES)
def test_cli_bad_input_exits_2_naming_the_problem(argv, content, match, tmp_path, capsys):
    path = tmp_path / "bad.yaml"
    if content is not None:
        path.write_text(content)
    rc = cli.main([a.replace("{file}", str(path)) for a in argv])
    err = capsys.readouterr().err
    assert rc == 2
    assert err.startswith(f"servelab {argv[0]}: error:")
    assert re.search(match, err, flags=re.S), err


# --- edges that are not errors -----------------------------------------------------------------


@pytest.mark.parametrize("world", ["sim", "serve"])
def test_count_zero_gives_an_empty_consistent_result(world):
    go = servelab.simulate if world == "sim" else servelab.serve
    res = go(scenario(workload__count=0))
    assert len(res) == 0 and res.meta["world"] == world
    res.check_consistency()
    s = res.summary()
    assert (s["queries"], s["completed"], s["dropped"]) == (0, 0, 0)
    assert s["latency_ms"]["p99"] is None and s["slo_violation_rate"] is None


def test_non_monotone_profile_is_accepted_with_a_warning_naming_the_batches():
    p = servelab.Profile()
    p.add_hardware("x", price_per_hour=1.0)
    p.set_latency("x", "rm2", 10, samples_s=[0.02])
    p.set_latency("x", "rm2", 20, samples_s=[0.01])
    warnings = p.warnings()
    assert len(warnings) == 1
    assert re.search(r"'x' model 'rm2'.*batch 10.*batch 20", warnings[0])
    assert servelab.Profile().warnings() == []


@pytest.mark.parametrize("world", ["sim", "serve"])
def test_sizes_beyond_every_profile_are_dropped_with_a_reason(world):
    go = servelab.simulate if world == "sim" else servelab.serve
    res = go(scenario(workload__apps__0__sizes="constant(value=5000)"))
    c = res.columns
    assert len(res) == 5 and np.all(c["status"] == 1)
    assert np.all(c["drop_reason"] >= 0) and res.meta["drop_reasons"]
    res.check_consistency()


def test_unservable_queries_are_dropped_for_the_same_reason_in_both_worlds():
    changes = {"workload__apps__0__sizes": "constant(value=5000)"}
    sim_res = servelab.simulate(scenario(**changes))
    real = servelab.serve(scenario(**changes))
    assert sim_res.meta["drop_reasons"] == real.meta["drop_reasons"]


# --- the C++ side of bad input: policy documents, integers, times, memory, kept actions -------

_core = servelab._core


def _small_policy_json() -> str:
    """A valid worker policy document (3 models, N=4, D=5) to spoil one field of."""
    table = _core.ramsis.LatencyTable(
        ["fast", "medium", "slow"],
        [0.60, 0.75, 0.85],
        np.array([[0.004 + 0.0025 * b, 0.009 + 0.004 * b, 0.017 + 0.007 * b] for b in range(8)]).T,
    )
    generated = _core.ramsis.generate_policy(
        table, slo_ms=40, load_qps=300, workers=3, max_queue=4, intervals=5
    )
    return generated["policy"].to_json()


def _spoiled(field: str, value: Any) -> str:
    import json

    doc = json.loads(_small_policy_json())
    doc[field] = value
    return json.dumps(doc)


DEEP_JSON = "[" * 100_000 + "]" * 100_000


@pytest.mark.parametrize(
    "read",
    [_core.ramsis.WorkerPolicy.from_json, _core.ramsis.PolicySet.from_json],
    ids=["worker-policy", "policy-set"],
)
def test_deeply_nested_policy_json_is_a_value_error_not_a_crash(read):
    with pytest.raises(ValueError, match=r"policy JSON: nested deeper than 64 levels"):
        read(DEEP_JSON)


def test_deeply_nested_policy_file_given_to_the_scheduler_is_a_value_error(tmp_path):
    path = tmp_path / "deep.json"
    path.write_text(DEEP_JSON)
    with pytest.raises(ValueError, match=r"nested deeper than 64 levels"):
        _core.ramsis.ramsis_scheduler(str(path))


def test_random_bytes_as_a_policy_are_a_value_error_with_the_bytes_escaped(tmp_path):
    junk = bytes([0x8F, 0xFF, 0x00, 0xC3, 0x28]) + bytes(range(256))
    with pytest.raises(ValueError, match=r"not valid JSON at byte 1: .*last read: '\\x8f'"):
        _core.ramsis.WorkerPolicy.from_json(junk)
    path = tmp_path / "junk.json"
    path.write_bytes(junk)
    with pytest.raises(ValueError, match=r"not valid JSON at byte 1"):
        _core.ramsis.ramsis_scheduler(str(path))


@pytest.mark.parametrize(
    ("field", "value", "match"),
    [
        ("balancer", "bogus", r"balancer='bogus' is not one of 'round_robin', 'shortest_queue'"),
        ("intervals", -3, r"intervals=-3 must be in 1\.\.100000 for discretisation='fld'"),
        ("arrivals", "erlang0", r"arrivals='erlang0' is not 'poisson' or 'erlang<r>'"),
        ("max_queue", 10**9, r"max_queue=1000000000 must be in 1\.\.4096"),
    ],
)
def test_the_online_scheduler_refuses_a_policy_that_evaluate_refuses(field, value, match):
    with pytest.raises(ValueError, match=match):
        _core.ramsis.WorkerPolicy.from_json(_spoiled(field, value))

    class Spoiled:  # anything with to_json(): the scheduler reads the document itself
        def to_json(self) -> str:
            return _spoiled(field, value)

    with pytest.raises(ValueError, match=match):
        _core.ramsis.ramsis_scheduler(Spoiled())


def _mdp_one_state(reward: float, probability: float = 1.0):
    return _core.solvers.mdp.Mdp([0, 1], [0, 1], [0], [probability], [reward])


def _keep_actions(scheduler_calls):
    """A policy that serves like PyFcfs and keeps the actions of its first arrival."""

    class Keeper(cp.PyFcfs):
        def on_arrival(self, query, view, actions) -> None:
            if query.id == 0:
                self.kept = actions
            scheduler_calls(query, view, actions)
            super().on_arrival(query, view, actions)

    return Keeper()


def _dispatch_huge_id(query, view, actions):
    actions.dispatch(0, "rm2", [2**70])


def _timer_huge_tag(query, view, actions):
    actions.set_timer(view.now + 1.0, 2**70)


def _enqueue_float(query, view, actions):
    actions.enqueue(1.5)


INTEGER_OVERFLOWS = [
    pytest.param(
        sim(workers__0__count=10**12),
        ValueError,
        r"workers\[0\]\.count=1000000000000 must be an integer in 1\.\.1000000",
        id="scenario-workers-1e12",
    ),
    pytest.param(
        lambda: _core.WorkerGroup("g4dn.xlarge", 10**12),
        ValueError,
        r"count=1000000000000 is out of range: it must be at most 1000000",
        id="workers-1e12",
    ),
    pytest.param(
        lambda: _core.WorkerGroup("g4dn.xlarge", 2**70),
        ValueError,
        r"count=1180591620717411303424 is out of range: it must be at most 1000000",
        id="workers-2**70",
    ),
    pytest.param(
        sim(workload__count=2**70),
        ValueError,
        r"count=1180591620717411303424 is out of range: it must be at most 9223372036854775807",
        id="workload-count-2**70",
    ),
    pytest.param(
        lambda: _core.WorkerGroup("g4dn.xlarge", 1, [], {"threads": 2**64}),
        ValueError,
        r"config\['threads'\]=18446744073709551616 is out of range",
        id="worker-config-2**64",
    ),
    pytest.param(
        lambda: _core.WorkerGroup("g4dn.xlarge", 2.5),
        TypeError,
        r"count=2\.5 must be an integer",
        id="workers-float",
    ),
    pytest.param(
        lambda: _core.kairos.InstanceSpace(["a", "b"], [1.0, 0.5], [2**70, 3], 10.0),
        ValueError,
        r"max_count\[0\]=1180591620717411303424 is out of range",
        id="kairos-config-2**70",
    ),
    pytest.param(
        lambda: _core.solvers.mdp.value_iteration(_mdp_one_state(1.0), max_iterations=2**63),
        ValueError,
        r"max_iterations=9223372036854775808 is out of range: it must be at most 2147483647",
        id="max-iterations-2**63",
    ),
    pytest.param(
        lambda: _core.solvers.mdp.stationary_distribution(
            _mdp_one_state(1.0), [0], max_iterations=2**63
        ),
        ValueError,
        r"max_iterations=9223372036854775808 is out of range",
        id="stationary-max-iterations-2**63",
    ),
    pytest.param(
        lambda: _core.UniformSize(1, 10).generate(seed=1, count=2**70),
        ValueError,
        r"count=1180591620717411303424 is out of range",
        id="sizes-count-2**70",
    ),
    pytest.param(
        lambda: _core.Poisson(10).generate(seed=1, count=10**400),
        ValueError,
        r"count=<an integer of 1329 bits> is out of range",
        id="arrivals-count-huge",
    ),
]


@pytest.mark.parametrize(("call", "error", "match"), INTEGER_OVERFLOWS)
def test_integer_overflow_names_the_parameter_value_and_range(call, error, match):
    with pytest.raises(error, match=match):
        call()


@pytest.mark.parametrize("world", ["sim", "serve"])
@pytest.mark.parametrize(
    ("action", "error", "match"),
    [
        (_dispatch_huge_id, ValueError, r"queries\[0\]=1180591620717411303424 is out of range"),
        (_timer_huge_tag, ValueError, r"tag=1180591620717411303424 is out of range"),
        (_enqueue_float, TypeError, r"query=1\.5 must be an integer"),
    ],
)
def test_actions_with_integers_out_of_range_name_them(world, action, error, match):
    go = servelab.simulate if world == "sim" else servelab.serve
    with pytest.raises(error, match=match):
        go(scenario(), scheduler=cp.Misuse(action))


def test_slo_beyond_the_nanosecond_range_says_finite_but_too_large():
    with pytest.raises(
        ValueError,
        match=r"workload\.apps\[0\]\.slo_ms=1e\+300 is finite but beyond the range of int64 "
        r"nanoseconds: it must be below 9\.2e\+12 ms",
    ):
        servelab.simulate(scenario(workload__apps__0__slo_ms=1e300))
    with pytest.raises(
        ValueError,
        match=r"application 'a': slo_s=1e\+297 is finite but beyond the range of int64 "
        r"nanoseconds: \|slo_s\| must be below 9\.2e\+09 seconds",
    ):
        _core.Application("a", slo_s=1e297)
    table = _core.ramsis.LatencyTable(["m"], [0.9], np.array([[0.01, 0.02]]))
    with pytest.raises(
        ValueError,
        match=r"slo_ms=1e\+300 is finite but beyond the range of int64 nanoseconds: "
        r"\|slo_ms\| must be below 9\.2e\+12 ms",
    ):
        _core.ramsis.build_mdp(table, slo_ms=1e300, load_qps=10, workers=1, max_queue=2)


@pytest.mark.parametrize("horizon", [1e10, 1e300, float("inf")])
def test_horizon_beyond_the_nanosecond_range_names_the_value_given(horizon):
    given = re.escape(f"horizon_s={horizon:g}")
    with pytest.raises(ValueError, match=rf"{given} is beyond the longest run .* count=None"):
        servelab.simulate(scenario(workload__count=None, workload__horizon_s=horizon))
    # With a count, such a horizon is simply no limit.
    assert len(servelab.simulate(scenario(workload__horizon_s=horizon))) == 5


def test_a_count_too_large_for_memory_is_refused_up_front_naming_count():
    with pytest.raises(
        MemoryError,
        match=r"count=1000000000000: the run's per-query records would need about .* TB "
        r"\(90 bytes per query\), more than the .* of memory available: lower count",
    ):
        servelab.simulate(scenario(workload__count=10**12))


def test_a_horizon_too_long_for_memory_is_refused_up_front_naming_horizon():
    with pytest.raises(
        MemoryError,
        match=r"horizon_s=1000000000 at about 1000 queries/s means about 1000000000000 queries: "
        r".*: lower horizon_s or give a count",
    ):
        servelab.simulate(scenario(workload__count=None, workload__horizon_s=1e9))


def test_generating_too_many_queries_is_refused_up_front():
    workload = _core.Workload("poisson(rate=100)", [_core.Application("a", 0.1)], count=10**13)
    with pytest.raises(
        MemoryError, match=r"count=10000000000000: the generated columns would need"
    ):
        workload.generate(seed=1)


OUT_OF_MEMORY_RUN = """
import resource, servelab
from tests.python.test_bad_input import scenario
servelab.simulate(scenario())  # everything a run imports is loaded before the limit
with open("/proc/meminfo") as f:
    available = next(int(line.split()[1]) << 10 for line in f if line.startswith("MemAvailable:"))
# Records for half of what is available pass the check up front; a limit of half of what those
# records take makes reserving them fail.
count = min(40_000_000, available // 90 // 2)
with open("/proc/self/status") as f:
    size = next(int(line.split()[1]) << 10 for line in f if line.startswith("VmSize:"))
limit = size + count * 70 // 2
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
print("count", count)
try:
    servelab.simulate(scenario(workload__count=count, drain_s=0))
except MemoryError as e:
    print("MemoryError:", e)
"""


def test_running_out_of_memory_during_a_run_names_count_and_horizon():
    out = subprocess.run(
        [sys.executable, "-c", OUT_OF_MEMORY_RUN],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=Path(__file__).parents[2],
    )
    assert out.returncode == 0, out.stderr
    count = int(re.search(r"count (\d+)", out.stdout).group(1))
    if count < 1_000_000:
        pytest.skip(f"too little memory available for a run that reserves {count} records")
    assert re.search(
        rf"MemoryError: out of memory during the run \(workload count={count}, horizon_s=None\): "
        r"lower count or horizon_s",
        out.stdout,
    ), out.stdout + out.stderr


def test_mdp_probability_just_above_one_is_shown_exactly():
    with pytest.raises(ValueError, match=r"probability=1\.000000000001 is outside \[0, 1\]"):
        _mdp_one_state(1.0, probability=1 + 1e-12)


def test_value_iteration_refuses_overflowing_values_naming_the_reward_scale():
    with pytest.raises(
        ValueError,
        match=r"value_iteration: the values overflowed after 2 sweeps \(state 0: inf\): "
        r"rewards up to \|reward\|=1e\+308",
    ):
        _core.solvers.mdp.value_iteration(_mdp_one_state(1e308), min_iterations=5)
    # One sweep does not overflow: its gain is the reward, not inf.
    solution = _core.solvers.mdp.value_iteration(_mdp_one_state(1e308))
    assert solution["converged"] and solution["gain"] == 1e308


@pytest.mark.parametrize("world", ["sim", "serve"])
def test_actions_kept_after_the_run_raise_for_every_method(world):
    go = servelab.simulate if world == "sim" else servelab.serve
    policy = _keep_actions(lambda query, view, actions: None)
    go(scenario(), scheduler=policy)
    kept = policy.kept
    calls = {
        "dispatch": lambda: kept.dispatch(0, "rm2", [0]),
        "enqueue": lambda: kept.enqueue(0),
        "enqueue_to_worker": lambda: kept.enqueue_to_worker(0, 0),
        "drop": lambda: kept.drop(0, "late"),
        "set_timer": lambda: kept.set_timer(1e6, 1),
        "add_worker": lambda: kept.add_worker("g4dn.xlarge", ["rm2"]),
        "remove_worker": lambda: kept.remove_worker(0),
        "load_model": lambda: kept.load_model(0, "rm2"),
        "unload_model": lambda: kept.unload_model(0, "rm2"),
        "set_config": lambda: kept.set_config(0, "threads", 2),
    }
    for name, call in calls.items():
        with pytest.raises(
            RuntimeError, match=rf"actions\.{name}: .*hook that has returned \(its run has ended"
        ):
            call()


def test_actions_kept_from_on_start_still_work_inside_later_hooks():
    class FromStart(cp.PyFcfs):
        def on_start(self, view, actions) -> None:
            self.first = actions

        def on_arrival(self, query, view, actions) -> None:
            self.first.enqueue(query.id)  # a hook of the same run is running
            self._drain(view, actions)

    res = servelab.simulate(scenario(), scheduler=FromStart())
    assert res.summary()["completed"] == 5


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (
            lambda: servelab.profiles.example("hetero_cpu_gpu").sample(
                "g4dn.xlarge", "rm2", 1, seed=0, count=10**13
            ),
            r"count=10000000000000: the service times would need about .* lower count$",
        ),
        (
            lambda: servelab.workload.make_size_distribution("constant(value=3)").generate(
                seed=0, count=10**13
            ),
            r"count=10000000000000: the sizes would need about .* lower count$",
        ),
        (
            lambda: servelab.workload.make_arrival_process("poisson(rate=1000)").generate(
                seed=0, horizon_s=1e9
            ),
            r"horizon_s=1000000000 \(about .* arrivals at 1000/s\): the arrival times .*horizon_s$",
        ),
    ],
    ids=["profile-sample", "sizes-generate", "arrivals-generate"],
)
def test_bulk_draws_check_their_memory_before_allocating(call, match):
    with pytest.raises(MemoryError, match=match):
        call()


def test_registry_keyword_integers_beyond_int64_are_refused_not_made_floats():
    with pytest.raises(ValueError, match=r"rate=1180591620717411303424 is out of range: .*64 bits"):
        servelab.workload.make_arrival_process("poisson", rate=2**70)
