"""RRL's latency estimator on its two backends: "eigen" (built in) and "libtorch" (servelab._torch).

Both start from the same seeded weights and train on the same minibatches (the core draws both);
only float rounding differs, since LibTorch's matrix products sum in another order. Measured on
the surface below after 200 observations: weights within 1.2e-7 of each other, predictions within
3.6e-7 relative (a few float32 ulps), with the default options and with l1/l2 on; after 2,000
observations still within 4.5e-7 and 8.3e-7 (rounding differences do not grow into divergence).
The tolerances (weights 1e-6, predictions 1e-5 relative) leave room for another BLAS or vector
width, and stay far below what the learner can tell apart (its costs compare configurations
differing by percent).
"""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from servelab import backends, rrl
from servelab._core import rrl as core_rrl

OBSERVATIONS = 200


def needs_libtorch() -> None:
    status = backends.status("torch")
    if not status.usable:
        pytest.skip(f"the libtorch estimator needs servelab's torch backend: {status.reason}")


@pytest.fixture
def one_torch_thread():
    """One intra-op thread, as docs/rrl.md advises for this network: at batch 4 torch's threads
    only add synchronisation (on a loaded 2-core machine, milliseconds per step)."""
    needs_libtorch()
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def point(i: int) -> list[float]:
    return [(i * 7 % 11) / 10.0, (i * 5 % 13) / 12.0, (i * 3 % 7) / 6.0, (i % 5) / 4.0]


def latency_ms(x: list[float]) -> float:
    return 5.0 + 40.0 * x[0] ** 2 + 20.0 * abs(x[1] - 0.5) + 30.0 * x[2] * x[3]


def trained(backend: str, seed: int = 7, **options) -> rrl.LatencyEstimator:
    f = rrl.LatencyEstimator(4, {"estimator": backend, **options}, seed=seed)
    for i in range(OBSERVATIONS):
        f.observe(point(i), latency_ms(point(i)))
    return f


def predictions(f: rrl.LatencyEstimator) -> np.ndarray:
    return np.array([f.predict_ms(point(1000 + 17 * k)) for k in range(50)])


def test_eigen_is_the_default_and_built_in():
    assert rrl.LatencyEstimator(4).backend == "eigen"
    assert rrl.LearnerConfig().estimator == "eigen"
    assert core_rrl.estimator_backends()["eigen"] == "servelab._core"


def test_an_unknown_backend_is_a_value_error_naming_it():
    with pytest.raises(ValueError, match=r"estimator='tpu' is not an estimator backend.*eigen"):
        rrl.LatencyEstimator(4, {"estimator": "tpu"})
    with pytest.raises(ValueError, match="estimator='tpu'"):
        rrl.tune(rrl.cpu_space(2), "poisson(rate=2)", "rrl", steps=5, learner={"estimator": "tpu"})
    with pytest.raises(ValueError, match="estimator"):
        rrl.LatencyEstimator(4, {"estimator": 3})


# The default options, and FTRL's l1/l2 branch (weights held at w0 while |z| <= l1).
@pytest.mark.parametrize("options", [{}, {"ftrl_l1": 0.01, "ftrl_l2": 0.1, "batch": 8}])
def test_libtorch_starts_from_the_same_weights_and_agrees_with_eigen(one_torch_thread, options):
    start = [rrl.LatencyEstimator(4, {"estimator": b}, seed=7) for b in ("eigen", "libtorch")]
    assert start[1].backend == "libtorch"
    assert core_rrl.estimator_backends()["libtorch"] == "servelab._torch"
    assert start[0].weights() == start[1].weights()
    eigen, torch_ = trained("eigen", **options), trained("libtorch", **options)
    assert torch_.samples == eigen.samples == OBSERVATIONS
    np.testing.assert_allclose(torch_.weights(), eigen.weights(), rtol=0, atol=1e-6)
    np.testing.assert_allclose(predictions(torch_), predictions(eigen), rtol=1e-5)
    # and both learnt the surface, not just the same thing
    truth = np.array([latency_ms(point(1000 + 17 * k)) for k in range(50)])
    assert np.median(np.abs(np.log(predictions(torch_) / truth))) < 0.25


def test_libtorch_is_deterministic(one_torch_thread):
    a, b = trained("libtorch"), trained("libtorch")
    assert a.weights() == b.weights()
    assert predictions(a).tolist() == predictions(b).tolist()
    assert trained("libtorch", seed=8).weights() != a.weights()


def test_a_tuning_run_with_libtorch_makes_eigens_choices(one_torch_thread):
    """The fidelity tests' surface (8 cores, 7 requests/s): the same choices, episode by episode,
    hence the same final configuration."""
    space, model = rrl.cpu_space(8), rrl.PerfModel(cores=8)
    runs = {
        b: rrl.tune(
            space,
            "poisson(rate=7)",
            "rrl",
            steps=600,
            model=model,
            oracle_episodes=10,
            seed=0,
            learner={"estimator": b},
        )  # fmt: skip
        for b in ("eigen", "libtorch")
    }
    assert runs["libtorch"].settings["learner"]["estimator"] == "libtorch"
    np.testing.assert_array_equal(
        runs["libtorch"].columns["config"], runs["eigen"].columns["config"]
    )
    final = {b: r.summary()["final_config"] for b, r in runs.items()}
    assert final["libtorch"] == final["eigen"]


def test_the_cli_accepts_the_estimator(one_torch_thread, capsys):
    from servelab.cli import main

    args = ["rrl", "tune", "--cores", "2", "--rate", "2", "--steps", "50", "--method", "rrl"]
    assert main([*args, "--estimator", "libtorch", "--json"]) == 0
    out = capsys.readouterr().out
    assert '"estimator": "libtorch"' in out


def test_the_registered_tuners_take_the_estimator(one_torch_thread):
    import servelab

    sc = servelab.load_scenario("default").to_dict()
    sc["workers"] = [{"hardware": "c5n.2xlarge", "count": 2, "models": ["rm2"]}]
    sc["workload"]["count"] = 120
    for name in (rrl.register_tuner(), rrl.register_batch_tuner()):
        runs = {
            e: servelab.simulate(sc, scheduler=f"{name}(estimator='{e}', episode_requests=20)")
            for e in ("eigen", "libtorch")
        }
        np.testing.assert_array_equal(
            runs["libtorch"].columns["worker"], runs["eigen"].columns["worker"]
        )
        with pytest.raises(ValueError, match="estimator"):
            servelab.make_scheduler(f"{name}(estimator='numpy')")


def test_the_benchmark_times_both_backends():
    needs_libtorch()
    bench = Path(__file__).parents[2] / "benchmarks" / "python" / "bench_rrl.py"
    proc = subprocess.run(
        [sys.executable, str(bench), "--estimator", "libtorch", "--smoke"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    rows = [line.split()[0] for line in proc.stdout.splitlines() if " us   CPU " in line]
    assert rows == ["eigen", "libtorch", "libtorch"], proc.stdout
    assert "load average" in proc.stdout
