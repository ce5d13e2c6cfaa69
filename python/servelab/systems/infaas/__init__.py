"""INFaaS (Romero et al., ATC'21): model-less inference serving. Queries state goals (accuracy,
latency) instead of a model; INFaaS picks a model-variant per query (getVariant, Sec. 4.1) and
scales variants horizontally and vertically (Sec. 4.2).

::

    from servelab import infaas

    store = infaas.metadata_store(infaas.resnet50_variants())   # C++ metadata store
    gpu = store.add_worker("gpu")
    store.get_variant(task="classification", accuracy=0.7, latency_ms=50)
    # {"kind": "inactive", "variant": "resnet50_pytorch_gpu_b1", "worker": 0, ...}

    problem = infaas.scaling_problem(infaas.table2_variants(), load_qps=1000, slo_ms=300)
    infaas.solve_exact(problem)["instances"]    # [0, 2, 1]: Table 3's cheapest configuration
    infaas.solve_greedy(problem)["instances"]   # [0, 10, 0]: Sec. 4.2.2's heuristic
    print(infaas.format_table3(infaas.table3()))

    servelab.simulate(scenario, scheduler="infaas")   # or "clipper_plus", "sm_plus"

Modules: ``catalogue`` (the variants as data, the Profile bridge, the metadata store),
``autoscaler`` (the Sec. 4.2.1 ILP and the Sec. 4.2.2 greedy), ``planner`` (the ILP over
several applications with resource rows: a starting variant set, and the greedy's gap),
``sec61`` (Sec. 6.1 / Fig. 5: INFaaS vs Clipper+ and SM+ on many applications), ``paper``
(Table 3 and the
paper's numbers), ``schedulers`` (spec builders of the registered policies ``infaas``,
``clipper_plus``, ``sm_plus``), ``experiments`` (Fig. 6's panels and the online + offline run
in the simulator), ``cli`` (``servelab infaas ...``); the real-serving API:
``registry`` (``ModelRegistry``: register_model's variants, profiled), ``server``
(``InfaasServer``: online and offline queries served by one ``servelab.Session`` of the C++
``infaas`` policy on real executors), ``loading`` (one variant on an
executor), ``api`` (``register_model`` / ``online_query`` / ``offline_query`` on a default
registry and server). Every name loads its module on first use.
"""

from __future__ import annotations

from .._lazy import lazy_exports

# public name -> the module (of this package) that defines it
_EXPORTS = {
    **dict.fromkeys(
        (
            "COST_PER_GB_S", "HARDWARE", "TABLE8_ACCURACY", "batch_curve", "check_variants",
            "metadata_store", "resnet50_variants", "table2_variants", "table8_variants",
            "to_profile", "variants_from_profile",
        ),
        "catalogue",
    ),
    **dict.fromkeys(
        ("configuration", "cost_gap", "scaling_problem", "solve_exact", "solve_greedy"),
        "autoscaler",
    ),
    **dict.fromkeys(("PAPER", "TABLE3", "format_table3", "table3"), "paper"),
    **dict.fromkeys(
        ("SCHEDULERS", "clipper_plus_spec", "infaas_spec", "sm_plus_spec"), "schedulers"
    ),
    # the real-serving API (docs/infaas.md, "Real serving API")
    **dict.fromkeys(
        ("default_registry", "default_server", "offline_query", "online_query", "register_model"),
        "api",
    ),
    "ModelRegistry": "registry",
    **dict.fromkeys(("InfaasServer", "OfflineJob", "OnlineResult", "ServingError"), "server"),
    "VariantLoadError": "loading",
    # simulated fidelity runs (docs/infaas.md, "Fidelity runs")
    **dict.fromkeys(
        ("FIG6_LOADS", "FIG6_SYSTEMS", "fig6", "format_fig6", "offline_colocation", "variant_cost"),
        "experiments",
    ),
    # the ILP over several applications (Sec. 6.1's placement; the module sec61 runs Fig. 5)
    **dict.fromkeys(("compare_with_greedy", "greedy_placement", "plan_placement"), "planner"),
}  # fmt: skip

__all__, __getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)
