"""RAMSIS (EuroSys'24): per-worker MDP policies for model selection that exploit arrival lulls.

Offline: ``build_mdp`` / ``solve`` / ``evaluate`` / ``policy_set`` generate per-worker policies and
their guarantees from a task's latency table (``image_task`` / ``text_task`` read the artifact's
data); ``save`` / ``load`` / ``to_json`` / ``from_json`` move them around; ``plot_policy`` draws
one. Online: the scheduler, its baselines and the simulation harness.
"""

from .plotting import plot_policy, plot_policy_set
from .policy import (
    LatencyTable,
    PolicySet,
    RamsisMdp,
    WorkerPolicy,
    build_mdp,
    evaluate,
    from_json,
    latency_table,
    load,
    policy_set,
    policy_table,
    save,
    simulate_worker,
    solve,
    to_json,
)
from .tasks import IMAGE_MODELS, TEXT_MODELS, TaskData, image_task, text_task

__all__ = [
    "IMAGE_MODELS",
    "TEXT_MODELS",
    "LatencyTable",
    "PolicySet",
    "RamsisMdp",
    "TaskData",
    "WorkerPolicy",
    "build_mdp",
    "evaluate",
    "from_json",
    "image_task",
    "latency_table",
    "load",
    "plot_policy",
    "plot_policy_set",
    "policy_set",
    "policy_table",
    "save",
    "simulate_worker",
    "solve",
    "text_task",
    "to_json",
]

# The online side: the scheduler, its baselines and the evaluation's simulation harness.
from .baselines import (  # noqa: E402
    jellyfish,
    jellyfish_rule,
    model_switching,
    model_switching_table,
    read_policy_gen,
)
from .simulate import (  # noqa: E402
    ARTIFACT_GAINS,
    ARTIFACT_MS_FOLDER,
    CONSTANT_LOADS,
    METHODS,
    POLICY_LOADS,
    EvaluationPart,
    RamsisRun,
    accuracy_gains,
    compare_methods,
    data_dir,
    expected_violation,
    format_evaluation,
    get_task,
    make_ms_table,
    paper_evaluation,
    ramsis_policies,
    satisfiable,
    scheduler,
    simulate,
    summarize,
    twitter_trace,
)
from .trace import LoadTrace, read_load_trace  # noqa: E402

__all__ += [  # noqa: PLE0605
    "ARTIFACT_GAINS", "ARTIFACT_MS_FOLDER", "CONSTANT_LOADS", "METHODS", "POLICY_LOADS",
    "EvaluationPart", "LoadTrace", "RamsisRun", "accuracy_gains", "compare_methods", "data_dir",
    "expected_violation", "format_evaluation", "get_task", "jellyfish", "jellyfish_rule",
    "make_ms_table", "model_switching", "model_switching_table", "paper_evaluation",
    "ramsis_policies", "read_load_trace", "read_policy_gen", "satisfiable", "scheduler",
    "simulate", "summarize", "twitter_trace",
]  # fmt: skip
