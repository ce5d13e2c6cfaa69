"""Machines with co-located instances, from Python: scenario keys, the view and actions a
policy sees, interference in the simulator, and clear errors for machines that cannot be.

The engine's exactness (re-timing against an event-by-event computation, work conservation) is
tested in C++ (tests/cpp/test_machines.cpp); every registered scheduler runs a co-located case
in the conformance suite.
"""

from __future__ import annotations

import numpy as np
import pytest

import servelab


def colocated(interference: str | None = "per_corunner(slowdown=0.5)", **extra) -> dict:
    sc = {
        "profile": "example:hetero_cpu_gpu",
        "machines": [{"name": "gpu", "count": 2, "cores": 8, "accel_memory_mb": 20000}],
        "workers": [{"hardware": "g4dn.xlarge", "count": 3, "models": ["rm2"], "machine": "gpu"}],
        "workload": {
            "arrivals": "poisson(rate=80)",
            "count": 2000,
            "apps": [{"name": "rm2", "slo_ms": 350, "sizes": "kairos_mix()"}],
        },
        "seed": 3,
    }
    if interference:
        sc["interference"] = interference
    sc.update(extra)
    return sc


def test_instances_sit_on_their_machines_and_the_machine_pays_once():
    r = servelab.simulate(colocated())
    assert r.workers["machine"].tolist() == [0, 0, 0, 1, 1, 1]
    price = servelab.profiles.example("hetero_cpu_gpu").price("g4dn.xlarge")
    paid = price * r.meta["duration_ns"] / 3.6e12
    np.testing.assert_allclose(r.workers["cost"], [paid, 0, 0, paid, 0, 0])
    assert r.meta["interference"] == "per_corunner(slowdown=0.5)"
    assert "machine" in r.workers_frame().columns


def test_interference_slows_batches_and_none_changes_nothing():
    quiet = servelab.simulate(colocated(None))
    none = servelab.simulate(colocated("none"))
    slowed = servelab.simulate(colocated())
    np.testing.assert_array_equal(quiet.columns["finish_ns"], none.columns["finish_ns"])
    service = lambda r: (r.columns["finish_ns"] - r.columns["start_ns"]).mean()  # noqa: E731
    # Up to two co-runners at 0.5 each: between 1x and 2x the time alone.
    assert 1.05 < service(slowed) / service(quiet) < 2.0


def test_same_seed_same_records_and_the_scenario_replays_the_run():
    a = servelab.simulate(colocated())
    b = servelab.simulate(a.meta["scenario"])
    for key in ("start_ns", "finish_ns", "worker"):
        np.testing.assert_array_equal(a.columns[key], b.columns[key])
    assert a.meta["scenario"]["machines"][0]["name"] == "gpu"
    assert a.meta["scenario"]["interference"] == "per_corunner(slowdown=0.5)"


class MachineWatcher(servelab.Scheduler):
    """FCFS to the lowest idle worker; checks the view's machines at every dispatch and adds an
    instance on machine 1 at the first arrival."""

    def __init__(self):
        super().__init__()
        self.added = None
        self.max_co_runners = 0

    def describe(self):
        return "machine_watcher"

    def on_arrival(self, query, view, actions):
        if self.added is None:
            self.added = actions.add_instance(1, ["rm2"])
            assert view.machine(self.added) == 1
            assert view.instances(1) == [3, 4, 5, self.added]
            assert view.status(self.added) == "starting"
        for w in view.idle_workers():
            model = view.pick_model(w, query)
            if model >= 0:
                self.max_co_runners = max(self.max_co_runners, view.co_runners(w))
                actions.dispatch(w, model, query.id)
                assert view.running_model(w) == model
                return

    def on_batch_done(self, done, view, actions):
        queue = view.central_queue()
        if queue and view.is_idle(done.worker):
            actions.dispatch(
                done.worker, view.pick_model(done.worker, view.query(queue[0])), queue[0]
            )


def test_a_python_policy_sees_machines_and_adds_an_instance():
    policy = MachineWatcher()
    r = servelab.simulate(colocated(), scheduler=policy)
    assert policy.added == 6
    assert r.workers["machine"].tolist() == [0, 0, 0, 1, 1, 1, 1]
    assert r.workers["cost"][6] == 0  # on a machine already paid for
    assert policy.max_co_runners >= 1
    assert (r.columns["worker"] == 6).any()
    # Its batches share the price as the machine's three declared instances do: price / 3.
    price = servelab.profiles.example("hetero_cpu_gpu").price("g4dn.xlarge")
    b = r.batches()
    for worker in (3, 6):
        mine = b[b["worker"] == worker]
        charged = sum(
            r.columns["cost"][(r.columns["worker"] == worker) & (r.columns["status"] == 0)]
        )
        expected = price / 3 * (mine["finish_ns"] - mine["start_ns"]).sum() / 3.6e12
        assert charged == pytest.approx(expected, rel=1e-5)


@pytest.mark.parametrize(
    ("change", "error", "message"),
    [
        ({"machines": [{"count": 1}]}, KeyError, "machines[0]: missing key 'name'"),
        ({"machines": [{"name": "gpu", "size": 2}]}, KeyError, "size"),
        ({"machines": "gpu"}, ValueError, "machines='gpu' must be a list"),
        (
            {"machines": [{"name": "cpu"}]},
            ValueError,
            "workers[0].machine='gpu' is not a machine group ('cpu')",
        ),
        (
            {
                "machines": [{"name": "gpu", "cores": 4}],
                "workers": [
                    {
                        "hardware": "g4dn.xlarge",
                        "count": 3,
                        "models": ["rm2"],
                        "machine": "gpu",
                        "config": {"cores": 2},
                    }
                ],
            },
            ValueError,
            "ask for cores=6 in all, more than its cores=4",
        ),
        ({"machines": [{"name": "gpu", "count": 0}]}, ValueError, "machines[0].count=0"),
        ({"machines": [{"name": "gpu", "llc_ways": -2}]}, ValueError, "machines[0].llc_ways=-2"),
        ({"interference": "no_such_model"}, KeyError, "no_such_model"),
        ({"interference": "per_corunner(slowdown=-1)"}, ValueError, "slowdown"),
    ],
)
def test_bad_machines_name_the_field_and_value(change, error, message):
    with pytest.raises(error) as info:
        servelab.simulate(colocated(**change))
    assert message in str(info.value)


def test_an_instance_that_does_not_fit_the_memory_is_refused_with_the_numbers():
    profile = servelab.profiles.example("hetero_cpu_gpu")
    profile.set_memory_mb("g4dn.xlarge", "rm2", 7000)
    sc = colocated(profile=profile)
    with pytest.raises(
        ValueError, match="need 21000 MB in all, more than its accel_memory_mb=20000"
    ):
        servelab.simulate(sc)


def test_list_and_make_interference_models():
    names = {e["name"] for e in servelab.list_interference_models()}
    assert {"none", "per_corunner", "cpu_share", "measured"} <= names
    model = servelab.make_interference_model("measured(table='rm2:rm2=1.3')")
    assert model.describe() == "measured(table='rm2:rm2=1.3', otherwise=0)"
