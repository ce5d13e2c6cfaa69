"""INFaaS's registered policies in the simulator on the ResNet50-shaped catalogue: per-query
variant selection by accuracy floor and SLO, upgrades when the SLO tightens, and Clipper+ held to
its pre-loaded variant. (Both also run the shared conformance suite.)"""

from __future__ import annotations

import numpy as np
import pytest

import servelab
from servelab import infaas
from servelab.results import COMPLETED

PROFILE = infaas.to_profile(infaas.resnet50_variants())
CPU_B1 = "resnet50_tensorflow_cpu_b1"
PRELOADED = {CPU_B1, "resnet50_neuron_inferentia_b1", "resnet50_tensorrt_gpu_b1"}


def scenario(rate: float, slo_ms: float, count: int = 400, accuracy: float = 0.7) -> dict:
    # Two CPU workers, one Inferentia, one GPU, each starting with its batch-1 variant.
    return {
        "profile": PROFILE,
        "workers": [
            {"hardware": "cpu", "count": 2, "models": [CPU_B1]},
            {"hardware": "inferentia", "count": 1, "models": ["resnet50_neuron_inferentia_b1"]},
            {"hardware": "gpu", "count": 1, "models": ["resnet50_tensorrt_gpu_b1"]},
        ],
        "workload": {
            "arrivals": f"poisson(rate={rate})",
            "count": count,
            "apps": [{"name": "classify", "slo_ms": slo_ms, "accuracy_floor": accuracy}],
        },
        "drain_s": 30,
    }


def served_hardware(res: servelab.Result) -> dict[str, float]:
    """Share of completed queries by the hardware of the variant that served them."""
    c = res.columns
    done = c["status"] == COMPLETED
    names = np.array(res.model_names)[c["model"][done]]
    hws = [n.split("_")[2] for n in names]
    return {hw: hws.count(hw) / len(hws) for hw in set(hws)}


def late_share(res: servelab.Result) -> float:
    c = res.columns
    done = c["status"] == COMPLETED
    return float(np.mean(c["finish_ns"][done] > c["deadline_ns"][done]))


def test_low_load_and_loose_slo_stays_on_cpu():
    res = servelab.simulate(scenario(2, 1000), scheduler="infaas", seed=1)
    shares = served_hardware(res)
    print("\nflat 2 QPS, SLO 1 s:", shares)
    assert res.summary()["completed"] == 400
    assert shares.get("cpu", 0) > 0.9


def test_tight_slo_upgrades_to_accelerators_and_beats_clipper_plus():
    res = servelab.simulate(scenario(30, 60), scheduler="infaas", seed=1)
    base = servelab.simulate(scenario(30, 60), scheduler="clipper_plus", seed=1)
    shares = served_hardware(res)
    print(f"\n30 QPS, SLO 60 ms: infaas {shares}, late {late_share(res):.1%}; "
          f"clipper_plus late {late_share(base):.1%}")  # fmt: skip
    assert shares.get("cpu", 0) < 0.1  # 200 ms CPU variants cannot meet 60 ms
    assert late_share(res) < 0.1
    # Clipper+ never leaves its pre-loaded variants, and sends work to the slow CPU ones.
    assert set(np.array(base.model_names)[base.columns["model"]]) <= PRELOADED
    assert late_share(res) < late_share(base)


def test_same_seed_same_result_and_unknown_model_is_named():
    a = servelab.simulate(scenario(20, 100, count=200), scheduler="infaas", seed=3)
    b = servelab.simulate(scenario(20, 100, count=200), scheduler="infaas", seed=3)
    for key in ("model", "worker", "start_ns", "finish_ns"):
        assert np.array_equal(a.columns[key], b.columns[key])
    with pytest.raises(KeyError, match="vgg16"):
        servelab.simulate(scenario(20, 100, count=10), scheduler="infaas(models='vgg16')", seed=3)


def test_unsatisfiable_accuracy_serves_the_closest_variant_without_losing_queries():
    res = servelab.simulate(scenario(2, 1000, count=50, accuracy=0.95), scheduler="infaas", seed=1)
    assert res.summary()["completed"] == 50


def test_sm_plus_scales_its_one_variant_horizontally():
    one_gpu = {
        "profile": PROFILE,
        "workers": [
            {"hardware": "gpu", "count": 1, "models": ["resnet50_tensorrt_gpu_b1"]},
            {"hardware": "cpu", "count": 1, "models": [CPU_B1]},
        ],
        "workload": {
            "arrivals": "poisson(rate=100)",  # 1.5x one batch-1 GPU instance (15 ms)
            "count": 3000,
            "apps": [{"name": "classify", "slo_ms": 100, "accuracy_floor": 0.7}],
        },
        "drain_s": 30,
    }
    sm = servelab.simulate(one_gpu, scheduler="sm_plus(startup_s=2, idle_s=5)", seed=0)
    clipper = servelab.simulate(one_gpu, scheduler="clipper_plus", seed=0)
    models = set(np.array(sm.model_names)[sm.columns["model"]])
    print(f"\nSM+ workers {sm.summary()['workers']}, late {late_share(sm):.1%}; "
          f"Clipper+ late {late_share(clipper):.1%}")  # fmt: skip
    assert models == {"resnet50_tensorrt_gpu_b1"}  # its one variant, never the CPU one
    assert sm.summary()["workers"] > 2  # started GPU workers
    assert late_share(sm) < late_share(clipper)
    with pytest.raises(ValueError, match="startup_s"):
        servelab.make_scheduler("sm_plus(startup_s=0)")


def test_vm_autoscaler_starts_workers_when_every_one_is_busy():
    one_gpu = {
        "profile": PROFILE,
        "workers": [{"hardware": "gpu", "count": 1, "models": ["resnet50_tensorrt_gpu_b1"]}],
        "workload": {
            "arrivals": "poisson(rate=1200)",  # beyond the best GPU variant's 800 QPS
            "count": 36000,
            "apps": [{"name": "classify", "slo_ms": 100, "accuracy_floor": 0.7}],
        },
        "drain_s": 30,
    }
    vm = "infaas(max_workers=4, startup_s=0.5, poll_s=0.5, idle_s=2)"
    scaled = servelab.simulate(one_gpu, scheduler=vm, seed=0)
    alone = servelab.simulate(one_gpu, scheduler="infaas", seed=0)

    def served_qps(res: servelab.Result) -> float:  # completions within the 30 s of arrivals
        c = res.columns
        return float(np.sum((c["status"] == COMPLETED) & (c["finish_ns"] <= 30e9))) / 30

    a, b = served_qps(scaled), served_qps(alone)
    workers = scaled.summary()["workers"]
    print(f"\nVM-Autoscaler: {workers} workers in all, {a:.0f} QPS; alone {b:.0f} QPS")
    assert workers > 1
    assert a > 1.5 * b  # one worker's best variant carries 800 QPS at most
    assert scaled.meta["scheduler"].startswith("infaas(max_workers=4")


def test_spec_builders_make_registered_policies():
    spec = infaas.infaas_spec(["resnet50_tensorflow_cpu_b1"], max_workers=3)
    assert servelab.make_scheduler(spec).describe().startswith("infaas(models=")
    sm = servelab.make_scheduler(infaas.sm_plus_spec(max_workers=2))
    assert sm.describe().startswith("sm_plus")
    assert servelab.make_scheduler(infaas.clipper_plus_spec()).describe() == "clipper_plus"
    with pytest.raises(ValueError, match="threshold"):
        servelab.make_scheduler("infaas(threshold=1.5)")
    with pytest.raises(ValueError, match="not a string"):
        infaas.infaas_spec("resnet50")
