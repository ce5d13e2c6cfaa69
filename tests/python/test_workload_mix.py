"""Applications and multi-application workloads through Python (servelab.workload)."""

import math

import numpy as np
import pytest

from servelab import workload
from servelab.workload import (
    Application,
    Poisson,
    Replay,
    UniformSize,
    Workload,
    kairos_sizes,
    zipf_shares,
)

COLUMNS = {
    "id": np.int64,
    "app": np.int32,
    "size": np.int32,
    "arrival_s": np.float64,
    "deadline_s": np.float64,
    "accuracy_floor": np.float32,
}


def two_apps() -> list[Application]:
    return [
        Application("rm2", slo_s=0.35, sizes="kairos_mix"),
        Application("ncf", slo_s=0.1, share=0.5, sizes=UniformSize(1, 64), accuracy_floor=0.7),
    ]


def test_generate_returns_numpy_columns_without_copies():
    queries = Workload(Poisson(1000), two_apps(), count=20000).generate(seed=1)
    assert set(queries) == set(COLUMNS)
    for name, dtype in COLUMNS.items():
        column = queries[name]
        assert column.dtype == dtype and column.shape == (20000,), name
        assert not column.flags.owndata and column.base is not None, name
    np.testing.assert_array_equal(queries["id"], np.arange(20000))
    assert np.all(np.diff(queries["arrival_s"]) >= 0)
    slo = np.where(queries["app"] == 0, 0.35, 0.1)
    np.testing.assert_allclose(queries["deadline_s"] - queries["arrival_s"], slo, atol=1e-9)
    rm2 = queries["app"] == 0
    assert np.all(queries["size"][rm2] % 10 == 0)
    assert queries["size"][~rm2].max() <= 64
    np.testing.assert_array_equal(
        queries["accuracy_floor"], np.where(rm2, 0, 0.7).astype(np.float32)
    )
    assert np.mean(~rm2) == pytest.approx(1 / 3, abs=0.014)


def test_same_seed_same_queries_and_the_stream_matches_the_bulk():
    w = Workload("gamma(rate=500, cv=2)", two_apps(), count=2000)
    a, b = w.generate(seed=7), w.generate(seed=7)
    for name in COLUMNS:
        np.testing.assert_array_equal(a[name], b[name])
    assert not np.array_equal(a["size"], w.generate(seed=8)["size"])
    stream = list(w.start(seed=7))
    assert len(stream) == 2000
    assert [q.size for q in stream] == a["size"].tolist()
    assert [q.app for q in stream] == a["app"].tolist()
    assert [q.arrival_s for q in stream] == a["arrival_s"].tolist()


def test_stop_conditions_count_horizon_and_trace_end():
    apps = [Application("a", slo_s=0.01)]
    assert len(Workload(Poisson(100), apps, count=7).generate(seed=1)["id"]) == 7
    replay = Replay([0.5, 1.0, 1.0, 2.0])
    # The horizon is exclusive: the arrivals at exactly 1 s are not included.
    assert len(Workload(replay, apps, horizon_s=1.0).generate(seed=1)["id"]) == 1
    assert len(Workload(replay, apps, horizon_s=1.5).generate(seed=1)["id"]) == 3
    assert len(Workload(replay, apps, count=100).generate(seed=1)["id"]) == 4
    horizon = Workload(Poisson(1000), apps, horizon_s=2.0).generate(seed=2)
    assert horizon["arrival_s"].max() < 2.0
    assert len(horizon["id"]) == pytest.approx(2000, abs=200)


def test_sizes_default_to_one_and_accept_specs_or_objects():
    w = Workload(Poisson(100), [Application("a", slo_s=1)], count=100)
    assert np.all(w.generate(seed=1)["size"] == 1)
    app = Application("b", slo_s=1, sizes="uniform(low=2, high=4)")
    assert app.sizes.describe() == "uniform(low=2, high=4)"
    assert (
        Application("c", slo_s=1, sizes=kairos_sizes()).sizes.describe()
        == "kairos_mix(round_to=10)"
    )
    assert Application("d", slo_s=1).sizes is None


def test_zipf_shares_and_their_app_mix():
    shares = zipf_shares(5, exponent=1.0)
    harmonic = sum(1 / k for k in range(1, 6))
    np.testing.assert_allclose(shares, [1 / k / harmonic for k in range(1, 6)])
    np.testing.assert_allclose(zipf_shares(3, 0.0), [1 / 3] * 3)
    apps = [Application(f"app{i}", slo_s=0.1, share=s) for i, s in enumerate(shares)]
    w = Workload(Poisson(1000), apps, count=100_000)
    np.testing.assert_allclose(w.shares, shares)
    counts = np.bincount(w.generate(seed=8)["app"], minlength=5) / 100_000
    np.testing.assert_allclose(counts, shares, atol=0.007)  # se <= 0.0016


def test_properties_and_describe():
    w = Workload(Poisson(100), two_apps(), count=10, horizon_s=2)
    assert w.app_names == ["rm2", "ncf"]
    assert w.count == 10 and w.horizon_s == 2.0
    assert w.arrivals.describe() == "poisson(rate=100)"
    assert [a.name for a in w.apps] == ["rm2", "ncf"]
    assert w.apps[1].slo_s == 0.1 and w.apps[1].share == 0.5 and w.apps[1].accuracy_floor == 0.7
    assert w.describe() == repr(w)
    assert "app(name='ncf', share=0.5, slo_s=0.1, sizes=uniform(low=1, high=64)" in w.describe()
    assert repr(w.apps[0]).startswith("Application(name='rm2', slo_s=0.35")
    assert Workload(Poisson(100), two_apps(), horizon_s=1).count is None


def test_one_million_queries_generate_quickly_enough_to_be_useful():
    # Not a timing assertion: a smoke check that the bulk path handles a benchmark-sized run.
    w = Workload(
        Poisson(1e5),
        [Application("a", 0.35, sizes="lognormal(mu=5.1, sigma=0.2)")],
        count=1_000_000,
    )
    queries = w.generate(seed=1)
    assert len(queries["size"]) == 1_000_000
    assert queries["size"].mean() == pytest.approx(math.exp(5.1 + 0.02), rel=0.002)


BAD = [
    (lambda: Application("a", slo_s=-0.1), "slo_s=-0.1"),
    (lambda: Application("a", slo_s=0), "slo_s=0.0"),
    (lambda: Application("a", slo_s=math.nan), "slo_s=nan"),
    (lambda: Application("a", slo_s=1, share=0), "share=0"),
    (lambda: Application("a", slo_s=1, share=-2), "share=-2"),
    (lambda: Application("a", slo_s=1, share=math.inf), "share=inf"),
    (lambda: Application("a", slo_s=1, accuracy_floor=1.5), "accuracy_floor=1.5"),
    (lambda: Application("a", slo_s=1, accuracy_floor=-0.1), "accuracy_floor=-0.1"),
    (lambda: Application("", slo_s=1), "name=''"),
    (lambda: Application("a", slo_s=1, sizes=5), "sizes=5"),
    (lambda: Application("a", slo_s=1, sizes="lognormal(mu=1, sigma=-1)"), "sigma=-1"),
    (lambda: Workload(Poisson(10), [], count=5), "apps is empty"),
    (
        lambda: Workload(Poisson(10), [Application("a", 1), Application("a", 2)], count=5),
        r"apps\[1\].*name='a'",
    ),
    (lambda: Workload(Poisson(10), [Application("a", 1)]), "count=None and horizon_s=None"),
    (lambda: Workload(Poisson(10), [Application("a", 1)], count=-1), "count=-1"),
    (lambda: Workload(Poisson(10), [Application("a", 1)], horizon_s=-1.0), "horizon_s=-1"),
    (lambda: Workload(42, [Application("a", 1)], count=5), "arrivals=42"),
    (lambda: Workload(Poisson(10), [Application("a", 1)], count=5).generate(seed=-3), "seed=-3"),
    (lambda: zipf_shares(0), "n=0"),
    (lambda: zipf_shares(3, exponent=-1), "exponent=-1"),
]


@pytest.mark.parametrize(("make", "message"), BAD, ids=[b[1] for b in BAD])
def test_bad_input_names_the_field_and_the_value(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_unknown_arrival_spec_is_a_key_error():
    with pytest.raises(KeyError, match="unknown arrival process 'bursty'"):
        Workload("bursty(rate=1)", [Application("a", 1)], count=5)


def test_workload_names_are_exported():
    for name in ("Application", "Workload", "zipf_shares", "kairos_sizes", "SizeMixture"):
        assert name in workload.__all__
