"""RAMSIS (EuroSys'24): per-worker MDP policies for model selection that exploit arrival lulls.

::

    import servelab
    from servelab import ramsis

    task = ramsis.image_task("../shared/data/ramsis")           # or ramsis.get_task("image")
    policy = ramsis.solve(task, slo_ms=150, load_qps=2000, workers=60)
    ramsis.expected_performance(policy, task)["expected_accuracy"]
    run = ramsis.run_experiment("image", "ramsis", 60, load=2000, data="../shared/data/ramsis")
    run.summary["accuracy_per_satisfied_query"]                 # a fraction
    servelab.simulate(run.scenario)                             # replays it

Modules: ``policy`` (MDP, policies, guarantees, policy sets), ``tasks`` (the tasks' latency
tables), ``baselines`` (Jellyfish+ and ModelSwitching offline), ``trace`` (load traces as
arrivals), ``schedulers`` (the registered schedulers' specs and objects), ``methods`` (the methods
as the evaluation configures them), ``experiments`` (runs through servelab.simulate), ``paper``
(the paper's settings and figures, comparisons), ``data`` (the artifact's files), ``cache``,
``cli`` and ``plotting``. Every name below loads its module on first use, so importing this
package imports no pandas, scipy or matplotlib.
"""

from __future__ import annotations

from .._lazy import lazy_exports

# public name -> the module (of this package) that defines it
_EXPORTS = {
    **dict.fromkeys(
        (
            "LatencyTable", "PolicySet", "RamsisMdp", "WorkerPolicy", "build_mdp",
            "expected_performance", "from_json", "latency_table", "load", "policy_set",
            "policy_table", "save", "simulate_worker", "solve", "to_json",
        ),
        "policy",
    ),
    **dict.fromkeys(
        ("IMAGE_MODELS", "TEXT_MODELS", "TaskData", "image_task", "text_task"), "tasks"
    ),
    **dict.fromkeys(("jellyfish_rule", "model_switching_table"), "baselines"),
    **dict.fromkeys(("LoadTrace",), "trace"),
    **dict.fromkeys(
        (
            "jellyfish", "jellyfish_spec", "model_switching", "model_switching_spec",
            "policy_file", "ramsis_spec", "scheduler",
        ),
        "schedulers",
    ),
    **dict.fromkeys(
        (
            "expected_violation", "make_ms_table", "method_spec", "ramsis_policies", "satisfiable",
            "trace_capacity", "worker_capacity",
        ),
        "methods",
    ),
    **dict.fromkeys(
        (
            "RamsisRun", "WORKER_GRID", "compare_methods", "experiment_scenario",
            "paper_evaluation", "resource_saving_curve", "run_experiment", "summarize",
        ),
        "experiments",
    ),
    **dict.fromkeys(
        (
            "ARTIFACT_GAINS", "CONSTANT_LOADS", "METHODS", "PAPER_SAVINGS", "POLICY_LOADS",
            "TRACE_DURATION_S", "EvaluationPart", "accuracy_gains", "format_evaluation",
            "resource_savings",
        ),
        "paper",
    ),
    **dict.fromkeys(
        (
            "ARTIFACT_MS_FOLDER", "DATA_ENV", "data_dir", "get_task", "read_artifact_ms_tables",
            "read_load_trace", "read_policy_gen", "twitter_trace",
        ),
        "data",
    ),
    **dict.fromkeys(("plot_policy", "plot_policy_set"), "plotting"),
}  # fmt: skip

__all__, __getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)
