"""An offline job of the INFaaS server (Sec. 3's ``offline_query``): a folder of ``.npy`` inputs
(``.npz`` with ``dense`` and ``sparse`` for a recsys model) served in a background thread in
batches of at most the variant's ``batch_opt`` rows, each batch started only when the server's
offline throttle allows it (``InfaasServer._offline_turn``); outputs written as
``output_dir/<same name>.npy``."""

from __future__ import annotations

import io
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ... import textio
from . import loading

if TYPE_CHECKING:
    from .server import InfaasServer

__all__ = ["OfflineJob"]


class OfflineJob:
    """A background offline job: ``status`` ("running", "done", "failed", "cancelled"),
    ``done`` / ``total`` files, ``errors`` (file -> message), ``wait()``, ``cancel()``."""

    def __init__(
        self, server: InfaasServer, choice: dict[str, Any], files: list[Path], out_dir: Path
    ) -> None:
        self._server = server
        self.variant = choice["variant"]
        self.worker = choice["worker"]
        self.reason = choice["reason"]
        self.files = files
        self.output_dir = out_dir
        self.total = len(files)
        self.done = 0
        self.batches = 0
        self.errors: dict[str, str] = {}
        self.status = "running"
        self._cancel = threading.Event()
        self._thread = threading.Thread(target=self._run, name="infaas-offline", daemon=True)

    def _read(self, path: Path, source: dict[str, Any]) -> Any:
        raw = textio.read_bytes(path, what="offline input (.npy / .npz)")
        try:
            data = np.load(io.BytesIO(raw), allow_pickle=False)
            if path.suffix == ".npz":
                data = (data["dense"], data["sparse"])
        except (ValueError, KeyError, OSError) as e:
            raise ValueError(f"{path}: not a readable numpy file ({e})") from None
        return loading.check_inputs(data, source, field=str(path))

    def _run(self) -> None:
        server = self._server
        variant = server._variants[self.variant]
        source = server._models[variant["model"]]["source"]
        for path in self.files:
            if self._cancel.is_set():
                break
            try:
                inputs = self._read(path, source)
                outs = []
                n = inputs[0].shape[0] if isinstance(inputs, tuple) else inputs.shape[0]
                for first in range(0, n, variant["batch_opt"]):
                    chunk: Any = (
                        tuple(x[first : first + variant["batch_opt"]] for x in inputs)
                        if isinstance(inputs, tuple)
                        else inputs[first : first + variant["batch_opt"]]
                    )
                    if not server._offline_turn(self):
                        break
                    rows = len(chunk[0]) if isinstance(chunk, tuple) else len(chunk)
                    with server._lock:
                        future = server._submit_offline(self, chunk, rows)
                    outs.append(future.result()[0])
                    self.batches += 1
                else:
                    np.save(self.output_dir / f"{path.stem}.npy", np.concatenate(outs, axis=0))
                    self.done += 1
            except (ValueError, OSError, RuntimeError, MemoryError) as e:
                self.errors[path.name] = str(e)
        if self._cancel.is_set() and self.done + len(self.errors) < self.total:
            self.status = "cancelled"
        else:
            self.status = "failed" if self.errors else "done"

    def wait(self, timeout: float | None = None) -> str:
        """Waits for the job's end (at most ``timeout`` seconds); returns its status."""
        self._thread.join(timeout)
        return self.status

    def cancel(self) -> None:
        """Stops the job after the batch under way."""
        self._cancel.set()

    def summary(self) -> dict[str, Any]:
        return {
            "status": self.status, "variant": self.variant, "worker": self.worker,
            "reason": self.reason, "done": self.done, "total": self.total,
            "batches": self.batches, "errors": dict(self.errors),
            "output_dir": str(self.output_dir),
        }  # fmt: skip

    def __repr__(self) -> str:
        return f"OfflineJob({self.status}, {self.done}/{self.total} files, {self.variant})"
