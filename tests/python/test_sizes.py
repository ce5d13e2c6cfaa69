"""Request-size distributions through Python (servelab.workload).

Statistical checks use fixed seeds (deterministic); each tolerance is at least 4 standard errors.
Fidelity tests read ../shared/data and skip, saying so, when it is absent.
"""

import json
import math
from pathlib import Path

import numpy as np
import pytest

from servelab import workload
from servelab.workload import (
    ClippedGaussianSize,
    ConstantSize,
    EmpiricalSize,
    FallbackSize,
    LognormalSize,
    SizeDistribution,
    SizeMixture,
    UniformSize,
    kairos_sizes,
    make_size_distribution,
    ribbon_sizes,
)

DATA = Path(__file__).parents[3] / "shared" / "data"
KAIROS_PROFILE = DATA / "kairos" / "allocator_profile.json"

DISTRIBUTIONS = [
    ConstantSize(5),
    UniformSize(1, 64),
    LognormalSize(mu=5.1, sigma=0.2),
    ClippedGaussianSize(mean=100, std=30),
    EmpiricalSize([3, 7, 7, 40]),
    EmpiricalSize([10, 20, 30], weights=[1, 2, 1], round_to=10),
    SizeMixture(["uniform(low=1, high=9)", LognormalSize(4, 0.5)], [1, 3]),
    FallbackSize("lognormal(mu=5.1, sigma=0.2)", 100, 200, UniformSize(190, 199)),
    kairos_sizes(),
    ribbon_sizes(),
]


def shared_file(path: Path) -> Path:
    if not path.is_file():
        pytest.skip(f"shared data file {path} is absent (fidelity tests need ../shared/data)")
    return path


@pytest.mark.parametrize("dist", DISTRIBUTIONS, ids=repr)
def test_generate_is_deterministic_int32_and_at_least_round_to(dist):
    sizes = dist.generate(seed=3, count=20000)
    assert isinstance(dist, SizeDistribution)
    assert sizes.dtype == np.int32 and sizes.shape == (20000,)
    np.testing.assert_array_equal(sizes, dist.generate(seed=3, count=20000))
    assert sizes.min() >= max(1, dist.round_to)
    assert np.all(sizes % dist.round_to == 0)
    # The exact mean agrees with the sample mean (4 standard errors, plus 0.1% quadrature).
    se = sizes.std() / math.sqrt(sizes.size)
    assert abs(sizes.mean() - dist.mean) <= 4 * se + 1e-3 * dist.mean + 1e-9


@pytest.mark.parametrize("dist", DISTRIBUTIONS, ids=repr)
def test_describe_is_a_registry_spec_that_rebuilds_the_same_distribution(dist):
    again = make_size_distribution(dist.describe())
    assert again.describe() == dist.describe() == repr(dist)
    np.testing.assert_array_equal(
        again.generate(seed=5, count=500), dist.generate(seed=5, count=500)
    )


def test_bulk_sizes_are_handed_over_without_a_copy():
    sizes = UniformSize(1, 10).generate(seed=1, count=100)
    assert not sizes.flags.owndata and sizes.base is not None
    assert UniformSize(1, 10).generate(seed=1, count=0).shape == (0,)


def test_numpy_integer_seeds_work_like_python_ints():
    d = LognormalSize(5.1, 0.2)
    np.testing.assert_array_equal(
        d.generate(seed=np.uint64(9), count=10), d.generate(seed=9, count=10)
    )


def test_different_seeds_give_different_sizes():
    d = LognormalSize(5.1, 0.2)
    assert not np.array_equal(d.generate(seed=1, count=100), d.generate(seed=2, count=100))


def test_lognormal_uses_the_underlying_normal_like_numpy():
    sizes = LognormalSize(mu=8.0, sigma=0.5).generate(seed=4, count=100_000)
    logs = np.log(sizes)
    assert logs.mean() == pytest.approx(8.0, abs=0.007)  # se 0.0016
    assert logs.std() == pytest.approx(0.5, abs=0.005)
    reference = np.random.default_rng(0).lognormal(8.0, 0.5, 100_000)
    assert sizes.mean() == pytest.approx(reference.mean(), rel=0.015)


def test_uniform_includes_both_ends():
    sizes = UniformSize(3, 8).generate(seed=2, count=30000)
    assert sizes.min() == 3 and sizes.max() == 8
    assert UniformSize(3, 8).mean == 5.5


def test_clipped_gaussian_stays_in_bounds():
    d = ClippedGaussianSize(mean=10, std=5, low=2, high=15)
    sizes = d.generate(seed=1, count=50000)
    assert sizes.min() == 2 and sizes.max() == 15
    assert np.mean(sizes == 2) == pytest.approx(0.0668, abs=0.005)  # Phi(-1.5): X < 2.5
    assert d.gaussian_mean == 10 and d.std == 5 and d.high == 15


def test_empirical_histogram_follows_weights_and_skips_zero_weights():
    d = EmpiricalSize([10, 20, 30], weights=[1, 0, 3])
    sizes = d.generate(seed=5, count=40000)
    assert not np.any(sizes == 20)
    assert np.mean(sizes == 30) == pytest.approx(0.75, abs=0.01)
    assert d.mean == 25
    np.testing.assert_array_equal(d.weights, [1, 0, 3])
    assert EmpiricalSize([1, 2]).weights is None


def test_rounding_half_up_for_round_to_one_and_ceiling_for_multiples():
    assert EmpiricalSize([2.5]).generate(seed=0, count=1)[0] == 3
    assert EmpiricalSize([2.49]).generate(seed=0, count=1)[0] == 2
    assert EmpiricalSize([0.2]).generate(seed=0, count=1)[0] == 1
    assert EmpiricalSize([100.0], round_to=10).generate(seed=0, count=1)[0] == 100
    assert EmpiricalSize([100.3], round_to=10).generate(seed=0, count=1)[0] == 110
    assert ConstantSize(7, round_to=5).mean == 10
    # A mixture rounds its components' raw draws (Kairos: math.ceil(sample / 10) * 10).
    assert (
        SizeMixture([EmpiricalSize([100.3])], [1], round_to=10).generate(seed=0, count=1)[0] == 110
    )


def test_mixture_accepts_spec_strings_and_objects():
    mix = SizeMixture(["constant(value=1)", UniformSize(50, 60)], [1, 3])
    sizes = mix.generate(seed=6, count=40000)
    assert np.mean(sizes == 1) == pytest.approx(0.25, abs=0.01)
    assert [c.describe() for c in mix.components] == [
        "constant(value=1)",
        "uniform(low=50, high=60)",
    ]
    assert mix.weights == [1, 3]


def test_kairos_mix_fractions_match_the_artifact():
    raw = kairos_sizes(round_to=1).generate(seed=12, count=200_000)  # se <= 0.0011
    assert np.mean(raw <= 99) == pytest.approx(8 / 99, abs=0.005)
    assert np.mean((raw >= 100) & (raw <= 199)) == pytest.approx(64 / 99, abs=0.006)
    assert np.mean((raw >= 200) & (raw <= 599)) == pytest.approx(22 / 99, abs=0.006)
    assert np.mean((raw >= 600) & (raw <= 999)) == pytest.approx(5 / 99, abs=0.004)
    tens = kairos_sizes().generate(seed=12, count=200_000)
    assert np.all(tens % 10 == 0) and tens.min() >= 10 and tens.max() <= 1000
    assert kairos_sizes().describe() == "kairos_mix(round_to=10)"
    assert make_size_distribution("kairos_mix").describe() == "kairos_mix(round_to=10)"


def test_ribbon_mix_fractions_match_the_artifact():
    sizes = ribbon_sizes().generate(seed=13, count=200_000)
    assert sizes.max() <= 500 and sizes.min() >= 1
    # 2/99 from U{1..99}, plus the lognormal's lower tail below 99.5 (Phi(-2.49) * 87/99).
    low_tail = 0.5 * math.erfc(-((math.log(99.5) - 5.1) / 0.2) / math.sqrt(2))
    assert np.mean(sizes <= 99) == pytest.approx(2 / 99 + 87 / 99 * low_tail, abs=0.003)
    assert ribbon_sizes().mean == pytest.approx(sizes.mean(), abs=0.8)


def test_kairos_mix_reproduces_the_artifacts_small_ratio():
    """allocator_profile.json's small_ratio is the size CDF at vio_batch (see kairos/README.md)."""
    profile = json.loads(shared_file(KAIROS_PROFILE).read_text())
    sizes = kairos_sizes().generate(seed=2023, count=400_000)  # se <= 0.0008
    checked = 0
    for model, per_instance in profile.items():
        for instance, entry in per_instance.items():
            if "vio_batch" not in entry:
                continue
            cdf = float(np.mean(sizes <= entry["vio_batch"]))
            assert cdf == pytest.approx(entry["small_ratio"], abs=0.005), (model, instance)
            checked += 1
    assert checked == 15


def test_registry_lists_every_distribution_with_typed_parameters():
    entries = {e["name"]: e for e in workload.list_size_distributions()}
    assert set(entries) >= {
        "constant",
        "uniform",
        "lognormal",
        "clipped_gaussian",
        "empirical",
        "mixture",
        "fallback",
        "kairos_mix",
        "ribbon_mix",
    }
    params = {p["name"]: p for p in entries["lognormal"]["params"]}
    assert params["sigma"]["required"] and params["sigma"]["min_exclusive"]
    assert params["round_to"]["default"] == 1 and params["round_to"]["type"] == "int"
    kairos_round_to = entries["kairos_mix"]["params"][0]
    assert kairos_round_to["default"] == 10
    made = make_size_distribution("lognormal", mu=5.1, sigma=0.2)
    assert made.describe() == "lognormal(mu=5.1, sigma=0.2)"


def test_nested_specs_build_mixtures_and_fallbacks():
    d = make_size_distribution(
        "mixture(components='uniform(low=1, high=9); "
        'fallback(base="lognormal(mu=5.1, sigma=0.2)", low=100, high=200, '
        'fallback="uniform(low=190, high=199)")\', weights=[8, 91], round_to=10)'
    )
    sizes = d.generate(seed=1, count=10000)
    assert np.all(sizes % 10 == 0) and sizes.max() <= 200


BAD = [
    (lambda: ConstantSize(0), ValueError, "value=0"),
    (lambda: ConstantSize(5, round_to=0), ValueError, "round_to=0"),
    (lambda: ConstantSize(5, round_to=-10), ValueError, "round_to=-10"),
    (lambda: UniformSize(0, 5), ValueError, "low=0"),
    (lambda: UniformSize(9, 5), ValueError, "low=9 is above high=5"),
    (lambda: LognormalSize(1, -1), ValueError, "sigma=-1"),
    (lambda: LognormalSize(1, math.nan), ValueError, "sigma=nan"),
    (lambda: LognormalSize(math.inf, 1), ValueError, "mu=inf"),
    (lambda: ClippedGaussianSize(10, 0), ValueError, "std=0"),
    (lambda: ClippedGaussianSize(math.nan, 1), ValueError, "mean=nan"),
    (lambda: ClippedGaussianSize(10, 1, low=20, high=5), ValueError, "low=20 is above high=5"),
    (lambda: EmpiricalSize([]), ValueError, "values is empty"),
    (lambda: EmpiricalSize([1, -2]), ValueError, r"values\[1\]=-2"),
    (lambda: EmpiricalSize([1, math.nan]), ValueError, r"values\[1\]=nan"),
    (lambda: EmpiricalSize([1, 2], weights=[1, -0.5]), ValueError, r"weights\[1\]=-0.5"),
    (lambda: EmpiricalSize([1, 2], weights=[0, 0]), ValueError, r"weights=\[0, 0\] are all zero"),
    (
        lambda: EmpiricalSize([1, 2], weights=[1]),
        ValueError,
        "weights has 1 elements but values has 2",
    ),
    (lambda: SizeMixture([], []), ValueError, "components is empty"),
    (lambda: SizeMixture([ConstantSize(1)], [0]), ValueError, r"weights=\[0\]"),
    (lambda: SizeMixture([ConstantSize(1), None], [1, 1]), ValueError, r"components\[1\]=None"),
    (lambda: SizeMixture([ConstantSize(1), 3.5], [1, 1]), ValueError, r"components\[1\]=3.5"),
    (lambda: SizeMixture(["lognormal(mu=1, sigma=0)"], [1]), ValueError, "sigma=0"),
    (lambda: FallbackSize(ConstantSize(1), 5, 1, ConstantSize(2)), ValueError, "low=5"),
    (lambda: FallbackSize(None, 1, 5, ConstantSize(2)), ValueError, "base=None"),
    (lambda: kairos_sizes(round_to=0), ValueError, "round_to=0"),
    (lambda: make_size_distribution("zipf(a=1)"), KeyError, "unknown size distribution 'zipf'"),
    (lambda: make_size_distribution("uniform(low=1, hi=3)"), KeyError, "'hi'"),
    (lambda: make_size_distribution("uniform(low=1.5, high=3)"), ValueError, "low=1.5"),
    (lambda: make_size_distribution("ribbon_mix(round_to=0)"), ValueError, "round_to=0"),
    (
        lambda: make_size_distribution(
            "mixture(components='constant(value=1); nope', weights=[1, 1])"
        ),
        KeyError,
        r"components\[1\]='nope'",
    ),
    (lambda: UniformSize(1, 5).generate(seed=1, count=-1), ValueError, "count=-1"),
    (lambda: UniformSize(1, 5).generate(seed=-1, count=1), ValueError, "seed=-1"),
]


@pytest.mark.parametrize(("make", "error", "message"), BAD, ids=[b[2] for b in BAD])
def test_bad_input_names_the_field_and_the_value(make, error, message):
    with pytest.raises(error, match=message):
        make()
