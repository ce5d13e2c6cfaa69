"""Kairos's distributor across the configuration space (issue 18): every model, configurations
sampled from the $2.5/h space, Kairos (paper variant, online predictor) against CLKWRK and ORCL.

Before the fix, configurations with t3.xlarge (whose p99 is 1.3-2.6x its mean) collapsed: Kairos's
heterogeneity coefficient makes the slow instance the cheapest column for every small query whose
*mean* latency fits QoS, and its tail alone then broke the p99 target at any rate (ncf, 1 g4dn +
4 r5n + 2 t3: 0 q/s against CLKWRK's 1672). The distributor now checks QoS on a learned tail
(docs/kairos.md, "Where the paper is silent").

Reduced size: 2,000 queries per run, one seed, a 2% rate search, a deterministic sample of
configurations per model (artifact data, ../shared/data/kairos; skipped when absent). Run with -s
to see the table and the distribution of ratios.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from servelab import kairos

from .shared_data import shared_path

MODELS = ("ncf", "rm2", "wnd", "mtwnd", "dien")
TYPES = ("g4dn.xlarge", "c5n.2xlarge", "r5n.large", "t3.xlarge")
PER_MODEL = 40
SEED = 18
RUN = {"queries": 2000, "seeds": (0,), "rel_tol": 0.02}
# A configuration below FLOOR is measured again on this larger run before it counts: at 2,000
# queries the p99 allows 20 late queries, and at thousands of q/s that alone moves a rate by 10%
# (ncf, 3 g4dn + 2 c5n: 0.89x CLKWRK at 2,000 queries, 0.96x at 4,000 x 2 seeds; the mean-only
# check, tail=0, measures the same).
RECHECK = {"queries": 4000, "seeds": (0, 1), "rel_tol": 0.02}
FLOOR = 0.9  # kairos / clockwork, per configuration


def explained(row: pd.Series) -> str | None:
    """Why a configuration may fall below FLOOR x CLKWRK, or None when it may not.

    A single GPU (or few) beside many t3.xlarge: the large queries fit QoS only on the GPU, and
    t3's tail fits only the smallest queries, so the t3 instances serve as overflow on their mean
    ('risky' pairs). CLKWRK queues queries per instance and sends overflow to t3 as soon as its
    mean fits; Kairos starts a risky pair only when the matching has no fitting instance for the
    query, which leaves some of the t3 capacity unused. Such configurations are far from the top
    of the space (none is ORCL's or the bound's best), and Kairos still beats ORCL there. Floor:
    0.8 x CLKWRK.
    """
    cfg = row["config"]
    t3, gpu = cfg.get("t3.xlarge", 0), cfg.get("g4dn.xlarge", 0)
    fast_cpu = cfg.get("r5n.large", 0) + cfg.get("c5n.2xlarge", 0)
    if t3 >= 2 * gpu and t3 > fast_cpu and row["kairos"] >= 0.8 * row["clockwork"]:
        return "few GPUs, many t3.xlarge: t3 used as overflow only"
    return None


def sample_configs(folder, model: str) -> list[dict[str, int]]:
    frame = kairos.upper_bounds(folder, model)
    rng = np.random.default_rng([SEED, MODELS.index(model)])
    picks = rng.choice(len(frame), size=min(PER_MODEL, len(frame)), replace=False)
    return [
        {t: int(frame.iloc[i][t]) for t in TYPES if int(frame.iloc[i][t]) > 0}
        for i in sorted(picks)
    ]


@pytest.fixture(scope="module")
def folder():
    return shared_path("kairos")


@pytest.fixture(scope="module")
def sweep(folder):
    rows = []
    for model in MODELS:
        for cfg in sample_configs(folder, model):
            rates = {
                name: kairos.evaluate_config(folder, cfg, spec, model=model, **RUN).rate
                for name, spec in (
                    ("kairos", "kairos"),
                    ("clockwork", "clockwork"),
                    ("oracle", "oracle"),
                )
            }
            rows.append({"model": model, "config": cfg, **rates})
    frame = pd.DataFrame(rows)
    frame["k_over_clk"] = frame["kairos"] / frame["clockwork"]
    frame["k_over_orcl"] = frame["kairos"] / frame["oracle"]
    with pd.option_context("display.width", 200, "display.max_colwidth", 80):
        print("\n", frame.round(2).to_string())
        print("kairos / clockwork:\n", frame["k_over_clk"].describe().round(3).to_string())
        print("kairos / oracle:\n", frame["k_over_orcl"].describe().round(3).to_string())
        print(frame.groupby("model")[["k_over_clk", "k_over_orcl"]].mean().round(3).to_string())
    return frame


def test_no_configuration_collapses(sweep):
    assert (sweep["kairos"] > 0).all(), sweep[sweep["kairos"] <= 0].to_string()


def test_kairos_within_floor_of_clockwork_everywhere_or_explained(sweep, folder):
    low = sweep[sweep["k_over_clk"] < FLOOR]
    unexplained = []
    for _, r in low.iterrows():
        reason = explained(r)
        if reason is None:
            k, c = (
                kairos.evaluate_config(folder, r.config, spec, model=r.model, **RECHECK).rate
                for spec in ("kairos", "clockwork")
            )
            reason = f"at {RECHECK['queries']} queries x 2 seeds {k:.0f} vs {c:.0f}"
            if k < FLOOR * c:
                unexplained.append(f"{r.model} {r.config}: {reason}")
        print(f"below {FLOOR}x: {r.model} {r.config} {r.kairos:.0f} vs {r.clockwork:.0f}: {reason}")
    assert not unexplained, unexplained


def test_kairos_ahead_of_clockwork_on_average(sweep):
    assert sweep["k_over_clk"].mean() > 1.0
    for model, ratios in sweep.groupby("model")["k_over_clk"]:
        assert ratios.mean() > 0.95, (model, ratios.round(2).tolist())


@pytest.mark.parametrize(
    ("model", "config", "extra"),
    [
        ("ncf", {"g4dn.xlarge": 1, "r5n.large": 4}, {"t3.xlarge": 2}),
        ("dien", {"g4dn.xlarge": 2, "r5n.large": 8}, {"t3.xlarge": 1}),
        ("mtwnd", {"g4dn.xlarge": 2, "c5n.2xlarge": 1}, {"t3.xlarge": 2}),
        ("wnd", {"g4dn.xlarge": 1, "r5n.large": 3}, {"c5n.2xlarge": 1}),
    ],
)
def test_adding_an_instance_does_not_make_it_worse(folder, model, config, extra):
    base = kairos.evaluate_config(folder, config, "kairos", model=model, **RUN).rate
    more = kairos.evaluate_config(folder, {**config, **extra}, "kairos", model=model, **RUN).rate
    assert more >= 0.95 * base, (model, config, extra, base, more)
