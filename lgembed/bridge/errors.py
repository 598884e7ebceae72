"""The bridge's errors, under the edge layer's `EdgeError` tree.

Why: h11's split tells the reader whose fault a failure is. A `LocalProtocolError` is
this side refusing to do something the protocol does not allow (a call of a function
the MCU did not announce, arguments of the wrong type, a payload above the MCU's
`max_payload`); a `RemoteProtocolError` is the peer's doing: it answered with a NAK or
an error RESULT, or sent bytes that do not decode. Both carry `.code`, the firmware's
`lgb_ret_t` (see `lgembed.bridge.messages.ERRORS`), so a log line and the firmware's
own status codes speak of the same thing.

    EdgeError
     └─ ProtocolError                      .code: an lgb_ret_t, or None
         ├─ LocalProtocolError             this side refused (bad call, bad args, too long)
         ├─ RemoteProtocolError            the peer refused (NAK, error RESULT) or sent garbage
         ├─ BridgeTimeoutError(DriverTimeoutError)  no ACK / RESULT after every retry
         └─ BridgeDisconnected(DriverError)         the port failed or the MCU went silent
"""

from __future__ import annotations

import errno as _errno

from lgembed.bridge.messages import ERR_TIMEOUT, ERRORS
from lgembed.edge.errors import DriverError, DriverTimeoutError, EdgeError

__all__ = (
    "BridgeDisconnected",
    "BridgeTimeoutError",
    "LocalProtocolError",
    "ProtocolError",
    "RemoteProtocolError",
)


class ProtocolError(EdgeError):
    """Base of the bridge's errors.

    Attributes:
        code: the firmware's error code (`lgb_ret_t`, e.g. 8 = LGB_ERR_NO_FUNCTION), or
            None when the failure has no code.
    """

    def __init__(self, message: str, code: int | None = None) -> None:
        super().__init__(message)
        self.code = code

    @property
    def code_name(self) -> str | None:
        """The code's C name ("LGB_ERR_NO_FUNCTION"), or None."""
        if self.code is None:
            return None
        entry = ERRORS.get(self.code)
        return entry[0] if entry else f"code {self.code}"

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class LocalProtocolError(ProtocolError):
    """This side refused to send something the protocol or the MCU does not allow."""


class RemoteProtocolError(ProtocolError):
    """The peer refused a frame (NAK), a function failed on it (error RESULT), or what
    it sent does not decode."""


class BridgeTimeoutError(ProtocolError, DriverTimeoutError):
    """No ACK or RESULT arrived after every retry (code LGB_ERR_TIMEOUT)."""

    def __init__(self, message: str, code: int | None = ERR_TIMEOUT) -> None:
        DriverTimeoutError.__init__(self, message, _errno.ETIMEDOUT)
        self.code = code


class BridgeDisconnected(ProtocolError, DriverError):
    """The link to the MCU is down: the port failed or vanished, or the MCU stopped
    answering. The message names the port and the fix; the client reconnects."""

    def __init__(self, message: str, code: int | None = None, errno: int | None = _errno.ENOTCONN) -> None:
        DriverError.__init__(self, message, errno)
        self.code = code
