"""The errors the service answers requests with: each carries its HTTP status.

Why this module exists: the run manager refuses requests (a busy thread, an unknown run,
a draining service) and the API turns the refusal into LangGraph's `{"detail": ...}`
answer with the status LangGraph's server uses; one error tree, shared by both, keeps the
two from disagreeing about which failure is which status.
"""

from __future__ import annotations

__all__ = ("BadRequest", "Conflict", "Invalid", "NotFound", "ServiceError", "Unavailable")


class ServiceError(Exception):
    """A request the service refuses; `status` is the HTTP status the API answers with."""

    status = 500

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail

    @property
    def status_code(self) -> int:
        """`status`, under the name httpx errors use."""
        return self.status


class BadRequest(ServiceError, ValueError):
    """The request contradicts itself or the thread (HTTP 400)."""

    status = 400


class NotFound(ServiceError, LookupError):
    """No such thread, run or assistant (HTTP 404)."""

    status = 404


class Conflict(ServiceError):
    """The thread is busy, or the thread already exists (HTTP 409)."""

    status = 409


class Invalid(ServiceError, ValueError):
    """A value of the request is not allowed (HTTP 422)."""

    status = 422


class Unavailable(ServiceError):
    """The service is draining and takes no new runs (HTTP 503)."""

    status = 503
