"""Worker processes import the script that started them again: a script that starts them from
its top-level code, without `if __name__ == "__main__":`, gets an error that says to add the
guard, not a worker that died (WorkerDied)."""

import multiprocessing
import subprocess
import sys
import textwrap

import pytest

import servelab

UNGUARDED = """
    import servelab

    frame = servelab.sweep(dict, {"a": [1, 2]}, processes=2, progress=False)
    print("rows", len(frame))
"""

# The same call from a function that the top level calls: still unguarded.
UNGUARDED_IN_MAIN = """
    import servelab


    def main():
        return servelab.sweep(dict, {"a": [1, 2]}, processes=2, progress=False)


    main()
"""

GUARDED = """
    import servelab


    def main():
        frame = servelab.sweep(dict, {"a": [1, 2]}, processes=2, progress=False)
        print("rows", len(frame), sorted(frame["a"]))


    if __name__ == "__main__":
        main()
"""


def run_script(tmp_path, text: str) -> subprocess.CompletedProcess:
    script = tmp_path / "experiment.py"
    script.write_text(textwrap.dedent(text))
    return subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )


@pytest.mark.parametrize("text", [UNGUARDED, UNGUARDED_IN_MAIN], ids=["top-level", "main()"])
def test_an_unguarded_script_is_told_to_add_the_guard(tmp_path, text):
    done = run_script(tmp_path, text)
    assert done.returncode != 0
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("RuntimeError: processes=2 starts worker processes"), done.stderr
    assert 'if __name__ == "__main__":' in last
    assert "experiment.py (line " in last
    assert "WorkerDied" not in done.stderr


def test_a_guarded_script_runs_its_sweep_in_worker_processes(tmp_path):
    done = run_script(tmp_path, GUARDED)
    assert done.returncode == 0, done.stderr
    assert "rows 2 [1, 2]" in done.stdout


def test_a_worker_importing_the_script_raises_the_same_error(monkeypatch):
    # What a worker process sees if its parent's check could not read the script: the call is
    # made while the worker is still importing __main__.
    monkeypatch.setattr(multiprocessing.current_process(), "_inheriting", True, raising=False)
    with pytest.raises(RuntimeError, match='outside an `if __name__ == "__main__":` block'):
        servelab.sweep(dict, {"a": [1, 2]}, processes=2, progress=False)


def test_one_process_needs_no_guard(tmp_path):
    done = run_script(tmp_path, UNGUARDED.replace("processes=2", "processes=1"))
    assert done.returncode == 0, done.stderr
    assert "rows 2" in done.stdout
