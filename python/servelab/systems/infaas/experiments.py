"""INFaaS experiments in the simulator: Sec. 6.2 / Fig. 6 (variant selection and scaling on one
machine) and Sec. 6.3.2 (online + offline co-location), at reduced size::

    from servelab.infaas import experiments

    rows = experiments.fig6(load="flat")        # one row per system: cost, throughput, variants
    print(experiments.format_fig6(rows))
    experiments.offline_colocation()            # online violations with / without offline work

**The machine.** The paper's "one worker" hosts CPU, Inferentia and GPU variants; a servelab worker
runs one batch at a time, so INFaaS's machine is ``SLOTS`` workers per hardware type, each
starting with its hardware's cheapest variant (a scenario's worker always holds a model). The
baselines get only the slots they use (Clipper+_CPU's two TensorFlow instances, Clipper+_GPU's
one batch-8 TensorRT instance); SM+ adds a second instance of its variant as a new worker that
takes the variant's load time to start. **Cost** is Sec. 6.2's: each running variant instance
costs its ``cost_per_s`` (memory footprint x the hardware's rate per GB/s). The records say when
a variant ran, not when it was loaded, so a variant counts from its first batch on a worker
until its last plus its scale-down wait ``load_s`` (gaps shorter than that merged); variants a
policy never unloads (Clipper+'s, SM+'s first one) count for the whole run, and a variant loaded
but never used counts nothing (INFaaS's unused starting variants go after their load time).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ... import run as _run
from ...results import COMPLETED
from ...sweeps import SweepError, sweep
from . import catalogue

#: Workers per hardware type of the one simulated machine.
SLOTS = 2
HARDWARE_ORDER = ("cpu", "inferentia", "gpu")
TF_CPU = "resnet50_tensorflow_cpu_b1"
TRT_B1 = "resnet50_tensorrt_gpu_b1"
TRT_B8 = "resnet50_tensorrt_gpu_b8"

#: Fig. 6's systems: (scheduler spec, worker groups). SM+ starts a second instance (a worker of
#: its hardware, up to max_workers) in the variant's load time.
FIG6_SYSTEMS: dict[str, tuple[str, list[dict[str, Any]]]] = {
    "infaas": ("infaas", []),  # the whole machine: machine_workers()
    "clipper_plus_cpu": ("clipper_plus", [{"hardware": "cpu", "count": 2, "models": [TF_CPU]}]),
    "clipper_plus_gpu": ("clipper_plus", [{"hardware": "gpu", "count": 1, "models": [TRT_B8]}]),
    "sm_plus_cpu": (
        "sm_plus(startup_s=2, max_workers=2)",
        [{"hardware": "cpu", "count": 1, "models": [TF_CPU]}],
    ),
    "sm_plus_gpu": (
        "sm_plus(startup_s=6, max_workers=2)",
        [{"hardware": "gpu", "count": 1, "models": [TRT_B1]}],
    ),
}
#: Each hardware type's cheapest variant, which INFaaS's slots start with.
CHEAPEST = {"cpu": TF_CPU, "inferentia": "resnet50_neuron_inferentia_b1", "gpu": TRT_B1}

#: Fig. 6's three loads at reduced length: (interval_s, rates in QPS). The SLO (ours: Sec. 6.2
#: gives none) lets the 200 ms CPU variant serve, as the paper's CPU baselines did.
FIG6_LOADS: dict[str, tuple[float, list[float]]] = {
    "flat": (10.0, [4.0] * 6),  # Fig. 6a: a flat, low load
    "steady": (5.0, list(np.linspace(650.0, 700.0, 12))),  # 6b: slowly from 650 to 700 QPS
    "fluctuating": (10.0, [4.0, 4.0, 80.0, 80.0, 4.0, 4.0, 80.0, 80.0, 4.0, 4.0]),  # 6c
}
FIG6_SLO_MS = 1000.0

#: The paper's Sec. 6.2 statements, for printing beside ours.
FIG6_PAPER = {
    "flat": "INFaaS picked CPU variants: 21.6x cheaper than Clipper+_GPU, 21.3x than SM+_GPU",
    "steady": "INFaaS picked the batch-8 GPU variant; SM+_GPU (2 batch-1 instances) 5% dearer, "
    "15% fewer QPS; the CPU baselines served about 10 QPS",
    "fluctuating": "INFaaS: CPU at low load, Inferentia at spikes; 3x cheaper than the GPU "
    "baselines; the CPU baselines served about 10 QPS",
}


def machine_workers() -> list[dict[str, Any]]:
    """INFaaS's machine: ``SLOTS`` workers per hardware type, each with its cheapest variant."""
    return [{"hardware": hw, "count": SLOTS, "models": [CHEAPEST[hw]]} for hw in HARDWARE_ORDER]


def fig6_scenario(
    load: str, workers: list[dict[str, Any]] | None = None, slo_ms: float = FIG6_SLO_MS
) -> dict:
    """The scenario of one Fig. 6 load on these worker groups (default: INFaaS's machine)."""
    if load not in FIG6_LOADS:
        raise ValueError(f"load={load!r} must be one of {sorted(FIG6_LOADS)}")
    interval, rates = FIG6_LOADS[load]
    rate_list = ", ".join(f"{r:g}" for r in rates)
    return {
        "profile": catalogue.to_profile(catalogue.resnet50_variants()),
        "workers": workers or machine_workers(),
        "workload": {
            "arrivals": f"piecewise_rate(interval_s={interval:g}, rates=[{rate_list}])",
            "horizon_s": interval * len(rates),
            "apps": [{"name": "resnet50", "slo_ms": slo_ms, "accuracy_floor": 0.7}],
        },
        "drain_s": 30,
    }


def variant_cost(
    result: Any,
    horizon_s: float,
    pinned: Sequence[tuple[int, str]] = (),
    variants: Sequence[dict[str, Any]] | None = None,
) -> float:
    """$ of the variant instances over [0, horizon_s] (Sec. 6.2's cost; see the module doc):
    each (worker, variant) from its first batch to its last plus its load time, gaps shorter
    than that merged; ``pinned`` (worker, variant) pairs count for the whole horizon."""
    by_name = {v["name"]: v for v in (variants or catalogue.resnet50_variants())}
    horizon_ns = int(round(horizon_s * 1e9))
    batches = result.batches()
    names = np.array(result.model_names)
    total = 0.0
    pinned_set = set(pinned)
    for name, _ in {(n, w) for w, n in pinned_set}:
        total += by_name[name]["cost_per_s"] * horizon_s
    for (worker, model), group in batches.groupby(["worker", "model"]):
        name = str(names[model])
        if (int(worker), name) in pinned_set:
            continue
        hold = int(by_name[name].get("load_s", 0.0) * 1e9)
        held, end = 0, -1
        start_held = 0
        for s, f in zip(group["start_ns"].to_numpy(), group["finish_ns"].to_numpy(), strict=True):
            if s > end:
                held += max(0, min(end, horizon_ns) - start_held) if end >= 0 else 0
                start_held = int(s)
            end = max(end, int(f) + hold)
        held += max(0, min(end, horizon_ns) - min(start_held, horizon_ns))
        total += by_name[name]["cost_per_s"] * held / 1e9
    return total


def served_by(result: Any) -> dict[str, float]:
    """Share of completed queries by variant name."""
    c = result.columns
    done = c["status"] == COMPLETED
    if not done.any():
        return {}
    names, counts = np.unique(np.array(result.model_names)[c["model"][done]], return_counts=True)
    return {str(n): float(k) / float(done.sum()) for n, k in zip(names, counts, strict=True)}


def fig6(
    load: str = "flat",
    systems: Sequence[str] | None = None,
    seed: int = 0,
    *,
    processes: int = 1,
    backend: str = "local",
    ray_address: str | None = None,
) -> list[dict[str, Any]]:
    """One Fig. 6 panel: each system's cost ($ over the horizon, Sec. 6.2's model), throughput
    (completions within the horizon per second), demand, SLO violations and the variants that
    served, plus its cost relative to INFaaS. The systems are independent ``servelab.sweep``
    points (``processes``, ``backend``, ``ray_address`` as there); the same points give the same
    rows on every backend."""
    if load not in FIG6_LOADS:
        raise ValueError(f"load={load!r} must be one of {sorted(FIG6_LOADS)}")
    names = list(systems or FIG6_SYSTEMS)
    unknown = set(names) - set(FIG6_SYSTEMS)
    if unknown:
        raise ValueError(
            f"systems names unknown systems {sorted(unknown)}; known: {list(FIG6_SYSTEMS)}"
        )
    try:
        frame = sweep(
            fig6_point, [{"system": n} for n in names], processes=processes, backend=backend,
            ray_address=ray_address, shared={"load": load, "seed": seed}, retries=0, progress=False,
        )  # fmt: skip
    except SweepError as error:
        raise error.__cause__ from None
    rows = []
    for r in frame.to_dict("records"):
        r["served_by"] = dict(r["served_by"])  # pairs through the sweep (it flattens dicts)
        rows.append({k: r[k] for k in ROW_KEYS})
    base = next((r["cost"] for r in rows if r["system"] == "infaas"), None)
    for r in rows:
        r["cost_vs_infaas"] = r["cost"] / base if base else None
    return rows


ROW_KEYS = (
    "system",
    "load",
    "cost",
    "throughput_qps",
    "demand_qps",
    "slo_violation_rate",
    "served_by",
)


def fig6_point(system: str, load: str, seed: int) -> dict[str, Any]:
    """One system of a Fig. 6 panel (module level: sweep workers import it)."""
    interval, rates = FIG6_LOADS[load]
    horizon = interval * len(rates)
    spec, workers = FIG6_SYSTEMS[system]
    scenario = fig6_scenario(load, workers)
    res = _run.simulate(scenario, scheduler=spec, seed=seed)
    pinned = []  # Clipper+ never unloads; SM+ keeps its first variant
    if spec.startswith("clipper_plus"):
        pinned = [(w, workers[0]["models"][0]) for w in range(workers[0]["count"])]
    elif spec.startswith("sm_plus"):
        pinned = [(0, workers[0]["models"][0])]
    c = res.columns
    done = c["status"] == COMPLETED
    within = done & (c["finish_ns"] <= int(horizon * 1e9))
    return {
        "load": load,
        "cost": variant_cost(res, horizon, pinned),
        "throughput_qps": float(within.sum()) / horizon,
        "demand_qps": float(len(c["status"])) / horizon,
        "slo_violation_rate": res.summary()["slo_violation_rate"],
        "served_by": sorted(served_by(res).items()),
    }


def format_fig6(rows: list[dict[str, Any]]) -> str:
    """A Fig. 6 panel as text, with the paper's statement for the load."""
    lines = [
        f"{'system':<17} {'cost $':>9} {'x INFaaS':>9} {'served QPS':>10} {'demand':>7} "
        f"{'SLO viol.':>9}  main variant"
    ]
    for r in rows:
        main = max(r["served_by"], key=r["served_by"].get) if r["served_by"] else "-"
        ratio = r["cost_vs_infaas"]
        lines.append(
            f"{r['system']:<17} {r['cost']:>9.3f} {ratio if ratio else float('nan'):>9.2f} "
            f"{r['throughput_qps']:>10.1f} {r['demand_qps']:>7.1f} "
            f"{r['slo_violation_rate']:>9.1%}  {main}"
        )
    if rows:
        lines.append(f"paper ({rows[0]['load']}): {FIG6_PAPER[rows[0]['load']]}")
    return "\n".join(lines)


def offline_scenario(
    online_floor: float = 0.7, offline_floor: float = 0.7, seconds: int = 80
) -> dict:
    """Sec. 6.3.2's shape: one CPU machine (two TensorFlow slots), online queries (500 ms SLO)
    alternating 3 and 8 QPS every 20 s, and an offline application taking 30% of the arrivals
    (a one-hour SLO: latency tolerant). The arrival stream and the application of each query
    depend only on the seed, so two runs differing in the floors see the same queries."""
    share = 0.3
    online = [3.0 if (t // 20) % 2 == 0 else 8.0 for t in range(0, seconds, 10)]
    rates = [r / (1 - share) for r in online]
    rate_list = ", ".join(f"{r:.6g}" for r in rates)
    return {
        "profile": catalogue.to_profile(catalogue.resnet50_variants()),
        "workers": [{"hardware": "cpu", "count": 2, "models": [TF_CPU]}],
        "workload": {
            "arrivals": f"piecewise_rate(interval_s=10, rates=[{rate_list}])",
            "horizon_s": seconds,
            "apps": [
                {
                    "name": "online",
                    "slo_ms": 500,
                    "accuracy_floor": online_floor,
                    "share": 1 - share,
                },
                {
                    "name": "offline",
                    "slo_ms": 3_600_000,
                    "accuracy_floor": offline_floor,
                    "share": share,
                },
            ],
        },
        "drain_s": 600,
    }


def offline_colocation(seed: int = 0, seconds: int = 80) -> dict[str, Any]:
    """Online SLO violations with offline work co-located against online-only (the same queries,
    the offline ones given a floor no variant meets, so they never run and end dropped), and how
    much offline work completed, when."""
    spec = "infaas(offline_apps='1')"
    both = _run.simulate(offline_scenario(seconds=seconds), scheduler=spec, seed=seed)
    never = offline_scenario(offline_floor=1.0, seconds=seconds)
    alone = _run.simulate(never, scheduler=spec, seed=seed)
    out: dict[str, Any] = {}
    for key, res in (("colocated", both), ("online_only", alone)):
        c = res.columns
        online = c["app"] == 0
        offline = c["app"] == 1
        done = c["status"] == COMPLETED
        met = done & (c["finish_ns"] <= c["deadline_ns"])
        off_done = offline & done
        start_s = c["start_ns"][off_done] / 1e9
        in_lull = ((start_s // 20) % 2 == 0) & (start_s < seconds)
        out[key] = {
            "online_queries": int(online.sum()),
            "online_violation_rate": float(1 - met[online].mean()) if online.any() else 0.0,
            "offline_queries": int(offline.sum()),
            "offline_completed": int(off_done.sum()),
            "offline_completed_in_run": int((start_s < seconds).sum()),
            "offline_in_lulls": int(in_lull.sum()),
            "offline_dropped_reasons": sorted(
                {res.drop_reason_names[i] for i in c["drop_reason"][offline & ~done]}
            ),
        }
    return out


def measure_interference(
    model: str = "rm2",
    backend: str = "onednn",
    batch: int = 256,
    batches: int = 30,
    repeats: int = 3,
    seed: int = 0,
) -> dict[str, Any]:
    """Fits the interference model's alpha from real co-located executors: the median batch
    time of ``model`` (a recsys executor on ``backend``, one thread) on one worker serving alone,
    then on two workers of one machine both kept busy (a burst of queries), runs interleaved
    ``repeats`` times. Both busy means u = 1, so alpha = together / alone - 1. The numbers are
    as noisy as the machine is busy; report them with its load."""
    from ... import profiling

    executor = f"recsys(model='{model}', backend='{backend}', intra_op_threads=1)"
    profile = profiling.profile(executor, batches=[batch], repeats=5, warmup=2, model=model)

    def median_batch_ms(workers: int) -> float:
        scenario = {
            "profile": profile,
            "workers": [
                {"hardware": "cpu", "count": workers, "models": [model], "executor": executor}
            ],
            "workload": {
                "arrivals": "poisson(rate=100000)",
                "count": batches * batch * workers,
                "apps": [{"name": model, "slo_ms": 600_000}],
            },
            "scheduler": "clipper_plus",
            "seed": seed,
        }
        b = _run.serve(scenario).batches()
        full = b[b["items"] == batch]
        return float(np.median((full["finish_ns"] - full["start_ns"]).to_numpy()) / 1e6)

    alone, together = [], []
    for _ in range(repeats):  # interleaved, so that a change in the machine's load hits both
        alone.append(median_batch_ms(1))
        together.append(median_batch_ms(2))
    a, t = float(np.median(alone)), float(np.median(together))
    return {
        "executor": executor,
        "batch": batch,
        "alone_ms": alone,
        "together_ms": together,
        "median_alone_ms": a,
        "median_together_ms": t,
        "alpha": t / a - 1.0,
    }


#: The models and batches ``fit_interference`` measures by default (``servelab infaas evaluate
#: --interference``): embedding-heavy (rm1, rm2, din) and MLP-heavy (rm3, wnd) recsys models.
FIT_MODELS = ("rm1", "rm2", "rm3", "wnd", "din")
FIT_BATCHES = (16, 256)


def fit_interference(
    models: Sequence[str] = FIT_MODELS,
    batches_per_run: Sequence[int] = FIT_BATCHES,
    backend: str = "onednn",
    repeats: int = 5,
    batches: int = 30,
    seed: int = 0,
) -> dict[str, Any]:
    """Fits the interference model's one parameter over several co-located executors:
    ``measure_interference`` for each model x batch size, and ``alpha`` = the median of their
    alphas, at least 0 (the model only slows down). ``points`` keeps every measurement; report
    them with the machine's load."""
    if not models or not batches_per_run:
        raise ValueError(
            f"models={list(models)!r} and batches_per_run={list(batches_per_run)!r} "
            "must not be empty"
        )
    points = [
        measure_interference(
            model=m, backend=backend, batch=b, batches=batches, repeats=repeats, seed=seed
        )  # fmt: skip
        for m in models
        for b in batches_per_run
    ]
    alphas = [p["alpha"] for p in points]
    return {
        "points": points,
        "median_alpha": float(np.median(alphas)),
        "alpha": max(0.0, float(np.median(alphas))),
        "spec": f"infaas_interference(alpha={max(0.0, float(np.median(alphas))):.3g})",
    }
