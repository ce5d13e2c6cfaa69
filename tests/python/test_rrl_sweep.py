"""RRL's experiment loops run through servelab.sweep: the same frames serially and on 2 worker
processes (the per-step wall times aside, which no two runs share), and bad settings raise what the
run raised, as a loop would."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from servelab import rrl
from servelab.systems.rrl import experiments

from .shared_data import shared_path

SPACE = rrl.cpu_space(2)
MODEL = rrl.PerfModel(cores=2, base_ms=50)
SMALL = {"steps": 120, "episode_requests": 20, "model": MODEL, "oracle_episodes": 5}
WALL_CLOCK = ["median_learn_us"]  # per-step learning time, measured, never reproducible


def comparison_frame(processes: int, arrivals) -> tuple[pd.DataFrame, dict[str, np.ndarray]]:
    runs = rrl.compare_methods(SPACE, arrivals, seeds=(0, 1), processes=processes, **SMALL)
    for method, method_runs in runs.items():
        assert [r.method for r in method_runs] == [method] * 2
        assert all(r.space is SPACE for r in method_runs)
    frame = rrl.regret_table(runs).drop(columns=WALL_CLOCK)
    # The per-episode columns too, not only the summaries.
    columns = {
        f"{m}.{i}.{k}": v for m, rs in runs.items() for i, r in enumerate(rs)
        for k, v in r.columns.items() if k != "learn_ns"
    }  # fmt: skip
    return frame, columns


@pytest.mark.parametrize("workload", ["poisson", "dynamic", "trace"])
def test_compare_methods_gives_identical_frames_serially_and_on_two_processes(workload):
    if workload == "trace":
        arrivals = rrl.workload("trace", 4.0, data=shared_path("rrl"))
    elif workload == "dynamic":
        arrivals = rrl.workload("dynamic", 4.0, period_s=30.0)
    else:
        arrivals = "poisson(rate=4)"
    serial, serial_columns = comparison_frame(1, arrivals)
    parallel, parallel_columns = comparison_frame(2, arrivals)
    assert list(serial.method.unique()) == list(rrl.METHODS)
    pd.testing.assert_frame_equal(serial, parallel)
    assert serial_columns.keys() == parallel_columns.keys()
    for key, column in serial_columns.items():
        np.testing.assert_array_equal(column, parallel_columns[key], err_msg=key)


def test_region_sweep_gives_identical_frames_serially_and_on_two_processes():
    frames = [
        rrl.region_sweep(SPACE, "poisson(rate=4)", (0, 1, 2), seeds=(0, 1), processes=p, **SMALL)
        for p in (1, 2)
    ]
    pd.testing.assert_frame_equal(frames[0], frames[1])
    assert list(frames[0].radius) == [0.0, 0.0, 1.0, 1.0, 2.0, 2.0]


def test_a_bad_setting_raises_what_the_run_raised():
    with pytest.raises(ValueError, match="method='sarsa'"):
        rrl.compare_methods(SPACE, "poisson(rate=4)", ("sarsa",), processes=2, **SMALL)
    with pytest.raises(KeyError, match="no option 'radiuss'"):
        rrl.region_sweep(SPACE, "poisson(rate=4)", (1,), learner={"radiuss": 2}, **SMALL)
    with pytest.raises(ValueError, match="processes=0"):
        rrl.compare_methods(SPACE, "poisson(rate=4)", processes=0, **SMALL)


def test_arrivals_travel_as_specs_or_replays():
    assert experiments.portable_arrivals("poisson(rate=3)") == "poisson(rate=3)"
    dynamic = rrl.workload("dynamic", 4.0, period_s=30.0)
    assert experiments.portable_arrivals(dynamic) == dynamic.describe()
    with pytest.raises(ValueError, match="arrivals=3"):
        experiments.portable_arrivals(3)
    with pytest.raises(ValueError, match="ConfigSpace"):
        experiments.portable_space("cpu")


def test_the_artifact_trace_travels_exactly():
    trace = rrl.workload("trace", 4.0, data=shared_path("rrl"))
    back = experiments._rebuild_arrivals(experiments.portable_arrivals(trace))
    np.testing.assert_array_equal(back.timestamps_ns, trace.timestamps_ns)
    assert back.describe() == trace.describe()
