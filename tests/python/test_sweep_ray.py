"""Sweeps on the Ray backend give the same rows as the local one, retry a point whose worker dies
and report it when it dies again, and return the finished rows on Ctrl-C. One small local Ray
instance (2 CPUs) serves the whole module; without Ray, or where it cannot start, those tests
skip and say why."""

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import servelab
from servelab.sweeps import SweepError, SweepInterrupted, sweep


@pytest.fixture(scope="module")
def ray_cluster():
    try:
        import ray
    except ImportError as error:
        pytest.skip(f"Ray is not installed ({error}): pip install 'servelab[ray]'")
    if ray.is_initialized():
        yield ray
        return
    try:
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    except Exception as error:
        pytest.skip(f"Ray cannot start a local instance here: {type(error).__name__}: {error}")
    yield ray
    ray.shutdown()


# ---- points (module level: worker processes import them) --------------------------------------

BASE = servelab.load_scenario("default")


def simulated_point(scheduler, rate, seed):
    load = dict(BASE.workload, arrivals=f"poisson(rate={rate})", count=400)
    return servelab.simulate(BASE, scheduler=scheduler, workload=load, seed=seed)


def weighted_point(x, weights):
    return {"total": float(np.dot(weights, np.arange(weights.size) % (x + 1)))}


def dying_point(i, marks):
    """Point 1 kills its worker on its first attempt only; point 2 on every attempt."""
    first = not (Path(marks) / f"ran-{i}").exists()
    (Path(marks) / f"ran-{i}").touch()
    if i == 2 or (i == 1 and first):
        os._exit(17)
    return {"square": i * i}


def failing_point(x):
    return {"inverse": 1 / (x - 3)}


def slow_after_two(i, marks):
    """Points 0 and 1 finish at once; the others record their pid and sleep past the test."""
    if i >= 2:
        (Path(marks) / str(os.getpid())).touch()
        time.sleep(60)
    return {"square": i * i}


# ---- identity with the local backend -----------------------------------------------------------


def test_a_simulation_sweep_gives_the_same_rows_on_both_backends(ray_cluster):
    grid = {"scheduler": ["fcfs", "jsq"], "rate": [20, 40], "seed": [0, 1]}
    local = sweep(simulated_point, grid, processes=2, progress=False)
    on_ray = sweep(simulated_point, grid, backend="ray", progress=False)
    assert len(local) == 8 and "latency_ms.p99" in local
    pd.testing.assert_frame_equal(local, on_ray)


def test_shared_inputs_reach_every_point_on_both_backends(ray_cluster):
    weights = np.linspace(0.0, 1.0, 200_000)
    grid = {"x": [0, 1, 2, 3, 4]}
    local = sweep(weighted_point, grid, processes=2, shared={"weights": weights}, progress=False)
    on_ray = sweep(weighted_point, grid, backend="ray", shared={"weights": weights}, progress=True)
    expected = [float(np.dot(weights, np.arange(weights.size) % (x + 1))) for x in grid["x"]]
    assert list(local["total"]) == expected
    pd.testing.assert_frame_equal(local, on_ray)
    assert "weights" not in on_ray  # shared inputs are arguments, not columns


def test_ray_takes_a_lambda_that_local_processes_cannot(ray_cluster):
    frame = sweep(lambda x, k: {"y": k * x}, {"x": [1, 2, 3]}, backend="ray", shared={"k": 10})
    assert frame.to_dict("list") == {"x": [1, 2, 3], "y": [10, 20, 30]}


def test_import_servelab_leaves_ray_unimported():
    code = "import sys, servelab; servelab.sweep; print('ray' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_ramsis_compare_methods_gives_the_same_table_on_ray(ray_cluster, tmp_path):
    from servelab import ramsis

    from .shared_data import shared_path

    kwargs = dict(
        workers=(60,), loads=(800.0, 2400.0), methods=("ramsis", "jellyfish"), duration_s=5.0,
        data=shared_path("ramsis"), cache_dir=tmp_path,
    )  # fmt: skip
    serial = ramsis.compare_methods("image", **kwargs).drop(columns="sim_seconds")
    on_ray = ramsis.compare_methods("image", backend="ray", processes=2, **kwargs)
    assert list(serial["method"]) == ["ramsis", "jellyfish"] * 2
    pd.testing.assert_frame_equal(serial, on_ray.drop(columns="sim_seconds"))


def test_kairos_homogeneous_pools_are_the_same_on_ray(ray_cluster):
    from servelab import kairos

    from .shared_data import shared_path

    size = {"queries": 1000, "seeds": (0,), "rel_tol": 0.05}
    folder = shared_path("kairos")
    serial = kairos.best_homogeneous(folder, "rm2", size=size)
    on_ray = kairos.best_homogeneous(folder, "rm2", size=size, backend="ray", processes=2)
    assert len(serial) >= 2 and serial["rate"].iloc[0] > 0
    pd.testing.assert_frame_equal(serial, on_ray)


def test_kairos_distributor_comparisons_are_the_same_on_ray(ray_cluster):
    # Fig. 9's four schemes and Fig. 10's configuration x scheme measurements are sweep points.
    from servelab import kairos

    from .shared_data import shared_path

    size = {"queries": 500, "seeds": (0,), "rel_tol": 0.05}
    folder = shared_path("kairos")
    config = {"g4dn.xlarge": 1, "r5n.large": 3}
    serial = kairos.compare_distributors(folder, "ncf", size=size, config=config)
    on_ray = kairos.compare_distributors(
        folder, "ncf", size=size, config=config, backend="ray", processes=2
    )
    assert list(serial.index) == ["kairos", "ribbon", "clockwork", "drs", "oracle"]
    pd.testing.assert_frame_equal(serial, on_ray)
    assert serial.attrs["drs_tried"] == on_ray.attrs["drs_tried"] and serial.attrs["drs_tried"]
    schemes = {"ribbon": "ribbon", "clockwork": "clockwork"}
    serial = kairos.exploration_overhead(folder, "ncf", size=size, distributors=schemes)
    on_ray = kairos.exploration_overhead(
        folder, "ncf", size=size, distributors=schemes, backend="ray", processes=2
    )
    pd.testing.assert_frame_equal(serial, on_ray)


# ---- retries and errors ------------------------------------------------------------------------


@pytest.mark.parametrize("backend", ["local", "ray"])
def test_a_point_whose_worker_dies_is_retried_once_then_reported(request, tmp_path, backend):
    if backend == "ray":
        request.getfixturevalue("ray_cluster")
    frame = sweep(
        dying_point,
        {"i": [0, 1, 2, 3]},
        processes=2,
        backend=backend,
        shared={"marks": str(tmp_path)},
        on_error="record",
        progress=False,
    )
    assert list(frame["i"]) == [0, 1, 2, 3], frame.to_string()
    # Point 1 died once and succeeded on its retry; point 2 died on both attempts.
    assert frame["square"].tolist()[:2] == [0, 1] and frame["square"].tolist()[3] == 9, (
        frame.to_string()
    )
    assert np.isnan(frame["square"][2])
    assert frame["error"][2].startswith("WorkerDied: its ")
    assert frame["error"].isna().tolist() == [True, True, False, True]


@pytest.mark.parametrize("backend", ["local", "ray"])
def test_a_raising_point_is_recorded_with_its_error_on_both_backends(request, backend):
    if backend == "ray":
        request.getfixturevalue("ray_cluster")
    frame = sweep(
        failing_point, {"x": [2, 3, 4]}, processes=2, backend=backend, on_error="record",
        progress=False,
    )  # fmt: skip
    assert frame["error"].tolist() == [None, "ZeroDivisionError: division by zero", None]
    assert frame["inverse"].tolist()[::2] == [-1.0, 1.0]


def test_a_dying_point_raises_sweep_error_by_default(ray_cluster, tmp_path):
    with pytest.raises(SweepError, match=r"sweep point 0 \{'i': 2\} failed: WorkerDied"):
        sweep(
            dying_point,
            {"i": [2, 3]},
            backend="ray",
            shared={"marks": str(tmp_path)},
            progress=False,
        )


# ---- Ctrl-C ------------------------------------------------------------------------------------


def _ctrl_c_once_busy(marks: Path, busy: int) -> threading.Thread:
    """Presses Ctrl-C (SIGINT to the main thread) once ``busy`` slow points are running."""

    def press() -> None:
        deadline = time.monotonic() + 60
        while len(list(marks.iterdir())) < busy and time.monotonic() < deadline:
            time.sleep(0.02)
        signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)

    thread = threading.Thread(target=press, daemon=True)
    thread.start()
    return thread


def _gone(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc (Linux)")
def test_ctrl_c_on_ray_keeps_the_finished_rows_and_ends_the_running_tasks(ray_cluster, tmp_path):
    # Two slots: the slow points 2 and 3 start only once points 0 and 1 have come back.
    thread = _ctrl_c_once_busy(tmp_path, busy=2)
    sent = None
    with pytest.raises(SweepInterrupted) as caught:
        sweep(
            slow_after_two,
            {"i": range(6)},
            backend="ray",
            processes=2,
            shared={"marks": str(tmp_path)},
            progress=False,
        )
    sent = time.monotonic()
    thread.join()
    assert caught.value.total == 6
    assert caught.value.frame.to_dict("list") == {"i": [0, 1], "square": [0, 1]}
    # The force-cancelled tasks' worker processes end (Ray starts fresh ones).
    pids = [int(p.name) for p in tmp_path.iterdir()]
    while not all(_gone(pid) for pid in pids) and time.monotonic() - sent < 10:
        time.sleep(0.05)
    assert all(_gone(pid) for pid in pids), pids


def test_ctrl_c_on_local_processes_can_return_the_finished_rows(tmp_path):
    thread = _ctrl_c_once_busy(tmp_path, busy=2)
    frame = sweep(
        slow_after_two,
        {"i": range(6)},
        processes=2,
        shared={"marks": str(tmp_path)},
        on_interrupt="return",
        progress=False,
    )
    thread.join()
    assert frame.to_dict("list") == {"i": [0, 1], "square": [0, 1]}


# ---- bad input ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"backend": "spark"}, "backend='spark' must be one of 'local', 'ray'"),
        ({"ray_address": "auto"}, "ray_address='auto' needs backend='ray'"),
        ({"ray_init": {"num_cpus": 2}}, r"ray_init=\{'num_cpus': 2\} needs backend='ray'"),
        ({"backend": "ray", "ray_address": 5}, "ray_address=5 must be a string"),
        ({"retries": -1}, "retries=-1 must be an integer >= 0"),
        ({"on_error": "ignore"}, "on_error='ignore' must be 'raise' or 'record'"),
        ({"on_interrupt": "drop"}, "on_interrupt='drop' must be 'raise' or 'return'"),
        ({"shared": {"i": 1}}, "shared key 'i' is also a parameter of grid point 0"),
        ({"shared": [1]}, r"shared=\[1\] must be a dict"),
    ],
)
def test_bad_backend_options_raise_naming_them(kwargs, message):
    with pytest.raises(ValueError, match=message):
        sweep(slow_after_two, {"i": [0]}, progress=False, **kwargs)


def test_a_shared_input_that_cannot_go_to_worker_processes_is_named():
    with pytest.raises(ValueError, match=r"shared\['lock'\] cannot be sent to worker processes"):
        sweep(
            slow_after_two,
            {"i": [0, 1]},
            processes=2,
            shared={"marks": "", "lock": threading.Lock()},
        )
