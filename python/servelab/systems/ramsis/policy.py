"""RAMSIS's offline side: the per-worker MDP, its policies, their guarantees and policy sets.

Every function takes the models as a ``source``: a :class:`TaskData` (``image_task(data)``), a
``LatencyTable``, or a servelab ``Profile`` with ``hardware`` and ``models`` (its ``statistic``,
p95 by default, is the one latency per (model, batch) the MDP uses)::

    from servelab import ramsis

    task = ramsis.image_task("../shared/data/ramsis")
    policy = ramsis.solve(task, slo_ms=150, load_qps=2000, workers=60)
    policy.expected_accuracy, policy.expected_violation
    policies = ramsis.policy_set(task, slo_ms=150, workers=60, loads=range(200, 4001, 200))
    ramsis.save(policies, "image_150ms_60w.json")

Defaults follow the paper's evaluation: fixed-length discretisation with D = 100, maximal batching,
N = 32, Poisson arrivals, round-robin over the workers, 100 undiscounted value-iteration sweeps,
Pareto pruning of the models. Time is in ms at this API (slo_ms), loads in queries/s.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ... import _core, textio
from ...profiles import Profile
from .tasks import TaskData

LatencyTable = _core.ramsis.LatencyTable
WorkerPolicy = _core.ramsis.WorkerPolicy
PolicySet = _core.ramsis.PolicySet
RamsisMdp = _core.ramsis.RamsisMdp

_MDP_KEYS = (
    "max_queue",
    "discretisation",
    "intervals",
    "batching",
    "balancer",
    "arrivals",
    "shape",
    "pareto",
    "prune",
)


def latency_table(
    source: Any,
    hardware: str | None = None,
    models: Sequence[str] | None = None,
    *,
    statistic: str = "p95",
    max_batch: int = 0,
    fill: str = "none",
) -> LatencyTable:
    """The LatencyTable of a source (TaskData, LatencyTable, or Profile + hardware + models).

    From a Profile, `statistic` per (model, batch 1..max_batch); `fill` says what a batch the
    profile did not measure gets: "none" (a ValueError naming the gap), "linear" (the profile's
    interpolation between measured batches) or "ols" (the artifact's: an OLS line over the measured
    batches, made non-decreasing; max_batch 0 then means the largest measured batch)."""
    if isinstance(source, TaskData):
        table = source.table
    elif isinstance(source, LatencyTable):
        table = source
    elif isinstance(source, Profile | _core.Profile):
        if hardware is None:
            hw = source.hardware
            if len(hw) != 1:
                raise ValueError(
                    f"hardware=None: the profile has {len(hw)} hardware types, name one"
                )
            hardware = hw[0]
        if models is None:
            raise ValueError("models=None: name the profile's models the policies choose from")
        models = list(models)
        if not models:
            raise ValueError("models is empty: RAMSIS needs at least one model")
        table = LatencyTable.from_profile(
            source, hardware, models, statistic=statistic, max_batch=max_batch, fill=fill
        )
        return table
    else:
        raise TypeError(
            f"source={source!r}: give a TaskData (image_task/text_task), a LatencyTable "
            "or a Profile"
        )
    if models is not None:
        table = table.select(list(models))
    return table


def _mdp_kwargs(kwargs: dict[str, Any]) -> dict[str, Any]:
    unknown = set(kwargs) - set(_MDP_KEYS)
    if unknown:
        raise TypeError(
            f"unknown option(s) {', '.join(sorted(unknown))}; MDP options: {', '.join(_MDP_KEYS)}"
        )
    return kwargs


def build_mdp(
    source: Any,
    hardware: str | None = None,
    models: Sequence[str] | None = None,
    *,
    slo_ms: float,
    load_qps: float,
    workers: int,
    statistic: str = "p95",
    **options: Any,
) -> RamsisMdp:
    """The per-worker MDP (Sec. 4) for a total load at the central queue and `workers` workers.

    options: max_queue=32, discretisation="fld"|"md", intervals=100 (D), batching="maximal"|
    "variable", balancer="round_robin"|"shortest_queue", arrivals="poisson"|"erlang" with shape=r,
    pareto=True, prune=1e-12 (transition probabilities below it are dropped and the row
    renormalised; 0 keeps all). ``.mdp`` is a servelab.solvers.mdp Mdp.
    """
    table = latency_table(source, hardware, models, statistic=statistic)
    return _core.ramsis.build_mdp(
        table, slo_ms=slo_ms, load_qps=load_qps, workers=workers, **_mdp_kwargs(options)
    )


def solve(
    source: Any,
    hardware: str | None = None,
    models: Sequence[str] | None = None,
    *,
    slo_ms: float,
    load_qps: float,
    workers: int,
    statistic: str = "p95",
    sweeps: int = 100,
    max_violation: float = 0.01,
    threads: int = 0,
    details: bool = False,
    **options: Any,
) -> Any:
    """Generates one policy: builds the MDP, runs `sweeps` undiscounted value-iteration sweeps
    and computes the guarantees (``policy.expected_accuracy``, ``policy.expected_violation``;
    ``policy.feasible`` is False when the expected violation exceeds max_violation).

    details=True returns a dict instead: {policy, expected_accuracy, expected_violation,
    overflow_probability, mean_batch, distribution, num_states, num_pairs, num_transitions,
    build_s, solve_s, evaluate_s}. The GIL is released while it runs; Ctrl-C stops it.
    """
    table = latency_table(source, hardware, models, statistic=statistic)
    out = _core.ramsis.generate_policy(
        table,
        slo_ms=slo_ms,
        load_qps=load_qps,
        workers=workers,
        sweeps=sweeps,
        max_violation=max_violation,
        threads=threads,
        **_mdp_kwargs(options),
    )
    return out if details else out["policy"]


def expected_performance(
    policy: Any,
    source: Any = None,
    hardware: str | None = None,
    models: Sequence[str] | None = None,
    *,
    load_qps: float | None = None,
    workers: int | None = None,
    statistic: str = "p95",
    prune: float = 1e-12,
    tolerance: float = 1e-12,
    max_iterations: int = 100000,
) -> dict[str, Any]:
    """Expected accuracy and SLO-violation rate (Sec. 5.1) of a policy from its stationary
    distribution, per query as a simulation measures them.

    ``expected_performance(policy, source)`` rebuilds the MDP the policy was made for (its load,
    workers, SLO and discretisation; `load_qps` / `workers` evaluate it under another load);
    ``expected_performance(mdp, policy)`` evaluates on a RamsisMdp you built. Returns
    {expected_accuracy, expected_violation, overflow_probability, mean_batch, iterations,
    converged, distribution}.
    """
    if isinstance(policy, RamsisMdp):
        mdp, chosen = policy, source
        if chosen is None:
            raise ValueError("expected_performance(mdp, policy): the policy is missing")
        if not isinstance(chosen, WorkerPolicy):
            chosen = np.asarray(chosen, dtype=np.int32).tolist()
    else:
        if not isinstance(policy, WorkerPolicy):
            raise TypeError(f"policy={policy!r} is not a WorkerPolicy (or give a RamsisMdp first)")
        if source is None:
            raise ValueError(
                "expected_performance(policy, source): give the models the policy was made for"
            )
        table = latency_table(source, hardware, models, statistic=statistic)
        levels = policy.slack_levels_s
        mdp = _core.ramsis.build_mdp(
            table.select(list(policy.models)),
            slo_ms=policy.slo_ms,
            load_qps=policy.load_qps if load_qps is None else load_qps,
            workers=policy.workers if workers is None else workers,
            max_queue=policy.max_queue,
            discretisation=policy.discretisation,
            intervals=max(policy.intervals, 1),
            batching=policy.batching,
            balancer=policy.balancer,
            arrivals="poisson" if policy.arrivals == "poisson" else "erlang",
            shape=1.0 if policy.arrivals == "poisson" else float(policy.arrivals[len("erlang") :]),
            pareto=False,
            prune=prune,
        )
        if not np.array_equal(mdp.slack_levels_s, levels):
            raise ValueError(
                "the rebuilt MDP's slack levels differ from the policy's: is `source` the table "
                "the policy was made from?"
            )
        chosen = policy
    return _core.ramsis.evaluate(mdp, chosen, tolerance=tolerance, max_iterations=max_iterations)


def policy_set(
    source: Any,
    hardware: str | None = None,
    models: Sequence[str] | None = None,
    *,
    slo_ms: float,
    workers: int,
    loads: Iterable[float],
    statistic: str = "p95",
    max_accuracy_gap: float = 0.01,
    min_load_step_qps: float = 10.0,
    max_policies: int = 256,
    sweeps: int = 100,
    max_violation: float = 0.01,
    threads: int = 1,
    **options: Any,
) -> PolicySet:
    """Policies for a grid of loads (queries/s), the grid refined with midpoints until adjacent
    policies' expected accuracies differ by less than max_accuracy_gap (0.01 = one percentage
    point; 0 disables it), as the paper does. Infeasible loads keep a policy (flagged
    ``feasible=False``). ``threads`` policies are generated in parallel; the result does not
    depend on it. ``PolicySet.lookup(load)`` is the policy the online scheduler uses."""
    table = latency_table(source, hardware, models, statistic=statistic)
    grid = [float(x) for x in loads]
    if not grid:
        raise ValueError("loads is empty: give at least one load (queries/s)")
    return _core.ramsis.generate_policy_set(
        table,
        grid,
        slo_ms=slo_ms,
        workers=workers,
        sweeps=sweeps,
        max_violation=max_violation,
        max_accuracy_gap=max_accuracy_gap,
        min_load_step_qps=min_load_step_qps,
        max_policies=max_policies,
        threads=threads,
        **_mdp_kwargs(options),
    )


def to_json(obj: WorkerPolicy | PolicySet) -> str:
    """The JSON document of a WorkerPolicy or a PolicySet."""
    if not isinstance(obj, WorkerPolicy | PolicySet):
        raise TypeError(f"{obj!r} is neither a WorkerPolicy nor a PolicySet")
    return obj.to_json()


def from_json(text: str, *, where: str = "policy JSON") -> WorkerPolicy | PolicySet:
    """A WorkerPolicy or PolicySet from its JSON document (ValueError naming a bad field; ``where``
    names the document in the nesting check)."""
    textio.check_json_depth(text, where=where)
    return _parse_policy(text)


def _parse_policy(text: str) -> WorkerPolicy | PolicySet:
    if '"servelab.ramsis.policy_set"' in text:
        return PolicySet.from_json(text)
    return WorkerPolicy.from_json(text)


def save(obj: WorkerPolicy | PolicySet, path: str | os.PathLike[str]) -> Path:
    """Writes the JSON document of a policy or policy set; returns the path."""
    out = Path(path)
    out.write_text(to_json(obj))
    return out


def read_policy_text(path: str | os.PathLike[str]) -> str:
    """The JSON text of a policy (set) file, checked before any parser sees it: the file exists
    and is a file (FileNotFoundError / IsADirectoryError naming the path), is UTF-8 text and
    nests at most textio.MAX_DEPTH levels (ValueError naming the path and line)."""
    text = textio.read_text(path, what="RAMSIS policy JSON file")
    textio.check_json_depth(text, where=str(path))
    return text


def load(path: str | os.PathLike[str]) -> WorkerPolicy | PolicySet:
    """Reads a policy or policy set written by save(); errors name the file."""
    text = read_policy_text(path)
    try:
        return _parse_policy(text)
    except ValueError as e:
        raise ValueError(f"{path}: {e}") from None


def policy_table(policy: WorkerPolicy) -> dict[str, np.ndarray]:
    """The action table as [queue length 0..N, slack level] arrays: model index (-1: wait),
    batch, and the slack levels in ms; the full-queue state's action is under key 'overflow'."""
    levels = policy.num_levels
    n = policy.max_queue + 1
    model = policy.action_model
    batch = policy.action_batch
    return {
        "model": model[: n * levels].reshape(n, levels),
        "batch": batch[: n * levels].reshape(n, levels),
        "slack_ms": policy.slack_levels_s * 1e3,
        "overflow": np.array([model[-1], batch[-1]]),
    }


def simulate_worker(
    policy: WorkerPolicy,
    source: Any,
    hardware: str | None = None,
    models: Sequence[str] | None = None,
    *,
    decisions: int = 100_000,
    seed: int = 0,
    statistic: str = "p95",
) -> dict[str, Any]:
    """A direct Monte Carlo of one worker under round-robin: it receives every K-th arrival of
    the load (Poisson: Erlang-K gaps; Erlang-r arrivals: Erlang-rK gaps), serves its queue earliest
    deadline first with the policy's (model, batch) and the table's fixed latencies, and counts the
    MDP state of every decision.

    Returns {visits (frequency per MDP state, the full-queue state last), accuracy (mean accuracy of
    the queries that met their deadline), violation (late queries / served queries), decisions,
    queries}. Compare visits with ``expected_performance(policy, source)["distribution"]``."""
    if not isinstance(policy, WorkerPolicy):
        raise TypeError(f"policy={policy!r} is not a WorkerPolicy")
    if policy.balancer != "round_robin":
        raise ValueError("simulate_worker models arrivals dealt round-robin only")
    shape = 1 if policy.arrivals == "poisson" else int(policy.arrivals[len("erlang") :])
    if decisions < 1:
        raise ValueError(f"decisions={decisions} must be >= 1")
    table = latency_table(source, hardware, models, statistic=statistic).select(list(policy.models))
    n_max = policy.max_queue
    lat = np.rint(table.extended_to(n_max + 1).latency_s * 1e9).astype(np.int64)
    accuracy = np.asarray(table.accuracy)
    levels = np.rint(policy.slack_levels_s * 1e9).astype(np.int64)
    n_levels = len(levels)
    slo = int(round(policy.slo_ms * 1e6))
    action_model, action_batch = policy.action_model, policy.action_batch
    overflow = policy.num_states - 1
    rng = np.random.default_rng(seed)
    scale = 1e9 / policy.load_qps / shape  # mean gap of the underlying Poisson events, ns
    k = policy.workers * shape  # the worker gets every k-th event

    def gaps(count: int) -> np.ndarray:
        return rng.gamma(k, scale, size=count)

    buffer, at = gaps(4096), 0
    queue: deque[float] = deque()
    visits = np.zeros(policy.num_states)
    t = 0.0
    next_arrival = float(rng.gamma(k, scale))  # the worker's first query
    met_acc, met, served = 0.0, 0, 0
    for _ in range(decisions):
        if not queue:
            t = max(t, next_arrival)
        while next_arrival <= t:
            queue.append(next_arrival)
            if at == len(buffer):
                buffer, at = gaps(4096), 0
            next_arrival += buffer[at]
            at += 1
        n = len(queue)
        slack = slo - (t - queue[0])
        if n > n_max:
            s = overflow
        else:
            j = max(int(np.searchsorted(levels, slack, side="right")) - 1, 0)
            s = n * n_levels + j
        visits[s] += 1
        m, b = int(action_model[s]), min(int(action_batch[s]), n)
        tau = float(lat[m, min(b, n_max + 1) - 1])
        finish = t + tau
        for _ in range(b):
            arrived = queue.popleft()
            served += 1
            if finish <= arrived + slo:
                met += 1
                met_acc += accuracy[m]
        t = finish
    return {
        "visits": visits / visits.sum(),
        "accuracy": met_acc / met if met else float("nan"),
        "violation": (served - met) / served,
        "decisions": decisions,
        "queries": served,
    }
