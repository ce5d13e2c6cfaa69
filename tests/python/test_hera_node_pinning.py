"""Real node control for Hera's workers: pinning the serving loop's workers to cores (a worker
group's ``cores`` / ``pin``), checked from inside a Python executor with os.sched_getaffinity, and
LLC partitioning through resctrl, which says why it is unsupported where it is."""

from __future__ import annotations

import os
import subprocess
import sys
import threading

import pytest

import servelab
from servelab import hera
from servelab.pinning import core_plan, cpu_order

ALLOWED = sorted(os.sched_getaffinity(0))


def _scenario(groups: list[dict], count: int = 40) -> dict:
    return {
        "profile": "example:hetero_cpu_gpu",
        "workers": groups,
        "workload": {
            "arrivals": "poisson(rate=400)",
            "count": count,
            "apps": [{"name": "rm2", "slo_ms": 350, "sizes": "constant(value=1)"}],
        },
        "drain_s": 5,
    }


def _group(**keys) -> dict:
    return {"hardware": "c5n.2xlarge", "count": 2, "models": ["rm2"], **keys}


class AffinityProbe:
    """Records, per worker, the affinity its thread has when it runs a batch."""

    seen: dict[int, set[int]] = {}
    lock = threading.Lock()

    def run(self, batch):
        with self.lock:
            self.seen[batch.worker] = os.sched_getaffinity(0)


@pytest.fixture
def probe():
    AffinityProbe.seen = {}
    servelab.register_executor("affinity_probe", AffinityProbe, doc="Records thread affinity.")
    yield AffinityProbe.seen
    servelab.unregister_executor("affinity_probe")


def test_workers_run_on_the_cores_their_group_names(probe):
    last = ALLOWED[-1]
    groups = [_group(executor="affinity_probe", cores=[last], count=2)]
    r = servelab.serve(_scenario(groups), scheduler="fcfs")
    assert r.summary()["completed"] == 40
    assert probe and all(seen == {last} for seen in probe.values())
    pins = r.meta["pinning"]
    assert [p["worker"] for p in pins] == sorted(probe)
    for p in pins:
        assert (p["core"], p["applied"], p["error"], p["group"]) == (last, [last], "", 0)
        assert p["thread_id"] > 0 and p["thread_id"] != threading.get_native_id()
    assert r.meta["scenario"]["workers"][0]["cores"] == [last]
    # The controller thread (this one) is left alone.
    assert os.sched_getaffinity(0) == set(ALLOWED)


def test_compact_and_spread_hand_out_every_allowed_cpu_once_before_reusing_one(probe):
    for mode in ("compact", "spread"):
        order = cpu_order(mode)
        assert sorted(order) == ALLOWED
        plan = core_plan([_group(pin=mode, count=len(ALLOWED) + 1), _group()])
        assert plan[0] == [order[k % len(order)] for k in range(len(ALLOWED) + 1)]
        assert plan[1] == []
    r = servelab.serve(
        _scenario([_group(executor="affinity_probe", pin="spread", count=len(ALLOWED))]),
        scheduler="fcfs",
    )
    by_worker = {p["worker"]: p["core"] for p in r.meta["pinning"]}
    for worker, seen in probe.items():
        assert seen == {by_worker[worker]}
    assert sorted(by_worker.values()) == sorted(cpu_order("spread")[: len(by_worker)])


class AddsAWorker(servelab.Scheduler):
    """Adds a worker at the start and sends every query to the lowest idle worker, the added
    one included (the central queue otherwise)."""

    def describe(self):
        return "adds_a_worker"

    def on_start(self, view, actions):
        actions.add_worker("c5n.2xlarge", ["rm2"])

    def _serve(self, view, actions):
        while view.central_queue() and view.idle_workers():
            actions.dispatch(view.idle_workers()[-1], "rm2", view.central_queue()[0])

    def on_arrival(self, query, view, actions):
        actions.enqueue(query.id)
        self._serve(view, actions)

    def on_batch_done(self, done, view, actions):
        self._serve(view, actions)

    def on_worker_ready(self, worker, view, actions):
        self._serve(view, actions)


def test_a_worker_added_during_the_run_continues_its_groups_cores(probe):
    cores = [ALLOWED[-1], ALLOWED[0]]
    groups = [_group(executor="affinity_probe", cores=cores, count=1)]
    r = servelab.serve(_scenario(groups, count=30), scheduler=AddsAWorker())
    pins = {p["worker"]: p["core"] for p in r.meta["pinning"]}
    assert 1 in pins and probe[1] == {cores[1]}  # the added worker: the group's second core
    if 0 in pins:
        assert probe[0] == {cores[0]}


def test_unpinned_runs_have_no_pinning_and_the_simulator_ignores_the_keys():
    r = servelab.serve(_scenario([_group()], count=5), scheduler="fcfs")
    assert "pinning" not in r.meta
    s = servelab.simulate(_scenario([_group(cores=[ALLOWED[0]])], count=5), scheduler="fcfs")
    assert s.summary()["completed"] == 5


@pytest.mark.parametrize(
    "keys, message",
    [
        ({"cores": [4096]}, r"workers\[0\].cores: core 4096 does not exist"),
        ({"cores": [-1]}, r"workers\[0\].cores=\[-1\]: -1 is not a core number"),
        ({"cores": []}, r"workers\[0\].cores=\[\] must be a non-empty list"),
        ({"cores": ["0"]}, r"'0' is not a core number"),
        ({"pin": "tight"}, r"workers\[0\].pin='tight' must be one of none, compact, spread"),
        ({"pin": "compact", "cores": [0]}, r"not both"),
    ],
)
def test_bad_cores_and_pin_modes_are_named(keys, message):
    with pytest.raises(ValueError, match=message):
        servelab.serve(_scenario([_group(**keys)], count=1), scheduler="fcfs")


@pytest.mark.skipif(len(ALLOWED) < 2, reason="needs two CPUs to leave one out of the allowed set")
def test_a_core_outside_the_allowed_set_is_named():
    # A child process restricted to the first CPU asks for the second.
    scenario = _scenario([_group(cores=[ALLOWED[1]])], count=1)
    code = (
        "import os, servelab, sys\n"
        f"os.sched_setaffinity(0, {{{ALLOWED[0]}}})\n"
        "try:\n"
        f"    servelab.serve({scenario!r}, scheduler='fcfs')\n"
        "except ValueError as e:\n"
        "    print(e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert (
        f"core {ALLOWED[1]} is not in this process's allowed set {{{ALLOWED[0]}}}" in out.stdout
    ), out.stdout + out.stderr


def test_a_core_outside_the_allowed_set_is_named_by_the_core_too():
    # The C++ check, for callers of _core.serve_run that skip the Python one.
    sc = servelab.Scenario.from_dict(_scenario([_group()], count=1))
    with pytest.raises(ValueError, match=r"workers\[0\].cores: core 4096 does not exist"):
        servelab._core.serve_run(
            sc.build_profile(), sc.build_workers(), sc.build_workload(), sc.build_scheduler(),
            cores=[[4096]],
        )  # fmt: skip


def test_resctrl_status_says_why_llc_partitioning_is_unsupported(tmp_path):
    # The serving loop's own probe (what serve(llc="resctrl") reads), on stand-in trees.
    missing = servelab.resctrl_status(str(tmp_path / "absent"))
    assert not missing["supported"] and "does not exist" in missing["reason"]
    tmp_path.joinpath("info").mkdir()
    unmounted = servelab.resctrl_status(str(tmp_path))
    assert not unmounted["supported"] and "is not mounted" in unmounted["reason"]
    (tmp_path / "schemata").write_text("L3:0=7ff\n")
    no_l3 = servelab.resctrl_status(str(tmp_path))
    assert not no_l3["supported"] and "no L3 cache allocation" in no_l3["reason"]
    (tmp_path / "info" / "L3").mkdir()
    (tmp_path / "info" / "L3" / "cbm_mask").write_text("7f0\n")
    (tmp_path / "info" / "L3" / "num_closids").write_text("16\n")
    (tmp_path / "schemata").write_text("L3:0=7ff;1=7ff\n")
    status = servelab.resctrl_status(str(tmp_path))
    assert status["supported"] and status["reason"] == ""
    assert status["ways"] == 7 and status["cbm_mask"] == "7f0" and status["num_closids"] == 16
    assert status["domains"] == ["0", "1"]
    (tmp_path / "info" / "L3" / "cbm_mask").write_text("505\n")
    gaps = servelab.resctrl_status(str(tmp_path))
    assert not gaps["supported"] and "'505' is not a contiguous hex bit mask" in gaps["reason"]
    here = servelab.resctrl_status()
    print(f"\nresctrl on this machine: supported={here['supported']}: {here['reason']}")


def test_hera_rmu_serves_a_pinned_node_in_the_real_loop():
    # Table I's DLRM(D) and NCF on a node of this machine's size, one worker per core.
    off = hera.build(["dlrm_d", "ncf"], hera.node(cores=len(ALLOWED)))
    scenario = hera.node_scenario(off, "dlrm_d", "ncf", 0.2, 0.2, duration_s=1.0, monitor_s=0.25)
    for group in scenario.workers:
        group["pin"] = "compact"
    r = servelab.serve(scenario)
    r.check_consistency()
    order = cpu_order("compact")
    pins = r.meta["pinning"]
    assert pins and all(p["applied"] == [p["core"]] and not p["error"] for p in pins)
    # The initial workers, group after group, take the CPUs in compact order.
    initial = sum(g["count"] for g in scenario.workers)
    for p in pins:
        if p["worker"] < initial:
            assert p["core"] == order[p["worker"] % len(order)]
