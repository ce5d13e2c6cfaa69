"""Whether a call releases the GIL: a Python thread keeps counting while it runs."""

import threading
import time
from collections.abc import Callable
from typing import Any


def ticks_during(call: Callable[[], Any]) -> int:
    """How often a Python thread, sleeping 1 ms per tick, ticked while `call` ran.

    With the GIL held throughout, the count stays near 0."""
    ticks = 0
    stop = threading.Event()

    def count():
        nonlocal ticks
        while not stop.is_set():
            ticks += 1
            time.sleep(0.001)

    worker = threading.Thread(target=count)
    worker.start()
    try:
        time.sleep(0.01)
        before = ticks
        call()
        return ticks - before
    finally:
        stop.set()
        worker.join()
