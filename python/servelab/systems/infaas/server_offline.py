"""An offline job of the INFaaS server (Sec. 3's ``offline_query``): a folder of ``.npy`` inputs
(``.npz`` with ``dense`` and ``sparse`` for a recsys model) read in a background thread, each file
submitted as offline queries of at most ``rows_per_query`` rows (the policy serves them from
spare capacity, batching several), and its outputs written as ``output_dir/<same name>.npy``.
The files are this module's; when and on which variant they run is the policy's."""

from __future__ import annotations

import io
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from ... import textio
from . import loading

__all__ = ["OfflineJob"]


def _output_dir(inputs: Path, output_dir: str | Path) -> Path:
    """The outputs' folder, made; ValueError when it is not a folder, or when it and the inputs'
    folder are one or hold each other (symlinks resolved): outputs named after the inputs would
    overwrite them, or be read as inputs."""
    out = Path(output_dir)
    src, dst = inputs.resolve(), out.resolve()
    if src == dst or src in dst.parents or dst in src.parents:
        how = "is" if src == dst else "is inside" if src in dst.parents else "holds"
        raise ValueError(
            f"output_dir={str(output_dir)!r} {how} input_dir={str(inputs)!r} ({dst}): its "
            "outputs would overwrite the inputs or be read as inputs; give a separate folder"
        )
    if out.exists() and not out.is_dir():
        raise ValueError(f"output_dir={str(output_dir)!r} is a file, not a folder")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise ValueError(f"output_dir={str(output_dir)!r} cannot be made: {e}") from e
    return out


class OfflineJob:
    """A background offline job: ``status`` ("running", "done", "failed", "cancelled"),
    ``done`` / ``total`` files, ``batches`` (queries submitted), ``errors`` (file -> message),
    ``wait()``, ``cancel()``."""

    def __init__(
        self,
        input_dir: str | Path,
        output_dir: str | Path,
        source: dict[str, Any],
        rows_per_query: int,
        submit: Callable[[Any], Any],
        failure: Callable[[Any, int], Exception | None],
    ) -> None:
        folder = Path(input_dir)
        if not folder.is_dir():
            raise ValueError(f"input_dir={str(input_dir)!r} is not a folder")
        files = sorted(p for p in folder.iterdir() if p.suffix in (".npy", ".npz"))
        if not files:
            raise ValueError(f"input_dir={str(input_dir)!r} has no .npy or .npz file")
        self.output_dir = _output_dir(folder, output_dir)
        self.files = files
        self.total = len(files)
        self.done = 0
        self.batches = 0
        self.errors: dict[str, str] = {}
        self.status = "running"
        self._source = source
        self._step = rows_per_query
        self._submit = submit
        self._failure = failure
        self._cancel = threading.Event()
        self._thread = threading.Thread(target=self._run, name="infaas-offline", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _read(self, path: Path) -> Any:
        raw = textio.read_bytes(path, what="offline input (.npy / .npz)")
        try:
            data = np.load(io.BytesIO(raw), allow_pickle=False)
            if path.suffix == ".npz":
                data = (data["dense"], data["sparse"])
        except (ValueError, KeyError, OSError) as e:
            raise ValueError(f"{path}: not a readable numpy file ({e})") from None
        return loading.check_inputs(data, self._source, field=str(path))

    def _serve(self, path: Path) -> None:
        inputs = self._read(path)
        rows = inputs[0].shape[0] if isinstance(inputs, tuple) else inputs.shape[0]
        futures = []
        for first in range(0, rows, self._step):
            end = first + self._step
            chunk = (
                tuple(x[first:end] for x in inputs)
                if isinstance(inputs, tuple)
                else inputs[first:end]
            )
            futures.append(self._submit(chunk))
        self.batches += len(futures)
        outcomes = [future.result() for future in futures]  # all answered before the next file
        failures = [self._failure(o, len(o.output) if o.completed else 0) for o in outcomes]
        for failure in failures:
            if failure is not None:
                raise failure
        outs = [o.output for o in outcomes]
        if self._cancel.is_set():  # its queries ran (a session cannot withdraw one): not written
            return
        np.save(self.output_dir / f"{path.stem}.npy", np.concatenate(outs, axis=0))
        self.done += 1

    def _run(self) -> None:
        for path in self.files:
            if self._cancel.is_set():
                break
            try:
                self._serve(path)
            except (ValueError, OSError, RuntimeError, MemoryError) as e:
                self.errors[path.name] = str(e)
        if self._cancel.is_set() and self.done + len(self.errors) < self.total:
            self.status = "cancelled"
        else:
            self.status = "failed" if self.errors else "done"

    def wait(self, timeout: float | None = None) -> str:
        """Waits for the job's end (at most ``timeout`` seconds); returns its status."""
        if self._thread.ident is not None:
            self._thread.join(timeout)
        return self.status

    def cancel(self) -> None:
        """Stops the job: no more files are submitted, and the file under way is not written
        (its queries still run: a session cannot withdraw a query)."""
        self._cancel.set()

    def summary(self) -> dict[str, Any]:
        return {
            "status": self.status, "done": self.done, "total": self.total,
            "batches": self.batches, "errors": dict(self.errors),
            "output_dir": str(self.output_dir),
        }  # fmt: skip

    def __repr__(self) -> str:
        return f"OfflineJob({self.status}, {self.done}/{self.total} files)"
