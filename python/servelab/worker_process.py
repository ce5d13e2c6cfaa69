"""Serving workers in separate processes.

A worker process (``servelab worker --listen unix:/tmp/w0.sock --executor SPEC``, or
:func:`run_worker`) hosts one executor and runs the batches that ``remote`` executors send it; a
serving run places a worker group there by giving the group that executor::

    with servelab.worker_process.LocalWorkers(2, "constant(latency_ms=2)") as pool:
        r = servelab.serve(scenario, executor=pool.spec(0))   # "remote(address='unix:...')"
        transport = servelab.worker_process.transport_times()  # per query

Workers on another host listen on TCP (``--listen tcp:0.0.0.0:7000 --allow-remote``) and the
controller names them: ``remote(address='tcp:host:7000')``. An executor written in Python is
hosted once the worker imports the module that registers it (``--import mylab.executors``,
``LocalWorkers(..., imports=[...])``). A run's own inputs (``serve(inputs=...)``) travel with each
batch to the workers whose executor reads them. A worker process is pinned as a whole
(``--cores 0``, ``run_worker(cores=...)``, ``LocalWorkers(n, executor, cores=[0, 1])`` or
``pin="compact"``: process i on one core); a run whose group is served by a worker that
``LocalWorkers`` started lists that pinning in ``meta["pinning"]``. See docs/scale-out.md.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import re
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from types import TracebackType
from typing import Any

__all__ = ["LocalWorkers", "remote_pinning", "remote_spec", "run_worker", "transport_times"]

#: the pinned worker processes LocalWorkers started and has not stopped, by address
_PINNED: dict[str, dict[str, Any]] = {}


def _quoted(field: str, text: str) -> str:
    """``text`` as a quoted spec value (the spec grammar has no escapes)."""
    if "'" not in text:
        return f"'{text}'"
    if '"' not in text:
        return f'"{text}"'
    raise ValueError(f"{field}={text!r} holds both quote characters; a spec value cannot")


def remote_spec(address: str, executor: Any = None, **params: Any) -> str:
    """The spec of a ``remote`` executor: ``remote(address='unix:/tmp/w.sock', ...)``.

    ``executor`` (a spec, a dict or :func:`servelab.make_executor`'s result): what the worker must
    host, checked when the run connects; other ``params`` are the entry's own
    (``reply_timeout_ms``, ``connect_timeout_ms``, ``input_bytes_per_item``).
    """
    from .executors import spec_string

    parts = [f"address={_quoted('address', str(address))}"]
    if executor is not None:
        parts.append(f"executor={_quoted('executor', spec_string(executor))}")
    for name, value in params.items():
        parts.append(f"{name}={_quoted(name, value) if isinstance(value, str) else value!r}")
    return f"remote({', '.join(parts)})"


def _print_ready(
    address: str, executor: str, as_json: bool = False, cores: list[int] | None = None
) -> None:
    """The ready line; ``affinity`` is what the kernel reports for this process's threads now."""
    from .pinning import process_affinity

    affinity = process_affinity()
    if as_json:
        line = {"address": address, "executor": executor, "cores": cores, "affinity": affinity}
        print(json.dumps(line), flush=True)
    else:
        pinned = f", pinned to cores {affinity}" if cores is not None else ""
        print(f"servelab worker listening on {address} hosting {executor}{pinned}", flush=True)


def run_worker(
    listen: str,
    executor: Any,
    *,
    allow_remote: bool = False,
    ready: Callable[[str, str], None] | None = None,
    cores: Sequence[int] | None = None,
    max_connections: int = 64,
    hello_timeout_s: float = 10.0,
    message_timeout_s: float = 30.0,
) -> None:
    """Hosts ``executor`` at ``listen`` (``unix:PATH`` or ``tcp:HOST:PORT``; port 0 picks a free
    one) and serves ``remote`` executors until Ctrl-C or SIGTERM, then returns.

    A TCP address other than loopback needs ``allow_remote=True``: the protocol has no
    authentication. ``cores``: pins this process, every thread it has and so every thread it
    starts (the ones that run the batches, the executor's pools), to these CPUs before the
    executor is built. ``ready(address, executor)`` is called once listening (default: prints
    one line). Bad arguments raise ValueError (a core that does not exist or is not allowed
    names the allowed set); an address in use raises RuntimeError.

    What peers can make the worker hold is bounded: at most ``max_connections`` connections at
    once (one more is refused, naming the limit), a hello within ``hello_timeout_s`` and each
    message, once started, within ``message_timeout_s`` (or the connection is closed; a
    controller may idle between batches), and a message's body is allocated as it arrives.
    """
    from . import _core
    from .executors import make_executor
    from .pinning import check_cores, pin_process

    pinned = None
    if cores is not None:
        pinned = check_cores("cores", cores)
        pin_process(pinned)
    builder = make_executor(executor)
    inputs, width = _inputs_taken(builder)
    worker = _core.RemoteWorker(
        str(listen),
        builder,
        allow_remote=bool(allow_remote),
        inputs=inputs,
        width=width,
        max_connections=max_connections,
        hello_timeout_s=hello_timeout_s,
        message_timeout_s=message_timeout_s,
    )
    try:
        if ready is None:
            _print_ready(worker.address, worker.executor, cores=pinned)
        else:
            ready(worker.address, worker.executor)
        with _terminate_as_interrupt():
            worker.serve()
    except KeyboardInterrupt:  # Ctrl-C or SIGTERM: the normal way a worker ends
        pass
    finally:
        del worker  # unbinds and removes the socket file


def _inputs_taken(builder: Any) -> tuple[str, int]:
    """Which of a run's inputs (``serve(inputs=...)``) ``builder``'s executors read, as in-process:
    float32 rows of ``width`` features (torchscript), each query's input as given (an executor
    written in Python), or none (they make their own). Told to every controller that connects."""
    from . import _core

    if hasattr(builder, "width"):
        return "float_rows", int(builder.width)
    if isinstance(builder, _core.PythonExecutorBuilder):
        return "arrays", 0
    return "none", 0


class _terminate_as_interrupt:
    """SIGTERM raises KeyboardInterrupt while serving (main thread only), so that a terminated
    worker closes its connections and removes its socket file."""

    def __enter__(self) -> None:
        self.previous = None
        if threading.current_thread() is threading.main_thread():
            self.previous = signal.signal(signal.SIGTERM, _raise_interrupt)

    def __exit__(self, *exc: object) -> None:
        if self.previous is not None:
            signal.signal(signal.SIGTERM, self.previous)


def _raise_interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def transport_times() -> Any:
    """Every query that this process's ``remote`` executors sent since the last call (the log is
    process-wide and emptied by the call), one row each: ``address``, ``worker``, ``id`` (the
    query), ``batch``, ``round_trip_ns`` (send to reply, at the controller), ``worker_ns`` (the
    worker's time for the batch, -1 without a reply), ``transport_ns`` (the difference, -1
    without a reply) and ``ok``. A pandas DataFrame; the records already have ``worker`` and
    ``transport_ns``, so ``result.to_pandas().merge(t.drop(columns=["worker", "transport_ns"]),
    on="id")`` joins the other columns to them. The log keeps at most 2**24 queries;
    ``attrs["batches_not_kept"]`` counts the batches past it."""
    import numpy as np
    import pandas as pd

    from . import _core

    cols = dict(_core.remote_transport())
    cols["id"] = cols.pop("query")  # named like the records' query id
    not_kept = int(cols.pop("batches_not_kept"))
    replied = cols["worker_ns"] >= 0
    cols["transport_ns"] = np.where(replied, cols["round_trip_ns"] - cols["worker_ns"], -1)
    frame = pd.DataFrame(cols)
    frame.attrs["batches_not_kept"] = not_kept
    return frame


class LocalWorkers:
    """``count`` worker processes on this machine, each hosting ``executor`` and listening on a
    Unix socket (``transport="unix"``, in a private temporary folder) or a free loopback TCP
    port (``"tcp"``). A context manager: leaving it stops every process.

    ``addresses`` lists where they listen, ``processes`` the ``subprocess.Popen`` objects;
    ``spec(i, **params)`` is the ``remote`` executor spec for worker ``i``. Workers start in
    their own session, so a Ctrl-C in the terminal reaches the controller only. ``imports``:
    modules each worker imports first (``servelab worker --import``), e.g. one that registers
    the executor written in Python it hosts; they must be importable by the worker process
    (its ``sys.path`` starts with the current folder, then ``PYTHONPATH``).

    ``cores=[2, 3]`` pins worker process ``i`` (every thread of it) to ``cores[i % len]``;
    ``pin="compact"`` or ``"spread"`` hands out this process's allowed CPUs in that order
    (``servelab.pinning.cpu_order``), ``"none"`` (the default) pins nothing. A core that does
    not exist or is not allowed is a ValueError before any process starts. ``pinning`` lists,
    per pinned process, the core asked for and the affinity its threads reported when ready;
    a serving run whose group is served by one of them adds that to ``meta["pinning"]``.
    """

    def __init__(
        self,
        count: int,
        executor: Any = "constant",
        *,
        transport: str = "unix",
        start_timeout_s: float = 60.0,
        imports: Sequence[str] = (),
        cores: Sequence[int] | None = None,
        pin: str | None = None,
    ) -> None:
        from .executors import spec_string

        if isinstance(count, bool) or not isinstance(count, int) or count < 1:
            raise ValueError(f"count={count!r} must be a positive integer")
        if transport not in ("unix", "tcp"):
            raise ValueError(f"transport={transport!r} must be 'unix' or 'tcp'")
        if not start_timeout_s > 0:
            raise ValueError(f"start_timeout_s={start_timeout_s!r} must be > 0")
        if isinstance(imports, str) or not all(isinstance(m, str) and m for m in imports):
            raise ValueError(f"imports={imports!r} must be a list of module names")
        self.imports = list(imports)
        self.executor = spec_string(executor)
        self.cores = _process_cores(count, cores, pin)
        self.processes: list[subprocess.Popen[str]] = []
        self.addresses: list[str] = []
        self.pinning: list[dict[str, Any]] = []
        self._folder = (
            tempfile.TemporaryDirectory(prefix="servelab-w-") if transport == "unix" else None
        )
        try:
            for i in range(count):
                if self._folder is not None:
                    listen = f"unix:{os.path.join(self._folder.name, f'w{i}.sock')}"
                else:
                    listen = "tcp:127.0.0.1:0"
                self.processes.append(self._spawn(listen, self.cores[i]))
            deadline = time.monotonic() + start_timeout_s
            for i, p in enumerate(self.processes):
                ready = _wait_ready(p, deadline, start_timeout_s)
                self.addresses.append(str(ready["address"]))
                if self.cores[i] is not None:
                    record = {
                        "worker": i,
                        "address": self.addresses[i],
                        "pid": p.pid,
                        "core": self.cores[i],
                        "applied": list(ready["affinity"]),
                    }
                    self.pinning.append(record)
                    _PINNED[record["address"]] = record
        except BaseException:
            self.close()
            raise

    def _spawn(self, listen: str, core: int | None) -> subprocess.Popen[str]:
        command = [sys.executable, "-m", "servelab", "worker", "--json"]
        command += ["--listen", listen, "--executor", self.executor]
        for module in self.imports:
            command += ["--import", module]
        if core is not None:
            command += ["--cores", str(core)]
        return subprocess.Popen(command, stdout=subprocess.PIPE, text=True, start_new_session=True)

    def spec(self, i: int, **params: Any) -> str:
        """``remote(address=...)`` for worker ``i``, with the entry's other ``params``."""
        return remote_spec(self.addresses[i], **params)

    def kill(self, i: int, sig: int = signal.SIGKILL) -> None:
        """Sends ``sig`` (default SIGKILL: no goodbye) to worker ``i``."""
        self.processes[i].send_signal(sig)

    def close(self) -> None:
        """Stops every worker (SIGTERM, then SIGKILL after 10 s) and waits for it."""
        for record in self.pinning:
            _PINNED.pop(record["address"], None)
        for p in self.processes:
            if p.poll() is None:
                p.terminate()
        for p in self.processes:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
            if p.stdout is not None:
                p.stdout.close()
        if self._folder is not None:
            self._folder.cleanup()
            self._folder = None

    def __enter__(self) -> LocalWorkers:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def _process_cores(count: int, cores: Sequence[int] | None, pin: str | None) -> list[int | None]:
    """The core each of ``count`` worker processes is pinned to (None: not pinned)."""
    from .pinning import PIN_MODES, check_cores, cpu_order

    if cores is not None and pin not in (None, "none"):
        raise ValueError(f"give cores={cores!r} or pin={pin!r}, not both")
    if cores is not None:
        order = check_cores("cores", cores)
    elif pin in (None, "none"):
        return [None] * count
    elif pin not in PIN_MODES:
        raise ValueError(f"pin={pin!r} must be one of {', '.join(PIN_MODES)}")
    else:
        order = cpu_order(pin)
    return [order[i % len(order)] for i in range(count)]


def remote_pinning(executors: Sequence[str], counts: Sequence[int]) -> list[dict[str, Any]]:
    """``meta["pinning"]`` records for the worker groups whose executor (``describe()`` of each
    group's, ``"emulated"`` for none) is ``remote`` at a pinned process LocalWorkers started:
    one per initial worker of the group, with the process's ``address``, ``pid``, the ``core``
    asked for and the affinity its threads reported when ready (``applied``). Workers started
    elsewhere report their pinning on their own ready line only."""
    out: list[dict[str, Any]] = []
    first = 0
    for group, (spec, count) in enumerate(zip(executors, counts, strict=True)):
        match = _REMOTE_ADDRESS.match(spec)
        record = _PINNED.get(match.group(2)) if match else None
        if record is not None:
            for worker in range(first, first + count):
                out.append(
                    {"worker": worker, "group": group, "core": record["core"],
                     "applied": list(record["applied"]), "thread_id": None, "error": "",
                     "address": record["address"], "pid": record["pid"]}
                )  # fmt: skip
        first += count
    return out


_REMOTE_ADDRESS = re.compile(r"""remote\(address=(['"])(.*?)\1""")


def _wait_ready(p: subprocess.Popen[str], deadline: float, timeout_s: float) -> dict[str, Any]:
    """A worker's ready line (JSON on its stdout): address, executor, cores, affinity."""
    assert p.stdout is not None
    left = deadline - time.monotonic()
    readable, _, _ = select.select([p.stdout], [], [], max(left, 0.0))
    line = p.stdout.readline() if readable else ""
    if not line:
        code = p.poll()
        if readable and code is None:  # its stdout closed: it is exiting
            try:
                code = p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                code = None
        why = f"exited with code {code}" if code is not None else f"not ready in {timeout_s} s"
        raise RuntimeError(f"worker process {' '.join(p.args)!r} {why} (its stderr says why)")
    return dict(json.loads(line))


def add_parser(sub: Any) -> None:
    """The ``servelab worker`` subcommand."""
    p = sub.add_parser(
        "worker", help="a worker process: runs the batches that remote executors send it"
    )
    p.add_argument(
        "--listen",
        required=True,
        help="unix:PATH or tcp:HOST:PORT (port 0: any free port; the ready line says which)",
    )
    p.add_argument(
        "--executor", required=True, help="the executor to host, e.g. \"recsys(model='rm2')\""
    )
    p.add_argument(
        "--allow-remote",
        action="store_true",
        help="allow a non-loopback TCP address (the protocol has no authentication)",
    )
    p.add_argument(
        "--import",
        dest="imports",
        action="append",
        default=[],
        metavar="MODULE",
        help="import MODULE first (repeatable): a module that registers Python executors "
        "(found in the current folder too, as with python -m)",
    )
    p.add_argument(
        "--cores",
        metavar="LIST",
        help="pin this process (every thread) to these CPUs, e.g. 0 or 0,1",
    )
    p.add_argument(
        "--max-connections",
        type=int,
        default=64,
        metavar="N",
        help="serve at most N controller connections at once (default 64; one more is refused)",
    )
    p.add_argument("--json", action="store_true", help="print the ready line as JSON")
    p.set_defaults(run=_cmd_worker)


def _cmd_worker(args: argparse.Namespace) -> int:
    # The `servelab` script puts its own folder first on sys.path, not the current one: put the
    # current folder there as `python -m` does, so that --import finds a module next to the user.
    if args.imports and not {"", os.getcwd()} & set(sys.path):
        sys.path.insert(0, os.getcwd())
    for module in args.imports:
        try:
            importlib.import_module(module)
        except ImportError as e:
            raise ValueError(f"--import {module!r}: {e}") from e

    cores = _parse_cores(args.cores)

    def ready(address: str, executor: str) -> None:
        _print_ready(address, executor, args.json, cores)

    run_worker(
        args.listen,
        args.executor,
        allow_remote=args.allow_remote,
        ready=ready,
        cores=cores,
        max_connections=args.max_connections,
    )
    return 0


def _parse_cores(text: str | None) -> list[int] | None:
    """``--cores 0,2``; ValueError naming the option and the text when it is not a list."""
    if text is None:
        return None
    try:
        return [int(part) for part in text.split(",")]
    except ValueError:
        raise ValueError(f"--cores={text!r} must be core numbers separated by commas") from None
