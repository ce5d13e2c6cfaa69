"""Co-located instances in the real serving loop: machines' cores divided among their instances
(pinning), instances added while others serve, bad input, and the co-located profiler.

Served runs are short (tens of queries on emulated executors, well under a second each) and
need two CPUs this process may use for the pinning cases (skipped otherwise).
"""

from __future__ import annotations

import numpy as np
import pytest

import servelab
from servelab import pinning
from servelab.results import COMPLETED

from .conformance_policies import PyFcfs

ALLOWED = pinning.allowed_cpus()
TWO = ALLOWED[:2]
needs_two_cpus = pytest.mark.skipif(len(ALLOWED) < 2, reason="needs two CPUs to pin instances")

# One hardware type and one model of about 2 ms a batch, loaded in 50 ms: an instance added
# during a run is serving within the run.
PROFILE = {
    "format": "servelab.profile",
    "version": 1,
    "hardware": {"cpu": {"price_per_hour": 0.1}},
    "models": {"m": {}, "n": {}},
    "load_time_s": {"cpu": {"m": 0.05, "n": 0.05}},
    "latency": [
        {"hardware": "cpu", "model": model, "batch": b, "samples_ms": [ms + 0.1 * b]}
        for model, ms in (("m", 2.0), ("n", 1.0))
        for b in (1, 2, 4, 8)
    ],
}


def scenario(count: int = 2, config: dict | None = None, queries: int = 40, **machine) -> dict:
    box = {"name": "box", "cores": 2, "core_ids": TWO, **machine}
    group = {"hardware": "cpu", "count": count, "models": ["m"], "machine": "box"}
    if config is not None:
        group["config"] = config
    return {
        "profile": servelab.profiles.Profile.from_dict(PROFILE),
        "machines": [box],
        "workers": [group],
        "workload": {
            "arrivals": "poisson(rate=400)",
            "count": queries,
            "apps": [{"name": "m", "slo_ms": 100, "sizes": "uniform(low=1, high=2)"}],
        },
        "drain_s": 5,
    }


def pins_by_worker(res: servelab.Result) -> dict[int, list[list[int]]]:
    out: dict[int, list[list[int]]] = {}
    for r in res.meta["pinning"]:
        assert r["error"] == "", r
        assert sorted(r["applied"]) == sorted(r["cores"]), r
        out.setdefault(r["worker"], []).append(r["cores"])
    return out


# ---- the plan: machines' host cores -----------------------------------------------------------


def test_machine_core_plan_lists_host_cores_per_declared_machine():
    machines = [
        {"name": "a", "count": 1},  # not pinned
        {"name": "b", "count": 1, "cores": 1, "core_ids": [ALLOWED[0]]},
    ]
    assert pinning.machine_core_plan(machines) == [[], [ALLOWED[0]]]
    assert pinning.machine_core_plan([{"name": "a", "count": 2}]) is None
    compact = pinning.cpu_order("compact")
    assert pinning.machine_core_plan([{"name": "a", "cores": 1, "count": 1, "pin": "compact"}]) == [
        compact[:1]
    ]


@pytest.mark.parametrize(
    ("machine", "workers", "message"),
    [
        ({"core_ids": [0]}, [], "needs the machine's core count, cores="),
        ({"cores": 2, "core_ids": [0]}, [], "has 1 cores, but the machine has cores=2"),
        ({"cores": 1, "core_ids": [4096]}, [], "core 4096 does not exist"),
        ({"cores": 2, "core_ids": [0, 0]}, [], "core 0 is listed twice"),
        ({"cores": 1, "count": 2, "core_ids": [[0]]}, [], "1 lists for count=2 machines"),
        ({"cores": 1, "core_ids": [0], "pin": "compact"}, [], "not both"),
        ({"cores": 1, "pin": "sideways"}, [], "must be one of none, compact, spread"),
        ({"cores": 4096, "pin": "compact"}, [], "this process may use"),
        (
            {"cores": 1, "core_ids": [0]},
            [{"hardware": "cpu", "machine": "x", "cores": [0]}],
            "not cores= or pin= of their own",
        ),
    ],
)
def test_bad_machine_cores_are_refused_naming_the_machine(machine, workers, message):
    with pytest.raises(ValueError, match="machines\\[0\\]|workers\\[0\\]") as e:
        pinning.machine_core_plan([{"name": "x", **machine}], workers)
    assert message in str(e.value)


def test_two_machines_share_no_core():
    machines = [
        {"name": "x", "cores": 1, "core_ids": [ALLOWED[0]]},
        {"name": "y", "cores": 1, "core_ids": [ALLOWED[0]]},
    ]
    with pytest.raises(ValueError, match=r"machines\[1\] \('y'\) machine 0: core .* also given to"):
        pinning.machine_core_plan(machines)


def test_instances_that_do_not_fit_the_machines_cores_are_refused_before_serving():
    # Three instances asking a core each of a two-core machine.
    with pytest.raises(ValueError, match=r"cores=3 in all, more than its cores=2"):
        servelab.serve(scenario(count=3, config={"cores": 1}))
    # Host cores that are not the machine's count, and a core the process may not use.
    with pytest.raises(ValueError, match="has 1 cores, but the machine has cores=2"):
        servelab.serve(scenario(core_ids=ALLOWED[:1]))
    with pytest.raises(ValueError, match="core 4096 does not exist"):
        servelab.serve(scenario(cores=1, core_ids=[4096], count=1))


# ---- pinning instances while serving ----------------------------------------------------------


@needs_two_cpus
def test_instances_with_a_cores_knob_get_disjoint_cores_of_their_machine():
    res = servelab.serve(scenario(count=2, config={"cores": 1}, queries=80), scheduler="fcfs")
    res.check_consistency()
    pins = pins_by_worker(res)
    assert pins == {0: [[TWO[0]]], 1: [[TWO[1]]]}
    assert {r["machine"] for r in res.meta["pinning"]} == {0}
    assert res.workers["machine"].tolist() == [0, 0]


@needs_two_cpus
def test_instances_without_the_knob_share_their_machines_cores():
    res = servelab.serve(scenario(count=3), scheduler="fcfs")
    pins = pins_by_worker(res)
    assert pins and all(cores == [TWO] for cores in pins.values())


class Repartition(PyFcfs):
    """FCFS that gives worker 0 one core of its machine at the 20th arrival."""

    def __init__(self) -> None:
        super().__init__()
        self.arrivals = 0

    def describe(self) -> str:
        return "repartition"

    def on_arrival(self, query, view, actions) -> None:
        self.arrivals += 1
        if self.arrivals == 20:
            actions.set_config(0, "cores", 1)
        super().on_arrival(query, view, actions)


@needs_two_cpus
def test_a_partition_changed_mid_run_re_pins_the_instances():
    res = servelab.serve(scenario(count=2, queries=60), scheduler=Repartition())
    res.check_consistency()
    pins = pins_by_worker(res)
    # Worker 0 shared both cores, then has the first; worker 1 (no knob) keeps what is left.
    assert pins[0][0] == TWO and pins[0][-1] == [TWO[0]]
    c = res.columns
    changed = [r["at_ns"] for r in res.meta["pinning"] if r["worker"] == 0][-1]
    later = (c["worker"] == 0) & (c["start_ns"] >= changed) & (c["status"] == COMPLETED)
    assert later.any()
    # Worker 1, if it ran a batch after the change, was re-pinned to what worker 0 left.
    if ((c["worker"] == 1) & (c["start_ns"] >= changed)).any():
        assert pins[1][-1] == [TWO[1]]


class AddInstance(PyFcfs):
    """FCFS that adds an instance of model n to machine 0 at the 10th arrival."""

    def __init__(self) -> None:
        super().__init__()
        self.arrivals = 0
        self.added = -1
        self.added_at = -1
        self.machine = 0
        self.prefer_added = False  # send queries to the added instance first once it is ready

    def describe(self) -> str:
        return "add_instance_fcfs"

    def on_arrival(self, query, view, actions) -> None:
        self.arrivals += 1
        if self.arrivals == 10:
            before = list(view.instances(self.machine))
            self.added = actions.add_instance(self.machine, ["n"])
            self.added_at = round(view.now * 1e9)
            assert view.machine(self.added) == self.machine
            assert list(view.instances(self.machine)) == [*before, self.added]
        super().on_arrival(query, view, actions)

    def _serve(self, query, view, actions) -> bool:
        if self.prefer_added and self.added >= 0 and view.is_idle(self.added):
            actions.dispatch(self.added, view.models(self.added)[0], query.id)
            return True
        return super()._serve(query, view, actions)


@needs_two_cpus
def test_an_instance_added_while_others_serve_gets_a_thread_and_its_machines_cores():
    sc = scenario(count=2, config={"cores": 1}, queries=80)
    sc["workload"]["apps"] = [
        {"name": "m", "slo_ms": 100, "sizes": "uniform(low=1, high=2)", "share": 0.5},
        {"name": "n", "slo_ms": 100, "sizes": "uniform(low=1, high=2)", "share": 0.5},
    ]
    sc["workers"][0]["models"] = ["m", "n"]
    policy = AddInstance()
    res = servelab.serve(sc, scheduler=policy)
    res.check_consistency()
    added = policy.added
    assert added == 2 and len(res.workers["worker"]) == 3
    assert res.workers["machine"][added] == 0
    c = res.columns
    done = c["status"] == COMPLETED
    mine = done & (c["worker"] == added)
    assert mine.any(), "the added instance served nothing"
    # It served only after its 50 ms load, and the others served while it loaded.
    assert c["start_ns"][mine].min() >= policy.added_at + 50_000_000
    loading = done & (c["worker"] < 2) & (c["start_ns"] > policy.added_at)
    loading &= c["start_ns"] < policy.added_at + 50_000_000
    assert loading.any()
    # No knob: it runs on the cores the two others (one core each) left, i.e. all of them.
    assert pins_by_worker(res)[added] == [TWO]


# ---- the co-located profiler ------------------------------------------------------------------

RECSYS = "recsys(model='wnd', scale=0.0001)"


def test_profile_colocated_measures_sets_and_fits_the_measured_model():
    runs = servelab.profile_colocated(
        {"a": RECSYS, "b": RECSYS},
        sets=[["a"], ["b"], ["a", "b"], ["a", "a", "b"]],
        batch=4,
        repeats=5,
        warmup=1,
        cores=[[c] for c in TWO],
    )
    assert [r["models"] for r in runs.rows if r["member"] == 0] == [
        ("a",),
        ("b",),
        ("a", "b"),
        ("a", "a", "b"),
    ]
    for r in runs.rows:
        assert len(r["samples_ms"]) >= 5 and r["median_ms"] > 0
        # The pace (time per batch, waits between batches included) is at least the batches'.
        assert r["pace_ms"] >= 0.9 * min(r["samples_ms"])
    assert set(runs.alone_ms()) == {"a", "b"}
    assert runs.meta["load_average_before"] is None or len(runs.meta["load_average_before"]) == 3
    fit = servelab.fit_interference(runs)
    assert set(fit.table) == {("a", ("b",)), ("b", ("a",)), ("a", ("a", "b")), ("b", ("a", "a"))}
    # Each entry is its member's pace beside the others over its pace alone.
    alone = runs.alone_ms()
    beside_b = [r for r in runs.rows if r["model"] == "a" and tuple(r["co_runners"]) == ("b",)]
    assert fit.table[("a", ("b",))] == pytest.approx(beside_b[0]["pace_ms"] / alone["a"], abs=1e-3)
    assert fit.spec.startswith("measured(table='a:a+b=")
    model = fit.model()
    assert model.describe().startswith("measured(")
    # The fitted model runs a simulation of the measured models.
    sim = servelab.simulate(
        {
            "profile": servelab.profiles.Profile.from_dict(
                {
                    **PROFILE,
                    "models": {"a": {}, "b": {}},
                    "load_time_s": {},
                    "latency": [
                        {**e, "model": {"m": "a", "n": "b"}[e["model"]]} for e in PROFILE["latency"]
                    ],
                }
            ),
            "machines": [{"name": "box", "cores": 2}],
            "workers": [{"hardware": "cpu", "count": 2, "models": ["a", "b"], "machine": "box"}],
            "workload": {
                "arrivals": "poisson(rate=300)",
                "count": 200,
                "apps": [{"name": "a", "slo_ms": 50, "sizes": "uniform(low=1, high=2)"}],
            },
            "scheduler": "fcfs",
        },
        interference=fit.spec,
    )
    assert sim.summary()["completed"] == 200


def test_fit_interference_from_known_runs():
    def row(s, models, k, times):
        members = list(models)
        return {
            "set": s,
            "models": tuple(models),
            "member": k,
            "model": models[k],
            "co_runners": tuple(sorted(members[:k] + members[k + 1 :])),
            "samples_ms": times,
            "median_ms": float(np.median(times)),
            "pace_ms": float(np.mean(times)),
        }

    runs = servelab.profiling.ColocatedRuns(
        (
            row(0, ["a"], 0, [1.0, 1.0, 1.2]),
            row(1, ["a", "a"], 0, [1.5, 1.5]),
            row(1, ["a", "a"], 1, [1.5, 1.7]),
        ),
        {},
    )
    fit = servelab.fit_interference(runs, statistic="median")
    assert fit.table == {("a", ("a",)): 1.55}  # the two members: 1.5 and 1.6
    assert fit.otherwise == 0.55
    assert fit.spec == "measured(table='a:a=1.55', otherwise=0.55)"
    assert servelab.fit_interference(runs, otherwise=0, statistic="median").spec.endswith(
        "otherwise=0)"
    )
    # By pace: (1.5 + 1.6) / 2 over 3.2 / 3 alone.
    assert servelab.fit_interference(runs).table == {("a", ("a",)): round(1.55 / (3.2 / 3), 3)}
    with pytest.raises(ValueError, match="statistic='p99' must be 'pace' or 'median'"):
        servelab.fit_interference(runs, statistic="p99")
    alone_only = servelab.profiling.ColocatedRuns((row(0, ["a"], 0, [1.0]),), {})
    with pytest.raises(ValueError, match="no set of two or more members"):
        servelab.fit_interference(alone_only)
    never_alone = servelab.profiling.ColocatedRuns((row(0, ["a", "a"], 0, [1.0]),), {})
    with pytest.raises(ValueError, match="never measured alone"):
        servelab.fit_interference(never_alone)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"executors": {}}, "must map model names"),
        ({"executors": {"a:b": RECSYS}}, "without ':'"),
        ({"sets": [["z"]]}, "'z' is not in executors"),
        ({"sets": [[]]}, "non-empty list of model names"),
        ({"batch": 0}, "batch=0 must be an integer >= 1"),
        ({"cores": [[4096]]}, "core 4096 does not exist"),
        ({"config": {"z": {}}}, "config key 'z'"),
    ],
)
def test_profile_colocated_bad_input(kwargs, message):
    args = {"executors": {"a": RECSYS}, **kwargs}
    with pytest.raises(ValueError, match=message):
        servelab.profile_colocated(args.pop("executors"), **args)


# ---- LLC ways laid out by machine -------------------------------------------------------------


def test_llc_ways_are_laid_out_per_model_on_each_machine(tmp_path):
    root = tmp_path / "resctrl"
    (root / "info" / "L3").mkdir(parents=True)
    (root / "info" / "L3" / "cbm_mask").write_text("ffff\n")
    (root / "info" / "L3" / "num_closids").write_text("16\n")
    (root / "schemata").write_text("L3:0=ffff\n")
    (root / "tasks").write_text("")
    sc = scenario(count=2, config={"llc_ways": 2}, queries=80)
    sc["machines"] = [
        {"name": "first", "count": 1, "hardware": "cpu", "llc_ways": 4},  # hosts nothing
        {"name": "box", "cores": 2, "llc_ways": 8},
    ]
    # Two instances of m with 2 ways each, one of n with 3.
    sc["workers"].append(
        {**sc["workers"][0], "count": 1, "models": ["n"], "config": {"llc_ways": 3}}
    )
    sc["workload"]["apps"] = [
        {"name": "m", "slo_ms": 100, "sizes": "uniform(low=1, high=2)", "share": 0.5},
        {"name": "n", "slo_ms": 100, "sizes": "uniform(low=1, high=2)", "share": 0.5},
    ]
    res = servelab.serve(sc, scheduler="fcfs", llc="resctrl", llc_root=root)
    workers = {w["worker"]: w for w in res.meta["llc"]["workers"]}
    assert set(workers) == {0, 1, 2}
    assert all(w["error"] == "" for w in workers.values())
    # Machine 'first' (4 ways) comes before 'box'. On box, m's two instances share one partition
    # of their 2 + 2 ways from way 4 (ways 4-7); n's 3 ways follow (ways 8-10).
    for w in (0, 1):
        assert workers[w]["mask"] == f"{0b1111 << 4:x}" and workers[w]["group"].endswith("-at4-4")
    assert workers[2]["mask"] == f"{0b111 << 8:x}" and workers[2]["group"].endswith("-at8-3")


class Tagged:
    """Records which group's executor ran each batch."""

    seen: list[tuple[str, int]] = []

    def __init__(self, tag: str = ""):
        self.tag = tag

    def run(self, batch):
        Tagged.seen.append((self.tag, batch.worker))


def test_an_added_instance_takes_the_executor_of_a_group_on_its_machine():
    # Two groups of one hardware: the first not on a machine, the second on 'box'. An instance
    # added on box takes box's group's executor, not the hardware's first group's.
    sc = scenario(count=1, queries=60)
    sc["machines"][0].pop("core_ids")
    sc["workers"] = [
        {"hardware": "cpu", "count": 1, "models": ["m"], "executor": "tagged(tag='plain')"},
        {**sc["workers"][0], "models": ["m", "n"], "executor": "tagged(tag='box')"},
    ]
    sc["workload"]["apps"] = [{"name": "n", "slo_ms": 100, "sizes": "uniform(low=1, high=2)"}]
    Tagged.seen = []
    servelab.register_executor("tagged", Tagged, doc="Records its tag.")
    try:
        policy = AddInstance()
        policy.prefer_added = True
        res = servelab.serve(sc, scheduler=policy)
    finally:
        servelab.unregister_executor("tagged")
    res.check_consistency()
    added = policy.added
    assert added == 2 and res.workers["machine"][added] == 0
    tags = {tag for tag, worker in Tagged.seen if worker == added}
    assert tags == {"box"}, Tagged.seen
