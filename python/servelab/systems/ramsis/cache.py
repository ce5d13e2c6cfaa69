"""What RAMSIS keeps between runs: files that scenarios name, and small in-memory caches.

A scenario must be replayable, so what it runs on (a policy set, a task's profile) is written to
a file named by a hash of its content (:func:`stored_file`): the same content always gives the same
path, and a path never changes content. The folder is ``cache_dir`` where a function takes one,
else the per-user cache (``$XDG_CACHE_HOME/servelab/ramsis``, default ``~/.cache/...``), else
the system's temporary folder when the user cache cannot be created.

Policy sets and ModelSwitching tables take seconds to make: :class:`BoundedCache` keeps the most
recently used ones, keyed by the value of what made them.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections import OrderedDict
from collections.abc import Callable, Hashable
from pathlib import Path
from typing import Any


def default_cache_dir() -> Path:
    """The per-user cache folder for RAMSIS files."""
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "servelab" / "ramsis"


def cache_folder(cache_dir: str | os.PathLike[str] | None = None) -> Path:
    """``cache_dir`` (created if needed), else the per-user cache folder, else a folder in the
    system's temporary directory."""
    if cache_dir is not None:
        folder = Path(cache_dir)
        folder.mkdir(parents=True, exist_ok=True)  # an explicit folder's errors reach the caller
        return folder
    try:
        folder = default_cache_dir()
        folder.mkdir(parents=True, exist_ok=True)
        return folder
    except OSError:  # no writable home (a container, a sandbox): the temp dir still works
        folder = Path(tempfile.gettempdir()) / f"servelab-{os.getuid()}" / "ramsis"
        folder.mkdir(parents=True, exist_ok=True)
        return folder


def stored_file(text: str, *, kind: str, cache_dir: str | os.PathLike[str] | None = None) -> Path:
    """The path of ``<folder>/<kind>-<hash of text>.json`` holding ``text``, written if absent.

    The write goes to a temporary file renamed into place, so parallel runs (sweeps in worker
    processes) never read a half-written file.
    """
    data = text.encode("utf-8")
    folder = cache_folder(cache_dir)
    path = folder / f"{kind}-{hashlib.sha256(data).hexdigest()[:24]}.json"
    try:
        if path.stat().st_size == len(data):
            return path
    except FileNotFoundError:
        pass
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


class BoundedCache:
    """A least-recently-used map of at most ``maxsize`` entries."""

    def __init__(self, maxsize: int) -> None:
        if maxsize < 1:
            raise ValueError(f"maxsize={maxsize!r} must be >= 1")
        self.maxsize = maxsize
        self._items: OrderedDict[Hashable, Any] = OrderedDict()

    def get(self, key: Hashable, make: Callable[[], Any]) -> Any:
        """The value under ``key``; ``make()`` is called and kept when there is none."""
        if key in self._items:
            self._items.move_to_end(key)
            return self._items[key]
        value = make()
        self._items[key] = value
        if len(self._items) > self.maxsize:
            self._items.popitem(last=False)
        return value

    def clear(self) -> None:
        self._items.clear()

    def __len__(self) -> int:
        return len(self._items)
