"""Typed errors: one exception class per protocol error code (docs/protocol.md, "Errors").

Every error the server sends arrives as the class of its code, carrying ``code``, ``message``
and ``detail`` (the error_body's i64: ms to wait for ``rate_limited``, the oldest kept LSN for
``lsn_expired``, else 0). Transport failures are ``ConnectionLost`` (also a
``ConnectionError``; a failed TLS handshake is its subclass ``TlsError``); a passed deadline
is ``Timeout`` (also a ``TimeoutError``), code 15 as the protocol names it.
"""

from __future__ import annotations

# code -> name, as docs/protocol.md lists them (never renumbered).
CODE_NAMES = {
    1: "invalid_argument", 2: "invalid_user_id", 3: "self_follow", 4: "follow_limit",
    5: "rate_limited", 6: "not_found", 7: "corruption", 8: "io_error", 9: "unavailable",
    10: "internal", 11: "unauthenticated", 12: "resource_exhausted", 13: "protocol_error",
    14: "unsupported", 15: "timeout", 16: "already_exists", 17: "limit_exceeded",
    18: "lsn_expired", 19: "read_only", 20: "diverged", 21: "blocked", 22: "moved", 23: "moving",
    24: "permission_denied",
}


class RelgraphError(Exception):
    """An error reply from relgraphd, or a client-side failure, with the protocol's code."""

    code = 0

    def __init__(self, message: str = "", detail: int = 0, code: int | None = None):
        if code is not None:
            self.code = code
        self.message = message
        self.detail = detail
        super().__init__(message)

    @property
    def name(self) -> str:
        return CODE_NAMES.get(self.code, f"code_{self.code}")

    def __str__(self) -> str:
        return f"{self.name}: {self.message}" if self.message else self.name

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.message!r}, detail={self.detail})"


class InvalidArgument(RelgraphError): code = 1
class InvalidUserId(RelgraphError): code = 2
class SelfFollow(RelgraphError): code = 3
class FollowLimit(RelgraphError): code = 4


class RateLimited(RelgraphError):
    code = 5

    @property
    def retry_after_ms(self) -> int:
        return self.detail


class NotFound(RelgraphError): code = 6
class Corruption(RelgraphError): code = 7


class ConnectionLost(RelgraphError, ConnectionError):
    """The connection failed (refused, reset, closed): code io_error. The outcome of a
    request that was sent is unknown."""
    code = 8


class TlsError(ConnectionLost):
    """TLS failed (relgraph/tls.py says how): an untrusted or expired server certificate, a
    host name the certificate does not carry, a server wanting a client certificate, TLS on
    one side only. A ConnectionLost (code io_error) that is never retried: a new connection
    would fail the same way."""


class Unavailable(RelgraphError): code = 9
class Internal(RelgraphError): code = 10
class Unauthenticated(RelgraphError): code = 11
class ResourceExhausted(RelgraphError): code = 12
class ProtocolError(RelgraphError): code = 13
class Unsupported(RelgraphError): code = 14


class Timeout(RelgraphError, TimeoutError):
    """A client-side deadline passed (code 15, never sent by a server)."""
    code = 15


class AlreadyExists(RelgraphError): code = 16
class LimitExceeded(RelgraphError): code = 17


class LsnExpired(RelgraphError):
    code = 18

    @property
    def oldest_lsn(self) -> int:
        return self.detail


class ReadOnly(RelgraphError):
    """A write sent to a replica. ``primary`` is the primary's HOST:PORT, or "" while a group
    elects one."""
    code = 19

    @property
    def primary(self) -> str:
        return self.message


class Diverged(RelgraphError): code = 20
class Blocked(RelgraphError): code = 21
class Moved(RelgraphError): code = 22
class Moving(RelgraphError): code = 23
class PermissionDenied(RelgraphError): code = 24


_BY_CODE = {cls.code: cls for cls in RelgraphError.__subclasses__()}
for _cls in list(_BY_CODE.values()):
    for _sub in _cls.__subclasses__():
        _BY_CODE.setdefault(_sub.code, _sub)


def error_for(code: int, message: str, detail: int = 0) -> RelgraphError:
    """The exception of a protocol error code (RelgraphError itself for a code it does not
    know, so a newer server's codes still arrive typed by number)."""
    cls = _BY_CODE.get(code)
    if cls is None:
        return RelgraphError(message, detail, code=code)
    return cls(message, detail)
