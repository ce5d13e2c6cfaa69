"""Sec. 4.2.1's integer program over several applications with resource rows, solved exactly
(CBC through servelab.solvers.lp), against the Sec. 4.2.2 greedy run per application: the
optimum is never dearer, the gap is printed, and the plan becomes a scenario's workers."""

from __future__ import annotations

import pytest

from servelab import infaas
from servelab.solvers import lp
from servelab.systems.infaas import planner, sec61

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


def test_bad_input_is_named():
    with pytest.raises(ValueError, match=r"apps\[0\].qps"):
        planner.plan_placement(VARIANTS, [{"slo_ms": 50, "qps": -1}], WORKERS)
    with pytest.raises(ValueError, match="workers"):
        planner.plan_placement(VARIANTS, [{"slo_ms": 50, "qps": 1}], {"cpu": 1.5})
    with pytest.raises(ValueError, match="apps is empty"):
        planner.greedy_placement(VARIANTS, [], WORKERS)
