"""Fidelity of Kairos's query distribution against the paper (HPDC'23, Sec. 8.1-8.2), on the
artifact's latency data (../shared/data/kairos; skipped when absent).

Fig. 9: Kairos, Ribbon, DRS (threshold tuned by hill climbing) and CLKWRK, each given ORCL's best
configuration of the $2.5/h space. The paper: Kairos about 1.5x Ribbon on every model, up to 44%
over DRS and CLKWRK, both of which beat Ribbon; ORCL above everything.
Fig. 8: Kairos (its one-shot configuration from the upper bounds) against the best homogeneous
pool under the same budget (scaled up to the whole budget). The paper: at least 1.25x on every
model, up to 2x on RM2.

The test runs reduced workloads (size="small": 2,000 queries per run, one seed, a 2% rate search;
ORCL on 2,000 queries). The full-size numbers (20,000 queries, three seeds):
``servelab.kairos.fidelity_report("../shared/data/kairos", size="full")``. Run with -s to see
the tables; they are also in every assertion message.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from servelab import kairos
from servelab.kairos.data import load_profile

from .shared_data import shared_path

MODELS = ("ncf", "rm2", "wnd", "mtwnd", "dien")
SIZE = "small"

# Tolerances, relative. ORDER: small runs rank schemes within about 2% (the search's tolerance)
# plus seed noise, so "A beats B" is asserted as A >= (1 - ORDER) B. ORACLE: ORCL's makespan
# throughput (no query waits, none misses QoS) and the p99 allowable throughput of online
# schemes (1% may miss) are different measures, so Kairos may exceed ORCL by up to this much.
ORDER = 0.03
ORACLE = 0.10
RIBBON_CLAIM, RIBBON_TOL = 1.5, 0.2  # "around 1.5x": asserted as at least 1.5 x (1 - 0.2)
DRS_CLK_CLAIM, DRS_CLK_TOL = (
    1.44,
    0.25,
)  # "up to 44%": the best model's gain at least 1.44 x (1 - 0.25)
HOMOG_CLAIM, HOMOG_TOL = 1.25, 0.15  # "more than 1.25x in all cases": at least 1.25 x (1 - 0.15)
RM2_CLAIM, RM2_TOL = 2.0, 0.2  # "up to 2x (RM2)": RM2's gain within 20% of 2x, the largest of all


@pytest.fixture(scope="module")
def folder():
    return shared_path("kairos")


@pytest.fixture(scope="module")
def fig9(folder):
    return {m: kairos.compare_distributors(folder, m, size=SIZE) for m in MODELS}


@pytest.fixture(scope="module")
def fig8(folder):
    return {m: kairos.compare_with_homogeneous(folder, m, size=SIZE) for m in MODELS}


def _fig9_table(fig9) -> str:
    lines = [
        f"Fig. 9 (size={SIZE}): allowable QPS on ORCL's best configuration; Kairos / scheme in ()",
        f"{'model':6} {'config':38} {'Kairos':>8} "
        + " ".join(f"{s:>15}" for s in ("Ribbon", "DRS", "CLKWRK", "ORCL")),
    ]
    for m, f in fig9.items():
        cells = [f"{f.loc['kairos', 'rate']:8.1f}"]
        for s in ("ribbon", "drs", "clockwork", "oracle"):
            cells.append(f"{f.loc[s, 'rate']:8.1f} ({f.loc[s, 'kairos_over']:4.2f}x)")
        config = ", ".join(f"{n} {t.split('.')[0]}" for t, n in f.attrs["config"].items())
        lines.append(f"{m:6} {config:38} " + " ".join(cells))
    lines.append(
        f"paper: Kairos/Ribbon {kairos.PAPER_CLAIMS['kairos_over_ribbon']}; Kairos over DRS and "
        f"CLKWRK {kairos.PAPER_CLAIMS['kairos_over_drs_clockwork']}; ORCL highest"
    )
    return "\n".join(lines)


def _fig8_table(fig8) -> str:
    lines = [
        f"Fig. 8 (size={SIZE}): Kairos on its own configuration vs the best homogeneous pool",
        f"{'model':6} {'Kairos config':38} {'Kairos':>8} {'homogeneous':>20} {'scaled':>8} "
        f"{'gain':>6}",
    ]
    for m, r in fig8.items():
        config = ", ".join(f"{n} {t.split('.')[0]}" for t, n in r["kairos_config"].items())
        lines.append(
            f"{m:6} {config:38} {r['kairos_rate']:8.1f} {r['homogeneous']:>20} "
            f"{r['homogeneous_scaled_rate']:8.1f} {r['improvement']:5.2f}x"
        )
    lines.append(f"paper: {kairos.PAPER_CLAIMS['kairos_over_homogeneous']}")
    return "\n".join(lines)


def test_kairos_beats_ribbon_drs_and_clockwork_on_the_oracles_best_configuration(fig9):
    table = _fig9_table(fig9)
    print("\n" + table)
    for m, f in fig9.items():
        rate = f["rate"]
        for other in ("ribbon", "drs", "clockwork"):
            assert rate["kairos"] >= (1 - ORDER) * rate[other], (
                f"{m}: Kairos below {other}\n{table}"
            )
        for other in ("drs", "clockwork"):  # "as expected, both DRS and CLKWRK outperform Ribbon"
            assert rate[other] >= (1 - ORDER) * rate["ribbon"], (
                f"{m}: {other} below Ribbon\n{table}"
            )
        assert f.loc["ribbon", "kairos_over"] >= RIBBON_CLAIM * (1 - RIBBON_TOL), f"{m}\n{table}"
        assert rate["kairos"] <= (1 + ORACLE) * rate["oracle"], f"{m}: Kairos above ORCL\n{table}"
    for other in ("drs", "clockwork"):
        best_gain = max(f.loc[other, "kairos_over"] for f in fig9.values())
        assert best_gain >= DRS_CLK_CLAIM * (1 - DRS_CLK_TOL), f"largest gain over {other}\n{table}"


def test_kairos_beats_the_best_homogeneous_pool_most_on_rm2(fig8):
    table = _fig8_table(fig8)
    print("\n" + table)
    for m, r in fig8.items():
        assert r["improvement"] >= HOMOG_CLAIM * (1 - HOMOG_TOL), f"{m}\n{table}"
        assert r["homogeneous"].endswith("g4dn.xlarge"), f"{m}: the GPU is the best pool\n{table}"
    gains = {m: r["improvement"] for m, r in fig8.items()}
    assert abs(gains["rm2"] - RM2_CLAIM) <= RM2_TOL * RM2_CLAIM, table
    assert gains["rm2"] == max(gains.values()), table


def test_the_artifacts_default_rates_meet_qos_on_its_example_configuration(folder):
    # kairos_query_distributor.py runs its example configuration (config.json: 2 g4dn.xlarge +
    # 9 r5n.large, rm2, QoS 350 ms) with mean gaps of 10.5 ms under Kairos and 20 ms under FCFS:
    # rates its authors expected each to sustain. Both must be allowable here, and Kairos's
    # allowable rate over FCFS's near the 20 / 10.5 = 1.9x those defaults imply (within 30%).
    config = {t: n for t, n in json.loads((folder / "config.json").read_text()).items() if n}
    kw = {"model": "rm2", "queries": 2000, "rel_tol": 0.02}
    k = kairos.evaluate_config(folder, config, "kairos(variant='artifact')", **kw).rate
    r = kairos.evaluate_config(folder, config, "ribbon", **kw).rate
    line = (
        f"artifact example {config}: Kairos {k:.1f} QPS (default 95.2), "
        f"FCFS {r:.1f} QPS (default 50.0)"
    )
    print("\n" + line)
    assert k >= 1000 / 10.5 and r >= 1000 / 20, line
    assert abs(k / r - 20 / 10.5) <= 0.3 * (20 / 10.5), line


def test_the_distributors_latency_estimate_is_the_artifacts(folder):
    # evaluate_config() imports the artifact with each list's largest sample dropped, so the
    # decision statistic "mean" is the artifact's estimate, derived/latency_summary.csv
    # distributor_mean_ms (mean of data + logs_load without the largest sample), for every
    # (instance, model, batch).
    summary = pd.read_csv(folder / "derived" / "latency_summary.csv")
    for (hw, model), rows in summary.groupby(["instance", "model"]):
        profile = load_profile(folder, model)
        ours = 1e3 * profile.latency(hw, model, rows["batch"].tolist(), "mean")
        np.testing.assert_allclose(
            ours, rows["distributor_mean_ms"], atol=5e-5, err_msg=f"{hw} {model}"
        )


def test_fig10_kairos_plus_finds_each_schemes_own_optimum_at_an_online_cost(folder):
    # Fig. 10: every scheme explores with Kairos+. Its optimum is the exhaustive one; Ribbon and
    # DRS prune little (their throughputs lie far below the bounds), the paper's 5-30% of the space.
    schemes = {"ribbon": "ribbon", "drs": "drs", "clockwork": "clockwork"}
    table = kairos.exploration_overhead(folder, "ncf", size=SIZE, distributors=schemes)
    print("\n" + table.to_string())
    space = table.attrs["space_points"]
    assert space == len(kairos.upper_bounds(folder, "ncf")) and list(table.index) == list(schemes)
    for scheme, row in table.iterrows():
        again = kairos.evaluate_config(
            folder, row["config"], row["distributor"], model="ncf", queries=2000, rel_tol=0.02
        )
        assert again.rate == pytest.approx(row["rate"]), scheme  # the optimum is a measured value
        assert row["kairos_plus_rate"] <= row["rate"] * (1 + 1e-9), scheme
        if not np.isnan(row["evaluations_to_optimum"]):
            assert row["kairos_plus_rate"] == pytest.approx(row["rate"]), scheme
            assert 1 <= row["evaluations_to_optimum"] <= row["evaluations"], scheme
            assert row["share_to_optimum"] == row["evaluations_to_optimum"] / space
    for scheme in ("ribbon", "drs"):
        assert table.loc[scheme, "evaluations"] >= 0.05 * space, table.to_string()


def test_fig10_uses_known_values_instead_of_simulating(folder):
    frame = kairos.upper_bounds(folder, "rm2")
    types = frame.attrs["types"]
    # A scheme serving 90% of every bound: its optimum is the first bound's configuration, and
    # Kairos+ stops before any configuration whose bound is below 90% of the first.
    known = {
        tuple(int(n) for n in row): 0.9 * b
        for row, b in zip(frame[types].to_numpy(), frame["bound"], strict=True)
    }
    table = kairos.exploration_overhead(
        folder, "rm2", distributors={"tight": "no-such-scheduler"}, known={"tight": known}
    )
    row = table.loc["tight"]
    assert row["evaluations_to_optimum"] == 1
    assert 1 <= row["evaluations"] <= (frame["bound"] > 0.9 * frame["bound"].iloc[0]).sum()
    assert row["rate"] == pytest.approx(0.9 * frame["bound"].iloc[0])
    with pytest.raises(ValueError, match=r"size=\{'queries': 10\}"):
        kairos.exploration_overhead(folder, "rm2", size={"queries": 10})
    with pytest.raises(ValueError, match=r"size\['seeds'\]"):
        kairos.exploration_overhead(
            folder, "rm2", size={"queries": 10, "seeds": (), "rel_tol": 0.1}
        )
