"""Progress bars (tqdm) for long calls: on where a person watches, off in logs and tests.

``progress=None`` (the default of the calls that take it) shows a bar when standard error is a
terminal or the call runs in a Jupyter kernel (a widget there), and nothing otherwise, so a
test run or a redirected log stays clean; ``True`` / ``False`` force it either way. tqdm's own
``TQDM_DISABLE=1`` turns every bar off.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any


def _in_jupyter_kernel() -> bool:
    ipython = sys.modules.get("IPython")
    if ipython is None:
        return False
    try:
        shell = ipython.get_ipython()
    except Exception:  # an IPython too old or half imported: no kernel to draw in
        return False
    return shell is not None and type(shell).__name__ == "ZMQInteractiveShell"


def wanted(progress: Any) -> bool:
    """Whether to show a bar: ``progress`` as given, or (None) whether someone is watching."""
    if progress is None:
        try:
            if sys.stderr is not None and sys.stderr.isatty():
                return True
        except (AttributeError, ValueError):  # a replaced or closed stderr
            pass
        return _in_jupyter_kernel()
    if not isinstance(progress, bool):
        raise ValueError(f"progress={progress!r} must be True, False or None (automatic)")
    return progress


def bar(**kwargs: Any) -> Any:
    """A tqdm bar (a widget in a notebook). Imported here, on use: tqdm.auto warns in a notebook
    without ipywidgets, and importing it costs start-up time."""
    from tqdm.auto import tqdm

    return tqdm(**kwargs)


@contextmanager
def ticking(
    total: int, position: Callable[[float], int], *, desc: str, unit: str, every_s: float = 0.25
) -> Iterator[None]:
    """A bar of ``total`` that a thread moves to ``position(elapsed seconds)`` every ``every_s``
    while the body runs (a long C++ call that reports nothing); full when the body returns."""
    progress = bar(total=total, desc=desc, unit=unit, dynamic_ncols=True)
    stop = threading.Event()
    start = time.monotonic()

    def tick() -> None:
        while not stop.wait(every_s):
            n = min(int(position(time.monotonic() - start)), total)
            if n > progress.n:
                progress.update(n - progress.n)

    thread = threading.Thread(target=tick, name="servelab-progress", daemon=True)
    thread.start()
    finished = False
    try:
        yield
        finished = True
    finally:
        stop.set()
        thread.join()
        if finished and progress.n < total:
            progress.update(total - progress.n)
        progress.close()
