"""Real node control where the OS allows it: pinning workers to cores (sched_setaffinity) and LLC
partitioning through Linux resctrl (Intel CAT), reported as unsupported where it is absent.

Nothing here is simulated: ``resctrl_status`` reads /sys/fs/resctrl, ``set_llc_ways`` writes a
resctrl group's schemata and fails with a RuntimeError saying why when it cannot.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

RESCTRL = Path("/sys/fs/resctrl")


@dataclass(frozen=True)
class ResctrlStatus:
    supported: bool
    reason: str  # why not, or what is there
    cbm_mask: str = ""  # the L3 capacity bit mask of every way ("7ff": 11 ways)
    ways: int = 0


def resctrl_status(root: Path = RESCTRL) -> ResctrlStatus:
    """Whether L3 cache allocation (CAT) can be used here, read from resctrl."""
    info = root / "info" / "L3"
    if not root.is_dir():
        return ResctrlStatus(
            False, f"{root} does not exist (no resctrl: kernel or CPU without CAT)"
        )
    if not (root / "schemata").exists():
        return ResctrlStatus(False, f"{root} is not mounted (mount -t resctrl resctrl {root})")
    if not info.is_dir():
        return ResctrlStatus(False, f"{info} is absent: the CPU offers no L3 cache allocation")
    try:
        mask = (info / "cbm_mask").read_text().strip()
        ways = bin(int(mask, 16)).count("1")
    except OSError as e:
        return ResctrlStatus(False, f"{info / 'cbm_mask'}: {e.strerror}")
    except ValueError:
        return ResctrlStatus(False, f"{info / 'cbm_mask'}: {mask!r} is not a hex bit mask")
    if not os.access(root, os.W_OK):
        return ResctrlStatus(
            False, f"{root} is not writable by this user (uid {os.getuid()}): groups need root"
        )
    return ResctrlStatus(True, f"L3 CAT with mask {mask}", mask, ways)


def ways_mask(first: int, count: int, total: int) -> str:
    """The contiguous capacity bit mask of ``count`` ways starting at way ``first`` (hex)."""
    if not (total >= 1 and count >= 1 and first >= 0 and first + count <= total):
        raise ValueError(f"ways first={first}, count={count} do not fit in {total} ways")
    return format(((1 << count) - 1) << first, "x")


def set_llc_ways(
    group: str, first: int, count: int, *, pids: Iterable[int] = (), root: Path = RESCTRL
) -> Path:
    """Gives the resctrl group ``group`` (created if needed) ``count`` LLC ways from ``first`` on
    every L3 domain and moves ``pids`` into it. RuntimeError when resctrl is unsupported here
    or the kernel refuses (permissions), naming the reason."""
    status = resctrl_status(root)
    if not status.supported:
        raise RuntimeError(f"LLC partitioning is unsupported on this machine: {status.reason}")
    mask = ways_mask(first, count, status.ways)
    path = root / group
    try:
        path.mkdir(exist_ok=True)
        domains = [
            line.split(":", 1)[1]
            for line in (root / "schemata").read_text().splitlines()
            if line.strip().startswith("L3:")
        ]
        ids = [d.split("=")[0] for d in domains[0].split(";")] if domains else ["0"]
        (path / "schemata").write_text("L3:" + ";".join(f"{i}={mask}" for i in ids) + "\n")
        for pid in pids:
            (path / "tasks").write_text(f"{int(pid)}\n")
    except OSError as e:
        raise RuntimeError(f"resctrl group {path}: {e.strerror or e}") from e
    return path


def pin_to_cores(cores: Iterable[int], pid: int = 0) -> set[int]:
    """Pins a process or thread (0: the caller) to ``cores`` with sched_setaffinity and returns
    the affinity the kernel applied. ValueError for a core this machine does not offer."""
    wanted = {int(c) for c in cores}
    available = os.sched_getaffinity(0) if pid == 0 else set(range(os.cpu_count() or 1))
    bad = sorted(wanted - set(range(os.cpu_count() or 1)))
    if not wanted or bad:
        raise ValueError(
            f"cores={sorted(wanted)}: not cores of this machine (it has {sorted(available)})"
        )
    os.sched_setaffinity(pid, wanted)
    return os.sched_getaffinity(pid)
