"""INFaaS's variants co-located on machines (VMs): the `infaas` interference model against a hand
computation, the policy's co-location decisions (a new instance loads beside the running ones,
bounded by the machine's memory and instance slots), SM+ on the same machines, and bad input
(an instance that does not fit, bad interference parameters)."""

from __future__ import annotations

import numpy as np
import pytest

import servelab
from servelab import infaas

GPU = "resnet50_tensorrt_gpu_b1"
GPU8 = "resnet50_tensorrt_gpu_b8"
CPU = "resnet50_tensorflow_cpu_b1"
VARIANTS = infaas.resnet50_variants()
PROFILE = infaas.to_profile(VARIANTS)
LATENCY = {v["name"]: v["latency_ms"] for v in VARIANTS}
MEMORY = {v["name"]: v["memory_mb"] for v in VARIANTS}


def together(hardware: str, models: list[str], arrivals: list[float], interference: str,
             machine: dict | None = None) -> servelab.Result:  # fmt: skip
    """One machine hosting one instance per entry of ``models``; queries at ``arrivals`` go to
    the lowest idle instance (Clipper+ without pins: the one that starts it soonest)."""
    return servelab.simulate(
        {
            "profile": PROFILE,
            "machines": [{"name": "vm", "count": 1, **(machine or {})}],
            "workers": [
                {"hardware": hardware, "count": 1, "models": [m], "machine": "vm"} for m in models
            ],
            "workload": {
                "arrivals": f"replay(timestamps_s=[{', '.join(map(str, arrivals))}])",
                "count": len(arrivals),
                "apps": [{"name": "classify", "slo_ms": 5000, "accuracy_floor": 0.0}],
            },
            "service": "mean",
            "interference": interference,
        },
        scheduler="clipper_plus",
        seed=0,
    )


def service_ms(res: servelab.Result) -> np.ndarray:
    order = np.argsort(res.columns["arrival_ns"], kind="stable")
    return ((res.columns["finish_ns"] - res.columns["start_ns"]) / 1e6)[order]


def test_gpu_co_runners_slow_each_other_linearly_and_are_re_timed_when_one_ends():
    # Two batch-1 batches start together on one GPU: both run at 1 / 1.5 until the first ends,
    # hand-computed: identical work, so both end at 1.5 x the time alone.
    t = LATENCY[GPU][0]
    res = together("gpu", [GPU, GPU], [0.0, 0.0], "infaas(gpu=0.5)")
    np.testing.assert_allclose(service_ms(res), [1.5 * t, 1.5 * t], rtol=1e-6)
    # The second starts halfway through the first: the first has t/2 left at rate 1/1.5 (ends
    # at t/2 + 0.75 t); the second then has done 0.75 t / 1.5 = t/2 and finishes alone.
    res = together("gpu", [GPU, GPU], [0.0, t / 2 / 1e3], "infaas(gpu=0.5)")
    np.testing.assert_allclose(service_ms(res), [1.25 * t, 1.25 * t], rtol=1e-6)
    # Alone (or with gpu=0) the profile's time.
    res = together("gpu", [GPU, GPU], [0.0, 0.0], "infaas(gpu=0)")
    np.testing.assert_allclose(service_ms(res), [t, t], rtol=1e-6)


def test_cpu_co_runners_share_the_machine_cores():
    t = LATENCY[CPU][0]
    three = [CPU, CPU, CPU]
    # 3 batches x 4 threads on 8 cores: 1.5x; on 16 cores: no slowdown; 2 threads each: none.
    res = together("cpu", three, [0.0] * 3, "infaas", {"cores": 8})
    np.testing.assert_allclose(service_ms(res), [1.5 * t] * 3, rtol=1e-6)
    res = together("cpu", three, [0.0] * 3, "infaas", {"cores": 16})
    np.testing.assert_allclose(service_ms(res), [t] * 3, rtol=1e-6)
    res = together("cpu", three, [0.0] * 3, "infaas(cpu_threads=2)", {"cores": 8})
    np.testing.assert_allclose(service_ms(res), [t] * 3, rtol=1e-6)
    # Contention beyond the cores: 2 batches on 8 cores, cpu=0.1 -> 1.1x.
    res = together("cpu", [CPU, CPU], [0.0] * 2, "infaas(cpu=0.1)", {"cores": 8})
    np.testing.assert_allclose(service_ms(res), [1.1 * t] * 2, rtol=1e-6)


def test_inferentia_runs_up_to_its_neuron_cores_without_slowing():
    inf = "resnet50_neuron_inferentia_b1"
    t = LATENCY[inf][0]
    res = together("inferentia", [inf] * 4, [0.0] * 4, "infaas")
    np.testing.assert_allclose(service_ms(res), [t] * 4, rtol=1e-6)
    res = together("inferentia", [inf] * 5, [0.0] * 5, "infaas")
    np.testing.assert_allclose(service_ms(res), [1.25 * t] * 5, rtol=1e-6)


def test_the_interference_model_is_registered_with_typed_parameters():
    entry = next(m for m in servelab.list_interference_models() if m["name"] == "infaas")
    assert {p["name"] for p in entry["params"]} == {"gpu", "cpu", "cpu_threads", "neuron_cores"}
    res = together("gpu", [GPU], [0.0], "infaas")
    assert res.meta["interference"] == "infaas(gpu=0.5, cpu=0, cpu_threads=4, neuron_cores=4)"


@pytest.mark.parametrize(
    ("spec", "needle"),
    [("infaas(gpu=-1)", "gpu"), ("infaas(cpu_threads=0)", "cpu_threads"),
     ("infaas(neuron_cores=0.5)", "neuron_cores"), ("infaas(alpha=1)", "alpha")],
)  # fmt: skip
def test_bad_interference_parameters_are_named(spec, needle):
    with pytest.raises((ValueError, KeyError), match=needle):
        together("gpu", [GPU], [0.0], spec)


def test_an_instance_that_does_not_fit_its_machine_is_refused_naming_the_memory():
    # Two instances of a 1.4 GB variant on a 2 GB GPU: the scenario cannot be.
    need = MEMORY[GPU8]
    with pytest.raises(ValueError, match="accel_memory_mb"):
        together("gpu", [GPU8, GPU8], [0.0], "infaas", {"accel_memory_mb": 1.5 * need})

    class AddsOne(servelab.Scheduler):
        """Asks for one more instance of the variant on the full machine."""

        def describe(self):
            return "adds_one"

        def on_arrival(self, query, view, actions):
            actions.add_instance(0, [GPU8])

    with pytest.raises(
        ValueError, match=r"add_instance: machine=0 has .* MB of accel_memory_mb free"
    ):
        servelab.simulate(
            {
                "profile": PROFILE,
                "machines": [{"name": "vm", "count": 1, "accel_memory_mb": 1.5 * need}],
                "workers": [{"hardware": "gpu", "count": 1, "models": [GPU8], "machine": "vm"}],
                "workload": {
                    "arrivals": "replay(timestamps_s=[0.1])",
                    "count": 1,
                    "apps": [{"name": "a", "slo_ms": 100}],
                },  # fmt: skip
            },
            scheduler=AddsOne(),
        )


def gpu_machine(accel_memory_mb: float, rate: float = 600.0, **machine) -> dict:
    """INFaaS on one GPU VM starting with one TensorRT batch-1 instance (about 67 QPS one batch
    at a time), at `rate` QPS for 20 s: the Model-Autoscaler must scale (overloaded from the
    start: these runs test where instances go, not SLOs)."""
    return {
        "profile": PROFILE,
        "machines": [{"name": "gpu0", "count": 1, "accel_memory_mb": accel_memory_mb, **machine}],
        "workers": [{"hardware": "gpu", "count": 1, "models": [GPU], "machine": "gpu0"}],
        "workload": {
            "arrivals": f"poisson(rate={rate})",
            "horizon_s": 20,
            "apps": [{"name": "classify", "slo_ms": 50, "accuracy_floor": 0.7}],
        },
        "interference": "infaas",
        "drain_s": 10,
    }


def test_infaas_loads_a_new_instance_beside_the_running_one():
    res = servelab.simulate(gpu_machine(16384), scheduler="infaas(q_wait=true)", seed=0)
    w = res.workers_frame()
    # New instances on the same machine, paid for by the machine (the first instance).
    assert len(w) > 1 and (w["machine"] == 0).all()
    assert (w["cost"].iloc[1:] == 0).all()
    # The first instance kept serving while the others loaded: no gap in its batches longer
    # than a second after the load decision (a load on it would have stopped it for 4-6 s).
    b = res.batches()
    first = b[b["worker"] == 0]
    busy_until = first["finish_ns"].to_numpy()[:-1]
    gaps = (first["start_ns"].to_numpy()[1:] - busy_until) / 1e9
    assert gaps.max() < 1.0
    # The new instances served queries, and within the GPU's instance slots (4).
    assert b[b["worker"] > 0]["queries"].sum() > 0
    # Bounded by the GPU's instance slots (accel_instances=4), stopped ones included here.
    assert len(w) <= 4


def test_no_room_on_the_machine_means_no_new_instance_there():
    # Memory for the running instance only: INFaaS cannot co-locate and asks for a VM instead
    # (max_workers=2: one more machine, of the declared machine's type).
    need = max(MEMORY[GPU], MEMORY[GPU8])
    res = servelab.simulate(
        gpu_machine(need * 1.2), scheduler="infaas(max_workers=2, q_wait=true, startup_s=2)", seed=0
    )
    w = res.workers_frame()
    on_first = w[w["machine"] == 0]
    assert len(on_first) == 1  # nothing was added to the full machine
    assert w["machine"].nunique() == 2  # the VM-Autoscaler started one machine
    # On the started VM (not declared: the policy takes the first GPU machine's type) the
    # policy places at most what that type holds.
    assert (w["machine"] == 1).sum() == 1


def test_cpu_instances_are_bounded_by_cores():
    # A 2-core CPU VM holds cores / instance_cores instances: with instance_cores=1, 2.
    sc = {
        "profile": PROFILE,
        "machines": [{"name": "cpu0", "count": 1, "cores": 2, "memory_mb": 32768}],
        "workers": [{"hardware": "cpu", "count": 1, "models": [CPU], "machine": "cpu0"}],
        "workload": {
            "arrivals": "poisson(rate=12)",
            "horizon_s": 30,
            "apps": [{"name": "classify", "slo_ms": 1000, "accuracy_floor": 0.7}],
        },
        "interference": "infaas",
    }
    one = servelab.simulate(sc, scheduler="infaas(instance_cores=2)", seed=0)
    two = servelab.simulate(sc, scheduler="infaas(instance_cores=1)", seed=0)
    assert (one.workers["machine"] == 0).sum() == 1
    assert (two.workers["machine"] == 0).sum() == 2


def test_sm_plus_replicates_on_its_machines_then_starts_a_vm():
    sc = gpu_machine(16384, rate=900)
    res = servelab.simulate(sc, scheduler=f"sm_plus(max_workers=2, app_models='{GPU}')", seed=0)
    w = res.workers_frame()
    # Replicas are instances on the GPU VM first (up to 4), then a second VM.
    assert (w["machine"] == 0).sum() == 4
    assert w["machine"].nunique() == 2


def test_sec61_systems_run_on_the_same_machines():
    from servelab.infaas import sec61

    kinds = {}
    for system in sec61.SYSTEMS:
        sc, _ = sec61.scenario(system, 300, step_s=0.5, architectures=None)
        kinds[system] = {m["hardware"] for m in sc["machines"]}
        assert sc["interference"] == sec61.INTERFERENCE
        for m in sc["machines"]:
            assert {k: m[k] for k in sec61.MACHINE_TYPES[m["hardware"]]} == sec61.MACHINE_TYPES[
                m["hardware"]
            ]
    assert kinds["clipper_plus"] == kinds["sm_plus"] == {"cpu", "gpu"}
    assert kinds["infaas"] == {"cpu", "gpu", "inferentia"}
    base, _ = sec61.scenario("clipper_plus", 300, step_s=0.5)
    # Clipper+: two GPU instances per V100, shared by the popular applications' shares.
    gpu = [w for w in base["workers"] if w["hardware"] == "gpu"]
    assert len(gpu) == sec61.CLIPPER_GPU_INSTANCES * sec61.BASELINE_WORKERS["gpu"]
    old, _ = sec61.scenario("clipper_plus", 300, step_s=0.5, colocate=False)
    assert "machines" not in old and "interference" not in old
