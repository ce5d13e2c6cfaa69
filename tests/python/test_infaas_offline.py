"""Offline queries in the `infaas` policy (Sec. 4.2.3, 6.3.2): served only from spare capacity,
throttled above 40 % worker utilisation; online SLOs hold; every offline query ends in the
records (completed, or dropped at the end with the run's reason)."""

from __future__ import annotations

import numpy as np

import servelab
from servelab.infaas import experiments
from servelab.results import COMPLETED


def test_online_slos_hold_and_offline_work_runs_in_lulls():
    out = experiments.offline_colocation(seed=0, seconds=80)
    both, alone = out["colocated"], out["online_only"]
    print(
        f"\nonline violations: colocated {both['online_violation_rate']:.2%}, "
        f"online only {alone['online_violation_rate']:.2%}; offline {both['offline_completed']}"
        f"/{both['offline_queries']} done, {both['offline_completed_in_run']} during the run "
        f"({both['offline_in_lulls']} in lulls)"
    )
    assert both["online_queries"] == alone["online_queries"]  # the same online queries
    assert both["online_violation_rate"] <= alone["online_violation_rate"] + 0.02
    assert both["offline_completed"] == both["offline_queries"]  # all done, drain included
    # During the run, offline work favours the lulls (3 QPS) over the peaks (8 QPS).
    assert both["offline_in_lulls"] > both["offline_completed_in_run"] / 2
    # Online only: the offline queries never ran and ended dropped with the run's reason.
    assert alone["offline_completed"] == 0
    assert alone["offline_dropped_reasons"] and all(
        "end of run" in r for r in alone["offline_dropped_reasons"]
    )


def test_offline_work_pauses_on_a_busy_worker():
    scenario = experiments.offline_scenario(seconds=40)
    free = servelab.simulate(scenario, scheduler="infaas(offline_apps='1', offline_util=1)", seed=1)
    paused = servelab.simulate(
        scenario, scheduler="infaas(offline_apps='1', offline_util=0)", seed=1
    )

    def offline_started_in_run(res: servelab.Result) -> int:
        c = res.columns
        done = (c["app"] == 1) & (c["status"] == COMPLETED)
        return int(np.sum(c["start_ns"][done] < 40e9))

    a, b = offline_started_in_run(free), offline_started_in_run(paused)
    print(f"\noffline queries started during the run: no throttle {a}, throttle at 0 % {b}")
    assert b < a
    for res in (free, paused):  # every query ends once: completed, or dropped with a reason
        c = res.columns
        assert set(np.unique(c["status"]).tolist()) <= {0, 1}
        assert (c["drop_reason"][c["status"] == 1] >= 0).all()
