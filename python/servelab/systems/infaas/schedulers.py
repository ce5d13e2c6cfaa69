"""Spec builders for INFaaS's registered schedulers (``servelab.list_schedulers()`` documents
every parameter)::

    servelab.simulate(scenario, scheduler=infaas.infaas_spec(max_workers=8))
"""

from __future__ import annotations

from collections.abc import Sequence

#: name -> what it is (the registry's doc has the details)
SCHEDULERS = {
    "infaas": "per-query getVariant, model-level autoscaling, optional VM-Autoscaler",
    "clipper_plus": "Clipper+: the pre-loaded variants only, fixed",
    "sm_plus": "SM+: one fixed variant scaled horizontally (replicas, new workers)",
}


def _args(**kwargs: object) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in kwargs.items())


def infaas_spec(
    models: Sequence[str] = (),
    max_workers: int = 0,
    startup_s: float = 20.0,
    poll_s: float = 2.0,
    threshold: float = 0.8,
    idle_s: float = 60.0,
    autoscaler: str = "greedy",
) -> str:
    """The INFaaS policy; models: the registered models queries may use (default: all);
    max_workers > 0 turns the VM-Autoscaler on; autoscaler: the Model-Autoscaler's solver
    ('greedy', Sec. 4.2.2, or 'ilp', Sec. 4.2.1's exact program)."""
    if isinstance(models, str):
        raise ValueError(f"models={models!r} must be a list of names, not a string")
    return (
        "infaas("
        + _args(
            models=",".join(models),
            max_workers=max_workers,
            startup_s=startup_s,
            poll_s=poll_s,
            threshold=threshold,
            idle_s=idle_s,
            autoscaler=autoscaler,
        )
        + ")"
    )


def _models_list(app_models: Sequence[str]) -> str:
    if isinstance(app_models, str):
        raise ValueError(f"app_models={app_models!r} must be a list of names, not a string")
    return ",".join(app_models)


def clipper_plus_spec(app_models: Sequence[str] = ()) -> str:
    """The Clipper+ baseline; app_models: the variant pinned to each application, by index."""
    listed = _models_list(app_models)
    return f"clipper_plus(app_models={listed!r})" if listed else "clipper_plus"


def sm_plus_spec(
    startup_s: float = 20.0,
    idle_s: float = 60.0,
    max_workers: int = 16,
    app_models: Sequence[str] = (),
) -> str:
    """The SM+ baseline; app_models: each application's fixed variant, by index."""
    args = {"startup_s": startup_s, "idle_s": idle_s, "max_workers": max_workers}
    if app_models:
        args["app_models"] = _models_list(app_models)
    return "sm_plus(" + _args(**args) + ")"
