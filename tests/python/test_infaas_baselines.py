"""The baselines for a multi-application workload (Sec. 6.1): Clipper+ pins each application to
its pre-selected variant (or, unpinned, to a pre-loaded one meeting its accuracy floor), SM+
scales each application's own variant; INFaaS with app_models searches each application's own
model's variants, and dispatches by online bin packing on request."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

import servelab
from servelab import infaas
from servelab.results import COMPLETED
from servelab.systems.infaas import experiments

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


def _records_hash(res: servelab.Result) -> str:
    digest = hashlib.sha256()
    for key in sorted(res.columns):
        digest.update(key.encode())
        digest.update(np.ascontiguousarray(res.columns[key]).tobytes())
    return digest.hexdigest()


def _with_cap(spec: str, cap: str) -> str:
    return (
        f"{spec[:-1]}, batch_cap='{cap}')" if spec.endswith(")") else f"{spec}(batch_cap='{cap}')"
    )


@pytest.mark.parametrize("load", sorted(experiments.FIG6_LOADS))
def test_default_batch_cap_is_full_on_every_fig6_run(load):
    # The default leaves every policy's records as they were before batch_cap existed: the
    # same bits as naming batch_cap='full', for all five Fig. 6 systems.
    for system, (spec, workers) in experiments.FIG6_SYSTEMS.items():
        scenario = experiments.fig6_scenario(load, workers)
        plain = servelab.simulate(scenario, scheduler=spec, seed=0)
        full = servelab.simulate(scenario, scheduler=_with_cap(spec, "full"), seed=0)
        assert len(plain.columns["status"]) > 0, system
        assert _records_hash(plain) == _records_hash(full), system


def test_deadline_batch_cap_never_makes_late_a_query_that_could_be_on_time():
    # ResNet50's PyTorch batch-4 CPU variant (170 ms alone, 560 ms for 4) at a 400 ms SLO, at a
    # load it carries only in batches. 'full' makes queries late in batches that one of them
    # alone would have met; 'deadline' never does (queries already late alone still batch).
    workers = [{"hardware": "cpu", "count": 1, "models": ["resnet50_pytorch_cpu_b4"]}]
    scenario = {
        "profile": PROFILE,
        "workers": workers,
        "workload": {
            "arrivals": "poisson(rate=6)",
            "count": 300,
            "apps": [{"name": "resnet", "slo_ms": 400, "accuracy_floor": 0.7}],
        },
        "drain_s": 60,
    }
    needless = {}
    for cap in ("full", "deadline"):
        res = servelab.simulate(scenario, scheduler=f"clipper_plus(batch_cap='{cap}')", seed=3)
        c = res.columns
        assert (c["status"] == COMPLETED).all()
        service = c["finish_ns"] - c["start_ns"]
        alone = service[c["batch_queries"] == 1].min()  # the profile's batch-1 latency
        could = c["start_ns"] + alone <= c["deadline_ns"]
        late = c["finish_ns"] > c["deadline_ns"]
        needless[cap] = int((could & late & (c["batch_queries"] > 1)).sum())
        print(f"\n{cap}: {late.mean():.1%} late, largest batch {c['batch_queries'].max()}")
    assert needless["full"] > 0
    assert needless["deadline"] == 0


@pytest.mark.parametrize("policy", ["infaas", "clipper_plus", "sm_plus"])
def test_bad_batch_cap_is_named(policy):
    with pytest.raises(ValueError, match=r"batch_cap.*oldest|oldest.*batch_cap"):
        servelab.make_scheduler(f"{policy}(batch_cap='oldest')")
    assert (
        "batch_cap='deadline'"
        in servelab.make_scheduler(f"{policy}(batch_cap='deadline')").describe()
    )
