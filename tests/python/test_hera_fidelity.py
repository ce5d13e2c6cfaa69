"""Hera's fidelity: no code or data of the paper is public, so these check orderings and ranges
on Table I's models and Table II's node, printing the paper's numbers beside ours."""

import numpy as np
import pytest

from servelab import hera


@pytest.fixture(scope="module")
def off():
    return hera.build()


def test_fig9a_high_high_pairs_lose_and_low_high_pairs_gain(off):
    high, low = off.high_models, off.low_models
    hh = [off.pair(a, b)["emu"] for i, a in enumerate(high) for b in high[i + 1 :]]
    lh = [off.pair(a, b)["emu"] for a in low for b in high]
    ncf_dien = off.pair("ncf", "dien")["emu"]
    print(f"\nNCF+DIEN EMU: ours {ncf_dien:.2f}, paper ~0.80 (Fig. 9a: about 20% loss)")
    print(
        f"(high, high) EMU {min(hh):.2f}..{max(hh):.2f}; "
        f"(low, high) EMU {min(lh):.2f}..{max(lh):.2f}"
    )
    assert ncf_dien < 0.95
    assert np.mean(hh) < 1.0 < min(lh)
    assert off.pair("dlrm_b", "ncf")["emu"] > 1.2  # Fig. 9b: NCF fills DLRM(B)'s idle cores


def test_fig11_emu_of_each_selection_policy(off):
    emu = hera.emu_summary(off)
    for s, e in emu.items():
        print(
            f"\n{s:12s} EMU min {e['min']:.2f} median {e['median']:.2f} "
            f"mean {e['mean']:.2f} max {e['max']:.2f}"
        )
    print(
        "paper: DeepRecSys 100%, Random 82-147%, Hera +37.3% vs DeepRecSys, +5.4% vs Hera(Random)"
    )
    assert emu["deeprecsys"]["min"] == emu["deeprecsys"]["max"] == 1.0
    assert emu["random"]["min"] < 1.0 < emu["random"]["max"]
    assert 0.7 < emu["random"]["min"] and emu["random"]["max"] < 1.6
    assert emu["hera"]["min"] >= 1.0
    assert emu["hera_random"]["min"] >= 1.0
    assert emu["hera"]["mean"] > emu["hera_random"]["mean"]
    assert emu["hera"]["mean"] > emu["random"]["mean"] > emu["deeprecsys"]["mean"]


def test_fig15_even_targets_hera_needs_fewest_servers(off):
    levels = [1000.0, 4000.0, 16000.0]
    servers = hera.servers_needed(off, levels)
    print(f"\nservers at {levels} QPS per model: {servers}")
    saved = 1 - np.mean(servers["hera"]) / np.mean(servers["deeprecsys"])
    print(f"Hera saves {saved:.0%} vs DeepRecSys (paper 26%)")
    for s in ("deeprecsys", "random"):
        assert all(h <= o for h, o in zip(servers["hera"], servers[s], strict=False)), s
    # With even targets every high model ends up paired: the affinity orders the partners, so
    # Hera and Hera(Random) need about the same servers here, within one (docs/hera.md).
    assert all(h <= o + 1 for h, o in zip(servers["hera"], servers["hera_random"], strict=False))
    assert saved > 0.1
    assert np.mean(servers["random"]) < np.mean(servers["deeprecsys"])  # paper: Random saves 15%


#: Fig. 16's x-axis: the share of the total target QPS on the low worker-scalability models
FIG16_SHARES = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)


def test_fig16_skewed_targets_hera_at_or_below_every_baseline(off):
    """Sec. VII-C: unless all queries go to one class, Hera needs fewer servers than the
    baselines. At every share 0.1-0.9 and each of Fig. 15's per-model levels, Hera needs no more
    servers than DeepRecSys and than Random with any of ten seeds, and at most one more than
    Hera(Random)'s mean (the affinity only orders the partners, as in Fig. 15)."""
    levels = list(hera.FIG15_LEVELS)
    seeds = range(10)
    names = ("deeprecsys", "random", "hera_random", "hera")
    print(f"\n{'share':>5s} {'level':>6s}  " + "  ".join(f"{s:>11s}" for s in names))
    saved = {s: [] for s in names[:3]}
    for share in FIG16_SHARES:
        table = hera.servers_table(off, levels, low_share=share, seeds=seeds)
        for level in levels:
            rows = table[table["level"] == level]
            assert rows["feasible"].all(), (share, level)
            by = rows.groupby("selection")["servers"]
            mean, worst_case = by.mean(), by.min()
            print(f"{share:5.1f} {level:6.0f}  " + "  ".join(f"{mean[s]:11.1f}" for s in names))
            assert mean["hera"] <= mean["deeprecsys"], (share, level)
            assert mean["hera"] <= worst_case["random"], (share, level)
            assert mean["hera"] <= mean["hera_random"] + 1, (share, level)
            for s in saved:
                saved[s].append(1 - mean["hera"] / mean[s])
    print(
        "Hera's servers saved over the shares and levels: "
        + ", ".join(f"vs {s} {np.mean(v):.0%} (min {min(v):.0%})" for s, v in saved.items())
        + "; paper: fewer than every baseline unless all load is on one class"
    )
    assert min(saved["random"]) >= 0 and np.mean(saved["random"]) > 0.03


def test_fig16_small_targets_where_random_can_win(off):
    """At 500 QPS per model (5-6 servers) and a low share of 10-20%, Step B of Algorithm 2 runs
    each high model alone although each needs a small part of a server; Random shares those
    remainders between two high models and needs about half a server fewer on average. That is
    the paper's algorithm (docs/hera.md); Hera still needs no more than DeepRecSys."""
    for share in (0.1, 0.2):
        servers = hera.servers_needed(off, [500.0], low_share=share, seeds=range(10))
        print(f"\n500 QPS per model, low share {share}: {servers}")
        assert servers["hera"][0] <= servers["deeprecsys"][0]
        assert servers["hera"][0] <= servers["random"][0] + 1


#: model mixes of the sweep: Table I, each low model alone with the high ones, both low models
#: with the cache-sensitive or the FC-heavy high ones, and a four-model mix
MIXES = {
    "table1": None,
    "dlrm_b+high": ["dlrm_b", "dlrm_a", "dlrm_c", "ncf", "dien", "din", "wnd"],
    "dlrm_d+high": ["dlrm_d", "dlrm_a", "dlrm_c", "ncf", "dien", "din", "wnd"],
    "low+cache": ["dlrm_b", "dlrm_d", "ncf", "dien", "din", "wnd"],
    "low+fc": ["dlrm_b", "dlrm_d", "dlrm_a", "dlrm_c", "dien"],
    "four": ["dlrm_b", "dlrm_d", "ncf", "din"],
}


@pytest.fixture(scope="module")
def mixes():
    return {name: hera.build(models) for name, models in MIXES.items()}


def test_fig11_hera_above_hera_random_in_every_model_mix(mixes):
    print(
        f"\n{'mix':12s} {'Hera':>6s} {'H(Rnd)':>6s} {'Random':>6s}   (mean EMU of the chosen pairs)"
    )
    gains = []
    for name, mix in mixes.items():
        emu = hera.emu_summary(mix)
        mean = {s: e["mean"] for s, e in emu.items()}
        gains.append(mean["hera"] / mean["hera_random"] - 1)
        print(f"{name:12s} {mean['hera']:6.3f} {mean['hera_random']:6.3f} {mean['random']:6.3f}")
        assert emu["hera"]["min"] >= 1.0, name
        assert mean["hera"] >= mean["hera_random"] - 1e-12, name
        assert mean["hera_random"] > mean["random"], name
    print(f"Hera vs Hera(Random), mean over mixes: {np.mean(gains):+.1%} (paper, Table I: +5.4%)")
    assert np.mean(gains) > 0.02


def test_fig15_fig16_sweep_of_target_loads_and_model_mixes(mixes):
    """Servers for each mix at even targets (Fig. 15) and low shares of 10%, 30% and 90% (Fig.
    16), at four per-model levels: Hera never needs more servers than DeepRecSys, and over the
    sweep it needs fewer than Random and no more than Hera(Random) (the paper: 26% and 11% fewer
    than DeepRecSys and Random, and fewer than Hera(Random))."""
    levels = [500.0, 2000.0, 8000.0, 16000.0]
    total = {s: 0.0 for s in hera.SELECTIONS}
    print(f"\n{'mix':12s} {'share':>5s} {'level':>7s}  " + "  ".join(f"{s:>10s}" for s in total))
    for name, mix in mixes.items():
        for share in (None, 0.1, 0.3, 0.9):
            servers = hera.servers_needed(mix, levels, low_share=share)
            for k, level in enumerate(levels):
                row = "  ".join(f"{servers[s][k]:10.1f}" for s in total)
                print(f"{name:12s} {share or 'even'!s:>5s} {level:7.0f}  {row}")
                assert servers["hera"][k] <= servers["deeprecsys"][k], (name, share, level)
            for s in total:
                total[s] += sum(servers[s])
    saved = {s: 1 - total["hera"] / total[s] for s in total if s != "hera"}
    print(
        "Hera's servers saved over the sweep: "
        + ", ".join(f"{s} {v:.0%}" for s, v in saved.items())
        + " (paper, Fig. 15: DeepRecSys 26%, Random 11%)"
    )
    assert saved["deeprecsys"] > 0.1
    assert saved["random"] > 0.0
    assert saved["hera_random"] > -0.01  # about the same (see the Fig. 15 test)


def test_comparison_report_lists_ours_beside_the_paper(off):
    report = hera.format_comparison(hera.comparison(off, levels=(2000.0, 8000.0)))
    print("\n" + report)
    assert "Pearson" in report and "paper" in report
