"""Result: validation, exact summaries on hand-made records, percentiles, warmup, per-app metrics,
timeseries, pandas views, consistency checks and compare()."""

import json
import math

import numpy as np
import pandas as pd
import pytest

from servelab.results import Result

from .fake_results import MS, S, fifo_result, make_result

# Five queries, 10 ms apart, on one worker with a 100 ms SLO. Latencies 5, 15, 25, 120 ms (the
# last misses its deadline); the fifth is dropped 1 ms after arriving.
ARRIVAL = np.array([0, 10, 20, 30, 40]) * MS
START = np.array([0, 10, 25, 45, -1]) * MS
FINISH = np.array([5, 25, 45, 150, 41]) * MS
STATUS = np.array([0, 0, 0, 0, 1])
ACCURACY = [0.9, 0.7, 0.8, 0.6, np.nan]


def tiny(**overrides) -> Result:
    kwargs = dict(
        start_ns=np.where(STATUS == 0, START, -1),
        status=STATUS,
        accuracy=ACCURACY,
        app=[0, 1, 0, 1, 0],
        apps=("a", "b"),
        busy_ns=[145 * MS],
    )
    kwargs.update(overrides)
    return make_result(ARRIVAL, FINISH, **kwargs)


def raw(result: Result) -> tuple[dict, dict, dict]:
    """Writable copies of a Result's three parts, to break in tests."""
    columns = {k: np.array(v) for k, v in result.columns.items()}
    workers = {k: np.array(v) for k, v in result.workers.items()}
    return columns, workers, dict(result.meta)


# ---- exact summaries ----------------------------------------------------------------------------


def test_tiny_summary_is_exact():
    s = tiny().summary()
    assert s["queries"] == 5 and s["completed"] == 4 and s["dropped"] == 1
    assert s["dropped_by_reason"] == {"queue_full": 1, "deadline_unreachable": 0}
    assert s["duration_s"] == pytest.approx(0.150)
    assert s["throughput_qps"] == pytest.approx(4 / 0.150)
    assert s["goodput_qps"] == pytest.approx(3 / 0.150)
    assert s["slo_violation_rate"] == pytest.approx(2 / 5)  # one late, one dropped
    lat = s["latency_ms"]
    assert lat["mean"] == pytest.approx((5 + 15 + 25 + 120) / 4)
    assert lat["p50"] == pytest.approx(20.0)
    assert lat["max"] == pytest.approx(120.0)
    assert lat["p99"] == pytest.approx(np.percentile([5, 15, 25, 120], 99))
    assert s["queue_ms"]["mean"] == pytest.approx((0 + 0 + 5 + 15) / 4)
    assert s["service_ms"]["mean"] == pytest.approx((5 + 15 + 20 + 105) / 4)
    assert s["accuracy_mean"] == pytest.approx(0.75, rel=1e-6)
    assert s["accuracy_per_satisfied_query"] == pytest.approx(0.8, rel=1e-6)  # (0.9+0.7+0.8)/3
    assert s["cost_dollars"] == pytest.approx(0.150 * 0.001)  # $3.6/h for 150 ms
    assert s["cost_per_1k_queries"] == pytest.approx(0.150 * 0.001 * 1000 / 4)
    assert s["batch_cost_dollars"] == pytest.approx(0.145 * 0.001, rel=1e-6)
    assert s["utilisation"]["per_worker"] == [pytest.approx(145 / 150)]
    assert s["utilisation"]["mean"] == pytest.approx(145 / 150)
    assert s["workers"] == 1 and s["warmup_queries"] == 0


def test_summary_is_json_serialisable_with_plain_types():
    for result in (
        tiny(),
        tiny(status=np.ones(5), start_ns=np.full(5, -1)),  # everything dropped
        make_result([], [], duration_ns=0),  # nothing at all
    ):
        s = result.summary()
        text = json.dumps(s, allow_nan=False)  # no NaN: undefined metrics are None
        assert json.loads(text) == s
    everything_dropped = tiny(status=np.ones(5), start_ns=np.full(5, -1)).summary()
    assert everything_dropped["latency_ms"]["p99"] is None
    assert everything_dropped["slo_violation_rate"] == 1.0
    assert everything_dropped["cost_per_1k_queries"] is None
    empty = make_result([], [], duration_ns=0).summary()
    assert empty["queries"] == 0 and empty["slo_violation_rate"] is None
    no_workers = make_result([0], [MS], status=[1], start_ns=[-1], n_workers=0, duration_ns=MS)
    s = no_workers.summary()
    assert s["workers"] == 0 and s["utilisation"] == {"mean": None, "per_worker": []}
    assert s["cost_dollars"] == 0.0 and s["dropped"] == 1
    ts = make_result([], [], duration_ns=0).timeseries()
    assert len(ts) == 1 and ts["arrivals"].iloc[0] == 0 and np.isnan(ts["violation_rate"].iloc[0])


def test_warmup_excludes_early_arrivals():
    s = tiny().summary(warmup_s=0.015)  # drops the queries arriving at 0 and 10 ms
    assert s["queries"] == 3 and s["warmup_queries"] == 2 and s["completed"] == 2
    assert s["measured_s"] == pytest.approx(0.135)
    assert s["throughput_qps"] == pytest.approx(2 / 0.135)
    assert s["latency_ms"]["mean"] == pytest.approx((25 + 120) / 2)
    assert s["slo_violation_rate"] == pytest.approx(2 / 3)
    assert s["accuracy_per_satisfied_query"] == pytest.approx(0.8, rel=1e-6)
    # Worker metrics always cover the whole run.
    assert s["cost_dollars"] == tiny().summary()["cost_dollars"]


def test_per_app_summary():
    per_app = tiny().summary(by="app")
    assert list(per_app) == ["a", "b"]
    a, b = per_app["a"], per_app["b"]  # a: 5 ms, 25 ms, dropped; b: 15 ms, 120 ms (late)
    assert (a["queries"], a["completed"], a["dropped"]) == (3, 2, 1)
    assert a["latency_ms"]["mean"] == pytest.approx(15.0)
    assert a["slo_violation_rate"] == pytest.approx(1 / 3)
    assert b["slo_violation_rate"] == pytest.approx(1 / 2)
    assert b["latency_ms"]["max"] == pytest.approx(120.0)
    assert a["queries"] + b["queries"] == 5
    frame = tiny().per_app_summary()
    assert list(frame.index) == ["a", "b"]
    assert frame.loc["b", "latency_ms.p50"] == pytest.approx(67.5)


def test_percentiles_agree_with_numpy_on_many_queries():
    result = fifo_result(n=20_000, rate_qps=300, workers=3, drop_fraction=0.03, max_batch=4)
    s = result.summary(warmup_s=2.0)
    frame = result.to_pandas()
    measured = frame[frame["arrival_s"] >= 2.0]
    latency = measured["latency_ms"].dropna().to_numpy()
    for q in (50, 90, 95, 99):
        assert s["latency_ms"][f"p{q}"] == pytest.approx(np.percentile(latency, q), rel=1e-12)
    assert s["latency_ms"]["mean"] == pytest.approx(latency.mean(), rel=1e-12)
    assert s["completed"] == len(latency)
    assert s["slo_violation_rate"] == pytest.approx(1 - measured["met_deadline"].mean())
    assert s["dropped"] == int((measured["status"] == 1).sum()) > 0


# ---- timeseries ---------------------------------------------------------------------------------


def test_timeseries_windows_on_the_tiny_case():
    ts = tiny().timeseries(window_s=0.02)
    assert ts.index.name == "time_s"
    np.testing.assert_allclose(ts.index[:3], [0.0, 0.02, 0.04])
    assert list(ts["arrivals"][:3]) == [2, 2, 1]
    assert list(ts["completed"][:3]) == [2, 2, 0]
    assert list(ts["dropped"][:3]) == [0, 0, 1]
    np.testing.assert_allclose(ts["latency_p50_ms"][:2], [10.0, 72.5])
    assert math.isnan(ts["latency_p50_ms"].iloc[2])
    np.testing.assert_allclose(ts["violation_rate"][:3], [0.0, 0.5, 1.0])
    np.testing.assert_allclose(ts["accuracy_mean"][:2], [0.8, 0.7], rtol=1e-6)
    # Throughput counts completions by finish time: 5 ms, 25 ms, 45 ms, 150 ms.
    assert ts["throughput_qps"].sum() * 0.02 == pytest.approx(4)
    assert ts["throughput_qps"].iloc[0] == pytest.approx(1 / 0.02)
    assert ts["throughput_qps"].iloc[7] == pytest.approx(1 / 0.02)  # [140, 160) ms


def test_timeseries_matches_groupby_on_many_queries():
    result = fifo_result(n=20_000, rate_qps=300, workers=2, drop_fraction=0.02)
    ts = result.timeseries(window_s=5.0)
    frame = result.to_pandas()
    window = (frame["arrival_ns"] // (5 * S)).to_numpy()
    assert ts["arrivals"].sum() == len(result)
    assert ts["throughput_qps"].sum() * 5.0 == pytest.approx(frame["status"].eq(0).sum())
    p99 = frame.groupby(window)["latency_ms"].quantile(0.99)
    np.testing.assert_allclose(ts["latency_p99_ms"].to_numpy()[p99.index], p99.to_numpy())
    met = frame.groupby(window)["met_deadline"].mean()
    np.testing.assert_allclose(ts["violation_rate"].to_numpy()[met.index], 1 - met.to_numpy())


# ---- pandas views -------------------------------------------------------------------------------


def test_to_pandas_adds_derived_columns_and_names():
    frame = tiny().to_pandas()
    assert len(frame) == 5
    for name in ("latency_ms", "queue_ms", "service_ms", "met_deadline", "arrival_s", "hardware"):
        assert name in frame.columns
    np.testing.assert_allclose(frame["latency_ms"][:4], [5, 15, 25, 120])
    assert math.isnan(frame["latency_ms"][4]) and math.isnan(frame["queue_ms"][4])
    np.testing.assert_allclose(frame["queue_ms"][:4], [0, 0, 5, 15])
    assert list(frame["met_deadline"]) == [True, True, True, False, False]
    for name in ("app", "model", "hardware", "drop_reason"):
        assert isinstance(frame[name].dtype, pd.CategoricalDtype), name
    assert list(frame["app"]) == ["a", "b", "a", "b", "a"]
    assert list(frame["hardware"][:4]) == ["cpu"] * 4 and pd.isna(frame["hardware"][4])
    assert frame["drop_reason"][4] == "queue_full" and pd.isna(frame["model"][4])


def test_workers_frame():
    frame = tiny().to_pandas(workers=True)
    assert list(frame["hardware"]) == ["cpu"]
    assert frame["utilisation"][0] == pytest.approx(145 / 150)
    assert frame["busy_s"][0] == pytest.approx(0.145)
    assert frame.equals(tiny().workers_frame())


def test_batches_groups_queries_of_one_batch():
    result = fifo_result(n=1000, workers=2, max_batch=3, rate_qps=200)
    batches = result.batches()
    assert batches["queries"].sum() == 1000
    assert batches["queries"].max() == 3
    assert batches["worker"].is_monotonic_increasing
    assert int(result.workers["batches"].sum()) == len(batches)


def test_columns_are_read_only_views_and_callers_arrays_stay_writable():
    columns, workers, meta = raw(tiny())
    result = Result(columns, workers, meta)
    assert not result.columns["finish_ns"].flags.writeable
    assert np.shares_memory(result.columns["finish_ns"], columns["finish_ns"])  # no copy
    assert columns["finish_ns"].flags.writeable
    with pytest.raises(ValueError, match="read-only"):
        result.columns["finish_ns"][0] = 0
    result.summary()
    frame = result.to_pandas()
    frame.loc[0, "finish_ns"] = 12345  # the frame is a copy
    np.testing.assert_array_equal(result.columns["finish_ns"], FINISH)


def test_repr_and_len():
    result = tiny()
    assert len(result) == 5
    assert "queries=5" in repr(result) and "completed=4" in repr(result)


# ---- compare ------------------------------------------------------------------------------------


def test_compare_is_one_subtraction():
    slower = tiny(accuracy=[0.5, 0.5, 0.5, 0.5, np.nan])
    diff = tiny().compare(slower)
    assert diff["accuracy_mean"]["diff"] == pytest.approx(0.25, rel=1e-6)
    assert diff["accuracy_mean"]["self"] == pytest.approx(0.75, rel=1e-6)
    assert diff["accuracy_mean"]["rel_diff"] == pytest.approx(0.5, rel=1e-6)
    assert diff["latency_ms.p99"]["diff"] == 0.0
    same = tiny().compare(tiny())
    assert all(v["diff"] in (0, 0.0) for v in same.values())
    all_dropped = tiny(status=np.ones(5), start_ns=np.full(5, -1))
    assert tiny().compare(all_dropped)["latency_ms.mean"]["diff"] is None


# ---- consistency --------------------------------------------------------------------------------


def test_check_consistency_accepts_valid_records():
    fifo_result(n=5000, workers=3, max_batch=4, drop_fraction=0.05).check_consistency()
    tiny().check_consistency()


def test_check_consistency_checks_the_workers_table():
    columns, workers, meta = raw(tiny())
    workers["batches"][0] = 5
    with pytest.raises(ValueError, match="worker 0: batches=5 but its queries ran in 4 batches"):
        Result(columns, workers, meta).check_consistency()
    columns, workers, meta = raw(tiny())
    workers["busy_ns"][0] = 10 * S
    with pytest.raises(ValueError, match=r"worker 0: busy_ns=10000000000 exceeds active_ns="):
        Result(columns, workers, meta).check_consistency()


@pytest.mark.parametrize(
    ("column", "row", "value", "message"),
    [
        ("finish_ns", 1, 30 * MS, "two batches at once"),  # [10, 30) overlaps [25, 45) ms
        ("worker", 4, 0, "dropped query has dispatch_ns = start_ns = worker = -1"),
        ("batch_queries", 1, 2, "batch_queries=2 but its batch holds 1"),
        ("id", 3, 1, "ids must strictly increase"),
        ("dispatch_ns", 1, 30 * MS, "arrival <= dispatch <= start <= finish"),
        ("drop_reason", 0, 1, "completed query has no drop reason"),
    ],
)
def test_check_consistency_names_the_broken_row(column, row, value, message):
    columns, workers, meta = raw(tiny())
    columns[column][row] = value
    with pytest.raises(ValueError, match=message):
        Result(columns, workers, meta).check_consistency()


# ---- bad input ----------------------------------------------------------------------------------


def broken(part: str, key: str, value) -> tuple[dict, dict, dict]:
    parts = dict(zip(("columns", "workers", "meta"), raw(tiny()), strict=True))
    if value is None:
        del parts[part][key]
    else:
        parts[part][key] = value
    return parts["columns"], parts["workers"], parts["meta"]


@pytest.mark.parametrize(
    ("part", "key", "value", "message"),
    [
        ("columns", "finish_ns", None, r"columns is missing the required column 'finish_ns'"),
        ("columns", "cost", np.zeros(4, np.float32), r"columns\['cost'\] has 4 entries .* has 5"),
        ("columns", "arrival_ns", np.zeros(5), r"columns\['arrival_ns'\] has dtype float64"),
        ("columns", "accuracy", np.zeros(5, np.int32), r"columns\['accuracy'\] has dtype int32"),
        ("columns", "size", np.ones((5, 1), np.int32), r"columns\['size'\] must be 1-D"),
        ("columns", "app", np.array([0, 0, 5, 0, 0]), r"columns\['app'\]\[2\]=5 is outside 0..1"),
        ("columns", "status", np.array([0, 0, 0, 2, 1]), r"columns\['status'\]\[3\]=2"),
        ("columns", "model", np.array([0, 0, 9, 0, -1]), r"columns\['model'\]\[2\]=9"),
        ("columns", "worker", np.array([0, 7, 0, 0, -1]), r"columns\['worker'\]\[1\]=7"),
        ("workers", "busy_ns", None, r"workers is missing the required column 'busy_ns'"),
        ("workers", "hardware", np.array([3]), r"workers\['hardware'\]\[0\]=3"),
        ("meta", "apps", None, r"meta is missing the required key 'apps'"),
        ("meta", "world", "lab", r"meta\['world'\]='lab' must be 'sim' or 'serve'"),
        ("meta", "duration_ns", -5, r"meta\['duration_ns'\]=-5 must be an integer >= 0"),
        ("meta", "models", ["m", "m"], r"meta\['models'\] names 'm' more than once"),
    ],
)
def test_bad_records_raise_naming_the_field_and_value(part, key, value, message):
    with pytest.raises(ValueError, match=message):
        Result(*broken(part, key, value))


def test_bad_arguments_raise_naming_the_argument():
    result = tiny()
    with pytest.raises(ValueError, match=r"warmup_s=-1 must be >= 0"):
        result.summary(warmup_s=-1)
    with pytest.raises(ValueError, match=r"warmup_s=0.2 must be < the run's duration_s=0.15"):
        result.summary(warmup_s=0.2)
    with pytest.raises(ValueError, match=r"warmup_s=nan must be a finite"):
        result.summary(warmup_s=float("nan"))
    with pytest.raises(ValueError, match=r"by='model' must be None or 'app'"):
        result.summary(by="model")
    with pytest.raises(ValueError, match=r"window_s=0 must be > 0"):
        result.timeseries(window_s=0)
    with pytest.raises(ValueError, match=r"other must be a Result, got dict"):
        result.compare({})
    with pytest.raises(ValueError, match=r"columns must be a dict of arrays, got list"):
        Result([], {}, {})
