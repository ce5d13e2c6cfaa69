"""Kairos's reproduction pieces of issue 36 on the artifact's data (../shared/data/kairos;
skipped when absent), at reduced size: Fig. 9's ratio along the budget line (from the GPU pool to
CPU-heavy mixes) and Fig. 10's searches for schemes whose throughput is not monotone in the
instances."""

from __future__ import annotations

import pytest

from servelab import kairos

from .shared_data import shared_path

SMALL = {"queries": 1000, "seeds": (0,), "rel_tol": 0.03}


@pytest.fixture(scope="module")
def folder():
    return shared_path("kairos")


def test_budget_line_fills_the_budget_from_gpu_heavy_to_cpu_heavy(folder):
    line = kairos.budget_line(folder)
    labels = [kairos.config_label(c) for c in line]
    assert labels == [
        "4 g4dn", "4 g4dn + 2 r5n", "3 g4dn + 6 r5n", "2 g4dn + 9 r5n", "1 g4dn + 13 r5n",
    ]  # fmt: skip
    with pytest.raises(ValueError, match="not an instance type"):
        kairos.budget_line(folder, auxiliary="m5.large")
    with pytest.raises(ValueError, match="no feasible configuration"):
        kairos.budget_line(folder, budget=0.5)


def test_kairos_over_ribbon_grows_with_the_cpu_share(folder):
    # rm2 at 1,000 queries: 1.00x on the GPU pool (nothing to exploit), about 4x on 1 g4dn +
    # 13 r5n (Ribbon's FCFS puts large queries on the CPUs). Full size: 1.04x and 5.8x.
    line = kairos.budget_line(folder)
    frame = kairos.compare_on_configs(folder, [line[0], line[-1]], models=("rm2",), size=SMALL)
    ratio = frame.set_index("label")["kairos_over_ribbon"]
    assert 0.9 <= ratio["4 g4dn"] <= 1.15, frame
    assert 2.5 <= ratio["1 g4dn + 13 r5n"] <= 8.0, frame
    assert frame["cpu_share"].tolist() == pytest.approx([0.0, 13 * 0.149 / (0.526 + 13 * 0.149)])
    with pytest.raises(ValueError, match="at least one"):
        kairos.compare_on_configs(folder, [], size=SMALL)
