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

**Machines.** Instances co-located on a declared machine (``machines:`` and a group's
``machine:``) are pinned through their machine, not their group::

    machines:
      - {name: box, cores: 2, core_ids: [0, 1]}   # this machine is host cores 0 and 1
      # or, machine after machine: {name: box, count: 2, cores: 4, pin: compact}
    workers:
      - {hardware: cpu, count: 2, models: [ncf], machine: box, config: {cores: 1}}

``core_ids`` gives each machine of the group its host cores (a list per machine, or one list
when ``count`` is 1), as many as its ``cores``; ``pin: compact|spread`` hands each machine
``cores`` CPUs of that order instead, after the CPUs the machine groups before it took. Machines
share no core. The machine's instances divide its cores by their ``cores`` knob (the group's
``config`` or ``set_config(worker, "cores", n)`` during the run): in the order the instances
came, each one with ``cores=n`` takes the next ``n``; instances without the knob share the cores
nobody took (all of them when every core is taken). The serving loop works the share out at
each dispatch and the worker thread re-pins itself before a batch whose share changed, so an
instance added with ``add_instance`` or a partition changed mid-run takes effect at its next
batch. ``meta["pinning"]`` then has one entry per change: the machine, the cores asked for, when
(``at_ns``, the batch's dispatch) and what the kernel applied. A group placed on a machine takes
no ``cores`` or ``pin`` of its own; the simulator ignores ``core_ids`` and ``pin`` (its
``cores`` is the machine's core count, which interference models read).

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
# The keys of a machine group that only servelab.serve reads (the simulator's MachineGroup has
# no field for them).
MACHINE_PIN_KEYS = ("core_ids", "pin")
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


def machine_cores() -> int:
    """The cores this process may run on (its CPU affinity), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


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


def check_machine(path: str, machine: Mapping[str, Any]) -> None:
    """The types of a machine group's ``core_ids`` and ``pin`` (machine-independent; serve checks
    the cores exist here). ValueError names the key path and the value."""
    ids, pin = machine.get("core_ids"), machine.get("pin")
    if ids is not None and pin is not None:
        raise ValueError(f"{path}: give core_ids={ids!r} or pin={pin!r}, not both")
    if pin is not None and pin not in PIN_MODES:
        raise ValueError(f"{path}.pin={pin!r} must be one of {', '.join(PIN_MODES)}")
    if ids is None:
        return
    count = machine.get("count", 1)
    if isinstance(ids, (str, bytes)) or not isinstance(ids, Sequence) or not ids:
        raise ValueError(f"{path}.core_ids={ids!r} must be a list of core numbers per machine")
    lists = [ids] if not isinstance(ids[0], Sequence) else list(ids)
    if len(lists) != count:
        raise ValueError(
            f"{path}.core_ids={ids!r} has {len(lists)} lists for count={count} machines "
            "(one list of host cores per machine)"
        )
    for k, cores in enumerate(lists):
        if isinstance(cores, (str, bytes)) or not isinstance(cores, Sequence) or not cores:
            raise ValueError(f"{path}.core_ids[{k}]={cores!r} must be a non-empty list of cores")
        for c in cores:
            if isinstance(c, bool) or not isinstance(c, int) or c < 0:
                raise ValueError(f"{path}.core_ids={ids!r}: {c!r} is not a core number >= 0")


def machine_core_plan(
    machines: Sequence[Mapping[str, Any]], workers: Sequence[Mapping[str, Any]] = ()
) -> list[list[int]] | None:
    """Per declared machine (group by group, ``count`` each, as the cluster numbers them), its
    host cores ([]: unpinned); None when no machine group pins. ValueError names the machine
    group when a machine's cores are not its ``cores`` count, a core does not exist or is not
    allowed, two machines share one, ``pin`` runs out of CPUs, or a worker group placed on a
    pinned machine pins itself."""
    if not any(m.get("core_ids") is not None or m.get("pin", "none") != "none" for m in machines):
        return None
    allowed = allowed_cpus()
    present = os.cpu_count() or len(allowed)
    orders: dict[str, list[int]] = {}
    cursor: dict[str, int] = {}
    owner: dict[int, str] = {}
    plan: list[list[int]] = []
    pinned: set[str] = set()
    for i, m in enumerate(machines):
        path = f"machines[{i}]"
        check_machine(path, m)
        name, count = m.get("name"), int(m.get("count", 1))
        where = f"{path} ({name!r})"
        ids, pin = m.get("core_ids"), m.get("pin", "none")
        if ids is None and pin == "none":
            plan.extend([] for _ in range(count))
            continue
        cores = m.get("cores", 0)
        if isinstance(cores, bool) or not isinstance(cores, int) or cores < 1:
            how = f"core_ids={ids!r}" if ids is not None else f"pin={pin!r}"
            raise ValueError(
                f"{where}: {how} needs the machine's core count, cores= (>= 1), "
                f"which the simulator reads too; got cores={cores!r}"
            )
        pinned.add(name)
        if ids is not None:
            lists = [list(ids)] if not isinstance(ids[0], Sequence) else [list(x) for x in ids]
        else:
            order = orders.setdefault(pin, cpu_order(pin, allowed))
            first = cursor.get(pin, 0)
            need = first + count * cores
            if need > len(order):
                raise ValueError(
                    f"{where}: pin={pin!r} gives each of its {count} machines cores={cores}: "
                    f"{count * cores} host CPUs after the {first} given before, but this process "
                    f"may use {len(order)} ({set(allowed)}); lower count or cores, or give "
                    "core_ids"
                )
            lists = [order[first + k * cores : first + (k + 1) * cores] for k in range(count)]
            cursor[pin] = need
        for k, host in enumerate(lists):
            here = f"{where} machine {k}"
            if len(host) != cores:
                raise ValueError(
                    f"{here}: core_ids {host} has {len(host)} cores, but the machine has "
                    f"cores={cores} (give one host core per machine core)"
                )
            for c in host:
                if c >= present:
                    raise ValueError(
                        f"{here}: core {c} does not exist (this host has cores 0..{present - 1})"
                    )
                if c not in allowed:
                    raise ValueError(
                        f"{here}: core {c} is not in this process's allowed set {set(allowed)}"
                    )
                if c in owner:
                    other = owner[c]
                    raise ValueError(
                        f"{here}: core {c} is "
                        + ("listed twice" if other == here else f"also given to {other}")
                        + " (machines share no core)"
                    )
                owner[c] = here
            plan.append([int(c) for c in host])
    for g, w in enumerate(workers):
        if w.get("machine") in pinned and (w.get("cores") is not None or w.get("pin") is not None):
            raise ValueError(
                f"workers[{g}] is placed on machine group {w['machine']!r}, which is pinned: its "
                "instances take their machine's cores (divide them with config: {cores: n}), "
                "not cores= or pin= of their own"
            )
    return plan
