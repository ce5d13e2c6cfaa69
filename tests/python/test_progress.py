"""Long calls show a tqdm bar where someone watches (a terminal, a notebook) and stay silent in
logs and tests; ``progress=`` forces either way."""

import pytest

import servelab
from servelab import _progress, rrl

WORKLOAD = {"arrivals": "poisson(rate=400)", "count": 40,
            "apps": [{"name": "rm2", "slo_ms": 350, "sizes": "kairos_mix"}]}  # fmt: skip


def test_automatic_progress_is_off_without_a_terminal(capfd):
    assert _progress.wanted(None) is False  # pytest captures stderr: not a terminal
    assert _progress.wanted(True) is True and _progress.wanted(False) is False
    with pytest.raises(ValueError, match="progress='yes' must be True, False or None"):
        _progress.wanted("yes")
    servelab.serve("default", workload=WORKLOAD)
    assert capfd.readouterr().err == ""


def test_serve_shows_the_queries_that_arrived(capfd):
    r = servelab.serve("default", workload=WORKLOAD, progress=True)
    err = capfd.readouterr().err
    assert "serve (40 queries over" in err and "40/40" in err
    assert len(r) == 40


def test_progress_is_for_serving():
    with pytest.raises(ValueError, match="progress= is for servelab.serve"):
        servelab.simulate("default", workload=WORKLOAD, progress=True)


def test_compare_methods_shows_the_runs_done(capfd):
    space = rrl.cpu_space(4)
    runs = rrl.compare_methods(
        space, "poisson(rate=5)", ("rrl", "qlearning"), steps=30, episode_requests=20,
        oracle_episodes=5, model=rrl.PerfModel(cores=4), progress=True,
    )  # fmt: skip
    assert set(runs) == {"rrl", "qlearning"}
    err = capfd.readouterr().err
    assert "tuning runs" in err and "2/2" in err
    rrl.compare_methods(
        space, "poisson(rate=5)", ("rrl",), steps=30, episode_requests=20, oracle_episodes=5,
        model=rrl.PerfModel(cores=4),
    )  # fmt: skip
    assert capfd.readouterr().err == ""
