"""`servelab infaas ...`: every command runs, --json is valid JSON, bad options are refused."""

from __future__ import annotations

import json

import pytest

from servelab import cli
from servelab.solvers import lp


def run_json(capsys, *argv: str):
    assert cli.main(["infaas", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_variants_and_query(capsys):
    assert len(run_json(capsys, "variants")) >= 8
    assert [v["name"] for v in run_json(capsys, "variants", "--catalogue", "table2")] == list("ABC")
    choice = run_json(capsys, "query", "--accuracy", "0.7", "--latency-ms", "50")
    assert choice["kind"] == "inactive" and choice["variant"] == "resnet50_neuron_inferentia_b1"
    choice = run_json(capsys, "query", "--accuracy", "0.99", "--latency-ms", "5")
    assert choice["kind"] == "closest" and "closest" in choice["reason"]


@pytest.mark.skipif(not lp.available(), reason="servelab was built without CBC/CLP")
def test_autoscale_table3_and_one_point(capsys):
    rows = run_json(capsys, "autoscale")
    assert [tuple(r["ilp_config"]) for r in rows] == [(2, 0, 0), (0, 1, 0), (0, 2, 1)]
    out = run_json(capsys, "autoscale", "--qps", "650", "--slo-ms", "50", "--catalogue", "resnet50")
    # Sec. 6.2's steady high load: the batch-8 GPU variant.
    names = [n for n, k in zip(_names(), out["exact"]["instances"], strict=True) if k]
    assert names == ["resnet50_tensorrt_gpu_b8"]


def _names() -> list[str]:
    from servelab import infaas

    return [v["name"] for v in infaas.resnet50_variants()]


def test_simulate_compares_with_clipper_plus(capsys):
    out = run_json(capsys, "simulate", "--count", "100")
    assert set(out) == {"infaas", "clipper_plus"}
    assert out["infaas"]["slo_violation_rate"] <= out["clipper_plus"]["slo_violation_rate"]


def test_bad_options_are_refused(capsys):
    assert cli.main(["infaas", "autoscale", "--qps", "-1"]) == 2
    assert "--qps" in capsys.readouterr().err
    assert cli.main(["infaas", "query", "--batch", "0"]) == 2
    assert "--batch" in capsys.readouterr().err
    assert cli.main(["infaas", "autoscale", "--qps", "10"]) == 2  # --slo-ms missing
    assert "slo-ms" in capsys.readouterr().err


def test_evaluate_runs_fig6_and_the_offline_run(capsys):
    out = run_json(capsys, "evaluate", "--loads", "flat")
    rows = {r["system"]: r for r in out["fig6"]["flat"]}
    assert set(rows) == {"infaas", "clipper_plus_cpu", "clipper_plus_gpu", "sm_plus_cpu",
                         "sm_plus_gpu"}  # fmt: skip
    assert rows["clipper_plus_gpu"]["cost_vs_infaas"] > 1
    assert set(out["offline"]) == {"colocated", "online_only"}
    assert cli.main(["infaas", "evaluate", "--loads", "bursty"]) == 2
    assert "loads" in capsys.readouterr().err
