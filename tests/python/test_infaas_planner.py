"""Sec. 4.2.1's integer program over several applications with resource rows, solved exactly
(CBC through servelab.solvers.lp), against the Sec. 4.2.2 greedy run per application: the
optimum is never dearer, the gap is printed, and the plan becomes a scenario's workers."""

from __future__ import annotations

import pytest

from servelab import infaas
from servelab.solvers import lp
from servelab.systems.infaas import catalogue, planner, sec61

pytestmark = pytest.mark.skipif(not lp.available(), reason="servelab was built without CBC/CLP")

VARIANTS = infaas.table8_variants()
APPS = sec61.applications(VARIANTS, popular_share=0.8)
WORKERS = {"cpu": 5, "gpu": 5, "inferentia": 2}


@pytest.mark.parametrize("total_qps", [20.0, 100.0, 300.0])
def test_exact_placement_is_never_dearer_than_the_greedy(total_qps):
    apps = [dict(a, qps=total_qps * a["share"]) for a in APPS[:8]]
    out = planner.compare_with_greedy(VARIANTS, apps, WORKERS)
    exact, greedy = out["exact"], out["greedy"]
    print(
        f"\n{total_qps:g} QPS over 8 applications: ILP {exact['cost_per_s']:.3f} $/s "
        f"({sum(exact['instances'].values())} instances, {exact['solve_s'] * 1e3:.0f} ms), greedy "
        f"{greedy['cost_per_s']:.3f} $/s (gap {out['greedy_gap']:+.1%}, fits the workers: "
        f"{greedy['fits']}), unserved {exact['unserved_qps']:.1f} QPS"
    )
    assert exact["status"] == "optimal"
    if exact["unserved_qps"] == 0 and greedy["fits"]:
        assert exact["cost_per_s"] <= greedy["cost_per_s"] + 1e-9
    for app in apps:  # every application's load is carried (or reported unserved)
        carried = sum(out["exact"]["served"].get(app["name"], {}).values())
        assert carried >= app["qps"] * 1.05 - 1e-6 or exact["unserved_qps"] > 0


def test_plan_becomes_worker_groups_covering_every_worker():
    apps = [dict(a, qps=50 * a["share"]) for a in APPS]
    plan = planner.plan_placement(VARIANTS, apps, WORKERS)
    groups = planner.worker_groups(plan, VARIANTS, WORKERS)
    for hw, n in WORKERS.items():
        assert sum(g["count"] for g in groups if g["hardware"] == hw) == n
    assert all(g["models"] for g in groups)


# ResNet50's PyTorch batch-4 CPU variant: 170 ms at batch 1 .. 560 ms at batch 4.
BATCH4 = [v for v in infaas.resnet50_variants() if v["name"] == "resnet50_pytorch_cpu_b4"]


@pytest.mark.parametrize(("slo_ms", "instances"), [(255.0, 2), (1000.0, 1)])
def test_q_v_is_taken_within_the_slo(slo_ms, instances):
    # 6.5 QPS x 1.05 = 6.8 QPS: one instance at batch 4 (7.1 QPS), but a 255 ms SLO (Sec. 6.1's
    # cold rule) admits batch 1 only (5.9 QPS): two instances.
    app = {"name": "cold", "slo_ms": slo_ms, "qps": 6.5}
    q = planner.saturation_within_slo(BATCH4, [app])
    assert q[0, 0] == pytest.approx(1000 / 170 if slo_ms < 300 else 4000 / 560)
    exact = planner.plan_placement(BATCH4, [app], {"cpu": 5})
    greedy = planner.greedy_placement(BATCH4, [app], {"cpu": 5})
    assert exact["instances"] == greedy["instances"] == {"resnet50_pytorch_cpu_b4": instances}
    assert exact["unserved_qps"] == 0


def test_applications_with_different_slos_share_an_instance_by_their_own_q_v():
    # 3 QPS x 1.05 each: 3.15 / 7.14 + 3.15 / 5.88 = 0.98 of one instance (not 2 at the lower Q_v).
    apps = [
        {"name": "loose", "slo_ms": 1000.0, "qps": 3.0},
        {"name": "tight", "slo_ms": 255.0, "qps": 3.0},
    ]
    plan = planner.plan_placement(BATCH4, apps, {"cpu": 5})
    assert plan["instances"] == {"resnet50_pytorch_cpu_b4": 1}
    assert plan["unserved_qps"] == pytest.approx(0, abs=1e-6)
    # An SLO no batch meets carries nothing: the load is reported unserved.
    plan = planner.plan_placement(BATCH4, [{"name": "x", "slo_ms": 100.0, "qps": 1.0}], {"cpu": 5})
    assert plan["instances"] == {} and plan["unserved_qps"] == pytest.approx(1.05)


def test_translation_is_planned_on_translation_variants_only():
    gnmt = next(a for a in APPS if a["architecture"] == "gnmt")
    assert gnmt["task"] == "translation" and gnmt["accuracy_floor"] == pytest.approx(0.245)
    # Without the architecture restriction, only the task keeps image models off it.
    apps = [
        dict(gnmt, qps=5.0, architecture=None),
        dict(APPS[0], qps=50.0, architecture=None),
    ]
    plan = planner.plan_placement(VARIANTS, apps, WORKERS)
    task = {v["name"]: v["task"] for v in VARIANTS}
    assert plan["served"]["gnmt"] and plan["unserved_qps"] == 0
    assert {task[m] for m in plan["served"]["gnmt"]} == {"translation"}
    assert {task[m] for m in plan["served"][APPS[0]["name"]]} == {"classification"}


def test_bad_input_is_named():
    with pytest.raises(ValueError, match=r"apps\[0\].qps"):
        planner.plan_placement(VARIANTS, [{"slo_ms": 50, "qps": -1}], WORKERS)
    with pytest.raises(ValueError, match="workers"):
        planner.plan_placement(VARIANTS, [{"slo_ms": 50, "qps": 1}], {"cpu": 1.5})
    with pytest.raises(ValueError, match="apps is empty"):
        planner.greedy_placement(VARIANTS, [], WORKERS)
    store = infaas.metadata_store(BATCH4)
    with pytest.raises(ValueError, match="slo_ms=-1"):
        store.saturation_qps(0, slo_ms=-1.0)


def test_headroom_tie_break_keeps_the_optimum_and_widens_the_smallest_headroom():
    # Sec. 6.1 at its mean load, peak 150 QPS, half of it popular: the 12 workers cannot carry
    # the 22 applications, so every optimum uses every worker and leaves the same load unserved.
    apps = [dict(a, qps=81.6 * a["share"]) for a in sec61.applications(VARIANTS, 0.5)]
    cost = {hw: catalogue.HARDWARE[hw]["price_per_hour"] / 3600 for hw in WORKERS}
    first = planner.plan_placement(VARIANTS, apps, WORKERS, cost=cost)
    ranked = planner.plan_placement(VARIANTS, apps, WORKERS, cost=cost, tie_break="headroom")
    print(
        f"\nsmallest headroom: first optimum {first['min_headroom']:.2f}, tie-break "
        f"{ranked['min_headroom']:.2f}; unserved {first['unserved_qps']:.2f} QPS"
    )
    assert first["unserved_qps"] > 0
    assert ranked["cost_per_s"] == pytest.approx(first["cost_per_s"], rel=1e-9)
    assert ranked["unserved_qps"] == pytest.approx(first["unserved_qps"], abs=1e-6)
    assert ranked["min_headroom"] >= first["min_headroom"] - 1e-9
    # Every application served in full has at least that headroom.
    for app in apps:
        carried = ranked["served"].get(app["name"], {})
        if carried and sum(carried.values()) >= app["qps"] * 1.05 - 1e-6:
            assert sum(carried.values()) >= ranked["min_headroom"] * app["qps"] * 1.05 - 1e-6
    # Deterministic: the same input, the same plan.
    again = planner.plan_placement(VARIANTS, apps, WORKERS, cost=cost, tie_break="headroom")
    assert again["instances"] == ranked["instances"]


def test_bad_tie_break_is_named():
    with pytest.raises(ValueError, match="tie_break='cheapest'"):
        planner.plan_placement(
            VARIANTS, [dict(a, qps=1.0) for a in APPS[:2]], WORKERS, tie_break="cheapest"
        )
