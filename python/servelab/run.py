"""Running a scenario in either world: ``simulate`` (virtual time) and ``serve`` (wall clock).

Both take the same arguments and return the same :class:`~servelab.results.Result`, so
"simulated vs measured" is ``sim.compare(real)``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from . import _core
from .results import Result
from .scenario import Scenario, load_scenario


def _scenario(scenario: Any, overrides: dict[str, Any]) -> Scenario:
    if scenario is None:
        base: dict[str, Any] = {}
    elif isinstance(scenario, Scenario):
        base = dict(vars(scenario))
    elif isinstance(scenario, str | Path | Mapping):
        base = dict(vars(load_scenario(scenario)))
    else:
        raise TypeError(f"scenario={scenario!r} must be a Scenario, dict, path or built-in name")
    base.update({k: v for k, v in overrides.items() if v is not None})
    base = {k: v for k, v in base.items() if not (k in ("name", "description") and not v)}
    return Scenario.from_dict(base)


def _run(world: str, scenario: Any, overrides: dict[str, Any]) -> Result:
    sc = _scenario(scenario, overrides)
    run = _core.simulate_run if world == "sim" else _core.serve_run
    raw = run(
        sc.build_profile(),
        sc.build_workers(),
        sc.build_workload(),
        sc.build_scheduler(),
        seed=sc.seed,
        decision_statistic=sc.decision_statistic,
        service=sc.service,
        drain_s=float(sc.drain_s),
    )
    raw["meta"]["scenario"] = sc.to_dict()
    return Result(raw["columns"], raw["workers"], raw["meta"])


def simulate(scenario: Any = None, **overrides: Any) -> Result:
    """Runs the discrete-event simulator.

    ``scenario`` is a dict, a YAML/JSON path, a built-in name (``builtin_scenarios()``) or a
    Scenario; keyword arguments (profile, workers, workload, scheduler, seed, decision_statistic,
    service, drain_s) override its keys, or make the whole scenario::

        r = servelab.simulate("default", scheduler="jsq", seed=3)
        r.summary()["latency_ms"]["p99"]

    ``profile`` and ``scheduler`` may also be live objects (a Profile, a Scheduler instance or
    subclass). A scheduler keeps per-run state: give each run a fresh one.
    """
    return _run("sim", scenario, overrides)


def serve(scenario: Any = None, **overrides: Any) -> Result:
    """Runs the same scenario in the real-time serving loop (wall clock, emulated executors that
    wait the profiled latency). Same arguments and Result as :func:`simulate`; it takes as long as
    the workload lasts."""
    return _run("serve", scenario, overrides)
