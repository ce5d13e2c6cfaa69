"""The real server's hung-executor watchdog: a batch that has run longer than
``batch_timeout_ms`` (servelab.serve's name) marks its worker lost, as a failing worker is.

Python cannot stop a thread blocked in an executor, so the worker's thread is abandoned (a daemon
thread, which ``close()`` does not join): its queued tasks and the hung batch's query are
re-dispatched to the other workers (the lost-worker path), and if the call returns later its
result is discarded (decision ``discarded``), so no query is answered twice.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .server import InfaasServer


def check_hung(server: InfaasServer) -> None:
    """Abandons every live worker whose running batch is over the timeout (lock held)."""
    limit_ms = server.settings.batch_timeout_ms
    if limit_ms is None:
        return
    now = time.perf_counter()
    for w in server._live():
        batch = w.batch  # (task, perf_counter at its start), set by the worker's thread
        if batch is None or batch[0] is not w.running:
            continue
        task, t0 = batch
        elapsed_ms = (now - t0) * 1e3
        if elapsed_ms <= limit_ms:
            continue
        reason = (
            f"its {task.kind} batch of {task.variant['name']!r} on worker {w.id} has run "
            f"{elapsed_ms / 1e3:.3g} s > batch_timeout_ms={limit_ms:g}: the executor hangs"
        )
        w.hung = True
        w.running, w.batch = None, None  # the thread's result will be discarded
        server._lose(w, reason)
        server._finished(w, task)
        task.tried.append(w.id)
        task.errors.append(f"worker {w.id}: {reason}")
        server._redispatch(task)
