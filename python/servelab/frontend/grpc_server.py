"""The Open Inference Protocol over gRPC (grpc.aio): KServe v2's ``inference.GRPCInferenceService``
as Triton ships it (messages and service names from ``tritonclient.grpc.service_pb2``): ServerLive,
ServerReady, ModelReady, ServerMetadata, ModelMetadata, ModelInfer, ModelConfig and
RepositoryIndex; the other methods answer UNIMPLEMENTED.

The handlers are registered by hand rather than through the generated servicer so that a request
that is not a valid protobuf gets INVALID_ARGUMENT naming the message type (the generated
deserializer's failure would be a bare INTERNAL). With a token, every call needs the metadata
``authorization: Bearer <token>``. Messages over ``max_body_bytes`` are refused by gRPC itself
with RESOURCE_EXHAUSTED naming both sizes.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import grpc
from google.protobuf import json_format
from google.protobuf.message import DecodeError
from tritonclient.grpc import model_config_pb2 as mc
from tritonclient.grpc import service_pb2 as pb2

from .codec import decode_grpc, encode_grpc
from .errors import FrontendError
from .service import INPUT_NAME, OUTPUT_NAME, VERSION, ModelService

SERVICE = "inference.GRPCInferenceService"


class _Malformed:
    """What the deserializer returns for bytes that are not the method's message."""

    def __init__(self, what: str, error: Exception) -> None:
        self.message = f"the request is not a valid {what} protobuf: {error}"


def _deserializer(message_type: Any) -> Callable[[bytes], Any]:
    def parse(data: bytes) -> Any:
        try:
            return message_type.FromString(data)
        except (DecodeError, RuntimeError, ValueError) as e:
            return _Malformed(message_type.DESCRIPTOR.full_name, e)

    return parse


class InferenceServicer:
    """The service's handlers over one `ModelService`."""

    def __init__(self, service: ModelService) -> None:
        self.service = service

    async def _run(self, request: Any, context: Any, answer: Callable[[Any], Any]) -> Any:
        try:
            if isinstance(request, _Malformed):
                raise FrontendError("invalid", request.message)
            metadata = dict(context.invocation_metadata() or ())
            self.service.check_token(metadata.get("authorization"))
            result = answer(request)
            if hasattr(result, "__await__"):
                result = await result
            return result
        except FrontendError as e:
            if not e.counted:
                self.service.metrics.refused(e.kind)
            await context.abort(getattr(grpc.StatusCode, e.grpc_code), e.message)

    async def ServerLive(self, request: Any, context: Any) -> Any:
        return await self._run(
            request, context, lambda r: pb2.ServerLiveResponse(live=self.service.live())
        )

    async def ServerReady(self, request: Any, context: Any) -> Any:
        return await self._run(
            request, context, lambda r: pb2.ServerReadyResponse(ready=self.service.ready())
        )

    async def ModelReady(self, request: Any, context: Any) -> Any:
        return await self._run(
            request,
            context,
            lambda r: pb2.ModelReadyResponse(ready=self.service.model_ready(r.name, r.version)),
        )

    async def ServerMetadata(self, request: Any, context: Any) -> Any:
        return await self._run(
            request, context, lambda r: pb2.ServerMetadataResponse(**self.service.server_metadata())
        )

    async def ModelMetadata(self, request: Any, context: Any) -> Any:
        def answer(r: Any) -> Any:
            meta = self.service.model_metadata(r.name, r.version)
            tensor = pb2.ModelMetadataResponse.TensorMetadata
            return pb2.ModelMetadataResponse(
                name=meta["name"],
                versions=meta["versions"],
                platform=meta["platform"],
                inputs=[tensor(**t) for t in meta["inputs"]],
                outputs=[tensor(**t) for t in meta["outputs"]],
            )

        return await self._run(request, context, answer)

    async def ModelConfig(self, request: Any, context: Any) -> Any:
        def answer(r: Any) -> Any:
            self.service.check_model(r.name, r.version)
            datatype, shape = self.service.input_shape(r.name)
            data_type = mc.DataType.Value(f"TYPE_{datatype}")
            config = mc.ModelConfig(
                name=r.name,
                platform="servelab",
                max_batch_size=0,
                input=[mc.ModelInput(name=INPUT_NAME, data_type=data_type, dims=shape)],
                output=[mc.ModelOutput(name=OUTPUT_NAME, data_type=mc.TYPE_FP32, dims=[-1, -1])],
            )
            return pb2.ModelConfigResponse(config=config)

        return await self._run(request, context, answer)

    async def ModelStatistics(self, request: Any, context: Any) -> Any:
        def answer(r: Any) -> Any:
            stats = self.service.statistics(r.name, r.version)
            return json_format.ParseDict({"model_stats": stats}, pb2.ModelStatisticsResponse())

        return await self._run(request, context, answer)

    async def RepositoryIndex(self, request: Any, context: Any) -> Any:
        def answer(r: Any) -> Any:
            state = "READY" if self.service.ready() else "UNAVAILABLE"
            models = [
                pb2.RepositoryIndexResponse.ModelIndex(name=m, version=VERSION, state=state)
                for m in self.service.models
            ]
            return pb2.RepositoryIndexResponse(models=models)

        return await self._run(request, context, answer)

    async def _infer(self, r: Any) -> Any:
        """One ModelInferRequest to its ModelInferResponse (a FrontendError when refused)."""
        if isinstance(r, _Malformed):
            raise FrontendError("invalid", r.message)
        self.service.check_model(r.model_name, r.model_version)
        try:
            decoded = decode_grpc(r)
        except FrontendError as e:
            if r.model_name in self.service.models:
                self.service.metrics.refused(e.kind, r.model_name)
                e.counted = True
            raise
        response = await self.service.infer(r.model_name, r.model_version, decoded)
        return encode_grpc(response, pb2)

    async def ModelInfer(self, request: Any, context: Any) -> Any:
        return await self._run(request, context, self._infer)

    async def ModelStreamInfer(self, requests: Any, context: Any) -> Any:
        """Requests in, responses out as their outcomes come (not necessarily in order; each
        carries its request's id). A refused request's response has ``error_message`` and the
        stream goes on. At most ``max_concurrent`` of one stream's requests are in progress at
        once: beyond that the stream is not read, and gRPC's flow control holds the client."""
        try:
            metadata = dict(context.invocation_metadata() or ())
            self.service.check_token(metadata.get("authorization"))
        except FrontendError as e:
            self.service.metrics.refused(e.kind)
            await context.abort(getattr(grpc.StatusCode, e.grpc_code), e.message)
        out: asyncio.Queue[Any] = asyncio.Queue()
        places = asyncio.Semaphore(self.service.limits.max_concurrent)

        async def one(r: Any) -> None:
            try:
                message = pb2.ModelStreamInferResponse(infer_response=await self._infer(r))
            except FrontendError as e:
                if not e.counted:
                    self.service.metrics.refused(e.kind)
                echo = pb2.ModelInferResponse()
                if not isinstance(r, _Malformed):
                    echo.model_name, echo.model_version, echo.id = (
                        r.model_name,
                        r.model_version,
                        r.id,
                    )
                message = pb2.ModelStreamInferResponse(error_message=e.message, infer_response=echo)
            except Exception as e:  # a bug of ours: answered all the same
                message = pb2.ModelStreamInferResponse(error_message=f"internal error: {e}")
            finally:
                places.release()
            await out.put(message)

        async def read() -> None:
            tasks = set()
            try:
                async for r in requests:
                    await places.acquire()
                    task = asyncio.ensure_future(one(r))
                    tasks.add(task)
                    task.add_done_callback(tasks.discard)
                if tasks:
                    await asyncio.gather(*tasks)
            finally:
                await out.put(None)

        reader = asyncio.ensure_future(read())
        try:
            while (message := await out.get()) is not None:
                yield message
        finally:
            reader.cancel()


# method -> (request type, response type)
_METHODS = {
    "ServerLive": (pb2.ServerLiveRequest, pb2.ServerLiveResponse),
    "ServerReady": (pb2.ServerReadyRequest, pb2.ServerReadyResponse),
    "ModelReady": (pb2.ModelReadyRequest, pb2.ModelReadyResponse),
    "ServerMetadata": (pb2.ServerMetadataRequest, pb2.ServerMetadataResponse),
    "ModelMetadata": (pb2.ModelMetadataRequest, pb2.ModelMetadataResponse),
    "ModelInfer": (pb2.ModelInferRequest, pb2.ModelInferResponse),
    "ModelConfig": (pb2.ModelConfigRequest, pb2.ModelConfigResponse),
    "RepositoryIndex": (pb2.RepositoryIndexRequest, pb2.RepositoryIndexResponse),
    "ModelStatistics": (pb2.ModelStatisticsRequest, pb2.ModelStatisticsResponse),
}


def make_server(service: ModelService, address: str) -> tuple[Any, int]:
    """A grpc.aio server (not started) bound to ``address`` ("host:port"), and its port. Call
    inside the event loop that will run it."""
    limit = service.limits.max_body_bytes
    server = grpc.aio.server(
        options=[
            ("grpc.max_receive_message_length", limit),
            ("grpc.max_send_message_length", -1),
            ("grpc.so_reuseport", 0),
        ],
        # Messages are read before a handler runs: bound how many at once (beyond:
        # RESOURCE_EXHAUSTED from gRPC), as the HTTP server bounds the bodies it reads.
        maximum_concurrent_rpcs=service.limits.max_concurrent,
    )
    servicer = InferenceServicer(service)
    handlers = {
        name: grpc.unary_unary_rpc_method_handler(
            getattr(servicer, name),
            request_deserializer=_deserializer(request_type),
            response_serializer=response_type.SerializeToString,
        )
        for name, (request_type, response_type) in _METHODS.items()
    }
    handlers["ModelStreamInfer"] = grpc.stream_stream_rpc_method_handler(
        servicer.ModelStreamInfer,
        request_deserializer=_deserializer(pb2.ModelInferRequest),
        response_serializer=pb2.ModelStreamInferResponse.SerializeToString,
    )
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(SERVICE, handlers),))
    try:
        port = server.add_insecure_port(address)
    except RuntimeError as e:  # grpcio's bind failure (an address in use, no such address)
        raise OSError(
            f"gRPC could not bind {address} (in use, or not an address here): {e}"
        ) from None
    if port == 0:
        raise OSError(f"gRPC could not bind {address} (in use, or not an address here)")
    return server, port
