"""The periodic Model-Autoscaler inside the `infaas` policy (Sec. 4.2.2): under a heavy load on one
GPU worker it upgrades to the TensorRT batch-8 variant (the paper's choice, Sec. 6.2) where the
per-query scaling alone picked PyTorch batch 1; after a spike it downgrades once the variant has
been unneeded for its load time; its parameters are typed and checked."""

from __future__ import annotations

import numpy as np
import pytest

import servelab
from servelab import infaas
from servelab.results import COMPLETED

PROFILE = infaas.to_profile(infaas.resnet50_variants())


def one_gpu(rates: list[float], interval_s: float = 5.0, slo_ms: float = 50.0) -> dict:
    return {
        "profile": PROFILE,
        "workers": [{"hardware": "gpu", "count": 1, "models": ["resnet50_tensorrt_gpu_b1"]}],
        "workload": {
            "arrivals": f"piecewise_rate(interval_s={interval_s}, rates={rates})",
            "horizon_s": interval_s * len(rates),
            "apps": [{"name": "classify", "slo_ms": slo_ms, "accuracy_floor": 0.7}],
        },
        "drain_s": 120,
    }


def served_after(res: servelab.Result, t_s: float) -> dict[str, int]:
    """Completed queries by variant among those that started after t_s."""
    c = res.columns
    late = (c["status"] == COMPLETED) & (c["start_ns"] >= int(t_s * 1e9))
    names, counts = np.unique(np.array(res.model_names)[c["model"][late]], return_counts=True)
    return dict(zip(names.tolist(), counts.tolist(), strict=True))


def test_heavy_load_on_one_gpu_worker_reaches_tensorrt_batch_8():
    scenario = one_gpu([700.0] * 6)
    res = servelab.simulate(scenario, scheduler="infaas", seed=0)
    per_query = servelab.simulate(scenario, scheduler="infaas(autoscale_s=0)", seed=0)
    ours, before = served_after(res, 10.0), served_after(per_query, 10.0)
    print(f"\n700 QPS on one GPU, after 10 s: periodic {ours}; per-query only {before}")
    assert max(ours, key=ours.get) == "resnet50_tensorrt_gpu_b8"
    assert max(before, key=before.get) != "resnet50_tensorrt_gpu_b8"  # the weakness it fixes
    assert res.summary()["completed"] > per_query.summary()["completed"]


def test_spike_upgrades_then_downgrades_after_the_load_time():
    # 20 s at 5 QPS, 20 s at 300, 40 s at 5: the spike needs the GPU, the tail does not.
    rates = [5.0] * 4 + [300.0] * 4 + [5.0] * 8
    scenario = one_gpu(rates)
    scenario["workers"] = [
        {"hardware": "cpu", "count": 2, "models": ["resnet50_tensorflow_cpu_b1"]},
        {"hardware": "gpu", "count": 1, "models": ["resnet50_tensorrt_gpu_b1"]},  # unused at first
    ]
    scenario["workload"]["apps"][0]["slo_ms"] = 400
    res = servelab.simulate(scenario, scheduler="infaas", seed=2)
    b = res.batches()
    hw = np.array(res.model_names)[b["model"]]
    gpu = np.char.find(hw.astype(str), "_gpu_") >= 0
    t = b["start_ns"].to_numpy() / 1e9
    print(
        f"\nGPU batches: 10-20 s {int(gpu[(t >= 10) & (t < 20)].sum())}, during "
        f"{int(gpu[(t >= 22) & (t < 40)].sum())}, last 20 s {int(gpu[t >= 60].sum())}"
    )
    assert gpu[(t >= 22) & (t < 40)].mean() > 0.5  # upgraded for the spike
    # The idle GPU instance it started with is removed once unneeded for its load time (6 s).
    assert not gpu[(t >= 10) & (t < 20)].any()
    assert not gpu[t >= 60].any()  # downgraded back to the CPU


def test_same_seed_same_decisions():
    scenario = one_gpu([300.0, 700.0, 100.0])
    a = servelab.simulate(scenario, scheduler="infaas", seed=4)
    b = servelab.simulate(scenario, scheduler="infaas", seed=4)
    for key in ("model", "worker", "start_ns", "finish_ns", "status"):
        assert np.array_equal(a.columns[key], b.columns[key])


@pytest.mark.parametrize(
    ("spec", "field"),
    [
        ("infaas(autoscale_s=-1)", "autoscale_s"),
        ("infaas(slack=0.5)", "slack"),
        ("infaas(load_window_s=0)", "load_window_s"),
        ("infaas(offline_apps='x')", "offline_apps"),
        ("infaas(offline_util=2)", "offline_util"),
    ],
)
def test_bad_parameters_name_the_field(spec, field):
    with pytest.raises(ValueError, match=field):
        servelab.make_scheduler(spec)


def test_describe_round_trips_the_new_parameters():
    spec = "infaas(autoscale_s=0.5, slack=1.1, load_window_s=3, offline_apps='1', offline_util=0.3)"
    described = servelab.make_scheduler(spec).describe()
    assert "autoscale_s=0.5" in described and "offline_apps='1'" in described
    assert servelab.make_scheduler(described).describe() == described
