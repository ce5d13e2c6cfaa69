"""RAMSIS's reproduction pieces of issue 36 on the artifact's data (../shared/data/ramsis;
skipped when absent): the resource saving (the same accuracy with fewer workers) and the
capacity that makes the paper's Table 3 unreachable with the shipped profiles."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from servelab import ramsis

from .shared_data import shared_path


@pytest.fixture(scope="module")
def data():
    return shared_path("ramsis")


def frame(rows):
    cols = ["method", "workers", "slo_ms", "load_qps", "accuracy_per_satisfied_query",
            "violation_rate"]  # fmt: skip
    return pd.DataFrame(rows, columns=cols)


def test_resource_savings_by_hand():
    # RAMSIS reaches ModelSwitching's 60-worker accuracy with 30 workers (50%), JF+'s 40-worker
    # accuracy with 30 (25%); a baseline point over 5% violations is left out, and one RAMSIS
    # never reaches is counted as unreached.
    runs = frame(
        [
            ("ramsis", 20, 150.0, None, 0.60, 0.20),  # over 5%: never the answer
            ("ramsis", 30, 150.0, None, 0.70, 0.01),
            ("ramsis", 40, 150.0, None, 0.72, 0.01),
            ("model_switching", 60, 150.0, None, 0.70, 0.01),
            ("model_switching", 40, 150.0, None, 0.90, 0.01),  # unreached
            ("model_switching", 30, 150.0, None, 0.50, 0.06),  # over 5%: left out
            ("jellyfish", 40, 150.0, None, 0.65, 0.0),
        ]
    )
    out = ramsis.resource_savings(runs)
    got = {(r.baseline, r.workers): r.saving for r in out.itertuples()}
    assert got[("model_switching", 60)] == pytest.approx(0.5)
    assert math.isnan(got[("model_switching", 40)])
    assert got[("jellyfish", 40)] == pytest.approx(0.25)
    assert ("model_switching", 30) not in got
    summary = out.attrs["summary"]
    assert summary["model_switching"] == {"mean": 50.0, "max": 50.0, "points": 1, "unreached": 1}
    assert summary["both"]["mean"] == pytest.approx((50.0 + 25.0) / 2)  # the baselines' mean


def test_capacity_of_the_image_task_rules_out_table3(data):
    # One worker serves at most 63.5 QPS within 150 ms (shufflenet_v2_x0_5 at batch <= 32, p95),
    # so the trace's 3,905 QPS peak needs 62 workers, and 30 workers are over capacity most of
    # the time: the paper's Table 3 (0.64% violations at 30 workers) cannot hold.
    model, qps = ramsis.worker_capacity("image", slo_ms=150.0, data=data)
    assert model == "shufflenet_v2_x0_5" and 60.0 <= qps <= 67.0
    table = ramsis.trace_capacity("image", workers=(30, 60, 70), data=data).set_index(
        ["slo_ms", "workers"]
    )
    assert table.loc[(150.0, 30), "workers_for_peak"] == 62
    assert 0.6 <= table.loc[(150.0, 30), "time_over_capacity"] <= 0.85
    assert table.loc[(150.0, 70), "time_over_capacity"] == 0.0
    assert table.loc[(150.0, 30), "trace_peak_qps"] == 3905.0


def test_resource_saving_curve_on_the_text_task(data):
    # Text at 100 ms on 20, 30, 60 and 90 workers, ModelSwitching's tables from 10 s runs:
    # RAMSIS serves the baselines' 60-worker accuracy with 30 and their 90-worker one with 60
    # (21% fewer on average, 50% at most; paper, all SLOs and the full grid: 25.31% vs MS,
    # 31.25% vs JF+, at most 44.44% / 75%).
    curve = ramsis.resource_saving_curve(
        "text", slos_ms=(100.0,), workers=(20, 30, 60, 90), data=data, ms_duration_s=10.0
    )
    summary = curve.attrs["summary"]
    for baseline in ("jellyfish", "model_switching"):
        assert 12.0 <= summary[baseline]["mean"] <= 35.0, summary
        assert 30.0 <= summary[baseline]["max"] <= 60.0, summary
    assert list(curve.attrs["by_setting"]["slo_ms"]) == [100.0]
    assert (
        curve["ramsis_workers"].dropna() <= curve.loc[curve["ramsis_workers"].notna(), "workers"]
    ).all()
    with pytest.raises(ValueError, match="no setting"):
        ramsis.resource_saving_curve("text", trace=None, data=data)


def test_task_from_table_gives_fig8s_sixty_models_and_fig12s_three(data):
    from servelab.reproduction.ramsis import FIG12_MODELS
    from servelab.systems.ramsis.data import get_task
    from servelab.systems.ramsis.tasks import task_from_table

    image = get_task("image", data)
    sixty = task_from_table(image, image.table.interpolated(0.005))
    # The paper's M = 60, a strict superset of the 9 (Sec. 7.3.2), accuracy in 0.5% steps.
    assert len(sixty.models) == 60 and set(image.models) <= set(sixty.models)
    assert sixty.slos_ms == image.slos_ms and sixty.digest != image.digest
    accuracy = dict(zip(sixty.models, sixty.table.accuracy, strict=True))
    for m in sixty.models:  # the profile holds every synthetic model's latency and accuracy
        assert sixty.profile.accuracy(m) == pytest.approx(accuracy[m])
    three = task_from_table(image, image.table.select(list(FIG12_MODELS)))
    assert three.models == FIG12_MODELS
