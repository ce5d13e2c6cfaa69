"""RRL (SC'19): region-based reinforcement learning that tunes serving parallelism online.

::

    from servelab import rrl

    space = rrl.cpu_space(cores=16)                       # workers x inter_op x intra_op threads
    run = rrl.tune(space, rrl.workload("poisson", rate=14), method="rrl", steps=3000, seed=1)
    run.summary()["converged_step"], run.oracle["describe"]
    runs = rrl.compare_methods(space, rrl.workload("dynamic", rate=14), steps=3000)
    rrl.region_sweep(space, rrl.workload("poisson", rate=14), radii=[0, 1, 1.5, 2])  # Fig. 11

Modules: ``spaces`` (the CPU and GPU configuration spaces), ``model`` (the parallelism performance
model and its fitting hook), ``workloads`` (the artifact's trace, the dynamic and spiky processes),
``tuning`` (one simulated tuning experiment: the learners against the oracle), ``experiments``
(method comparisons, the region-size sweep), ``real`` (a short run on a real executor's
threads), ``sim_policy`` (RRL as a serving policy that sets the workers' knobs with set_config,
simulated through the ``rrl_cpu`` config model), ``batch_policy`` (RRL's GPU space as a serving
policy: batch size, batch timeout, batch threads), ``sim_tuning`` (tuning runs whose episodes
``servelab.simulate`` serves, to check the episode model against), ``calibration`` (the CPU model
fitted to measurements of a real executor), ``paper`` (the paper's numbers and our report beside
them), ``data`` (the artifact's files), ``cli`` and ``plotting``. Every name below loads its module
on first use, so importing this package imports no pandas or matplotlib.
"""

from __future__ import annotations

from .._lazy import lazy_exports

# public name -> the module (of this package) that defines it
_EXPORTS = {
    **dict.fromkeys(("ConfigSpace", "cpu_space", "gpu_space", "machine_cores"), "spaces"),
    **dict.fromkeys(
        ("CpuModelFit", "PerfModel", "cpu_service_ms", "fit_cpu_model", "gpu_service_ms"), "model"
    ),
    **dict.fromkeys(("WORKLOADS", "artifact_trace", "workload"), "workloads"),
    **dict.fromkeys(
        (
            "LatencyEstimator", "LearnerConfig", "METHODS", "OBJECTIVES", "QLearner", "TuningRun",
            "draw_episodes", "episode", "oracle", "surface", "tune",
        ),
        "tuning",
    ),
    **dict.fromkeys(("compare_methods", "region_sweep", "regret_table"), "experiments"),
    **dict.fromkeys(("ExecutorTuning", "ServingTuning", "tune_executor", "tune_serving"), "real"),
    **dict.fromkeys(
        (
            "RrlTuner", "SimulatedTuning", "config_model_spec", "episode_in_simulator",
            "register_tuner", "tune_in_simulator",
        ),
        "sim_policy",
    ),
    "tune_simulated": "sim_tuning",
    **dict.fromkeys(("RrlBatchTuner", "register_batch_tuner"), "batch_policy"),
    **dict.fromkeys(
        ("ProfilerFit", "concurrent_batch_ms", "fit_cells", "fit_from_profiler"), "calibration"
    ),
    **dict.fromkeys(("PAPER", "format_comparison", "format_region_sweep"), "paper"),
    **dict.fromkeys(("DATA_ENV", "data_dir", "read_trace_gaps"), "data"),
    **dict.fromkeys(
        (
            "plot_convergence", "plot_latency_ccdf", "plot_region_sweep", "plot_regret",
            "plot_slo_resources",
        ),
        "plotting",
    ),
}  # fmt: skip

__all__, __getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)
