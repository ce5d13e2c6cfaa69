"""`Frontend`: the HTTP and gRPC servers of one session, run on an asyncio loop in a thread of
their own, bound to loopback unless told otherwise."""

from __future__ import annotations

import asyncio
import ipaddress
import threading
import time
from typing import Any

from aiohttp import web

from . import cpp_engine
from .grpc_server import make_server
from .http_server import make_app
from .service import InputSpec, Limits, ModelService

DEFAULT_HOST = "127.0.0.1"
# The HTTP/REST engines: aiohttp in Python, or the C++ engine over the session's serving loop.
HTTP_ENGINES = ("python", "cpp")
# How long a start may take before it counts as failed (binding and the loop's first turn).
START_TIMEOUT_S = 30.0


def is_loopback(host: str) -> bool:
    """True for 'localhost' and loopback addresses (127.0.0.0/8, ::1)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _check_port(name: str, port: Any) -> int | None:
    if port is None:
        return None
    if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
        raise ValueError(f"{name}={port!r} must be a port number in [0, 65535] (0: any free port)")
    return port


class Frontend:
    """The Open Inference Protocol servers of one session (HTTP/REST and gRPC)::

        with servelab.Session(scenario) as s, Frontend(s, http_port=8000, grpc_port=8001) as f:
            ...  # clients reach f.http_port and f.grpc_port

    ``host``: the address both bind (default 127.0.0.1); an address other than loopback needs
    ``allow_remote=True``. ``http_port`` / ``grpc_port``: 0 for any free port (the bound one is
    in the attribute after `start`), None for no such server. ``token``: when set, every request
    must carry ``Authorization: Bearer <token>``. ``limits``: a `Limits`. ``inputs``: per
    application (``"*"``: every one) its `InputSpec` or its text (``"FP32:16"``), checked before
    the session sees a request and shown in the model's metadata. ``http_engine``: "python"
    (aiohttp, the default) or "cpp" (the C++ engine, `cpp_engine`: the same answers with no
    interpreter on the inference path; a servelab.Session only).
    `stop` refuses new requests, waits up to ``request_timeout_s`` for those in flight, answers
    any still waiting with 503 / UNAVAILABLE and closes the servers; the session stays open (its
    owner closes it). To have every outstanding query answered with its outcome instead:
    ``f.drain(); result = session.close(); f.stop()``."""

    def __init__(
        self,
        session: Any,
        *,
        host: str = DEFAULT_HOST,
        http_port: int | None = 8000,
        grpc_port: int | None = 8001,
        allow_remote: bool = False,
        token: str | None = None,
        limits: Limits | None = None,
        inputs: dict[str, InputSpec | str] | None = None,
        http_engine: str = "python",
    ) -> None:
        if not isinstance(host, str) or not host:
            raise ValueError(f"host={host!r} must be an address such as 127.0.0.1")
        if not is_loopback(host) and not allow_remote:
            raise ValueError(
                f"host={host!r} is not a loopback address: serving other addresses needs "
                "allow_remote=True (--allow-remote), and a token is advised"
            )
        self.http_port = _check_port("http_port", http_port)
        self.grpc_port = _check_port("grpc_port", grpc_port)
        if self.http_port is None and self.grpc_port is None:
            raise ValueError("http_port and grpc_port are both None: nothing to serve")
        if token is not None and (not isinstance(token, str) or not token.strip()):
            raise ValueError("token must be a non-empty string (or None for no token)")
        self.host = host
        self.limits = limits if limits is not None else Limits()
        specs = {
            app: spec if isinstance(spec, InputSpec) else InputSpec.parse(spec)
            for app, spec in (inputs or {}).items()
        }
        self.service = ModelService(session, self.limits, token, specs)
        if http_engine not in HTTP_ENGINES:
            engines = ", ".join(HTTP_ENGINES)
            raise ValueError(f"http_engine={http_engine!r} must be one of {engines}")
        if http_engine == "cpp" and self.http_port is not None and not cpp_engine.supports(session):
            raise ValueError(
                f"http_engine='cpp' serves a servelab.Session (its C++ serving loop); got "
                f"{type(session).__name__}"
            )
        self.http_engine = http_engine
        self._cpp: cpp_engine.CppHttpEngine | None = None
        self._stopped = False
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._started = threading.Event()
        self._error: BaseException | None = None
        self._runner: web.AppRunner | None = None
        self._grpc: Any = None

    @property
    def http_url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.http_port}"

    @property
    def grpc_address(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.grpc_port}"

    def start(self) -> Frontend:
        """Binds and starts both servers; OSError (an address in use...) if either cannot."""
        if self._thread is not None or self._cpp is not None:
            raise RuntimeError("this Frontend was already started")
        if self.http_engine == "cpp" and self.http_port is not None:
            self._cpp = cpp_engine.CppHttpEngine(self.service, self.host, self.http_port)
            self.http_port = self._cpp.port
            if self.grpc_port is None:  # nothing for the asyncio loop to serve
                return self
        self._thread = threading.Thread(target=self._main, name="servelab-frontend", daemon=True)
        self._thread.start()
        if not self._started.wait(START_TIMEOUT_S):
            raise RuntimeError(f"the front-end did not start within {START_TIMEOUT_S:g} s")
        if self._error is not None:
            self._thread.join()
            if self._cpp is not None:
                self._cpp.stop(0.0)
            raise self._error
        return self

    def drain(self, grace_s: float | None = None) -> bool:
        """Refuses new inference requests from now on (503 / UNAVAILABLE, ready false) and waits
        up to ``grace_s`` (default: the request timeout) for those in flight; True when none is
        left. The servers keep answering, so a session closed next answers the rest."""
        self.service.begin_drain()
        if self._cpp is not None:
            self._cpp.drain()
        timeout = self.limits.request_timeout_s if grace_s is None else grace_s
        deadline = time.monotonic() + timeout
        idle = self.service.wait_idle(timeout)
        if self._cpp is not None:
            idle = self._cpp.wait_idle(deadline - time.monotonic()) and idle
        return idle

    def stop(self, grace_s: float | None = None) -> None:
        """`drain`, then answers the requests still waiting with 503 / UNAVAILABLE (none is left
        without an answer) and closes the servers. Idempotent."""
        if self._stopped or (self._cpp is None and self._loop is None):
            return
        self._stopped = True
        self.drain(grace_s)
        if self._cpp is not None:  # it answers those still waiting, then closes
            self._cpp.stop(0.0)
        if self._thread is None or self._loop is None or self._stop is None:
            return
        try:
            self._loop.call_soon_threadsafe(self._stop.set)
        except RuntimeError:  # the loop already ended
            pass
        self._thread.join()

    def __enter__(self) -> Frontend:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- the loop's thread ----------------------------------------------------------------------

    def _main(self) -> None:
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        try:
            self._stop = asyncio.Event()
            try:
                loop.run_until_complete(self._serve())
            except BaseException as e:  # reported by start()
                self._error = e
                self._started.set()
                loop.run_until_complete(self._close())
                return
            self._loop = loop
            self._started.set()
            loop.run_until_complete(self._stop.wait())
            loop.run_until_complete(self._close())
        finally:
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()

    async def _serve(self) -> None:
        if self.http_port is not None and self._cpp is None:
            self._runner = web.AppRunner(
                make_app(self.service), access_log=None, handle_signals=False, shutdown_timeout=1.0
            )
            await self._runner.setup()
            site = web.TCPSite(self._runner, self.host, self.http_port)
            await site.start()
            self.http_port = int(self._runner.addresses[0][1])
        if self.grpc_port is not None:
            host = f"[{self.host}]" if ":" in self.host else self.host
            self._grpc, self.grpc_port = make_server(self.service, f"{host}:{self.grpc_port}")
            await self._grpc.start()

    async def _close(self) -> None:
        if self.service.fail_waiting():
            await asyncio.sleep(0.05)  # their handlers write the answers
        if self._grpc is not None:
            await self._grpc.stop(1.0)
        if self._runner is not None:
            await self._runner.cleanup()
