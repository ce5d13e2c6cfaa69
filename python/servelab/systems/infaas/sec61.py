"""Sec. 6.1 / Fig. 5 in the simulator: INFaaS against Clipper+ and SM+ on a multi-application
workload (Table 8's architectures, Zipf popularity, the Twitter-shaped trace), at reduced size::

    from servelab.infaas import sec61

    frame = sec61.compare(peaks=[300], popular_shares=[0.8])   # one row per system and point
    print(sec61.format_compare(frame))
    windows = sec61.fig5(peak_qps=300)                          # Fig. 5's 4 s windows
    sc, spec = sec61.scenario("infaas")
    causes = sec61.violation_causes(servelab.simulate(sc, scheduler=spec))  # why each miss

**The workload.** One application per architecture of Table 8 (``catalogue.table8_variants``:
the paper's 22, GNMT included), asking for its architecture's task ("classification", or
"translation" for GNMT) and for accuracy >= the architecture's Table 8 number (top-1, or GNMT's
24.5 BLEU). The four popular architectures (DenseNet121, ResNet50, VGG16, InceptionV3) have 50 ms
SLOs and share ``popular_share`` (the paper: 80 %) of the queries; the cold ones share the rest,
each with an SLO of 1.5x its fastest CPU variant's batch-1 latency, among the variants meeting
its accuracy floor (GNMT's fastest CPU variant, beam 1, loses 1.45 BLEU: its beam-5 variant sets
the SLO, else no CPU variant would meet it). Within each group the shares follow a Zipf law
(exponent 1) in Table 8's order. An application is served by its own architecture's variants
only (``app_models``), so no query is ever served by another task's variant. The load is the
Twitter trace of ../shared/data/ramsis (27 points, 10 s apart) mapped linearly onto
[``low_qps``, ``peak_qps``] (the paper: 10 to 1000), each point held ``step_s`` seconds; batch-1
queries.

**The systems** (Sec. 6.1's setup). Clipper+ and SM+ run 5 CPU and 7 GPU workers; each
application is pinned to one variant chosen up front (``pinned_variants``): on GPU for the
popular applications, on CPU for the cold ones, the variant of its own architecture meeting its
accuracy floor with the highest saturation throughput whose full batch meets the SLO. The GPU
workers hold the popular applications' variants, the CPU workers the cold ones', spread
round-robin (Clipper+: fixed instances; SM+: those as its starting instances, replicated and
given new workers by its own autoscaling, up to ``max_workers``). INFaaS runs 5 CPU, 5 GPU and 2
Inferentia workers, its starting variants set by the exact placement program
(``planner.plan_placement`` at the trace's mean load, Q_v within each application's SLO, when
the LP backend is available; else each hardware's fastest variant of the most popular
architecture), with the VM-Autoscaler on (up to ``max_workers``, 20 s start).
**Cost** is the workers' EC2 price over the run (``Result.summary()["cost_dollars"]``,
``to_profile(prices="ec2")``), as the paper computed it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ... import run as _run
from ...results import COMPLETED
from ...sweeps import SweepError, sweep
from ..ramsis import data as ramsis_data
from . import catalogue, planner

POPULAR = ("densenet121", "resnet50", "vgg16", "inceptionv3")
POPULAR_SLO_MS = 50.0
COLD_SLO_FACTOR = 1.5  # x the fastest CPU variant's batch-1 latency
BASELINE_WORKERS = {"cpu": 5, "gpu": 7}
INFAAS_WORKERS = {"cpu": 5, "gpu": 5, "inferentia": 2}
SYSTEMS = ("infaas", "clipper_plus", "sm_plus")
WINDOW_S = 4.0  # Fig. 5 measures every 4 seconds
BATCH_CAPS = ("full", "deadline")  # the policies' batch_cap (docs/infaas.md, Sec. 6.1)

#: Sec. 6's EC2 instance types as machines (``machines:``): vCPUs, DRAM and accelerator memory
#: in MB (m5.2xlarge; p3.2xlarge's V100 16 GB; inf1.2xlarge's one Inferentia chip, 8 GB).
MACHINE_TYPES = {
    "cpu": {"cores": 8, "memory_mb": 32768.0},
    "gpu": {"cores": 8, "memory_mb": 62464.0, "accel_memory_mb": 16384.0},
    "inferentia": {"cores": 8, "memory_mb": 16384.0, "accel_memory_mb": 8192.0},
}
#: How INFaaS's starting plan counts instances per machine (constraint (3) with co-location): a CPU
#: VM runs cores / 4 (Table 2's CPU variant takes 4 CPUs) at full speed, an Inferentia chip one
#: per NeuronCore (4), a V100 several small engines (our choice: 4, about 7 GB of its 16 GB).
INSTANCE_SLOTS = {"cpu": 2, "gpu": 4, "inferentia": 4}
#: Branch-and-bound nodes for INFaaS's starting plan on machines (deterministic): with 43
#: instance slots CBC takes 90 s to prove the optimum at peak 1,000 that it finds within 200
#: nodes (the same cost, 6.277 $/h; 1 s).
PLAN_NODE_LIMIT = 200
#: Clipper+'s GPU instances per machine ("the number of variant instances such that Clipper+
#: achieves the highest performance given available resources"): two per V100, shared among the
#: popular applications by their share; SM+ starts with one per V100 and adds its own.
CLIPPER_GPU_INSTANCES = 2
#: The interference model co-located instances run under (``interference.hpp``: ``infaas``).
INTERFERENCE = "infaas"

#: The paper's Sec. 6.1 results (INFaaS over each baseline).
PAPER = {
    "throughput_vs_clipper_plus": 1.1,
    "throughput_vs_sm_plus": 1.3,
    "fewer_violations_vs_clipper_plus": 1.63,
    "fewer_violations_vs_sm_plus": 2.54,
    "lower_cost": 1.23,
    "infaas_violations_below": 0.04,
}


def twitter_rates(
    low_qps: float = 10.0, peak_qps: float = 1000.0, path: str | Path | None = None
) -> list[float]:
    """The Twitter trace's loads mapped linearly onto [low_qps, peak_qps]. ``path``: the trace
    file (default: ramsis's data folder, $SERVELAB_RAMSIS_DATA or ../shared/data/ramsis)."""
    if not (0 < low_qps <= peak_qps and math.isfinite(peak_qps)):
        raise ValueError(f"low_qps={low_qps!r}, peak_qps={peak_qps!r}: need 0 < low <= peak")
    if path is None:
        path = ramsis_data.data_dir() / ramsis_data.TWITTER_TRACE
    loads = ramsis_data.read_load_trace(path).loads_qps.astype(float)
    span = loads.max() - loads.min()
    unit = (loads - loads.min()) / span if span > 0 else np.zeros_like(loads)
    return [float(low_qps + u * (peak_qps - low_qps)) for u in unit]


def applications(
    variants: Sequence[dict[str, Any]], popular_share: float = 0.8, zipf_s: float = 1.0
) -> list[dict[str, Any]]:
    """One application per architecture of ``variants`` (module doc): name, slo_ms,
    accuracy_floor, share, architecture, task, popular."""
    if not 0 < popular_share < 1:
        raise ValueError(f"popular_share={popular_share!r} must be in (0, 1)")
    archs = list(dict.fromkeys(v["architecture"] for v in variants))
    popular = [a for a in archs if a in POPULAR]
    cold = [a for a in archs if a not in POPULAR]
    if not popular or not cold:
        raise ValueError(
            f"the variants' architectures {archs} need popular ones {POPULAR} and others"
        )

    def zipf(n: int) -> np.ndarray:
        w = 1.0 / np.arange(1, n + 1) ** zipf_s
        return w / w.sum()

    apps = []
    for group, share, weights in ((popular, popular_share, zipf(len(popular))),
                                  (cold, 1 - popular_share, zipf(len(cold)))):  # fmt: skip
        for arch, w in zip(group, weights, strict=True):
            own = [v for v in variants if v["architecture"] == arch]
            floor = max(v["accuracy"] for v in own)  # Table 8's number: the best variant's
            if arch in POPULAR:
                slo = POPULAR_SLO_MS
            else:
                cpu = [v["latency_ms"][0] for v in own if v["hardware"] == "cpu"]
                meets = [
                    v["latency_ms"][0]
                    for v in own
                    if v["hardware"] == "cpu" and v["accuracy"] >= floor
                ]
                if not cpu:
                    raise ValueError(
                        f"cold architecture {arch!r} has no cpu variant to set its SLO"
                    )
                slo = COLD_SLO_FACTOR * min(meets or cpu)
            apps.append({
                "name": arch, "architecture": arch, "task": own[0]["task"],
                "popular": arch in POPULAR, "slo_ms": round(float(slo), 3),
                "accuracy_floor": floor, "share": float(share * w),
            })  # fmt: skip
    return apps


def pinned_variants(
    variants: Sequence[dict[str, Any]], apps: Sequence[dict[str, Any]]
) -> list[str]:
    """The baselines' variant per application: its own architecture's meeting its accuracy
    floor, on GPU when popular and on CPU when cold, with the highest saturation throughput whose
    full batch meets the SLO (else the fastest one at batch 1)."""
    out = []
    for app in apps:
        hw = "gpu" if app["popular"] else "cpu"
        own = [
            v
            for v in variants
            if v["architecture"] == app["architecture"]
            and v["hardware"] == hw
            and v["accuracy"] >= app.get("accuracy_floor", 0.0)
        ]
        if not own:
            raise ValueError(f"architecture {app['architecture']!r} has no {hw} variant to pin")
        meets = [v for v in own if v["latency_ms"][-1] <= app["slo_ms"]]
        if meets:
            best = max(meets, key=lambda v: (len(v["latency_ms"]) / v["latency_ms"][-1], v["name"]))
        else:
            best = min(own, key=lambda v: (v["latency_ms"][0], v["name"]))
        out.append(best["name"])
    return out


def baseline_workers(pins: Sequence[str], apps: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """5 CPU + 7 GPU workers; the popular applications' variants spread round-robin on the GPU
    workers, the cold ones' on the CPU workers (a worker may hold several)."""
    groups = []
    for hw, count in BASELINE_WORKERS.items():
        names = list(
            dict.fromkeys(
                p for p, a in zip(pins, apps, strict=True) if a["popular"] == (hw == "gpu")
            )
        )
        for w in range(count):
            held = names[w::count] or names[w % len(names) : w % len(names) + 1]
            groups.append({"hardware": hw, "count": 1, "models": held})
    return groups


def infaas_workers(
    variants: Sequence[dict[str, Any]],
    apps: Sequence[dict[str, Any]],
    first_qps: float,
    tie_break: str | None = None,
    colocate: bool = False,
) -> tuple[list[dict[str, Any]], str]:
    """INFaaS's starting workers and how they were chosen ("ilp" or "fastest");
    ``tie_break``: ``planner.plan_placement``'s rule among plans of equal cost. With
    ``colocate`` the plan counts ``INSTANCE_SLOTS`` instances per machine, each priced at its
    share of the machine, and the groups are instances on machines (``colocated_groups``)."""
    if tie_break not in planner.TIE_BREAKS:
        raise ValueError(f"tie_break={tie_break!r} must be one of {list(planner.TIE_BREAKS)}")
    from ...solvers import lp  # the LP backend is optional

    if lp.available():
        demand = [dict(a, qps=first_qps * a["share"]) for a in apps]
        price = {hw: catalogue.HARDWARE[hw]["price_per_hour"] / 3600 for hw in INFAAS_WORKERS}
        if colocate:
            slots = {hw: n * INSTANCE_SLOTS[hw] for hw, n in INFAAS_WORKERS.items()}
            cost = {hw: price[hw] / INSTANCE_SLOTS[hw] for hw in INFAAS_WORKERS}
            plan = planner.plan_placement(
                variants, demand, slots, cost=cost, tie_break=tie_break, node_limit=PLAN_NODE_LIMIT
            )
            return _colocated_plan(plan, variants, apps), "ilp"
        plan = planner.plan_placement(
            variants, demand, INFAAS_WORKERS, cost=price, tie_break=tie_break
        )
        return _preload_rest(
            planner.worker_groups(plan, variants, INFAAS_WORKERS), variants, apps
        ), "ilp"
    top = apps[0]["architecture"]
    groups = []
    for hw, count in INFAAS_WORKERS.items():
        own = [v for v in variants if v["architecture"] == top and v["hardware"] == hw]
        best = max(own, key=lambda v: len(v["latency_ms"]) / v["latency_ms"][-1])
        groups.append({"hardware": hw, "count": count, "models": [best["name"]]})
    return groups, "fastest"


def _preload_rest(
    groups: list[dict[str, Any]], variants: Sequence[dict[str, Any]], apps: Sequence[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Every application the plan left without a variant gets its cheapest one that meets its
    SLO, pre-loaded on the CPU workers round-robin (a model is registered, hence loaded, before
    its queries come: without it each first query would block a worker for a load)."""
    planned = {m for g in groups for m in g["models"]}
    cpu = [dict(g, count=1) for g in groups if g["hardware"] == "cpu" for _ in range(g["count"])]
    rest = [g for g in groups if g["hardware"] != "cpu"]
    k = 0
    for app in apps:
        own = [v for v in variants if v["architecture"] == app["architecture"]]
        if any(v["name"] in planned for v in own):
            continue
        fits = [
            v
            for v in own
            if v["hardware"] == "cpu"
            and v["latency_ms"][0] <= app["slo_ms"]
            and v["accuracy"] >= app["accuracy_floor"]
        ]
        if not fits or not cpu:
            continue
        best = min(fits, key=lambda v: (v["cost_per_s"], v["latency_ms"][0], v["name"]))
        cpu[k % len(cpu)] = dict(
            cpu[k % len(cpu)], models=[*cpu[k % len(cpu)]["models"], best["name"]]
        )
        k += 1
    return cpu + rest


def _colocated_plan(
    plan: dict[str, Any], variants: Sequence[dict[str, Any]], apps: Sequence[dict[str, Any]]
) -> list[dict[str, Any]]:
    """INFaaS's plan as instances on its machines: each hardware's planned instances dealt
    round-robin over its machines (the variant with the most instances first), then every
    application the plan left without a variant gets its cheapest CPU variant meeting its SLO
    as an instance on the CPU machines, round-robin (a registered model is loaded before its
    queries come)."""
    by_name = {v["name"]: v for v in variants}
    placed: dict[str, list[str]] = {
        f"{hw}{i}": [] for hw, n in INFAAS_WORKERS.items() for i in range(n)
    }
    for hw, n in INFAAS_WORKERS.items():
        mine = sorted(
            ((name, k) for name, k in plan["instances"].items() if by_name[name]["hardware"] == hw),
            key=lambda item: (-item[1], item[0]),
        )
        deal = [name for name, k in mine for _ in range(k)]
        for i, name in enumerate(deal):
            placed[f"{hw}{i % n}"].append(name)
    planned = set(plan["instances"])
    k = 0
    for app in apps:
        own = [v for v in variants if v["architecture"] == app["architecture"]]
        if any(v["name"] in planned for v in own):
            continue
        fits = [
            v for v in own
            if v["hardware"] == "cpu" and v["latency_ms"][0] <= app["slo_ms"]
            and v["accuracy"] >= app["accuracy_floor"]
        ]  # fmt: skip
        if fits:
            best = min(fits, key=lambda v: (v["cost_per_s"], v["latency_ms"][0], v["name"]))
            placed[f"cpu{k % INFAAS_WORKERS['cpu']}"].append(best["name"])
            k += 1
    for machine, names in placed.items():  # a machine hosts at least one instance
        if not names:
            hw = machine.rstrip("0123456789")
            names.append(next(v["name"] for v in variants if v["hardware"] == hw))
    return _instances_on(placed, by_name)


def _instances_on(
    placed: dict[str, list[str]], by_name: dict[str, dict[str, Any]]
) -> list[dict[str, Any]]:
    """Worker groups for {machine name: its instances' variants}: one instance (worker) each."""
    groups = []
    for machine, names in placed.items():
        for name in names:
            hw = by_name[name]["hardware"]
            groups.append({"hardware": hw, "count": 1, "models": [name], "machine": machine})
    return groups


def machine_groups(groups: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The ``machines:`` entries the worker groups name, one machine each, of ``MACHINE_TYPES``."""
    out: dict[str, dict[str, Any]] = {}
    for g in groups:
        name = g.get("machine")
        if name and name not in out:
            out[name] = {
                "name": name,
                "count": 1,
                "hardware": g["hardware"],
                **MACHINE_TYPES[g["hardware"]],
            }
    return list(out.values())


def colocated_baseline_workers(
    system: str,
    pins: Sequence[str],
    apps: Sequence[dict[str, Any]],
    variants: Sequence[dict[str, Any]],
) -> list[dict[str, Any]]:
    """The baselines on the same kind of machines INFaaS gets (5 CPU, 7 GPU VMs): every cold
    application's pinned CPU variant is an instance of its own, dealt round-robin over the CPU
    VMs; on the GPU VMs Clipper+ runs ``CLIPPER_GPU_INSTANCES`` instances per VM of the popular
    variants, shared by their applications' shares (largest remainder, one at least), and SM+
    one per VM, round-robin (it adds instances itself)."""
    by_name = {v["name"]: v for v in variants}
    placed: dict[str, list[str]] = {
        f"{hw}{i}": [] for hw, n in BASELINE_WORKERS.items() for i in range(n)
    }
    cold = list(dict.fromkeys(p for p, a in zip(pins, apps, strict=True) if not a["popular"]))
    for i, name in enumerate(cold):
        placed[f"cpu{i % BASELINE_WORKERS['cpu']}"].append(name)
    popular = [(p, a["share"]) for p, a in zip(pins, apps, strict=True) if a["popular"]]
    gpus = BASELINE_WORKERS["gpu"]
    if system == "clipper_plus":
        total = CLIPPER_GPU_INSTANCES * gpus
        weight = sum(sh for _, sh in popular)
        exact = [total * sh / weight for _, sh in popular]
        count = [max(1, int(x)) for x in exact]
        order = sorted(range(len(popular)), key=lambda i: (-(exact[i] - int(exact[i])), i))
        for i in order:
            if sum(count) >= total:
                break
            count[i] += 1
        deal = [p for (p, _), c in zip(popular, count, strict=True) for _ in range(c)]
    else:
        names = [p for p, _ in popular]
        deal = [names[w % len(names)] for w in range(gpus)]
    for i, name in enumerate(deal):
        placed[f"gpu{i % gpus}"].append(name)
    return _instances_on(placed, by_name)


def scenario(
    system: str,
    peak_qps: float = 300.0,
    popular_share: float = 0.8,
    low_qps: float = 10.0,
    step_s: float = 2.0,
    architectures: Sequence[str] | None = None,
    max_workers: int = 16,
    trace: str | Path | None = None,
    batch_cap: str = "full",
    plan_tie_break: str | None = None,
    colocate: bool = True,
) -> tuple[dict[str, Any], str]:
    """The scenario of one system and its scheduler spec (module doc). ``colocate`` (default):
    every system's VMs are machines (``MACHINE_TYPES``) hosting several variant instances that
    run concurrently under the ``infaas`` interference model, and INFaaS and SM+ load new
    instances beside the running ones; False: one worker per VM running one batch at a time
    (the setup before machines existed). ``batch_cap`` is every
    system's batch rule (``"full"``: up to the variant's max batch; ``"deadline"``: no larger than
    still finishes its queries in time); the default leaves the spec as it was.
    ``plan_tie_break``: the placement program's rule among INFaaS's equal-cost starting plans
    (``planner.TIE_BREAKS``; None: CBC's first optimum)."""
    if system not in SYSTEMS:
        raise ValueError(f"system={system!r} must be one of {list(SYSTEMS)}")
    if batch_cap not in BATCH_CAPS:
        raise ValueError(f"batch_cap={batch_cap!r} must be one of {list(BATCH_CAPS)}")
    cap = "" if batch_cap == "full" else f", batch_cap='{batch_cap}'"
    if not (step_s > 0 and math.isfinite(step_s)):
        raise ValueError(f"step_s={step_s!r} must be a positive number of seconds")
    variants = catalogue.table8_variants(architectures)
    apps = applications(variants, popular_share)
    rates = twitter_rates(low_qps, peak_qps, trace)
    pins = pinned_variants(variants, apps)
    if system == "infaas":
        workers, _ = infaas_workers(
            variants, apps, float(np.mean(rates)), plan_tie_break, colocate=colocate
        )
        own = ",".join(f"{a['architecture']}_*" for a in apps)  # each app's architecture's variants
        wait = ", q_wait=true" if colocate else ""
        spec = f"infaas(max_workers={max_workers}, app_models='{own}'{wait}{cap})"
    else:
        workers = (colocated_baseline_workers(system, pins, apps, variants) if colocate
                   else baseline_workers(pins, apps))  # fmt: skip
        listed = ",".join(pins)
        spec = (f"clipper_plus(app_models='{listed}'{cap})" if system == "clipper_plus"
                else f"sm_plus(max_workers={max_workers}, app_models='{listed}'{cap})")  # fmt: skip
    rate_list = ", ".join(f"{r:.6g}" for r in rates)
    keys = ("name", "slo_ms", "accuracy_floor", "share")
    out = {
        "profile": catalogue.to_profile(variants, prices="ec2"),
        "workers": workers,
        "workload": {
            "arrivals": f"piecewise_rate(interval_s={step_s:g}, rates=[{rate_list}])",
            "horizon_s": step_s * len(rates),
            "apps": [{k: a[k] for k in keys} for a in apps],
        },
        "drain_s": 10,
    }
    if colocate:
        out["machines"] = machine_groups(workers)
        out["interference"] = INTERFERENCE
    return out, spec


def windows(result: Any, horizon_s: float, window_s: float = WINDOW_S) -> pd.DataFrame:
    """Fig. 5's measure: per window of arrivals, throughput (queries completed per second) and
    the SLO violation ratio (late or dropped queries / queries)."""
    c = result.columns
    edges = np.arange(0.0, horizon_s + 1e-9, window_s)
    arrival = c["arrival_ns"] / 1e9
    done = c["status"] == COMPLETED
    met = done & (c["finish_ns"] <= c["deadline_ns"])
    rows = []
    for lo, hi in zip(edges[:-1], edges[1:], strict=True):
        inside = (arrival >= lo) & (arrival < hi)
        n = int(inside.sum())
        rows.append({
            "start_s": float(lo),
            "throughput_qps": float((done & inside).sum()) / window_s,
            "violation_ratio": float(1 - met[inside].mean()) if n else 0.0,
        })  # fmt: skip
    return pd.DataFrame(rows)


CAUSES = (
    "never served",
    "service longer than the SLO",
    "queued behind a load",
    "queued behind other models",
    "queued behind its model",
)


def _busy_between(
    starts: np.ndarray, finishes: np.ndarray, lo: np.ndarray, hi: np.ndarray
) -> np.ndarray:
    """Busy time of disjoint, sorted intervals [starts, finishes) inside each [lo, hi)."""
    dur = finishes - starts
    before = np.concatenate(([0], np.cumsum(dur)))  # busy time before interval k

    def cumulative(t: np.ndarray) -> np.ndarray:
        k = np.searchsorted(starts, t, side="right") - 1
        inside = np.clip(t - starts[np.maximum(k, 0)], 0, dur[np.maximum(k, 0)])
        return np.where(k >= 0, before[np.maximum(k, 0)] + inside, 0)

    return cumulative(hi) - cumulative(lo)


def violation_causes(result: Any) -> pd.DataFrame:
    """Each query that missed its SLO (late or dropped) with its cause, from the records: one of
    ``CAUSES``. A completed query's wait (start - arrival) is split into its worker's busy time on
    batches of other models, on batches of its own model, and the rest (the worker was loading a
    model, or starting); the largest share names the cause, unless its service alone exceeded the
    SLO. Columns: ``app``, ``model``, ``hardware``, ``arrival_s``, ``cause``."""
    frame = result.to_pandas()
    batches = result.batches()
    late = ~frame["met_deadline"].to_numpy()
    done = frame["status"].to_numpy() == COMPLETED
    arrival, start = frame["arrival_ns"].to_numpy(), frame["start_ns"].to_numpy()
    worker, model = frame["worker"].to_numpy(), frame["model"].cat.codes.to_numpy()
    model_codes = {name: i for i, name in enumerate(frame["model"].cat.categories)}
    busy = np.zeros(len(frame))
    own = np.zeros(len(frame))
    for w, group in batches.groupby("worker"):
        rows = np.flatnonzero(done & late & (worker == w))
        if not len(rows):
            continue
        s, f = group["start_ns"].to_numpy(), group["finish_ns"].to_numpy()
        busy[rows] = _busy_between(s, f, arrival[rows], start[rows])
        codes = np.array([model_codes.get(result.model_names[m], -1) for m in group["model"]])
        for m in np.unique(model[rows]):
            mine = rows[model[rows] == m]
            sel = codes == m
            own[mine] = _busy_between(s[sel], f[sel], arrival[mine], start[mine])
    wait = (start - arrival).astype(float)
    slo = (frame["deadline_ns"] - frame["arrival_ns"]).to_numpy()
    service = (frame["finish_ns"] - frame["start_ns"]).to_numpy()
    cause = np.select(
        [~done, service > slo, wait - busy > 0.5 * wait, busy - own > 0.5 * wait],
        list(CAUSES[:4]),
        default=CAUSES[4],
    )
    keep = ["app", "model", "hardware", "arrival_s"]
    out = frame.loc[late, keep].copy()
    out["cause"] = pd.Categorical(cause[late], categories=list(CAUSES))
    return out.reset_index(drop=True)


def run_point(
    system: str,
    peak_qps: float,
    popular_share: float,
    seed: int,
    low_qps: float = 10.0,
    step_s: float = 2.0,
    architectures: Sequence[str] | None = None,
    max_workers: int = 16,
    trace: str | None = None,
    batch_cap: str = "full",
    plan_tie_break: str | None = None,
    colocate: bool = True,
) -> dict[str, Any]:
    """One system at one point (module level: sweep workers import it): throughput, violations,
    cost, workers, machine utilisation and GPU memory (``machine_usage``), and Fig. 5's
    per-window series (as lists)."""
    sc, spec = scenario(
        system, peak_qps, popular_share, low_qps, step_s, architectures, max_workers, trace,
        batch_cap, plan_tie_break, colocate,
    )  # fmt: skip
    res = _run.simulate(sc, scheduler=spec, seed=seed)
    horizon = sc["workload"]["horizon_s"]
    c = res.columns
    done = c["status"] == COMPLETED
    met = done & (c["finish_ns"] <= c["deadline_ns"])
    within = done & (c["finish_ns"] <= int(horizon * 1e9))
    s = res.summary()
    win = windows(res, horizon)
    usage = machine_usage(res, sc)
    popular = np.array([a["name"] in POPULAR for a in sc["workload"]["apps"]])
    app = c["app"].astype(np.int64)
    is_popular = popular[app]
    hw = res.to_pandas()["hardware"].astype(str).to_numpy()

    def late(sel: np.ndarray) -> float:
        return float(1 - met[sel].mean()) if sel.any() else 0.0

    return {
        "popular_violation_rate": late(is_popular),
        "cold_violation_rate": late(~is_popular),
        "gpu_query_share": float((done & (hw == "gpu")).sum() / max(1, done.sum())),
        "queries": int(len(done)),
        "throughput_qps": float(within.sum()) / horizon,
        "slo_violation_rate": float(1 - met.mean()) if len(met) else 0.0,
        "cost_dollars": float(s["cost_dollars"]),
        "workers_started": len(res.workers_frame()) - sum(g.get("count", 1) for g in sc["workers"]),
        "machines_started": usage["machines"] - usage["initial_machines"],
        "mean_utilisation": float(np.nanmean(res.workers_frame()["utilisation"])),
        "machine_utilisation": usage["machine_utilisation"],
        "gpu_memory_utilisation": usage["gpu_memory_utilisation"],
        **{k: v for k, v in usage.items() if k.startswith("utilisation_")},
        "window_throughput_qps": win["throughput_qps"].round(6).tolist(),
        "window_violation_ratio": win["violation_ratio"].round(6).tolist(),
    }


def _union_length(starts: np.ndarray, finishes: np.ndarray) -> float:
    """The length of the union of intervals [starts, finishes)."""
    if not len(starts):
        return 0.0
    order = np.argsort(starts, kind="stable")
    s, f = starts[order].astype(np.float64), finishes[order].astype(np.float64)
    reach = np.maximum.accumulate(f)
    gap = np.maximum(0.0, s[1:] - reach[:-1])  # idle time before each interval
    return float(reach[-1] - s[0] - gap.sum())


def machine_usage(result: Any, sc: dict[str, Any]) -> dict[str, Any]:
    """Sec. 6.1's two utilisation figures from the records, per machine (a VM: its instances
    together; a worker without a declared machine is a VM of its own):

    - ``machine_utilisation``: the mean over machines of the time at least one of its instances
      ran a batch, over the machine's time (a declared machine: the run; a started VM: its first
      instance's active time). The paper's "average worker utilization" (48.9 %) does not say how
      it is measured; this counts a CPU VM running one 4-core batch of its 8 cores as busy.
    - ``gpu_memory_utilisation``: over the GPU machines, the accelerator memory the instances'
      variants held (each (instance, variant) from its first batch's start to its last batch's
      end: a lower bound, since the records do not say when a variant was loaded) over the
      machines' accelerator memory (``MACHINE_TYPES``) and time. The paper's "average GPU DRAM
      utilization" is 58.6 %.

    Also ``machines`` (all, started ones included), ``initial_machines`` and
    ``utilisation_<hardware>`` (the first figure over that hardware's machines; NaN: none)."""
    frame = result.workers_frame()
    machine = frame["machine"].to_numpy()
    active = frame["active_s"].to_numpy()
    hardware = frame["hardware"].astype(str).to_numpy()
    batches = result.batches()
    names = result.model_names
    profile = sc["profile"]
    memory = {}  # (hardware, model name) -> MB
    worker_of_batch = batches["worker"].to_numpy()
    starts, finishes = batches["start_ns"].to_numpy(), batches["finish_ns"].to_numpy()
    ids = np.unique(machine)
    util, gpu_held, gpu_room = [], 0.0, 0.0
    by_hw: dict[str, list[float]] = {}
    accel = MACHINE_TYPES["gpu"]["accel_memory_mb"]
    for m in ids:
        members = np.flatnonzero(machine == m)
        span_s = float(active[members[0]])  # the first instance carries the machine
        if span_s <= 0:
            continue
        sel = np.isin(worker_of_batch, members)
        busy_s = _union_length(starts[sel], finishes[sel]) / 1e9
        util.append(min(1.0, busy_s / span_s))
        by_hw.setdefault(str(hardware[members[0]]), []).append(util[-1])
        if hardware[members[0]] != "gpu":
            continue
        gpu_room += accel * span_s
        mine = batches[sel]
        for (w, model), group in mine.groupby(["worker", "model"]):
            name = names[int(model)] if not isinstance(model, str) else model
            key = (hardware[int(w)], name)
            if key not in memory:
                memory[key] = float(profile.memory_mb(key[0], name) or 0.0)
            held_s = (group["finish_ns"].max() - group["start_ns"].min()) / 1e9
            gpu_held += memory[key] * held_s
    initial = len({g.get("machine") or ("worker", i) for i, g in enumerate(sc["workers"])})
    if not sc.get("machines"):
        initial = sum(g.get("count", 1) for g in sc["workers"])
    return {
        "machine_utilisation": float(np.mean(util)) if util else float("nan"),
        "gpu_memory_utilisation": float(gpu_held / gpu_room) if gpu_room > 0 else float("nan"),
        "machines": int(len(ids)),
        "initial_machines": int(initial),
        **{f"utilisation_{hw}": float(np.mean(by_hw.get(hw, [np.nan]))) for hw in MACHINE_TYPES},
    }


def compare(
    peaks: Sequence[float] = (300.0,),
    popular_shares: Sequence[float] = (0.8,),
    seeds: Sequence[int] = (0,),
    systems: Sequence[str] = SYSTEMS,
    *,
    low_qps: float = 10.0,
    step_s: float = 2.0,
    architectures: Sequence[str] | None = None,
    max_workers: int = 16,
    trace: str | Path | None = None,
    batch_cap: str = "full",
    plan_tie_break: str | None = None,
    colocate: bool = True,
    processes: int = 1,
    backend: str = "local",
    ray_address: str | None = None,
) -> pd.DataFrame:
    """Every system at every (peak load, popular share, seed): one row each (``run_point``'s
    columns), plus INFaaS's ratios over the system at the same point: ``infaas_throughput_over``
    (INFaaS / system), ``fewer_violations`` (system / INFaaS violation rate), ``lower_cost``
    (system / INFaaS cost). ``batch_cap`` and ``plan_tie_break`` as in ``scenario``. The points are
    independent ``servelab.sweep`` points (``processes``, ``backend``, ``ray_address`` as there);
    the same points give the same rows."""
    if batch_cap not in BATCH_CAPS:
        raise ValueError(f"batch_cap={batch_cap!r} must be one of {list(BATCH_CAPS)}")
    unknown = set(systems) - set(SYSTEMS)
    if unknown:
        raise ValueError(f"systems names unknown systems {sorted(unknown)}; known: {list(SYSTEMS)}")
    if trace is None:
        trace = ramsis_data.data_dir() / ramsis_data.TWITTER_TRACE  # resolved once, here
    grid = [
        {"system": s, "peak_qps": float(p), "popular_share": float(m), "seed": int(seed)}
        for p in peaks for m in popular_shares for seed in seeds for s in systems
    ]  # fmt: skip
    shared = {
        "low_qps": low_qps, "step_s": step_s, "max_workers": max_workers, "trace": str(trace),
        "batch_cap": batch_cap, "plan_tie_break": plan_tie_break, "colocate": colocate,
        "architectures": list(architectures) if architectures is not None else None,
    }  # fmt: skip
    try:
        frame = sweep(
            run_point, grid, processes=processes, backend=backend, ray_address=ray_address,
            shared=shared, retries=0, progress=False,
        )  # fmt: skip
    except SweepError as error:
        raise error.__cause__ from None
    key = ["peak_qps", "popular_share", "seed"]
    base = frame[frame["system"] == "infaas"].set_index(key)
    ref = base.reindex(pd.MultiIndex.from_frame(frame[key]))

    def ratio(num: np.ndarray, den: np.ndarray) -> list[float]:
        return [
            n / d if d > 0 else (math.inf if n > 0 else 1.0) for n, d in zip(num, den, strict=True)
        ]

    frame["infaas_throughput_over"] = ratio(
        ref["throughput_qps"].to_numpy(), frame["throughput_qps"].to_numpy()
    )
    frame["fewer_violations"] = ratio(
        frame["slo_violation_rate"].to_numpy(), ref["slo_violation_rate"].to_numpy()
    )
    frame["lower_cost"] = ratio(frame["cost_dollars"].to_numpy(), ref["cost_dollars"].to_numpy())
    return frame


def format_compare(frame: pd.DataFrame) -> str:
    """The comparison as text, INFaaS's ratios beside the paper's."""
    lines = [
        f"{'peak':>5} {'pop.':>5} {'system':<13} {'served QPS':>10} {'SLO viol.':>9} {'cost $':>8}"
        f"  {'INFaaS thr. x':>13} {'fewer viol.':>11} {'lower cost':>10}"
    ]
    for r in frame.itertuples():
        lines.append(
            f"{r.peak_qps:>5.0f} {r.popular_share:>5.2f} {r.system:<13} {r.throughput_qps:>10.1f} "
            f"{r.slo_violation_rate:>9.1%} {r.cost_dollars:>8.3f}  "
            f"{r.infaas_throughput_over:>13.2f} "
            f"{r.fewer_violations:>11.2f} {r.lower_cost:>10.2f}"
        )
    lines.append(
        "paper (Sec. 6.1): INFaaS 1.1x / 1.3x the throughput of Clipper+ / SM+, 1.63x / 2.54x "
        "fewer SLO violations (under 4 %), 1.23x lower cost"
    )
    return "\n".join(lines)


def fig5(
    peak_qps: float = 300.0, popular_share: float = 0.8, seed: int = 0, **kw: Any
) -> pd.DataFrame:
    """Fig. 5: each system's per-window throughput and violation ratio, one row per
    (system, window)."""
    rows = []
    for system in kw.pop("systems", SYSTEMS):
        point = run_point(system, peak_qps, popular_share, seed, **kw)
        for i, (t, v) in enumerate(
            zip(point["window_throughput_qps"], point["window_violation_ratio"], strict=True)
        ):
            rows.append(
                {
                    "system": system,
                    "start_s": i * WINDOW_S,
                    "throughput_qps": t,
                    "violation_ratio": v,
                }
            )
    return pd.DataFrame(rows)
