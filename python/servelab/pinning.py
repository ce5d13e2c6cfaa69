"""Pinning the serving loop's workers to cores: the ``cores`` and ``pin`` keys of a worker group.

::

    workers:
      - {hardware: cpu, count: 2, models: [ncf], cores: [0, 1]}   # worker k on cores[k % len]
      - {hardware: cpu, count: 2, models: [din], pin: spread}     # compact | spread | none

``cores`` lists the cores the group's workers take in turn (a worker added during the run
continues the count); ``pin="compact"`` fills the allowed CPUs in topology order (the SMT
siblings of a core, then the next core of the package), ``"spread"`` visits every package,
then every core, before a sibling; the ``pin`` groups take their CPUs one after another, so two
groups do not share a CPU until every allowed CPU is used. ``"none"`` (the default) leaves the
group unpinned. Only ``servelab.serve`` pins (each worker pins its own thread with
``sched_setaffinity`` before its first batch); the simulator ignores both keys. The run's
``meta["pinning"]`` lists, per pinned worker, the core asked for, the affinity the kernel
applied and the thread id.

A worker process (``servelab worker --cores 0``, ``run_worker(cores=...)``,
``LocalWorkers(n, executor, cores=... or pin=...)``) is pinned as a whole: ``pin_process`` sets
the affinity of every thread it has, and the threads it starts later (the one per connection that
runs the batches, an executor's pools) inherit it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

PIN_MODES = ("none", "compact", "spread")
_CPU_SYSFS = Path("/sys/devices/system/cpu")


def check_group(path: str, group: Mapping[str, Any]) -> None:
    """The types of a group's ``cores`` and ``pin`` (machine-independent; serve checks the cores
    exist here). ValueError names the key path and the value."""
    cores, pin = group.get("cores"), group.get("pin")
    if cores is not None and pin is not None:
        raise ValueError(f"{path}: give cores={cores!r} or pin={pin!r}, not both")
    if pin is not None and pin not in PIN_MODES:
        raise ValueError(f"{path}.pin={pin!r} must be one of {', '.join(PIN_MODES)}")
    if cores is not None:
        if isinstance(cores, (str, bytes)) or not isinstance(cores, Sequence) or not cores:
            raise ValueError(f"{path}.cores={cores!r} must be a non-empty list of core numbers")
        for c in cores:
            if isinstance(c, bool) or not isinstance(c, int) or c < 0:
                raise ValueError(f"{path}.cores={list(cores)!r}: {c!r} is not a core number >= 0")


def check_cores(option: str, cores: Any) -> list[int]:
    """``cores`` as a list of CPUs this process may run on. ValueError naming ``option``, the
    value and the allowed set when one is not a core number, does not exist or is not allowed."""
    if isinstance(cores, (str, bytes)) or not isinstance(cores, Sequence) or not cores:
        raise ValueError(f"{option}={cores!r} must be a non-empty list of core numbers")
    allowed = allowed_cpus()
    for c in cores:
        if isinstance(c, bool) or not isinstance(c, int) or c < 0:
            raise ValueError(f"{option}={list(cores)!r}: {c!r} is not a core number >= 0")
        if c not in allowed:
            present = os.cpu_count() or len(allowed)
            why = "does not exist" if c >= present else "is not allowed"
            raise ValueError(
                f"{option}={list(cores)!r}: core {c} {why}; this process may use {set(allowed)}"
            )
    return [int(c) for c in cores]


def process_affinity(pid: int = 0) -> list[int]:
    """The CPUs any thread of process ``pid`` (0: this one) may run on, ascending: the union over
    its threads, so one thread left unpinned shows."""
    folder = Path(f"/proc/{pid or os.getpid()}/task")
    cpus: set[int] = set()
    for task in folder.iterdir():
        try:
            cpus |= os.sched_getaffinity(int(task.name))
        except ProcessLookupError:  # the thread ended meanwhile
            continue
    return sorted(cpus)


def pin_process(cores: Sequence[int]) -> list[int]:
    """Pins every thread of this process to ``cores`` (checked as ``check_cores("cores", ...)``)
    and returns ``process_affinity()``; threads started afterwards inherit the affinity of the
    thread that starts them. OSError with the system's reason when the kernel refuses."""
    wanted = set(check_cores("cores", list(cores)))
    for task in Path("/proc/self/task").iterdir():
        try:
            os.sched_setaffinity(int(task.name), wanted)
        except ProcessLookupError:
            continue
    return process_affinity()


def allowed_cpus() -> list[int]:
    """The CPUs this process may run on (sched_getaffinity), ascending."""
    return sorted(os.sched_getaffinity(0))


def _topology(cpu: int) -> tuple[int, int]:
    """(package, core) of a CPU from sysfs; (0, cpu) where sysfs does not say."""
    base = _CPU_SYSFS / f"cpu{cpu}" / "topology"
    try:
        package = int((base / "physical_package_id").read_text())
        core = int((base / "core_id").read_text())
    except (OSError, ValueError):
        return 0, cpu
    return package, core


def cpu_order(mode: str, cpus: Sequence[int] | None = None) -> list[int]:
    """The allowed CPUs in the order ``mode`` ('compact' or 'spread') hands them out."""
    if mode not in ("compact", "spread"):
        raise ValueError(f"pin={mode!r}: an order is for 'compact' or 'spread'")
    cpus = list(allowed_cpus() if cpus is None else cpus)
    topo = {c: _topology(c) for c in cpus}
    cores = sorted({topo[c] for c in cpus})
    rank_in_package: dict[tuple[int, int], int] = {}
    for package, core in cores:  # a core's rank within its package
        rank_in_package[(package, core)] = sum(1 for p, _ in rank_in_package if p == package)
    sibling = {c: sorted(x for x in cpus if topo[x] == topo[c]).index(c) for c in cpus}
    if mode == "compact":
        return sorted(cpus, key=lambda c: (topo[c][0], rank_in_package[topo[c]], sibling[c]))
    return sorted(cpus, key=lambda c: (sibling[c], rank_in_package[topo[c]], topo[c][0]))


def core_plan(groups: Sequence[Mapping[str, Any]]) -> list[list[int]] | None:
    """Per group, the cores its workers take in turn ([]: unpinned); None when no group pins.
    ValueError names the group when a core does not exist or is not in the allowed set."""
    if not any(g.get("cores") is not None or g.get("pin", "none") != "none" for g in groups):
        return None
    allowed = allowed_cpus()
    present = os.cpu_count() or len(allowed)
    orders: dict[str, list[int]] = {}
    cursor = 0
    plan: list[list[int]] = []
    for i, g in enumerate(groups):
        check_group(f"workers[{i}]", g)
        cores, pin = g.get("cores"), g.get("pin", "none")
        if cores is not None:
            for c in cores:
                if c >= present:
                    raise ValueError(
                        f"workers[{i}].cores: core {c} does not exist "
                        f"(this machine has cores 0..{present - 1})"
                    )
                if c not in allowed:
                    raise ValueError(
                        f"workers[{i}].cores: core {c} is not in this process's allowed set "
                        f"{set(allowed)}"
                    )
            plan.append([int(c) for c in cores])
        elif pin == "none":
            plan.append([])
        else:
            order = orders.setdefault(pin, cpu_order(pin, allowed))
            count = int(g.get("count", 1))
            plan.append([order[(cursor + k) % len(order)] for k in range(count)])
            cursor += count
    return plan
