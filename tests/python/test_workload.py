"""Arrival processes and trace readers through Python (servelab.workload).

Statistical checks use fixed seeds (deterministic); each tolerance is at least 4 standard errors.
Fidelity tests read ../shared/data and skip, saying so, when it is absent.
"""

import math
import re
from pathlib import Path

import numpy as np
import pytest

from servelab import workload
from servelab.workload import (
    MMPP,
    ArrivalProcess,
    Gamma,
    OnOff,
    PiecewiseRate,
    Poisson,
    PoissonIntegerMs,
    Replay,
)

DATA = Path(__file__).parents[3] / "shared" / "data"
TWITTER = DATA / "ramsis" / "twitter_trace" / "twitter_04_25_norm.txt"
RRL_GAPS = DATA / "rrl" / "interarrival_time_generated.txt"


def shared_file(path: Path) -> Path:
    if not path.is_file():
        pytest.skip(f"shared data file {path} is absent (fidelity tests need ../shared/data)")
    return path


def gap_moments(times: np.ndarray) -> tuple[float, float]:
    gaps = np.diff(times, prepend=0.0)
    return float(gaps.mean()), float(gaps.std(ddof=1) / gaps.mean())


PROCESSES = [
    Poisson(rate=100),
    PoissonIntegerMs(rate=1000 / 10.5),
    Gamma(rate=100, cv=0.5),
    MMPP(rate_on=200, rate_off=20, mean_on_s=0.5, mean_off_s=1.5),
    PiecewiseRate(interval_s=1, rates=[100, 0, 300], repeat=True),
]


@pytest.mark.parametrize("process", PROCESSES, ids=repr)
def test_generate_is_deterministic_sorted_and_in_seconds(process):
    times = process.generate(seed=7, count=5000)
    assert times.dtype == np.float64 and times.shape == (5000,)
    np.testing.assert_array_equal(times, process.generate(seed=7, count=5000))
    assert not np.array_equal(times, process.generate(seed=8, count=5000))
    assert times[0] >= 0 and np.all(np.diff(times) >= 0)
    ns = process.generate_ns(seed=7, count=5000)
    assert ns.dtype == np.int64
    np.testing.assert_array_equal(times, ns / 1e9)  # the same times, converted in C++


def test_numpy_integer_seeds_work_like_python_ints():
    p = Poisson(rate=10)
    np.testing.assert_array_equal(
        p.generate(seed=np.uint64(3), count=10), p.generate(seed=3, count=10)
    )
    assert len(p.generate(seed=2**64 - 1, count=3)) == 3


def test_bulk_results_are_handed_over_without_a_copy():
    times = Poisson(rate=10).generate(seed=1, count=100)
    assert not times.flags.owndata and times.base is not None  # owned by the C++ vector's capsule
    times[0] = -1.0  # and writable like any array
    assert times[0] == -1.0


def test_cursor_iterates_the_same_times_lazily():
    p = Gamma(rate=50, cv=2)
    cursor = p.start(seed=4)
    lazy = [next(cursor) for _ in range(100)]
    np.testing.assert_array_equal(lazy, p.generate(seed=4, count=100))
    assert p.start(seed=4).next_ns() == p.generate_ns(seed=4, count=1)[0]
    assert list(Replay(timestamps_s=[0.0, 1.5]).start(seed=0)) == [0.0, 1.5]
    assert Replay(timestamps_s=[2.0]).start(seed=0).next_ns() == 2_000_000_000


def test_count_and_horizon_limits():
    p = Poisson(rate=1000)
    assert len(p.generate(seed=1, count=0)) == 0
    assert len(p.generate(seed=1, count=123)) == 123
    by_horizon = p.generate(seed=1, horizon_s=2.0)
    assert 1800 < len(by_horizon) < 2200 and by_horizon[-1] < 2.0
    longer = p.generate(seed=1, count=len(by_horizon) + 1)
    np.testing.assert_array_equal(longer[:-1], by_horizon)
    assert longer[-1] >= 2.0
    assert len(p.generate(seed=1, count=10, horizon_s=2.0)) == 10
    np.testing.assert_array_equal(p.generate(seed=1, count=10**6, horizon_s=2.0), by_horizon)
    assert len(p.generate(seed=1, count=50, horizon_s=math.inf)) == 50
    # A finite trace ends by itself before either limit.
    assert len(PiecewiseRate(interval_s=1, rates=[100, 50]).generate(seed=1, count=10**6)) < 200


def test_poisson_statistics():
    mean, cv = gap_moments(Poisson(rate=100).generate(seed=2024, count=200_000))
    assert mean == pytest.approx(0.01, rel=0.01)  # standard error 0.22%
    assert cv == pytest.approx(1.0, abs=0.02)  # standard error 0.32%


def test_poisson_integer_ms_gaps_are_whole_milliseconds():
    p = PoissonIntegerMs(rate=1000 / 10.5)  # Kairos' default mean gap, 10.5 ms
    assert p.mean_gap_ms == pytest.approx(10.5)
    gaps_ns = np.diff(p.generate_ns(seed=3, count=200_000), prepend=0)
    assert np.all(gaps_ns % 1_000_000 == 0)
    gaps_ms = gaps_ns / 1e6
    assert gaps_ms.mean() == pytest.approx(10.5, rel=0.01)  # standard error 0.07%
    assert gaps_ms.var() == pytest.approx(10.5, rel=0.03)  # Poisson: variance = mean


@pytest.mark.parametrize("cv", [0.5, 2.0])
def test_gamma_statistics(cv):
    mean, measured_cv = gap_moments(Gamma(rate=50, cv=cv).generate(seed=11, count=200_000))
    assert mean == pytest.approx(0.02, rel=0.02)  # standard error cv * 0.22%
    assert measured_cv == pytest.approx(cv, rel=0.04)  # standard error below 0.8%


def test_mmpp_long_run_rate_and_alias():
    p = OnOff(rate_on=200, rate_off=20, mean_on_s=0.5, mean_off_s=1.5)
    assert OnOff is MMPP and isinstance(p, ArrivalProcess)
    assert p.mean_rate == pytest.approx((200 * 0.5 + 20 * 1.5) / 2.0)
    n = len(p.generate(seed=5, horizon_s=50_000))
    assert n / 50_000 == pytest.approx(65.0, rel=0.03)  # relative standard error 0.46%


def test_piecewise_counts_follow_the_rates():
    rates = np.array([1000.0, 0.0, 3000.0, 500.0])
    p = PiecewiseRate(interval_s=100, rates=rates)
    assert p.duration_s == 400 and p.mean_rate == pytest.approx(1125)
    np.testing.assert_array_equal(p.rates, rates)
    counts = np.bincount((p.generate(seed=21, count=10**7) // 100).astype(int), minlength=4)
    assert len(counts) == 4 and counts[1] == 0
    expected = rates * 100
    assert np.all(np.abs(counts - expected) <= 5 * np.sqrt(expected))


def test_replay_times_period_and_gaps():
    r = Replay(timestamps_s=[0.25, 1.0], period_s=2.0)
    assert len(r) == 2 and r.period_s == 2.0 and r.mean_rate == pytest.approx(1.0)
    np.testing.assert_array_equal(
        r.generate_ns(seed=0, count=5),
        [250_000_000, 10**9, 2_250_000_000, 3 * 10**9, 4_250_000_000],
    )
    g = Replay.from_gaps(gaps_s=[0.001, 0.002], repeat=True)
    np.testing.assert_array_equal(g.timestamps_ns, [1_000_000, 3_000_000])
    np.testing.assert_array_equal(g.generate_ns(seed=0, count=3), [1_000_000, 3_000_000, 4_000_000])
    assert Replay(timestamps_s=[1.0, 2.0]).period_s is None


def test_repr_is_describe_and_properties_read_back():
    p = Gamma(rate=50, cv=0.5)
    assert repr(p) == p.describe() == "gamma(rate=50, cv=0.5)"
    assert (p.rate, p.cv) == (50, 0.5)
    assert repr(Poisson(rate=100)) == "poisson(rate=100)"
    m = MMPP(rate_on=1, rate_off=0, mean_on_s=2, mean_off_s=3)
    assert (m.rate_on, m.rate_off, m.mean_on_s, m.mean_off_s) == (1, 0, 2, 3)
    assert repr(m) == "mmpp(rate_on=1, rate_off=0, mean_on_s=2, mean_off_s=3)"
    pw = PiecewiseRate(interval_s=10, rates=[1, 2], time_scale=0.5, repeat=True)
    assert (pw.interval_s, pw.time_scale, pw.repeat, pw.duration_s) == (10, 0.5, True, 10)
    assert repr(pw).startswith("piecewise_rate(interval_s=10, rates=[1, 2]")
    assert repr(Replay(timestamps_s=[0.5])) == "replay(n=1, first_s=0.5, last_s=0.5)"


def has_docstring(obj) -> bool:
    doc = (obj.__doc__ or "").strip()
    if re.match(r"^\w+\(", doc):  # pybind11 puts the signature first; require text after it
        return any(part.strip() for part in doc.split("\n\n")[1:])
    return bool(doc)


def test_everything_public_has_a_docstring():
    assert has_docstring(workload)
    for name in workload.__all__:
        obj = getattr(workload, name)
        assert has_docstring(obj), name
        for attr in dir(obj):
            if not attr.startswith("_") or attr in {"__init__", "__iter__", "__next__", "__len__"}:
                if attr == "__init__" and obj is workload.ArrivalCursor:
                    continue  # made by start(), not constructed
                assert has_docstring(getattr(obj, attr)), f"{name}.{attr}"


NAN = float("nan")
BAD_INPUTS = [
    (lambda: Poisson(rate=-3), r"rate=-3 must be positive and finite"),
    (lambda: Poisson(rate=0), r"rate=0 must be positive"),
    (lambda: Poisson(rate=NAN), r"rate=nan must be positive"),
    (lambda: Poisson(rate=math.inf), r"rate=inf must be positive"),
    (lambda: PoissonIntegerMs(rate=1e-12), r"rate=1e-12 gives a mean gap of 1000000000000000 ms"),
    (lambda: Gamma(rate=10, cv=0), r"cv=0 must be positive and finite"),
    (lambda: Gamma(rate=-1, cv=1), r"rate=-1 must be positive"),
    (lambda: Gamma(rate=10, cv=NAN), r"cv=nan"),
    (lambda: Gamma(rate=10, cv=1e5), r"cv=100000 is outside the supported range"),
    (lambda: MMPP(rate_on=0, rate_off=1, mean_on_s=1, mean_off_s=1), r"rate_on=0 must be positive"),
    (lambda: MMPP(rate_on=1, rate_off=-1, mean_on_s=1, mean_off_s=1), r"rate_off=-1 must be non"),
    (
        lambda: MMPP(rate_on=1, rate_off=0, mean_on_s=0, mean_off_s=1),
        r"mean_on_s=0 must be positive",
    ),
    (lambda: MMPP(rate_on=1, rate_off=0, mean_on_s=1, mean_off_s=NAN), r"mean_off_s=nan"),
    (lambda: PiecewiseRate(interval_s=0, rates=[1]), r"interval_s=0 must be positive"),
    (lambda: PiecewiseRate(interval_s=1, rates=[1, -5]), r"rates\[1\]=-5 must be non-negative"),
    (lambda: PiecewiseRate(interval_s=1, rates=[1, NAN]), r"rates\[1\]=nan"),
    (lambda: PiecewiseRate(interval_s=1, rates=[]), r"rates is empty"),
    (lambda: PiecewiseRate(interval_s=1, rates=[[1, 2]]), r"rates must be 1-D, got shape \(1, 2\)"),
    (lambda: PiecewiseRate(interval_s=1, rates=[1], time_scale=-2), r"time_scale=-2 must be"),
    (lambda: PiecewiseRate(interval_s=1, rates=[0, 0], repeat=True), r"rates are all 0 and repeat"),
    (lambda: Replay(timestamps_s=[0, 2, 1]), r"timestamps_s\[2\]=1 is before timestamps_s\[1\]=2"),
    (lambda: Replay(timestamps_s=[-1]), r"timestamps_s\[0\]=-1 must be non-negative"),
    (lambda: Replay(timestamps_s=[]), r"timestamps_s is empty"),
    (lambda: Replay(timestamps_s=[0, 2], period_s=1), r"period_s=1 is shorter than the last time"),
    (lambda: Replay.from_gaps(gaps_s=[0.1, -0.2]), r"gaps_s\[1\]=-0.2 must be non-negative"),
    (lambda: Replay.from_gaps(gaps_s=[0, 0], repeat=True), r"gaps_s sum to 0 s and repeat=true"),
    (lambda: Poisson(rate=1).generate(seed=-1, count=1), r"seed=-1 must be an integer"),
    (lambda: Poisson(rate=1).generate(seed=2**64, count=1), r"seed=18446744073709551616 must be"),
    (lambda: Poisson(rate=1).generate(seed=1.5, count=1), r"seed=1\.5 must be an integer"),
    (lambda: Poisson(rate=1).generate(seed=1, count=-5), r"count=-5 must be >= 0"),
    (
        lambda: Poisson(rate=1).generate_ns(seed=1, horizon_s=-1),
        r"horizon_s=-1 must be a non-negative number",
    ),
    (
        lambda: Poisson(rate=1).generate(seed=1, horizon_s=NAN),
        r"horizon_s=nan must be a non-negative number",
    ),
    (lambda: Poisson(rate=1).generate(seed=1), r"count=None and horizon_s=None"),
    (lambda: workload.read_gaps_csv(__file__, unit="min"), r"unit='min' is not one of"),
]


@pytest.mark.parametrize(("make", "message"), BAD_INPUTS, ids=[m for _, m in BAD_INPUTS])
def test_bad_inputs_name_the_field_and_value(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def at_line(path: Path, line: int) -> str:
    return re.escape(f"{path}:{line}: ")


def test_timestamp_and_gap_readers(tmp_path):
    ts = write(tmp_path, "ts.csv", "time_ms\n# comment\n0\n1.5\n\n2.5 # inline\n")
    np.testing.assert_array_equal(workload.read_timestamps_csv(ts, unit="ms"), [0, 1.5e-3, 2.5e-3])
    gaps = write(tmp_path, "gaps.txt", "1000\n2000\n")
    np.testing.assert_allclose(workload.read_gaps_csv(str(gaps), unit="us"), [1e-3, 2e-3])


@pytest.mark.parametrize(
    ("reader", "text", "line", "message"),
    [
        ("read_timestamps_csv", "t\n0\n1\noops\n", 4, "timestamp 'oops' is not a number"),
        ("read_timestamps_csv", "0\n3\n2\n", 3, "timestamp 2 is before the previous one, 3"),
        ("read_gaps_csv", "0.1\n# c\n-0.5\n", 3, "gap -0.5 must be non-negative"),
        ("read_gaps_csv", "0.1\n0.2,0.3\n", 2, "expected one gap per line, got 2 fields"),
        ("read_rate_trace", "0 10\n10 20\n25 30\n", 3, "t=25 breaks the equal spacing of 10 s"),
        ("read_rate_trace", "0 10\n10 -20\n", 2, "rate -20 must be non-negative"),
        (
            "read_azure_functions_counts",
            "HashOwner,HashApp,HashFunction,Trigger,1,2\no,a,f,http,1,2\no,a,g,http,1,2.5\n",
            3,
            "minute 2: count '2.5' is not a non-negative integer",
        ),
        (
            "read_azure_functions_counts",
            "HashOwner,HashApp,HashFunction,Trigger,1,2\no,a,f,http,1\n",
            2,
            "expected 6 columns like the header, got 5",
        ),
    ],
)
def test_reader_errors_name_the_file_and_line(tmp_path, reader, text, line, message):
    path = write(tmp_path, "bad.txt", text)
    with pytest.raises(ValueError, match=at_line(path, line) + re.escape(message)):
        getattr(workload, reader)(path)


def test_missing_file_is_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError, match="missing.txt"):
        workload.read_rate_trace(tmp_path / "missing.txt")


def test_azure_counts_select_a_function(tmp_path):
    path = write(
        tmp_path,
        "d01.csv",
        "HashOwner,HashApp,HashFunction,Trigger,1,2,3\n"
        "o1,a1,f1,http,60,0,120\n"
        "o1,a1,f2,timer,6,6,6\n",
    )
    total = workload.read_azure_functions_counts(path)
    assert total.interval_s == 60
    np.testing.assert_allclose(total.rates, [66 / 60, 6 / 60, 126 / 60])
    np.testing.assert_array_equal(
        workload.read_azure_functions_counts(path, function="f1").rates, [1, 0, 2]
    )
    with pytest.raises(KeyError, match="function='nope' is not in"):
        workload.read_azure_functions_counts(path, function="nope")


# --- Fidelity against ../shared/data ---


def test_twitter_trace_loads_as_27_intervals_10_s_apart():
    trace = workload.read_rate_trace(shared_file(TWITTER))
    assert trace.interval_s == 10
    assert len(trace.rates) == 27
    assert (trace.rates.min(), trace.rates.max()) == (1617, 3905)
    assert (trace.rates[0], trace.rates[-1]) == (1850, 3295)
    assert trace.duration_s == 270 and not trace.repeat


def test_twitter_trace_generates_counts_close_to_the_rates():
    trace = workload.read_rate_trace(shared_file(TWITTER))
    times = trace.generate(seed=2024, count=10**7)  # the trace ends after 270 s
    counts = np.bincount((times // 10).astype(int), minlength=27)
    expected = trace.rates * 10
    assert len(counts) == 27
    # Poisson counts: within 5 standard deviations (about 3%) of rate * 10 s in every interval.
    assert np.all(np.abs(counts - expected) <= 5 * np.sqrt(expected))


def test_twitter_trace_scaled_to_five_minutes():
    trace = workload.read_rate_trace(shared_file(TWITTER), time_scale=300 / 270)
    assert trace.duration_s == pytest.approx(300, abs=1e-6)
    n = len(trace.generate(seed=1, count=10**7))
    assert n == pytest.approx(trace.mean_rate * 300, rel=0.01)  # about 800k arrivals


def test_rrl_gaps_load_and_replay():
    gaps = workload.read_gaps_csv(shared_file(RRL_GAPS), unit="s")
    assert gaps.shape == (100,)
    assert gaps.mean() * 1e3 == pytest.approx(7.08, abs=0.01)  # README: mean 7.08 ms
    assert gaps.min() * 1e3 == pytest.approx(0.015, abs=0.001)
    assert gaps.max() * 1e3 == pytest.approx(34.3, abs=0.1)
    # Only the .txt is used: the .npy beside it holds other values (multiples of ~0.2 s, mean
    # 0.098 s), although the README says it is the same trace.
    replay = Replay.from_gaps(gaps_s=gaps, repeat=True)  # the artifact replays it cyclically
    times = replay.generate_ns(seed=0, count=250)
    np.testing.assert_allclose(times[:100] / 1e9, np.cumsum(gaps), rtol=0, atol=1e-9)
    period = times[99]
    np.testing.assert_array_equal(times[100:200], times[:100] + period)
    assert replay.mean_rate == pytest.approx(1 / gaps.mean())
