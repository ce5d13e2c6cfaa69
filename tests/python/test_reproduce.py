"""servelab.reproduce: each paper's claims beside ours at reduced size (about 2.5 minutes in
all): the table's shape, two-sided tolerances, verdicts that follow from the values, and the rows
that the docs say reproduce pinned within their tolerance. Kairos and RAMSIS need ../shared/data
and are skipped without it."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest

import servelab
from servelab import cli, reproduction
from servelab.reproduction import COLUMNS, reproduce, tolerance, verdict

from .cli_errors import run_main
from .shared_data import shared_path

NEEDS_DATA = {"kairos": "kairos", "ramsis": "ramsis"}


@pytest.fixture(scope="module", params=reproduction.PAPERS)
def table(request) -> pd.DataFrame:
    paper = request.param
    data = None
    if paper in NEEDS_DATA:
        data = shared_path(NEEDS_DATA[paper]).parent
    frame = reproduce(paper, "reduced", data=data)
    print(f"\n{reproduction.format_table(frame)}")
    return frame


def rows(frame: pd.DataFrame, prefix: str) -> pd.DataFrame:
    found = frame[frame["claim"].str.startswith(prefix)]
    assert len(found), f"no row starts with {prefix!r}: {frame['claim'].tolist()}"
    return found


def assert_within(frame: pd.DataFrame, prefix: str) -> None:
    for r in rows(frame, prefix).itertuples():
        assert r.low <= r.ours <= r.high, f"{r.claim}: ours {r.ours} outside [{r.low}, {r.high}]"
        assert r.verdict == "within" and r.cause == "", r.claim


def test_shape_and_attrs(table):
    assert list(table.columns) == list(COLUMNS)
    assert len(table) >= 2
    assert table.attrs["size"] == "reduced"
    assert table.attrs["paper"] == table["paper_name"].iloc[0]
    assert table["paper_name"].nunique() == 1
    assert table["claim"].is_unique
    for column in ("claim", "source", "tolerance", "tolerance_reason"):
        assert (table[column].str.len() > 0).all(), column
    # Every value the paper gives is a quote of it: a figure, table or section is named.
    assert table["source"].str.contains("Fig|Table|Sec|appendix").all()


def test_every_row_has_a_two_sided_tolerance_around_the_papers_value(table):
    for r in table.itertuples():
        assert math.isfinite(r.low) and math.isfinite(r.high), r.claim
        assert r.low < r.high, r.claim
        assert r.low <= r.paper <= r.high, r.claim
        assert math.isfinite(r.ours), r.claim


def test_verdicts_follow_from_the_values_and_every_outside_row_has_a_cause(table):
    for r in table.itertuples():
        expected = "within" if r.low <= r.ours <= r.high else "outside"
        assert r.verdict == expected, r.claim
        if expected == "outside":
            assert r.cause and any(ch.isdigit() for ch in r.cause), r.claim  # evidence: a number
        else:
            assert r.cause == "", r.claim


def test_rows_the_docs_say_reproduce(table):
    paper = table.attrs["paper"]
    if paper == "kairos":
        assert_within(table, "Fig. 8: Kairos over the best homogeneous pool, RM2")
        assert_within(table, "Fig. 8: smallest gain")
        assert_within(table, "Fig. 13: bound rank")
        assert_within(table, "Fig. 10: Kairos+")
        # Fig. 12 (sizes turned Gaussian) and Fig. 14 (the top bounds under each distributor).
        assert_within(table, "Fig. 12: Kairos's one-shot pick")
        assert_within(table, "Fig. 14: Kairos's measured throughput over the upper bound")
        assert_within(table, "Fig. 14: Ribbon's measured throughput")
        # CLKWRK comes within 5% of Kairos's throughput after the change, never to it; Kairos+
        # stops after its first measurement, which exceeds every other bound.
        clockwork = rows(table, "Fig. 12: CLKWRK's best").iloc[0]
        if clockwork["verdict"] == "outside":
            assert "over all 331 configurations" in clockwork["cause"], clockwork["cause"]
        plus = rows(table, "Fig. 12: Kairos+'s evaluations").iloc[0]
        if plus["verdict"] == "outside":
            assert "bound pruning ends the search" in plus["cause"], plus["cause"]
        # Fig. 9 on ORCL's best configuration is off; its cause shows the dependence on the
        # configuration, measured on rm2's other settings.
        for r in rows(table, "Fig. 9: Kairos over Ribbon").itertuples():
            if r.verdict == "outside":
                assert "4 g4dn" in r.cause and "artifact example" in r.cause, r.cause
    elif paper == "ramsis":
        assert_within(table, "accuracy gain")  # the artifact's setting: all eight
        assert len(rows(table, "accuracy gain")) == 8
        # The resource saving: text reproduces; image is capped by what the profiles can serve,
        # which the Table 3 rows show (the trace's peak needs 62 workers at 150 ms).
        assert_within(table, "resource saving vs both, mean, % of workers (text")
        for r in rows(table, "Table 3").itertuples():
            assert r.verdict == "outside" and "needs 62" in r.cause, r.cause
        # Fig. 8: 60 interpolated models add next to nothing to RAMSIS; Fig. 12: with three
        # models RAMSIS stays at or above Jellyfish+ with three, not with its nine, at the loads
        # where the nine hold middle models the three lack (the cause names them).
        assert_within(table, "Fig. 8: RAMSIS with 60 interpolated models")
        assert_within(table, "Fig. 12: loads at which RAMSIS with three models is at or above "
                      "Jellyfish+ with three")  # fmt: skip
        nine = rows(table, "Fig. 12: loads at which RAMSIS with three models").iloc[1]
        if nine["verdict"] == "outside":
            assert "RAMSIS mixes only" in nine["cause"], nine["cause"]
    elif paper == "infaas":
        assert_within(table, "Table 3")
        t3 = rows(table, "Table 3")
        assert (t3["ours"] == t3["paper"]).all()  # the exact ILP finds Table 3's optimum
        assert_within(table, "Sec. 6.3.2: online SLO violations")
        # Sec. 6.1 on machines (co-located variants): INFaaS's violations, its lead over SM+,
        # the cost and Clipper+'s throughput reproduce; Clipper+'s violations are bound by its
        # cold applications on CPU, which the cause shows.
        for claim in (
            "Sec. 6.1: INFaaS's SLO violations",
            "Sec. 6.1: fewer SLO violations than SM+",
            "Sec. 6.1: lower cost than",
            "Sec. 6.1: higher throughput than Clipper+",
        ):
            assert_within(table, claim)
        clipper = rows(table, "Sec. 6.1: fewer SLO violations than Clipper+").iloc[0]
        if clipper["verdict"] == "outside":
            assert "cold applications" in clipper["cause"], clipper["cause"]
    elif paper == "hera":
        assert_within(table, "Fig. 11: Hera's mean EMU gain over DeepRecSys")
        assert_within(table, "Fig. 11: Hera's lowest EMU")
        assert_within(table, "Fig. 15: servers saved, hera against deeprecsys")
    elif paper == "rrl":
        # Every row is off (issue 36), each cause measured: Algorithm 1's optimistic start forces
        # a sweep that sets radius 1's speed-up (about 3x, a random covering of the grid) and
        # most of RRL's latency over a run; from the artifact's start RRL is far below CAPES.
        assert len(table) == 3
        fig11 = rows(table, "Fig. 11").iloc[0]
        assert fig11["verdict"] == "outside" and "forced sweep" in fig11["cause"]
        assert 2.5 < fig11["ours"] < 3.5
        latency = rows(table, "Sec. 6.3: RRL's mean latency").iloc[0]
        assert latency["verdict"] == "outside" and latency["ours"] < latency["low"]
        assert "forced sweep" in latency["cause"] and "last tenth" in latency["cause"]
        artifact = rows(table, "Sec. 6.3 from the artifact's start").iloc[0]
        assert artifact["ours"] > latency["ours"] + 0.5


def test_verdict_and_tolerance_helpers():
    assert verdict(1.0, 1.0, 2.0) == verdict(2.0, 1.0, 2.0) == "within"  # both ends included
    assert verdict(0.999, 1.0, 2.0) == verdict(2.001, 1.0, 2.0) == "outside"
    assert verdict(float("nan"), 0.0, 1.0) == "outside"
    assert tolerance(2.0, rel=0.2)[:2] == pytest.approx((1.6, 2.4))
    assert tolerance(-2.0, rel=0.2)[:2] == pytest.approx((-2.4, -1.6))
    assert tolerance(0.0, abs_=3.0)[:2] == (-3.0, 3.0)
    assert tolerance(10, interval=(1, 10))[:2] == (1.0, 10.0)
    with pytest.raises(ValueError, match="exactly one"):
        tolerance(1.0)
    with pytest.raises(ValueError, match="exactly one"):
        tolerance(1.0, rel=0.1, abs_=0.1)


def test_parts_are_checked_before_anything_runs():
    assert reproduction.PARTS["kairos"] == ("main", "fig12", "fig14")
    assert reproduction.PARTS["ramsis"] == ("artifact", "savings", "models")
    with pytest.raises(ValueError, match=r"parts=\('fig99',\): kairos's table has the parts main"):
        reproduce("kairos", parts=("fig99",))
    with pytest.raises(ValueError, match="hera's table has no parts"):
        reproduce("hera", parts=("main",))
    with pytest.raises(ValueError, match="parts='fig12'"):
        reproduce("kairos", parts="fig12")  # a string is not a sequence of parts
    frame = reproduce("hera")
    assert frame.attrs["parts"] is None


def test_bad_paper_and_size_are_named():
    with pytest.raises(ValueError, match=r"paper='nope'.*kairos, ramsis, infaas, hera"):
        reproduce("nope")
    with pytest.raises(ValueError, match=r"size='huge'.*reduced, full"):
        reproduce("hera", size="huge")
    with pytest.raises(ValueError, match=r"size=None"):
        reproduce("hera", size=None)  # type: ignore[arg-type]


def test_missing_data_names_the_path(tmp_path):
    with pytest.raises(FileNotFoundError, match=str(tmp_path / "kairos")):
        reproduce("kairos", data=tmp_path)


def test_cli(capsys, tmp_path):
    assert servelab.reproduce is reproduce
    assert cli.REPRODUCE_PAPERS == reproduction.PAPERS
    assert cli.REPRODUCE_SIZES == reproduction.SIZES
    assert cli.main(["reproduce", "infaas", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["paper"] == "infaas" and out["size"] == "reduced"
    assert out["within"] == sum(r["verdict"] == "within" for r in out["rows"])
    assert {r["claim"] for r in out["rows"]} >= {
        "Table 3: cheapest configuration's cost, 1000 QPS at 300 ms, $/s"
    }
    assert cli.main(["reproduce", "hera", "--markdown"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("| claim | paper | ours |") and "rows within tolerance" in text
    run_main(capsys, ["reproduce", "nope"], "reproduce", "'nope'")
    run_main(capsys, ["reproduce", "hera", "--size", "huge"], "--size", "'huge'")
    run_main(capsys, ["reproduce", "kairos", "--data", str(tmp_path)], str(tmp_path / "kairos"))
