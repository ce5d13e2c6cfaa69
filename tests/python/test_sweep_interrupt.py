"""A sweep in worker processes stops promptly on Ctrl-C or a failing point, and leaves no
process behind (each case runs the sweep in a child Python and watches its process tree)."""

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(
    not Path("/proc/self/stat").exists(), reason="process checks read /proc (Linux)"
)

# Each point records its worker's pid, then runs far longer than the test: the sweep can only end
# in time if the parent kills the workers instead of waiting for their points. Point FAILING (if
# any) raises once both workers are busy; STUBBORN points ignore SIGTERM, so only SIGKILL ends them.
SLOW_SWEEP = textwrap.dedent(
    """
    import os
    import signal
    import sys
    import time
    from pathlib import Path

    import servelab
    from servelab.sweeps import SweepError

    STARTED, FAILING, STUBBORN = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3] == "stubborn"


    def slow_point(i):
        if STUBBORN:
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
        (STARTED / str(os.getpid())).touch()
        if i == FAILING:
            while len(list(STARTED.iterdir())) < 2:
                time.sleep(0.01)
            raise ValueError("this point fails")
        time.sleep(120)
        return i


    if __name__ == "__main__":
        try:
            servelab.sweep(slow_point, {"i": range(6)}, processes=2, progress=False)
        except KeyboardInterrupt:
            print("KeyboardInterrupt", flush=True)
            sys.exit(3)
        except SweepError as error:
            print(error, flush=True)
            sys.exit(4)
        print("returned", flush=True)
    """
)


def _stat_fields(pid: int) -> list[str] | None:
    """/proc/<pid>/stat after the command name: state, parent pid, ...; None once it is gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError):
        return None


def _running(pid: int) -> bool:
    """Alive and not a zombie (a zombie has ended; only its exit status is left)."""
    fields = _stat_fields(pid)
    return fields is not None and fields[0] != "Z"


def _descendants(root: int) -> set[int]:
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and (fields := _stat_fields(int(entry.name))) is not None:
            children.setdefault(int(fields[1]), []).append(int(entry.name))
    found, todo = set(), [root]
    while todo:
        for child in children.get(todo.pop(), []):
            found.add(child)
            todo.append(child)
    return found


def _wait_for(condition, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return condition()


def _start_sweep(
    tmp_path: Path, failing: int = -1, stubborn: bool = False
) -> tuple[subprocess.Popen, Path]:
    script = tmp_path / "slow_sweep.py"
    script.write_text(SLOW_SWEEP)
    started = tmp_path / "started"
    started.mkdir()
    proc = subprocess.Popen(
        [sys.executable, str(script), str(started), str(failing), "stubborn" if stubborn else "-"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group, so that killpg reaches only it
    )
    return proc, started


def _finish(proc: subprocess.Popen) -> tuple[str, str]:
    """Its output once it and every process holding its stdout ended (10 s at most)."""
    try:
        return proc.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        proc.communicate()
        pytest.fail("the sweep was still running 10 s later")


def _kill_group(proc: subprocess.Popen) -> None:
    """Kills what is left of the child's process group, orphaned workers included."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass  # nothing left


def _assert_no_process_left(workers: set[int], spawned: set[int]) -> None:
    # The parent joined its workers before it exited: none is left running its 120 s point.
    assert not [pid for pid in workers if _running(pid)]
    # The forkserver and resource tracker see their parent's exit and end on their own.
    assert _wait_for(lambda: not [pid for pid in spawned if _running(pid)], 5.0), [
        (pid, _stat_fields(pid)) for pid in spawned if _running(pid)
    ]


def _ctrl_c(proc: subprocess.Popen, how: str) -> None:
    if how == "process-group":  # a terminal's Ctrl-C: the parent, its forkserver and the workers
        os.killpg(proc.pid, signal.SIGINT)
        return
    proc.send_signal(signal.SIGINT)  # Jupyter's interrupt: the kernel process only
    if how == "twice-while-stopping":  # impatient: again while the parent waits for its workers
        time.sleep(0.2)
        proc.send_signal(signal.SIGINT)


@pytest.mark.parametrize(
    ("how", "stubborn"),
    [("process", False), ("process-group", False), ("twice-while-stopping", True)],
    ids=["process", "process-group", "twice-with-workers-ignoring-sigterm"],
)
def test_ctrl_c_stops_a_process_sweep_within_two_seconds_and_kills_its_workers(
    tmp_path, how, stubborn
):
    proc, started = _start_sweep(tmp_path, stubborn=stubborn)
    try:
        # Both workers are inside a point.
        assert _wait_for(lambda: len(list(started.iterdir())) == 2, 120), proc.poll()
        workers = {int(p.name) for p in started.iterdir()}
        spawned = _descendants(proc.pid)
        assert workers <= spawned

        sent = time.monotonic()
        _ctrl_c(proc, how)
        out, err = _finish(proc)
        stopped_s = time.monotonic() - sent
    finally:
        _kill_group(proc)
        proc.wait()

    print(f"stopped {stopped_s:.3f} s after Ctrl-C")
    assert proc.returncode == 3, (out, err)
    assert out.strip() == "KeyboardInterrupt" and err == ""  # no worker printed a traceback
    assert stopped_s < 2.0, f"took {stopped_s:.2f} s to stop"
    _assert_no_process_left(workers, spawned)


def test_a_failing_point_stops_the_running_ones(tmp_path):
    proc, started = _start_sweep(tmp_path, failing=0)
    try:
        assert _wait_for(lambda: len(list(started.iterdir())) == 2, 120), proc.poll()
        workers = {int(p.name) for p in started.iterdir()}
        spawned = _descendants(proc.pid)
        both_busy = time.monotonic()
        out, err = _finish(proc)
        stopped_s = time.monotonic() - both_busy
    finally:
        _kill_group(proc)
        proc.wait()

    print(f"stopped {stopped_s:.3f} s after both points started")
    assert proc.returncode == 4, (out, err)
    assert "sweep point 0 {'i': 0} failed: ValueError: this point fails" in out
    assert stopped_s < 2.0, f"took {stopped_s:.2f} s to stop"  # point 1 sleeps 120 s
    _assert_no_process_left(workers, spawned)
