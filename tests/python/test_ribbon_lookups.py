"""Fidelity against Ribbon (SC'21)'s artifact: its exhaustive lookup tables and recorded BO runs.

../shared/data/ribbon/query/lookups/<model>.json maps every instance mix "n1, n2, n3" of a model's
three instance types to [price $/h, % of queries meeting QoS]; it is the black box Ribbon's BO
queried. history_4289c4b/BO/result/<model>_simbo.json records, for 100 BO trials, the iteration at
which each target price was first reached (Ribbon counts its two random initial points as
iteration 0, so iteration k = k + 2 evaluations).

Pruning follows Ribbon's BO: a config meeting QoS prunes every more expensive one; a violating one
prunes the configs it dominates that have fewer base-type instances (strict_dimensions=[0]). The
tables are not monotone in the auxiliary types (Ribbon's distributor prefers the base type, and
more slow instances can lower QoS), so plain dominance would prune the optimum of resnet, dien and
vgg; test_base_type_pruning_never_prunes_the_optimum checks both facts on the data.
"""

import csv
import functools
import json
import statistics

import pytest

from servelab.solvers.search import SearchSpace, minimize_cost

from .shared_data import shared_path

MODELS = ["resnet", "mtwnd", "dien", "candle", "vgg"]
# The data README: cheapest config meeting 99% QoS, its saving vs the best homogeneous pool (%).
README = {
    "resnet": ((4, 0, 5), 16.2),
    "mtwnd": ((4, 0, 1), 14.4),
    "dien": ((5, 1, 0), 11.9),
    "candle": ((6, 0, 2), 11.5),
    "vgg": ((6, 0, 4), 9.3),
}
QOS_TARGET = 99.0
SEEDS = 100  # as many as the artifact's Monte-Carlo trials
RIBBON_ITERATIONS = 200  # a trial that has not reached the price after 200 iterations is null
COMPETITORS = ["random", "hill_climbing", "genetic", "annealing"]


class Lookup:
    """One model's lookup table as a search problem."""

    def __init__(self, model: str) -> None:
        query = shared_path("ribbon", "query")
        config = json.loads((query / "configs" / f"{model}.json").read_text())
        with (query / "price.csv").open(newline="") as f:
            prices = {row["instance"]: float(row["price"]) for row in csv.DictReader(f)}
        self.types = config["ins_types"]
        self.space = SearchSpace(
            config["max_num"],
            unit_cost=[prices[t] for t in self.types],
            names=self.types,
            min_total=1,
        )
        table = json.loads((query / "lookups" / f"{model}.json").read_text())
        self.price = {
            tuple(int(n) for n in key.split(",")): value[0] for key, value in table.items()
        }
        self.qos = {key: value[1] for key, value in zip(self.price, table.values(), strict=True)}
        self.homogeneous_count = json.loads((query / "configs" / "homogeneous.json").read_text())[
            model
        ]

    def objective(self, config: tuple[int, ...]) -> float:
        return self.qos[config]

    def optimum(self):
        return minimize_cost(self.space, self.objective, QOS_TARGET, method="exhaustive")

    def best_homogeneous(self) -> tuple[tuple[int, ...], float]:
        """The cheapest single-type pool meeting QoS."""
        pools = []
        for d, upper in enumerate(self.space.upper):
            for n in range(1, upper + 1):
                config = tuple(n if k == d else 0 for k in range(3))
                if self.qos[config] >= QOS_TARGET:
                    pools.append((self.space.cost(config), config))
                    break
        cost, config = min(pools)
        return config, cost


@functools.cache
def lookup(model: str) -> Lookup:
    return Lookup(model)


def artifact_bo(model: str) -> tuple[float, list[int | None]]:
    """The artifact's target price for the largest saving and its 100 BO trials.

    Ribbon's trial reaches a target once it evaluates a config meeting QoS whose lookup price is
    at most the target rounded to cents (its score comparison), so the target can sit slightly
    above the exact optimum (candle: $4.39 vs $4.36).
    """
    path = shared_path("ribbon", "history_4289c4b", "BO", "result", f"{model}_simbo.json")
    runs = json.loads(path.read_text())
    key = min(runs, key=float)
    return round(float(key), 2), runs[key]


def search_trial(
    model: str, method: str, seed: int, target_price: float, max_evaluations: int | None
):
    """Evaluations until a config at the artifact's target price, and until the exact optimum.

    0 means never."""
    table = lookup(model)
    optimum = table.optimum().best_cost
    result = minimize_cost(
        table.space,
        table.objective,
        QOS_TARGET,
        method=method,
        seed=seed,
        max_evaluations=max_evaluations,
        stop_at=optimum,
        strict_dimensions=[0],
    )
    to_target = next(
        (
            k + 1
            for k, (config, feasible) in enumerate(
                zip(result.trace_configs, result.trace_feasible, strict=True)
            )
            if feasible and table.price[tuple(int(n) for n in config)] <= target_price + 1e-9
        ),
        0,
    )
    return to_target, result.evaluations_to_reach(optimum)


@pytest.mark.parametrize("model", MODELS)
def test_lookup_prices_are_the_sum_of_instance_prices(model):
    table = lookup(model)
    assert len(table.price) == len(table.space.enumerate())
    for config, price in table.price.items():
        # The artifact rounded its sums of float prices to cents, sometimes the other way at x.xx5.
        assert table.space.cost(config) == pytest.approx(price, abs=0.0051), config


@pytest.mark.parametrize("model", MODELS)
def test_exhaustive_search_reproduces_ribbons_cost_saving(model):
    table = lookup(model)
    optimum = table.optimum()
    homogeneous, homogeneous_cost = table.best_homogeneous()
    saving = 100.0 * (1.0 - optimum.best_cost / homogeneous_cost)
    expected_config, expected_saving = README[model]
    print(
        f"\n{model}: cheapest meeting {QOS_TARGET}% QoS {optimum.best_config} "
        f"${optimum.best_cost:.3f}/h "
        f"({optimum.best_value}%), best homogeneous {homogeneous} ${homogeneous_cost:.3f}/h, "
        f"saving {saving:.1f}% (Ribbon: {expected_saving}%)"
    )
    assert optimum.found and optimum.evaluations == len(table.price)
    assert optimum.best_config == expected_config
    assert homogeneous == (table.homogeneous_count, 0, 0)
    # Tolerance 0.1 percentage point: the README rounds savings computed from cent-rounded prices.
    assert saving == pytest.approx(expected_saving, abs=0.1)


@pytest.mark.parametrize("model", MODELS)
def test_base_type_pruning_never_prunes_the_optimum(model):
    table = lookup(model)
    best = table.optimum().best_config
    violators = [c for c, q in table.qos.items() if q < QOS_TARGET]
    dominating = [c for c in violators if all(a >= b for a, b in zip(c, best, strict=True))]
    assert not [c for c in dominating if c[0] > best[0]], (
        "a violator with more base instances dominates the optimum"
    )
    if model in ("resnet", "dien", "vgg"):
        # Why not plain dominance: violators with as many base instances dominate the optimum.
        assert dominating, model


def test_bo_reaches_the_optimum_like_the_artifact():
    rows = []
    for model in MODELS:
        target_price, recorded = artifact_bo(model)
        reached = [r for r in recorded if r is not None]
        artifact_mean = statistics.mean(reached)
        ours = [
            search_trial(model, "bayesian", seed, target_price, RIBBON_ITERATIONS + 2)
            for seed in range(SEEDS)
        ]
        assert all(t > 0 and e > 0 for t, e in ours), (
            f"{model}: BO missed the optimum within {RIBBON_ITERATIONS} iterations: {ours}"
        )
        # Ribbon's iteration 0 holds its two random initial points.
        our_iterations = statistics.mean(max(t - 2, 0) for t, _ in ours)
        exact = statistics.mean(e for _, e in ours)
        competitors = {
            m: statistics.mean(
                search_trial(model, m, seed, target_price, None)[1] for seed in range(SEEDS)
            )
            for m in COMPETITORS
        }
        rows.append(
            (
                model,
                target_price,
                artifact_mean,
                len(recorded) - len(reached),
                our_iterations,
                exact,
                competitors,
            )
        )
        # Tolerance: our mean within 2x of the artifact's mean number of iterations.
        assert our_iterations <= 2.0 * artifact_mean, (
            f"{model}: {our_iterations:.1f} vs artifact {artifact_mean:.1f}"
        )

    print(
        "\nBO iterations to the artifact's target price (Ribbon: mean of 100 trials, nulls in "
        f"brackets; ours: {SEEDS} seeds),\nthen evaluations to the exact optimum for BO and the "
        "competitors, same pruning"
    )
    print(
        f"{'model':7} {'target':>6} {'Ribbon it.':>13} {'ours it.':>8} {'bayesian':>9} "
        + " ".join(f"{m:>13}" for m in COMPETITORS)
    )
    for model, price, artifact_mean, nulls, ours, exact, competitors in rows:
        ribbon = f"{artifact_mean:.1f}" + (f" ({nulls})" if nulls else "")
        print(
            f"{model:7} {price:6.2f} {ribbon:>13} {ours:8.1f} {exact:9.1f} "
            + " ".join(f"{competitors[m]:13.1f}" for m in COMPETITORS)
        )
    # Over all five models, BO needs fewer evaluations than random search with the same pruning.
    assert sum(r[5] for r in rows) < sum(r[6]["random"] for r in rows)
