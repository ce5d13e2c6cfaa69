"""The front-end's one error type and how each protocol reports it.

Every refusal is a `FrontendError` with a kind; the HTTP server answers it with the kind's status
code and ``{"error": message}`` (what Triton's clients read), the gRPC server aborts the call with
the kind's status code and the same message.
"""

from __future__ import annotations

# kind -> (HTTP status, grpc.StatusCode name)
KINDS = {
    "invalid": (400, "INVALID_ARGUMENT"),
    "unauthenticated": (401, "UNAUTHENTICATED"),
    "not_found": (404, "NOT_FOUND"),
    "timeout": (504, "DEADLINE_EXCEEDED"),
    "too_large": (413, "RESOURCE_EXHAUSTED"),
    "overloaded": (503, "RESOURCE_EXHAUSTED"),
    "unavailable": (503, "UNAVAILABLE"),
    "internal": (500, "INTERNAL"),
    "unimplemented": (501, "UNIMPLEMENTED"),
}


class FrontendError(Exception):
    """A request the front-end refuses or could not serve. ``kind`` is a key of `KINDS`."""

    def __init__(self, kind: str, message: str) -> None:
        if kind not in KINDS:
            raise ValueError(f"kind={kind!r} is not one of {sorted(KINDS)}")
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.counted = False  # True once the metrics have counted it

    @property
    def http_status(self) -> int:
        return KINDS[self.kind][0]

    @property
    def grpc_code(self) -> str:
        return KINDS[self.kind][1]
