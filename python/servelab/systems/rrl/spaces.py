"""The configuration spaces RRL tunes (Sec. 4.1, Fig. 1-2), bounded by the machine.

CPU: ``workers`` (request parallelism: concurrent serving workers), ``inter_op`` and ``intra_op``
threads, each 1..cores. GPU: ``batch_size``, ``batch_timeout_ms`` and ``batch_threads``. A custom
space is ``ConfigSpace("cpu", [("workers", [1, 2, 4]), ...])``. Region radii count grid steps.
"""

from __future__ import annotations

from ..._core import rrl as _rrl
from ...pinning import machine_cores

ConfigSpace = _rrl.ConfigSpace


def cpu_space(
    cores: int | None = None, *, max_workers: int = 0, max_inter_op: int = 0, max_intra_op: int = 0
) -> ConfigSpace:
    """workers x inter_op x intra_op, each in 1..cores (or max_*); cores=None: this machine's."""
    return _rrl.cpu_space(
        machine_cores() if cores is None else cores, max_workers, max_inter_op, max_intra_op
    )


def gpu_space(
    *,
    max_batch: int = 64,
    batch_step: int = 8,
    max_timeout_ms: int = 50,
    timeout_step_ms: int = 5,
    max_threads: int = 8,
) -> ConfigSpace:
    """batch_size {1, step, 2 step, ..} x batch_timeout_ms {0, step, ..} x batch_threads 1..max."""
    return _rrl.gpu_space(max_batch, batch_step, max_timeout_ms, timeout_step_ms, max_threads)
