"""The ``infaas`` policy's applications as the real server uses them, in the simulator:
applications naming the same ``app_models`` entry share its variants, offline queries run only
on variants of their own application, and the parameters real executors need round-trip."""

from __future__ import annotations

import numpy as np

import servelab


def _profile(models: dict[str, float]) -> servelab.Profile:
    """One CPU variant per model (name -> accuracy), 2 ms at batch 1 and 4 ms at batch 8."""
    return servelab.profiles.from_dict(
        {
            "format": "servelab.profile",
            "version": 1,
            "hardware": {"cpu": {"price_per_hour": 1.0}},
            "models": {m: {"accuracy": a} for m, a in models.items()},
            "latency": [
                {"hardware": "cpu", "model": m, "batch": b, "samples_ms": [ms]}
                for m in models
                for b, ms in ((1, 2.0), (8, 4.0))
            ],
            "load_time_s": {"cpu": dict.fromkeys(models, 0.01)},
        }
    )


def _run(models, apps, scheduler, workers=None) -> servelab.Result:
    scenario = {
        "profile": _profile(models),
        "workers": workers or [{"hardware": "cpu", "count": 2}],
        "workload": {"count": 300, "apps": apps},
        "service": "mean",
    }
    return servelab.simulate(scenario, scheduler=scheduler)


def _models_by_app(result: servelab.Result) -> dict[str, set[str]]:
    c = result.columns
    out: dict[str, set[str]] = {}
    for app, model in zip(c["app"], c["model"], strict=True):
        if model >= 0:
            out.setdefault(result.app_names[app], set()).add(result.model_names[model])
    return out


def test_applications_naming_the_same_models_share_their_variants():
    apps = [
        {"name": "a", "slo_ms": 50, "arrivals": "poisson(rate=40)"},
        {"name": "b", "slo_ms": 50, "arrivals": "poisson(rate=40)"},
        {"name": "c", "slo_ms": 50, "arrivals": "poisson(rate=40)"},
    ]
    result = _run(
        {"x@m0": 0.7, "x@m1": 0.9, "y@m2": 0.8},
        apps,
        "infaas(app_models='x@*,x@*,y@*', autoscale_s=0)",
    )
    c = result.columns
    assert int((c["status"] != 0).sum()) == 0  # every query served (a and b share x's variants)
    used = _models_by_app(result)
    assert used["a"] <= {"x@m0", "x@m1"} and used["b"] <= {"x@m0", "x@m1"}
    assert used["c"] == {"y@m2"}


def test_offline_queries_run_only_on_variants_of_their_own_application():
    apps = [
        {"name": "online", "slo_ms": 50, "arrivals": "poisson(rate=20)"},
        {"name": "offline", "slo_ms": 1000, "arrivals": "poisson(rate=20)"},
    ]
    result = _run(
        {"on@m0": 0.9, "off@m1": 0.6},
        apps,
        "infaas(app_models='on@*,off@*', offline_apps='1', autoscale_s=0)",
        workers=[{"hardware": "cpu", "count": 1, "models": ["on@m0"]}],
    )
    used = _models_by_app(result)
    assert used["online"] == {"on@m0"}
    # The worker held only the online variant (accurate enough for the offline queries too):
    # the offline ones loaded their own instead.
    assert used["offline"] == {"off@m1"}
    c = result.columns
    offline = c["app"] == result.app_names.index("offline")
    assert np.count_nonzero(c["status"][offline] == 0) > 0


def test_the_real_executors_parameters_round_trip_and_default_off():
    spec = "infaas(interference_floor_ms=0.25, warmup_batch=true)"
    apps = [{"name": "a", "slo_ms": 50, "arrivals": "poisson(rate=20)"}]
    result = _run({"m": 0.9}, apps, spec)
    assert result.meta["scheduler"] == spec
    assert _run({"m": 0.9}, apps, "infaas").meta["scheduler"] == "infaas"
