"""INFaaS's variant catalogue, metadata store and getVariant (Sec. 4.1) against its brute-force
reference, from Python; bad input names the field."""

from __future__ import annotations

import numpy as np
import pytest

import servelab
from servelab import infaas


def test_catalogue_is_valid_data_with_table2_and_table8_numbers():
    table2 = infaas.table2_variants()
    assert [v["name"] for v in table2] == ["A", "B", "C"]
    store = infaas.metadata_store(table2)
    assert [store.variant(n)["saturation_qps"] for n in "ABC"] == [5, 100, 800]
    family = infaas.resnet50_variants()
    store = infaas.metadata_store(family)
    assert store.num_variants == len(family) >= 8
    assert {v["hardware"] for v in family} == {"cpu", "gpu", "inferentia"}
    assert all(v["accuracy"] == pytest.approx(0.749) for v in family)
    assert len(infaas.TABLE8_ACCURACY) == 22
    # Sec. 6.2's cost model: CPU the cheapest per second, GPU the dearest.
    cost = {v["hardware"]: v["cost_per_s"] for v in family if v["batch_opt"] == 1}
    assert cost["cpu"] < cost["inferentia"] < cost["gpu"]


def test_gnmt_is_a_translation_family_of_nine_variants():
    gnmt = infaas.catalogue.gnmt_variants()
    # Table 6: 9 variants; the artifact's CPU FP32, GPU FP32 and GPU FP16 x beam 1, 2, 5.
    assert len(gnmt) == 9 == len({v["name"] for v in gnmt})
    assert {v["task"] for v in gnmt} == {"translation"}
    assert sorted(v["hardware"] for v in gnmt).count("cpu") == 3
    assert {v["hardware"] for v in gnmt} == {"cpu", "gpu"}  # Neuron did not compile it
    beam5 = [v for v in gnmt if "_beam5_" in v["name"]]
    assert [v["accuracy"] for v in beam5] == [infaas.TABLE8_ACCURACY["gnmt"] / 100] * 3
    assert all(v["accuracy"] < 0.245 for v in gnmt if v not in beam5)
    # A wider beam is slower at batch 1 on each (precision, hardware).
    for precision, hw in (("fp32", "cpu"), ("fp32", "gpu"), ("fp16", "gpu")):
        lat = [
            v["latency_ms"][0]
            for v in gnmt
            if f"_{precision}_" in v["name"] and v["hardware"] == hw
        ]
        assert lat == sorted(lat) and len(lat) == 3
    everything = infaas.table8_variants()
    assert len({v["architecture"] for v in everything}) == 22
    assert [v for v in everything if v["architecture"] == "gnmt"] == gnmt
    assert infaas.table8_variants(["resnet50"]) == [
        v for v in everything if v["architecture"] == "resnet50"
    ]


def test_tasks_keep_translation_and_classification_apart():
    store = infaas.metadata_store(infaas.table8_variants())
    assert sorted(store.tasks) == ["classification", "translation"]
    for hw in ("cpu", "gpu", "inferentia"):
        store.add_worker(hw)
    # A 24.5 BLEU floor (0.245) is met by every image model's accuracy too: the task decides.
    c = store.get_variant(task="translation", accuracy=0.245, latency_ms=750)
    assert c["variant"].startswith("gnmt_") and "_beam5_" in c["variant"]
    c = store.get_variant(task="classification", accuracy=0.245, latency_ms=750)
    assert not c["variant"].startswith("gnmt_")
    assert all(store.variant(v)["task"] == "translation" for v in store.by_task("translation"))


def test_get_variant_follows_the_papers_order():
    store = infaas.metadata_store(infaas.resnet50_variants())
    cpu, gpu, inf = store.add_worker("cpu"), store.add_worker("gpu"), store.add_worker("inferentia")
    # Nothing loaded: the lowest load + inference latency meeting 50 ms (Inferentia b1, 4 s load).
    c = store.get_variant(task="classification", accuracy=0.7, latency_ms=50)
    assert c["kind"] == "inactive" and c["variant"] == "resnet50_neuron_inferentia_b1"
    assert c["worker"] == inf
    store.load("resnet50_tensorrt_gpu_b8", gpu)
    c = store.get_variant(task="classification", accuracy=0.7, latency_ms=50)
    assert (c["kind"], c["variant"], c["worker"]) == ("active", "resnet50_tensorrt_gpu_b8", gpu)
    store.set_state("resnet50_tensorrt_gpu_b8", gpu, "overloaded")
    assert store.get_variant(task="classification", latency_ms=50)["kind"] == "inactive"
    # Unsatisfiable goals: the closest variant, with the reason.
    c = store.get_variant(task="classification", accuracy=0.9, latency_ms=1)
    assert c["kind"] == "closest" and "closest" in c["reason"]
    # A registered model: any of its variants, goals unchecked.
    assert store.get_variant(model="resnet50")["variant"] is not None
    assert cpu == 0


def random_store(rng: np.random.Generator):
    hws = ["cpu", "gpu", "inferentia"]
    n = int(rng.integers(5, 40))
    variants = []
    for i in range(n):
        batches = int(rng.integers(1, 6))
        variants.append(
            {
                "name": f"v{i}", "architecture": f"a{i % 5}", "task": "t", "hardware": hws[i % 3],
                "accuracy": round(float(rng.random()), 1),
                "latency_ms": list(np.cumsum(rng.uniform(1, 80, batches))),
                "load_s": float(rng.integers(0, 4)), "cost_per_s": float(rng.integers(0, 5)),
            }
        )  # fmt: skip
    store = infaas.metadata_store(variants)
    for w in range(int(rng.integers(1, 10))):
        store.add_worker(hws[int(rng.integers(0, 3))])
        store.set_utilisation(w, float(rng.integers(0, 4)) / 4)
    states = ["active", "overloaded", "interfered", "inactive"]
    for _ in range(n):
        v, w = int(rng.integers(0, n)), int(rng.integers(0, store.num_workers))
        if store.variant(v)["hardware"] == store.worker_hardware(w):
            store.set_state(v, w, states[int(rng.integers(0, 4))])
    return store


def test_get_variant_agrees_with_brute_force_on_random_catalogues():
    rng = np.random.default_rng(13)
    for _ in range(30):
        store = random_store(rng)
        for _ in range(30):
            req = {
                "task": "t",
                "accuracy": round(float(rng.random()), 1),
                "latency_ms": float(rng.uniform(0, 200)),
                "batch": int(rng.integers(1, 7)),
            }
            assert store.get_variant(**req) == store.get_variant(**req, brute_force=True), req


def test_profile_bridge_round_trips_the_catalogue():
    family = infaas.resnet50_variants()
    profile = infaas.to_profile(family)
    back = {v["name"].split("@")[0]: v for v in infaas.variants_from_profile(profile)}
    for v in family:
        got = back[v["name"]]
        assert got["hardware"] == v["hardware"]
        assert got["latency_ms"] == pytest.approx(v["latency_ms"])
        assert got["load_s"] == v["load_s"]


def test_bad_input_names_the_field_and_value():
    good = infaas.table2_variants()
    with pytest.raises(ValueError, match=r"variants\[0\].accuracy=1.5"):
        infaas.metadata_store([dict(good[0], accuracy=1.5)])
    with pytest.raises(ValueError, match=r"variants\[1\].latency_ms"):
        infaas.metadata_store([good[0], dict(good[1], latency_ms=[])])
    with pytest.raises(ValueError, match=r"variants\[0\].hardware is missing"):
        infaas.metadata_store([{k: v for k, v in good[0].items() if k != "hardware"}])
    with pytest.raises(ValueError, match="repeats"):
        infaas.metadata_store([good[0], good[0]])
    with pytest.raises(ValueError, match="empty"):
        infaas.metadata_store([])
    store = infaas.metadata_store(good)
    with pytest.raises(KeyError, match="translation"):
        store.get_variant(task="translation")
    with pytest.raises(KeyError, match="vgg16"):
        store.get_variant(model="vgg16")
    with pytest.raises(ValueError, match="batch=0"):
        store.get_variant(task="classification", batch=0)
    with pytest.raises(ValueError, match="accuracy=2"):
        store.get_variant(task="classification", accuracy=2.0)
    w = store.add_worker("cpu")
    with pytest.raises(ValueError, match="runs on gpu"):
        store.load("C", w)
    with pytest.raises(KeyError, match="worker=7"):
        store.load("A", 7)
    with pytest.raises(ValueError, match="state='busy'"):
        store.set_state("A", w, "busy")
    with pytest.raises(KeyError, match="'Z'"):
        store.load("Z", w)
    assert servelab.infaas is infaas


def test_package_names_resolve_and_none_is_named_like_a_module():
    import inspect
    import pkgutil

    import servelab.infaas.autoscaler
    import servelab.systems.infaas.autoscaler

    assert servelab.infaas.autoscaler is servelab.systems.infaas.autoscaler
    package = servelab.systems.infaas
    modules = {m.name for m in pkgutil.iter_modules(package.__path__)}
    assert {"catalogue", "autoscaler", "paper", "schedulers", "cli"} <= modules
    assert not set(package.__all__) & modules
    assert sorted(package.__all__) == package.__all__
    for name in package.__all__:
        value = getattr(package, name)
        if inspect.isfunction(value):
            assert value.__module__.startswith("servelab.systems.infaas."), name
    assert "infaas" in servelab.systems.SYSTEMS
