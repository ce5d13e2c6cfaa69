"""The baselines for a multi-application workload (Sec. 6.1): Clipper+ pins each application to
its pre-selected variant (or, unpinned, to a pre-loaded one meeting its accuracy floor), SM+
scales each application's own variant; INFaaS with app_models searches each application's own
model's variants, and dispatches by online bin packing on request."""

from __future__ import annotations

import numpy as np
import pytest

import servelab
from servelab import infaas
from servelab.results import COMPLETED

VARIANTS = infaas.table8_variants(["resnet50", "mobilenetv1", "alexnet"])
PROFILE = infaas.to_profile(VARIANTS)


def two_apps(workers: list[dict], rate: float = 20, count: int = 400) -> dict:
    return {
        "profile": PROFILE,
        "workers": workers,
        "workload": {
            "arrivals": f"poisson(rate={rate})",
            "count": count,
            "apps": [
                {"name": "resnet", "slo_ms": 400, "accuracy_floor": 0.74, "share": 0.5},
                {"name": "alex", "slo_ms": 400, "accuracy_floor": 0.5, "share": 0.5},
            ],
        },
        "drain_s": 30,
    }


def served(res: servelab.Result) -> dict[int, set[str]]:
    c = res.columns
    done = c["status"] == COMPLETED
    names = np.array(res.model_names)
    return {app: set(names[c["model"][done & (c["app"] == app)]]) for app in (0, 1)}


CPU = [{"hardware": "cpu", "count": 2,
        "models": ["resnet50_tensorflow_cpu_b1", "alexnet_tensorflow_cpu_b1"]}]  # fmt: skip


def test_clipper_plus_pins_each_application_to_its_variant():
    spec = "clipper_plus(app_models='resnet50_tensorflow_cpu_b1,alexnet_tensorflow_cpu_b1')"
    by_app = served(servelab.simulate(two_apps(CPU), scheduler=spec, seed=0))
    assert by_app == {0: {"resnet50_tensorflow_cpu_b1"}, 1: {"alexnet_tensorflow_cpu_b1"}}


def test_unpinned_clipper_plus_honours_accuracy_floors():
    # Worker 0 holds alexnet (56.6 %): the ResNet50 app (floor 74 %) must not get it.
    workers = [{"hardware": "cpu", "count": 1, "models": ["alexnet_tensorflow_cpu_b1"]},
               {"hardware": "cpu", "count": 1,
                "models": ["resnet50_tensorflow_cpu_b1"]}]  # fmt: skip
    by_app = served(servelab.simulate(two_apps(workers), scheduler="clipper_plus", seed=0))
    assert by_app[0] == {"resnet50_tensorflow_cpu_b1"}


def test_sm_plus_scales_each_applications_own_variant():
    spec = ("sm_plus(startup_s=2, idle_s=5, max_workers=6, "
            "app_models='resnet50_tensorflow_cpu_b1,alexnet_tensorflow_cpu_b1')")  # fmt: skip
    res = servelab.simulate(two_apps(CPU, rate=30, count=900), scheduler=spec, seed=0)
    assert served(res) == {0: {"resnet50_tensorflow_cpu_b1"}, 1: {"alexnet_tensorflow_cpu_b1"}}
    assert len(res.workers_frame()) > 2  # it started workers for its variants


def test_infaas_with_app_models_keeps_each_application_on_its_model():
    spec = "infaas(app_models='resnet50_*,alexnet_*')"
    by_app = served(servelab.simulate(two_apps(CPU), scheduler=spec, seed=0))
    assert all(n.startswith("resnet50_") for n in by_app[0])
    assert all(n.startswith("alexnet_") for n in by_app[1])
    # Model-less (no app_models), the alexnet app may be served by any variant above its floor.
    assert (
        servelab.simulate(two_apps(CPU), scheduler="infaas", seed=0).summary()["completed"] == 400
    )


def test_best_fit_packs_queries_onto_fewer_instances():
    # Two GPU workers hold the same variant; at a light load best fit keeps one of them idle.
    workers = [{"hardware": "gpu", "count": 2, "models": ["resnet50_tensorrt_gpu_b1"]}]
    scenario = {
        "profile": PROFILE,
        "workers": workers,
        "workload": {
            "arrivals": "poisson(rate=20)",
            "count": 400,
            "apps": [{"name": "r", "slo_ms": 200, "accuracy_floor": 0.7}],
        },  # fmt: skip
    }
    spread = servelab.simulate(scenario, scheduler="infaas(autoscale_s=0)", seed=0)
    packed = servelab.simulate(
        scenario, scheduler="infaas(autoscale_s=0, dispatch='best_fit')", seed=0
    )
    used = {name: np.bincount(r.columns["worker"], minlength=2) for name, r in
            (("least_loaded", spread), ("best_fit", packed))}  # fmt: skip
    print("\nqueries per worker:", used)
    assert used["best_fit"].min() < used["least_loaded"].min()
    assert packed.summary()["slo_violation_rate"] == 0


def test_bad_pins_and_settings_are_named():
    with pytest.raises(KeyError, match="nope"):
        servelab.simulate(two_apps(CPU), scheduler="clipper_plus(app_models='nope')")
    with pytest.raises(ValueError, match="loaded on no worker"):
        servelab.simulate(two_apps(CPU), scheduler="sm_plus(app_models='resnet50_tensorrt_gpu_b1')")
    with pytest.raises(ValueError, match="matches no model"):
        servelab.simulate(two_apps(CPU), scheduler="infaas(app_models='vgg*')")
    with pytest.raises(ValueError, match="dispatch='first'"):
        servelab.make_scheduler("infaas(dispatch='first')")
    described = servelab.make_scheduler("infaas(dispatch='best_fit', fast_up=true)").describe()
    assert "best_fit" in described and "fast_up=true" in described
