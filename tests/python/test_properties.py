"""Property-based tests: the records' contract over random scenarios (Hypothesis).

Where the conformance suite checks every scheduler on a few fixed scenarios, these draw the
scenario: worker mixes of the example profile's four hardware types, one or two apps with their
own SLOs and size distributions, Poisson or bursty (gamma) arrivals from light to overloaded,
short or long drains, any seed, and any registered scheduler. For each run:

- every query ends exactly once (completed or dropped), with ids 0..n-1;
- time never goes backwards (arrival <= dispatch <= start <= finish; Result.check_consistency);
- the summary agrees with the records it summarises;
- the same seed gives the same records;
- the real serving loop (emulated executor) makes the simulator's decisions when they cannot
  hinge on wall-clock timing (round robin, spaced arrivals).

Examples are derandomised, so CI runs the same cases every time; the example counts keep the
file to tens of seconds.
"""

from __future__ import annotations

import numpy as np
import pytest

import servelab

hypothesis = pytest.importorskip("hypothesis", reason="hypothesis is not installed")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

HARDWARE = ("g4dn.xlarge", "c5n.2xlarge", "r5n.large", "t3.xlarge")
COMPLETED, DROPPED = 0, 1
# Values for the parameters a scheduler requires (as in the conformance suite).
REQUIRED = {"model_switching": {"loads": [20.0, 60.0], "models": "wnd,rm2"}}
SCHEDULERS = sorted(e["name"] for e in servelab.list_schedulers())

PROPERTY_SETTINGS = settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


@st.composite
def worker_groups(draw):
    kinds = draw(st.lists(st.sampled_from(HARDWARE), min_size=1, max_size=3, unique=True))
    groups = []
    for hw in kinds:
        models = ["rm2", "wnd"] if hw == "g4dn.xlarge" and draw(st.booleans()) else ["rm2"]
        groups.append({"hardware": hw, "count": draw(st.integers(1, 3)), "models": models})
    return groups


SIZES = st.sampled_from(
    ["kairos_mix()", "uniform(low=1, high=40)", "constant(value=10)", "uniform(low=1, high=200)"]
)


@st.composite
def apps(draw):
    first = {
        "name": "rm2",
        "slo_ms": draw(st.sampled_from([30, 100, 350, 1000])),
        "sizes": draw(SIZES),
    }
    if not draw(st.booleans()):
        return [first]
    second = {"name": "small", "slo_ms": draw(st.sampled_from([20, 60])), "sizes": draw(SIZES)}
    share = draw(st.sampled_from([0.2, 0.5, 0.8]))
    return [dict(first, share=share), dict(second, share=round(1 - share, 2))]


@st.composite
def scenarios(draw, schedulers=SCHEDULERS, max_queries=400):
    rate = draw(st.sampled_from([2.0, 20.0, 60.0, 150.0]))
    arrivals = draw(st.sampled_from([f"poisson(rate={rate})", f"gamma(rate={rate}, cv=3)"]))
    name = draw(st.sampled_from(schedulers))
    return {
        "profile": "example:hetero_cpu_gpu",
        "workers": draw(worker_groups()),
        "workload": {
            "arrivals": arrivals,
            "count": draw(st.integers(1, max_queries)),
            "apps": draw(apps()),
        },
        "scheduler": servelab.make_scheduler(name, **REQUIRED.get(name, {})),
        "seed": draw(st.integers(0, 2**32 - 1)),
        "drain_s": draw(st.sampled_from([0.5, 5.0, 600.0])),
    }


def simulate_or_reject(scenario: dict) -> servelab.Result:
    """The run, or the example rejected when the scheduler refuses the scenario outright with a
    ValueError (RAMSIS when no model meets an app's SLO, for one): a clear refusal is correct
    behaviour, checked by the bad-input tests, and leaves no records to check here."""
    try:
        return servelab.simulate(scenario)
    except ValueError:
        hypothesis.reject()


def _fresh(scenario: dict) -> dict:
    """The scenario with a fresh scheduler (a scheduler keeps per-run state)."""
    sched = scenario["scheduler"]
    name = sched.describe().split("(", 1)[0]
    return dict(scenario, scheduler=servelab.make_scheduler(name, **REQUIRED.get(name, {})))


@PROPERTY_SETTINGS
@given(scenarios())
def test_every_query_ends_exactly_once_and_time_never_goes_backwards(scenario):
    result = simulate_or_reject(scenario)
    n = scenario["workload"]["count"]
    c = result.columns
    assert len(result) == n
    assert np.array_equal(c["id"], np.arange(n))
    assert np.isin(c["status"], [COMPLETED, DROPPED]).all()
    result.check_consistency()  # arrival <= dispatch <= start <= finish, batches, workers
    done = c["status"] == COMPLETED
    assert (c["finish_ns"][done] >= c["arrival_ns"][done]).all()
    assert (np.diff(c["arrival_ns"]) >= 0).all()  # arrivals in id order


@PROPERTY_SETTINGS
@given(scenarios())
def test_the_summary_agrees_with_the_records(scenario):
    result = simulate_or_reject(scenario)
    summary = result.summary()
    frame = result.to_pandas()
    done = frame["status"] == COMPLETED
    assert summary["queries"] == len(frame)
    assert summary["completed"] == int(done.sum())
    assert summary["dropped"] == int((~done).sum())
    assert sum(summary["dropped_by_reason"].values()) == summary["dropped"]
    if done.any():
        latency = frame.loc[done, "latency_ms"].to_numpy()
        assert summary["latency_ms"]["max"] == pytest.approx(latency.max())
        assert summary["latency_ms"]["p50"] == pytest.approx(np.percentile(latency, 50))
        violations = (~frame["met_deadline"]).mean()
        assert summary["slo_violation_rate"] == pytest.approx(violations)
    workers = result.workers_frame()
    assert (workers["busy_s"] <= workers["active_s"] + 1e-9).all()


@settings(max_examples=25, deadline=None, derandomize=True)
@given(scenarios())
def test_the_same_seed_gives_the_same_records(scenario):
    first = simulate_or_reject(scenario)
    second = servelab.simulate(_fresh(scenario))
    for name, column in first.columns.items():
        assert np.array_equal(column, second.columns[name], equal_nan=column.dtype.kind == "f"), (
            name
        )


@settings(max_examples=6, deadline=None, derandomize=True)
@given(
    groups=worker_groups(),
    count=st.integers(1, 12),
    seed=st.integers(0, 2**32 - 1),
)
def test_serving_makes_the_simulators_decisions_when_timing_cannot_matter(groups, count, seed):
    # Round robin decides by arrival order alone, and arrivals 50 ms apart on average with fixed
    # (mean) service times leave nothing to a race: both worlds must put each query on the same
    # worker, in the same batch size.
    scenario = {
        "profile": "example:hetero_cpu_gpu",
        "workers": groups,
        "workload": {"arrivals": "poisson(rate=20)", "count": count,
                     "apps": [{"name": "rm2", "slo_ms": 350, "sizes": "uniform(low=1, high=40)"}]},
        "scheduler": "round_robin",
        "seed": seed,
        "service": "mean",
        "drain_s": 5.0,
    }  # fmt: skip
    sim = servelab.simulate(scenario)
    real = servelab.serve(scenario)
    for name in ("id", "status", "worker", "size", "batch_queries"):
        assert np.array_equal(sim.columns[name], real.columns[name]), name
