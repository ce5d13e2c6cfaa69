"""The Open Inference Protocol over HTTP/REST (aiohttp): health, server and model metadata, model
readiness, inference (JSON, and the binary tensor data extension), Triton's model config and
repository index, and Prometheus metrics at ``/metrics``.

Errors are ``{"error": message}`` with the status of their kind (`errors.KINDS`), as Triton's
clients read them. With a token, every route requires ``Authorization: Bearer <token>``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from aiohttp import web
from aiohttp.http_exceptions import HttpProcessingError
from aiohttp.web_protocol import RequestPayloadError

from .codec import decode_http, encode_http
from .errors import FrontendError
from .service import INPUT_NAME, OUTPUT_NAME, VERSION, ModelService

HEADER_LENGTH = "Inference-Header-Content-Length"


def _error(e: FrontendError) -> web.Response:
    return web.json_response({"error": e.message}, status=e.http_status)


def make_app(service: ModelService) -> web.Application:
    """The aiohttp application serving ``service``."""
    limits = service.limits

    @web.middleware
    async def guard(
        request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
    ) -> web.StreamResponse:
        try:
            service.check_token(request.headers.get("Authorization"))
            return await handler(request)
        except FrontendError as e:
            if not e.counted:
                service.metrics.refused(e.kind)
            return _error(e)
        except web.HTTPRequestEntityTooLarge:
            service.metrics.refused("too_large")
            return _error(_too_large(limits.max_body_bytes, None))
        except web.HTTPException as e:
            if e.status == 404:
                message = f"no route {request.method} {request.path}"
            elif e.status == 405:
                message = f"method {request.method} is not allowed on {request.path}"
            else:
                message = e.reason
            return web.json_response({"error": message}, status=e.status)

    app = web.Application(middlewares=[guard], client_max_size=limits.max_body_bytes)

    async def live(_: web.Request) -> web.Response:
        return web.Response(status=200 if service.live() else 503)

    async def ready(_: web.Request) -> web.Response:
        return web.Response(status=200 if service.ready() else 503)

    async def server_metadata(_: web.Request) -> web.Response:
        return web.json_response(service.server_metadata())

    def _model(request: web.Request) -> tuple[str, str]:
        return request.match_info["model"], request.match_info.get("version", "")

    async def model_metadata(request: web.Request) -> web.Response:
        return web.json_response(service.model_metadata(*_model(request)))

    async def model_ready(request: web.Request) -> web.Response:
        return web.Response(status=200 if service.model_ready(*_model(request)) else 503)

    async def model_config(request: web.Request) -> web.Response:
        name, version = _model(request)
        service.check_model(name, version)
        datatype, shape = service.input_shape(name)
        return web.json_response(
            {
                "name": name,
                "platform": "servelab",
                "max_batch_size": 0,
                "input": [{"name": INPUT_NAME, "data_type": f"TYPE_{datatype}", "dims": shape}],
                "output": [{"name": OUTPUT_NAME, "data_type": "TYPE_FP32", "dims": [-1, -1]}],
            }
        )

    async def statistics(request: web.Request) -> web.Response:
        name, version = request.match_info.get("model", ""), request.match_info.get("version", "")
        return web.json_response({"model_stats": service.statistics(name, version)})

    async def repository_index(_: web.Request) -> web.Response:
        ready = "READY" if service.ready() else "UNAVAILABLE"
        return web.json_response(
            [{"name": m, "version": VERSION, "state": ready} for m in service.models]
        )

    async def infer(request: web.Request) -> web.StreamResponse:
        name, version = _model(request)
        service.check_model(name, version)  # an unknown model first, whatever the body
        length = request.content_length
        if length is not None and length > limits.max_body_bytes:
            raise _too_large(limits.max_body_bytes, length)
        service.start_reading()
        try:
            body = await asyncio.wait_for(request.read(), limits.request_timeout_s)
        except asyncio.TimeoutError:
            raise FrontendError(
                "timeout",
                f"the request body did not arrive within request_timeout_s="
                f"{limits.request_timeout_s:g}",
            ) from None
        except ConnectionError:  # the client left halfway through its body: nobody to answer
            service.metrics.refused("disconnected")
            return web.Response(status=400)
        except (RequestPayloadError, HttpProcessingError) as e:
            # A body that ends early or does not decompress (Content-Encoding gzip/deflate).
            cause = e.__cause__ or e
            why = " ".join(str(getattr(cause, "message", cause)).split())
            raise FrontendError("invalid", f"the request body could not be read: {why}") from None
        finally:
            service.done_reading()
        header = request.headers.get(HEADER_LENGTH)
        header_length = None
        if header is not None:
            try:
                header_length = int(header)
            except ValueError:
                raise FrontendError(
                    "invalid", f"{HEADER_LENGTH}={header!r} is not an integer"
                ) from None
        try:
            decoded = decode_http(body, header_length)
        except FrontendError as e:
            if name in service.models:
                service.metrics.refused(e.kind, name)
                e.counted = True
            raise
        response = await service.infer(name, version, decoded)
        payload, json_length = encode_http(response, decoded)
        if json_length is None:
            return web.Response(body=payload, content_type="application/json")
        return web.Response(
            body=payload,
            content_type="application/octet-stream",
            headers={HEADER_LENGTH: str(json_length)},
        )

    async def metrics(_: web.Request) -> web.Response:
        return web.Response(text=service.metrics.text(), content_type="text/plain", charset="utf-8")

    for prefix in ("/v2/models/{model}", "/v2/models/{model}/versions/{version}"):
        app.router.add_get(prefix, model_metadata)
        app.router.add_get(prefix + "/ready", model_ready)
        app.router.add_get(prefix + "/config", model_config)
        app.router.add_post(prefix + "/infer", infer)
        app.router.add_get(prefix + "/stats", statistics)
    app.router.add_get("/v2/models/stats", statistics)
    app.router.add_get("/v2/health/live", live)
    app.router.add_get("/v2/health/ready", ready)
    app.router.add_get("/v2", server_metadata)
    app.router.add_post("/v2/repository/index", repository_index)
    app.router.add_get("/metrics", metrics)
    return app


def _too_large(limit: int, length: int | None) -> FrontendError:
    size = f"of {length} bytes " if length is not None else ""
    return FrontendError(
        "too_large", f"the request body {size}is over the limit max_body_bytes={limit}"
    )
