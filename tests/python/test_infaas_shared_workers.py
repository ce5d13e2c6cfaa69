"""The `infaas` Model-Autoscaler with applications sharing workers (`app_models`, Sec. 6.1's
setting): an application's own instance on a worker it shares keeps its capacity, and an
upgrade no worker can take leaves the running instance in place (docs/infaas.md, Sec. 6.1)."""

from __future__ import annotations

import servelab
from servelab.results import COMPLETED
from servelab.systems.infaas import catalogue

ARCHS = ["resnet50", "vgg16"]
# The VM-Autoscaler may start one more CPU worker, quickly: a plan that wants a worker shows.
SPEC = "infaas(max_workers=3, startup_s=2, app_models='resnet50_*,vgg16_*')"


def _run(workers: list[dict], resnet_qps: float, seed: int = 0) -> servelab.Result:
    variants = catalogue.table8_variants(ARCHS)
    acc = {a: catalogue.TABLE8_ACCURACY[a] / 100 for a in ARCHS}
    total = resnet_qps + 0.5
    scenario = {
        "profile": catalogue.to_profile(variants, prices="ec2"),
        "workers": workers,
        "workload": {
            "arrivals": f"piecewise_rate(interval_s=30, rates=[{total}])",
            "horizon_s": 30,
            # resnet50's 1 s SLO admits the PyTorch batch-4 CPU variant (560 ms at batch 4).
            "apps": [
                {
                    "name": "resnet50",
                    "slo_ms": 1000.0,
                    "accuracy_floor": acc["resnet50"],
                    "share": resnet_qps / total,
                },
                {
                    "name": "vgg16",
                    "slo_ms": 2000.0,
                    "accuracy_floor": acc["vgg16"],
                    "share": 0.5 / total,
                },
            ],
        },  # fmt: skip
        "drain_s": 10,
    }
    return servelab.simulate(scenario, scheduler=SPEC, seed=seed)


def _served_by(result: servelab.Result, app: str) -> set[tuple[int, str]]:
    frame = result.to_pandas()
    rows = frame[(frame["app"] == app) & (frame["status"] == COMPLETED)]
    return set(zip(rows["worker"].tolist(), rows["model"].astype(str).tolist(), strict=True))


def test_own_instance_on_a_shared_worker_keeps_its_capacity():
    # Worker 0 holds resnet50's TensorFlow variant and vgg16's. At 1 QPS the held instance
    # (5 QPS) suffices: before the fix its capacity was scaled to nothing because the worker
    # also held vgg16, so resnet50 "upgraded" to the batch-4 variant, on a worker started for it.
    workers = [
        {"hardware": "cpu", "count": 1,
         "models": ["resnet50_tensorflow_cpu_b1", "vgg16_tensorflow_cpu_b1"]},
        {"hardware": "cpu", "count": 1, "models": ["vgg16_pytorch_cpu_b4"]},
    ]  # fmt: skip
    result = _run(workers, resnet_qps=1.0)
    assert _served_by(result, "resnet50") == {(0, "resnet50_tensorflow_cpu_b1")}
    assert len(result.workers_frame()) == 2  # no worker started


def test_an_upgrade_no_worker_can_take_keeps_the_running_instance():
    # 6 QPS on the 5 QPS TensorFlow instance: the greedy upgrades to the batch-4 variant, but
    # both workers hold vgg16 (not a target). Before the fix the running instance left the
    # store anyway and each period's next query loaded a variant on the other worker; now it
    # keeps serving until the worker the VM-Autoscaler is asked for takes the upgrade.
    workers = [
        {"hardware": "cpu", "count": 1,
         "models": ["resnet50_tensorflow_cpu_b1", "vgg16_tensorflow_cpu_b1"]},
        {"hardware": "cpu", "count": 1, "models": ["vgg16_pytorch_cpu_b4"]},
    ]  # fmt: skip
    result = _run(workers, resnet_qps=6.0)
    served = _served_by(result, "resnet50")
    assert (1, "resnet50_tensorflow_cpu_b1") not in served
    assert (1, "resnet50_pytorch_cpu_b4") not in served
    assert (2, "resnet50_pytorch_cpu_b4") in served  # the started worker took the upgrade
    assert {m for _, m in served} <= {"resnet50_tensorflow_cpu_b1", "resnet50_pytorch_cpu_b4"}
    again = _run(workers, resnet_qps=6.0)
    assert (again.columns["finish_ns"] == result.columns["finish_ns"]).all()  # deterministic
