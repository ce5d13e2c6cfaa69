"""RAMSIS against its artifact (../shared/data/ramsis), in simulation.

- ModelSwitching: our simulation-generated choice tables against the artifact's policy_gen files
  (60/70/80 workers, SLO 150 ms, 20 loads each: 60 files).
- The comparison of Sec. 7.1/7.2 at reduced size (servelab.ramsis.paper_evaluation("reduced")):
  accuracy per satisfied query and violation rate of RAMSIS, Jellyfish+ and ModelSwitching on the
  Twitter trace and at constant loads, image (150 ms) and text (100 ms). The table is printed
  (pytest -s) and RAMSIS's gains are put beside the artifact's (5.70 / 3.48 pp on the trace,
  3.70 / 1.84 pp at constant load, vs Jellyfish+ / ModelSwitching).
The full grid (all SLOs, 20..100 workers) is paper_evaluation("full"), for the notebook.
"""

from __future__ import annotations

import pytest

from servelab import ramsis

from .shared_data import shared_path

MS_DURATION_S = 60.0  # each table cell's run here (the artifact: 300 s; see the test below)
RESEED = (1, 2, 3, 4)  # seeds that re-check a cell where seed 0 disagrees with the artifact


@pytest.fixture(scope="module")
def data():
    return shared_path("ramsis")


@pytest.fixture(scope="module")
def evaluation(data):
    parts = ramsis.paper_evaluation("reduced", data=data, threads=2)
    print("\n" + ramsis.format_evaluation(parts))
    return {(p.task, p.workload): p for p in parts}


def test_model_switching_choices_match_the_artifacts_policy_gen(data):
    """All 60 artifact choices are reproduced: by our seed-0 run, or - where a model sits so close
    to capacity that its 1% verdict depends on the random arrivals - by a run with another seed.
    The artifact's own table came from one 300 s run per cell with numpy's seed 0, so such cells
    are a coin toss for any re-implementation."""
    task = ramsis.get_task("image", data)
    models = list(task.models)
    compared, exact, seed_dependent = 0, 0, []
    for workers in (60, 70, 80):
        folder = data / ramsis.ARTIFACT_MS_FOLDER.format(workers=workers)
        gold = ramsis.read_policy_gen(folder, models)
        ours = ramsis.model_switching_table(
            task.profile, models, workers=workers, slo_ms=150.0, loads=list(gold),
            duration_s=MS_DURATION_S, seed=0, threads=2,
        )  # fmt: skip
        for load, mine in zip(ours["loads"], ours["models"], strict=True):
            compared += 1
            if mine == gold[load]:
                exact += 1
                continue
            others = [
                ramsis.model_switching_table(
                    task.profile, models, workers=workers, slo_ms=150.0, loads=[load],
                    duration_s=MS_DURATION_S, seed=s, threads=1,
                )["models"][0]
                for s in RESEED
            ]  # fmt: skip
            seed_dependent.append((workers, load, gold[load], [mine, *others]))
            assert gold[load] in others, (
                f"{workers} workers, {load:g} queries/s: artifact {gold[load]}, ours {mine}, "
                f"and with seeds {RESEED}: {others}"
            )
    print(f"\nModelSwitching: {exact}/{compared} artifact choices with seed 0; seed-dependent "
          f"cells (workers, load, artifact, ours by seed 0..4): {seed_dependent}")  # fmt: skip
    assert compared == 60
    assert exact >= 56, seed_dependent


@pytest.mark.parametrize("workload", ["trace", "constant"])
def test_image_gains_match_the_artifact(evaluation, workload):
    part = evaluation[("image", workload)]
    for baseline in ("jellyfish", "model_switching"):
        ours = part.gains[baseline]
        mean, best = ramsis.ARTIFACT_GAINS[workload][baseline]
        msg = (
            f"image {workload}: RAMSIS vs {baseline} mean {ours['mean']:+.2f} max "
            f"{ours['max']:+.2f} pp; artifact mean {mean:+.2f} max {best:+.2f}"
        )
        print(msg)
        assert ours["mean"] > 0, msg
        assert abs(ours["mean"] - mean) < 1.0, msg
        assert abs(ours["max"] - best) < 1.5, msg


@pytest.mark.parametrize(
    "key", [("image", "trace"), ("image", "constant"), ("text", "trace"), ("text", "constant")]
)
def test_ramsis_ahead_with_few_violations_where_satisfiable(evaluation, key):
    part = evaluation[key]
    frame = part.frame
    sat = frame[frame["satisfiable"]]
    assert len(sat) > 0, f"{key}: no satisfiable configuration"
    ramsis = sat[sat["method"] == "ramsis"]
    worst = ramsis["violation_rate"].max()
    assert worst < 0.01, f"{key}: RAMSIS violation {100 * worst:.3f}% at a satisfiable load"
    for baseline in ("jellyfish", "model_switching"):
        g = part.gains_satisfiable[baseline]
        msg = f"{key}: RAMSIS vs {baseline} on satisfiable loads: {g}"
        assert g["mean"] > 0, msg  # ahead on average ...
        assert g["min"] > -1.0, msg  # ... and never clearly behind (ties at the extremes)
