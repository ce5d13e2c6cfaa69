"""The conformance suite's co-located case in the real serving loop: every registered scheduler
serves a cluster of machines with co-located instances (two instances on one GPU machine, two on
a two-core CPU machine whose host cores they divide), on emulated executors.

The simulated co-located case is in test_conformance.py; this one checks, per scheduler: every
query ends exactly once, no instance runs two batches at once, completed queries ran on an
instance holding their model, the workers table places the instances on their machines, the
records pass ``check_consistency()``, and the CPU machine's instances ran on its host cores.
About a second of wall time each.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

import servelab
from servelab import pinning
from servelab.results import COMPLETED, DROPPED

from .test_conformance import PROFILE, SCHEDULERS, TWO_APPS, batch_table, expected_workers, make

HOST = pinning.allowed_cpus()[:2]
COUNT = 40

SERVED_COLOCATED = {
    "profile": "example:hetero_cpu_gpu",
    "machines": [
        {"name": "gpu", "count": 1},
        # Pinned where this process may use two CPUs (the instances share them otherwise).
        {"name": "cpu", "count": 1, "cores": 2, **({"core_ids": HOST} if len(HOST) == 2 else {})},
    ],
    "workers": [
        {"hardware": "g4dn.xlarge", "count": 2, "models": ["rm2", "wnd"], "machine": "gpu"},
        {"hardware": "c5n.2xlarge", "count": 2, "models": ["rm2"], "machine": "cpu"},
    ],
    "workload": {"arrivals": "poisson(rate=40)", "count": COUNT, "apps": TWO_APPS},
    "drain_s": 5,
}


@functools.cache
def run(name: str) -> servelab.Result:
    return servelab.serve(SERVED_COLOCATED, scheduler=make(name), seed=0)


@pytest.mark.parametrize("name", SCHEDULERS)
def test_every_scheduler_serves_co_located_instances(name):
    res = run(name)
    c = res.columns
    assert res.meta["world"] == "serve"
    assert len(res) == COUNT
    np.testing.assert_array_equal(c["id"], np.arange(COUNT))
    assert set(np.unique(c["status"])) <= {COMPLETED, DROPPED}
    res.check_consistency()
    done = c["status"] == COMPLETED
    assert done.any(), res.meta["drop_reasons"]

    # Instances on their machines: two on machine 0 (gpu), two on machine 1 (cpu).
    initial = expected_workers(SERVED_COLOCATED)
    w = res.workers
    np.testing.assert_array_equal(w["machine"][: len(initial)], [0, 0, 1, 1])
    for i in np.flatnonzero(done & (c["worker"] < len(initial))):
        _, models = initial[c["worker"][i]]
        assert res.model_names[c["model"][i]] in models

    # One batch at a time per instance, whatever its co-runners do.
    b = batch_table(res)
    order = np.lexsort((b["start"], b["worker"]))
    worker, start, finish = b["worker"][order], b["start"][order], b["finish"][order]
    assert not np.any((worker[1:] == worker[:-1]) & (start[1:] < finish[:-1]))
    for wk, m, items in zip(b["worker"], b["model"], b["items"], strict=True):
        hw = res.hardware_names[res.workers["hardware"][wk]]
        assert items <= PROFILE.max_batch(hw, res.model_names[m])

    # The CPU machine's instances ran on its host cores (and only those).
    if len(HOST) == 2:
        records = [r for r in res.meta.get("pinning", []) if r["machine"] == 1]
        cpu_batches = done & np.isin(c["worker"], [2, 3])
        assert records or not cpu_batches.any()
        for r in records:
            assert r["error"] == "" and set(r["cores"]) <= set(HOST), r
            assert sorted(r["applied"]) == sorted(r["cores"])
