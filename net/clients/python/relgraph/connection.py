"""One TCP connection to relgraphd, shared by any number of threads.

Why this design: the protocol lets a client send any number of requests without waiting, and
replies carry the request's id. A Connection therefore never holds a lock across a round trip:
a caller registers its request id, writes its frame under a short send lock, and waits for its
reply. Whoever waits first reads the socket for everyone ("leader/follower"): it hands each
reply to the waiter of its id and wakes them, and when its own reply is in it passes the
socket on. A lone thread thus reads its own reply with no thread switch, and N threads share
one connection with their requests in flight together. A batch (a Pipeline) registers N ids,
writes N frames in one send and waits for all of them.

With TLS (tls.py), the handshake runs right after the TCP connect, within the connect
timeout, and before HELLO. The TLS session is used under a short lock of its own and the
socket outside it; records leave in the order they were made because they are taken from the
session and sent under the send lock together.

A transport failure (reset, EOF, a NOTICE) breaks the connection: every waiter gets the
error and later calls fail at once; the Pool replaces it. A Timeout forgets the request's id
(a late reply is dropped) and leaves the connection usable.

Thread-safety: every public method may be called from any thread.
"""

from __future__ import annotations

import itertools
import socket
import threading
import time
from typing import List, Optional, Sequence, Tuple

from . import protocol as P
from .errors import (ConnectionLost, ProtocolError, RelgraphError, Timeout, TlsError,
                     Unsupported)
from .tls import TlsArg, TlsSession, notice_error, tls_config
from .types import Hello


class _Slot:
    __slots__ = ("done", "status", "body")

    def __init__(self):
        self.done = False
        self.status = 0
        self.body = b""


def _addr_text(host: str, port: int) -> str:
    return f"{host}:{port}"


class Connection:
    """A connected, handshaken connection (TLS when `tls` says so, then HELLO sent, version 2,
    else 1). tls: None (plain TCP), True, an ssl.SSLContext or a TlsOptions (tls.py)."""

    def __init__(self, host: str = "127.0.0.1", port: int = P.DEFAULT_PORT, token: str = "",
                 connect_timeout: float = 5.0, timeout: float = 30.0, tls: TlsArg = None):
        self.host, self.port = host, port
        self.timeout = timeout
        self._tls_config = tls_config(tls)
        self._tls: Optional[TlsSession] = None
        self._cond = threading.Condition(threading.Lock())
        self._send_lock = threading.Lock()
        self._tls_lock = threading.Lock()  # the TLS session; taken after _send_lock
        self._pending: dict = {}
        self._reading = False
        self._broken: Optional[RelgraphError] = None
        self._ids = itertools.count(1)
        self.hello: Hello = self._open(token, connect_timeout, P.PROTOCOL_VERSION)

    # ---- opening ----
    def _connect(self, connect_timeout: float) -> None:
        deadline = time.monotonic() + connect_timeout
        try:
            sock = socket.create_connection((self.host, self.port), connect_timeout)
        except socket.timeout:
            raise Timeout(f"connect to {_addr_text(self.host, self.port)} timed out") from None
        except OSError as e:
            raise ConnectionLost(f"connect to {_addr_text(self.host, self.port)}: {e}") from None
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sock = sock
        self._decoder = P.FrameDecoder()
        self._tls = None
        if self._tls_config is not None:
            try:
                self._tls = self._handshake(deadline)
            except BaseException:
                sock.close()
                raise

    def _handshake(self, deadline: float) -> TlsSession:
        """The TLS handshake on self.sock, by `deadline`."""
        session = TlsSession(self._tls_config, self.host, self.port)
        raw = b""
        try:
            while True:
                out = session.handshake(raw)
                if out:
                    self.sock.settimeout(max(0.001, deadline - time.monotonic()))
                    self.sock.sendall(out)
                if session.failed is not None:
                    raise session.failed
                if session.established:
                    return session
                left = deadline - time.monotonic()
                if left <= 0:
                    raise socket.timeout()
                self.sock.settimeout(left)
                raw = self.sock.recv(65536)
                if not raw:
                    raise session.handshake_eof()
        except socket.timeout:
            raise Timeout(f"TLS handshake with {_addr_text(self.host, self.port)} timed "
                          "out") from None
        except TlsError:
            raise
        except OSError as e:
            raise session.handshake_eof(f"broke the connection ({e})") from None

    # ---- the socket, through TLS when on ----
    def _send(self, data: bytes) -> None:
        """Sends `data` whole (b"": only what the TLS session has pending). Raises OSError."""
        with self._send_lock:
            if self._tls is not None:
                with self._tls_lock:
                    data = self._tls.encrypt(data)
            if data:
                self.sock.sendall(data)

    def _recv(self) -> bytes:
        """What the server sent next (b"" when only part of a TLS record came). Raises
        ConnectionLost when the connection ends, socket.timeout, OSError."""
        tls = self._tls
        try:
            raw = self.sock.recv(262144)
        except socket.timeout:
            raise
        except OSError as e:
            err = tls.ended(str(e)) if tls is not None else None
            if err is not None:
                raise err from None
            raise
        if tls is not None:
            if raw:
                with self._tls_lock:
                    data = tls.decrypt(raw)
                    flush = tls.has_output()
                if flush:  # e.g. a TLS 1.3 key update's answer
                    self._send(b"")
                if data or not tls.closed:
                    return data
            raise (tls.ended("closed the connection")
                   or ConnectionLost(f"{_addr_text(self.host, self.port)} closed the connection"))
        if not raw:
            raise ConnectionLost(f"{_addr_text(self.host, self.port)} closed the connection")
        return raw

    def _open(self, token: str, connect_timeout: float, version: int) -> Hello:
        self._connect(connect_timeout)
        try:
            status, body = self.request(P.HELLO, P.enc_hello(version, token), connect_timeout)
        except RelgraphError:
            self.close()
            raise
        if status == 0:
            try:
                hello = P.dec_hello(body)
            except ProtocolError:
                self.close()
                raise ProtocolError(f"{_addr_text(self.host, self.port)} does not speak the "
                                    "relgraph protocol") from None
            self._decoder.max_frame = hello.max_frame
            return hello
        err = P.error_of(status, body)
        self.close()
        if isinstance(err, Unsupported) and version > 1:
            # A server speaking only version 1 closes after refusing: a new connection, v1.
            self._reset()
            return self._open(token, connect_timeout, 1)
        raise err

    def _reset(self) -> None:
        with self._cond:
            self._pending.clear()
            self._broken = None
            self._reading = False

    # ---- state ----
    @property
    def healthy(self) -> bool:
        return self._broken is None

    @property
    def in_flight(self) -> int:
        return len(self._pending)

    @property
    def tls_version(self) -> Optional[str]:
        """The TLS version in use ("TLSv1.3"), None on plain TCP."""
        return self._tls.version if self._tls is not None else None

    def close(self) -> None:
        self._fail(ConnectionLost("connection closed by the client"))

    def _fail(self, err: RelgraphError) -> None:
        with self._cond:
            if self._broken is None:
                self._broken = err
            for slot in self._pending.values():
                slot.done = True
                slot.status = -1
            self._pending.clear()
            self._cond.notify_all()
        try:
            # shutdown() wakes a thread blocked in recv() on it; close() alone would not.
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        try:
            self.sock.close()
        except OSError:
            pass

    # ---- requests ----
    def request(self, opcode: int, body: bytes = b"",
                timeout: Optional[float] = None) -> Tuple[int, bytes]:
        """Sends one request and waits for its reply: (status, body). Raises ConnectionLost
        or Timeout."""
        return self.request_many(((opcode, body),), timeout)[0]

    def request_many(self, requests: Sequence[Tuple[int, bytes]],
                     timeout: Optional[float] = None) -> List[Tuple[int, bytes]]:
        """Sends every request in one write and waits for all replies, in order."""
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        slots = []
        frames = []
        pack = P.HEADER.pack
        with self._cond:
            if self._broken is not None:
                raise self._broken_error()
            for opcode, body in requests:
                rid = next(self._ids) & 0xFFFFFFFF or next(self._ids)
                slot = _Slot()
                self._pending[rid] = slot
                slots.append((rid, slot))
                frames.append(pack(6 + len(body), rid, opcode, 0))
                frames.append(body)
        try:
            self._send(b"".join(frames))
        except OSError as e:
            self._fail(ConnectionLost(f"send to {_addr_text(self.host, self.port)}: {e}"))
            raise self._broken_error() from None
        out = []
        for rid, slot in slots:
            self._wait(rid, slot, deadline)
            out.append((slot.status, slot.body))
        return out

    def _broken_error(self) -> RelgraphError:
        b = self._broken
        return type(b)(b.message, b.detail, code=b.code)

    def _wait(self, rid: int, slot: _Slot, deadline: float) -> None:
        cond = self._cond
        with cond:
            while True:
                if slot.done:
                    if slot.status < 0:
                        raise self._broken_error()
                    return
                if self._broken is not None:
                    raise self._broken_error()
                if not self._reading:
                    self._reading = True
                    break
                left = deadline - time.monotonic()
                if left <= 0:
                    self._pending.pop(rid, None)
                    raise Timeout(f"no reply from {_addr_text(self.host, self.port)} in time")
                cond.wait(left)
        self._lead(rid, slot, deadline)

    def _lead(self, rid: int, slot: _Slot, deadline: float) -> None:
        """Reads the socket for every waiter until `slot` is answered or the deadline passes."""
        sock, decoder, cond = self.sock, self._decoder, self._cond
        try:
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise socket.timeout()
                sock.settimeout(left)
                data = self._recv()
                if not data:
                    continue
                decoder.feed(data)
                frames = decoder.frames()
                if not frames:
                    continue
                with cond:
                    pending = self._pending
                    for frid, op, status, body in frames:
                        if op == P.NOTICE:
                            err = P.error_of(status, body)
                            self._reading = False
                            raise notice_error(_addr_text(self.host, self.port), err) from err
                        s = pending.pop(frid, None)
                        if s is not None:  # else: a request that timed out, or a push
                            s.status = status
                            s.body = body
                            s.done = True
                    if slot.done:
                        self._reading = False
                        cond.notify_all()
                        return
                    cond.notify_all()
        except socket.timeout:
            with cond:
                self._reading = False
                self._pending.pop(rid, None)
                cond.notify_all()
            raise Timeout(f"no reply from {_addr_text(self.host, self.port)} in time") from None
        except ConnectionLost as e:
            self._fail(e)
            raise self._broken_error() from None
        except OSError as e:
            self._fail(ConnectionLost(f"{_addr_text(self.host, self.port)}: {e}"))
            raise self._broken_error() from None
        except ProtocolError as e:
            self._fail(e)
            raise

    # ---- a dedicated stream (SUBSCRIBE, FETCH_SNAPSHOT, REPLICATE) ----
    def send_raw(self, opcode: int, body: bytes) -> int:
        """Writes one request and returns its id, without waiting (the stream's opener)."""
        rid = next(self._ids) & 0xFFFFFFFF
        try:
            self._send(P.encode_frame(rid, opcode, body))
        except OSError as e:
            self._fail(ConnectionLost(f"send: {e}"))
            raise self._broken_error() from None
        return rid

    def read_frames(self, timeout: Optional[float]) -> List[Tuple[int, int, int, bytes]]:
        """On a connection only this caller reads: the next whole frames, [] when `timeout`
        (seconds; None: no limit) passes first."""
        if self._broken is not None:
            raise self._broken_error()
        try:
            while True:
                frames = self._decoder.frames()
                if frames:
                    return frames
                self.sock.settimeout(timeout)
                self._decoder.feed(self._recv())
        except socket.timeout:
            return []
        except ConnectionLost as e:
            self._fail(e)
            raise self._broken_error() from None
        except OSError as e:
            self._fail(ConnectionLost(f"{_addr_text(self.host, self.port)}: {e}"))
            raise self._broken_error() from None
