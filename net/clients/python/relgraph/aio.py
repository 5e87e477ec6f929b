"""The asyncio client: the same typed calls as Client, each a coroutine.

Why this design: one reader task per connection hands each reply to the future of its
request id, so any number of tasks share a connection with their requests in flight
together (pipelining needs nothing more than asyncio.gather). AsyncClient keeps a small pool
of such connections and applies Client's rules for failures: reconnect with backoff, send
again after an unknown outcome only what is retry-safe, follow `read_only` to the primary.

With TLS, AsyncConnection drives the same TlsSession as the blocking client (tls.py) over
its stream: the handshake right after the TCP connect, within the connect timeout.

Thread-safety: an AsyncClient belongs to the event loop that first used it.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from typing import AsyncIterator, List, Optional, Sequence, Tuple

from . import protocol as P
from .client import Backoff, parse_host_port
from .commands import Commands
from .errors import ConnectionLost, ProtocolError, RelgraphError, Timeout, TlsError, Unsupported
from .tls import TlsArg, TlsConfig, TlsSession, notice_error, tls_config
from .types import Event, Hello, PageEntry, Post, SubscribeFrom, SubscribeResult


class AsyncConnection:
    """One connection; use AsyncConnection.open()."""

    def __init__(self, host: str, port: int, timeout: float):
        self.host, self.port, self.timeout = host, port, timeout
        self._pending: dict = {}
        self._ids = itertools.count(1)
        self._broken: Optional[RelgraphError] = None
        self._task: Optional[asyncio.Task] = None
        self.hello: Optional[Hello] = None
        self.pushes: Optional[asyncio.Queue] = None  # frames of a stream opened on it
        self._out: list = []  # frames of this turn of the event loop, written together
        self._flush_scheduled = False
        self._tls: Optional[TlsSession] = None

    @classmethod
    async def open(cls, host: str, port: int, token: str = "", connect_timeout: float = 5.0,
                   timeout: float = 30.0, version: int = P.PROTOCOL_VERSION,
                   tls: TlsArg = None) -> "AsyncConnection":
        """Connects (and TLS's handshake, when `tls`: tls.py's forms), then HELLO."""
        c = cls(host, port, timeout)
        config = tls_config(tls)
        try:
            await asyncio.wait_for(c._connect(config), connect_timeout)
        except asyncio.TimeoutError:
            c._close_transport()
            what = "TLS handshake with" if config is not None else "connect to"
            raise Timeout(f"{what} {host}:{port} timed out") from None
        except TlsError:
            c._close_transport()
            raise
        except OSError as e:
            c._close_transport()
            raise ConnectionLost(f"connect to {host}:{port}: {e}") from None
        except BaseException:
            c._close_transport()
            raise
        c._decoder = P.FrameDecoder()
        c._task = asyncio.get_running_loop().create_task(c._read_loop())
        (status, body), = await c.request_many([(P.HELLO, P.enc_hello(version, token))],
                                               connect_timeout)
        if status:
            c.close()
            err = P.error_of(status, body)
            if isinstance(err, Unsupported) and version > 1:
                return await cls.open(host, port, token, connect_timeout, timeout, 1, config)
            raise err
        c.hello = P.dec_hello(body)
        c._decoder.max_frame = c.hello.max_frame
        return c

    async def _connect(self, config: Optional[TlsConfig]) -> None:
        self._reader, self._writer = await asyncio.open_connection(self.host, self.port)
        if config is None:
            return
        session = TlsSession(config, self.host, self.port)
        raw = b""
        while True:
            out = session.handshake(raw)
            if out:
                self._writer.write(out)
            if session.failed is not None:
                raise session.failed
            if session.established:
                self._tls = session
                return
            try:
                raw = await self._reader.read(65536)
            except OSError as e:
                raise session.handshake_eof(f"broke the connection ({e})") from None
            if not raw:
                raise session.handshake_eof()

    def _close_transport(self) -> None:
        w = getattr(self, "_writer", None)
        if w is not None:
            w.close()

    @property
    def healthy(self) -> bool:
        return self._broken is None

    @property
    def tls_version(self) -> Optional[str]:
        """The TLS version in use ("TLSv1.3"), None on plain TCP."""
        return self._tls.version if self._tls is not None else None

    def _write(self, data: bytes) -> None:
        if self._tls is not None:
            data = self._tls.encrypt(data)
        self._writer.write(data)

    @property
    def in_flight(self) -> int:
        return len(self._pending)

    def _fail(self, err: RelgraphError) -> None:
        if self._broken is None:
            self._broken = err
        for fut in self._pending.values():
            if not fut.done():
                fut.set_exception(type(err)(err.message) if isinstance(err, ConnectionLost)
                                  else ConnectionLost(err.message))
        self._pending.clear()
        if self.pushes is not None:
            self.pushes.put_nowait(None)
        self._writer.close()

    def close(self) -> None:
        self._fail(ConnectionLost("connection closed by the client"))
        if self._task is not None and self._task is not asyncio.current_task():
            self._task.cancel()

    async def _read_loop(self) -> None:
        try:
            tls = self._tls
            while True:
                try:
                    data = await self._reader.read(262144)
                except OSError as e:
                    err = tls.ended(str(e)) if tls is not None else None
                    raise err or ConnectionLost(f"{self.host}:{self.port}: {e}") from None
                if tls is not None:
                    if data:
                        data = tls.decrypt(data)
                        if tls.has_output():  # e.g. a TLS 1.3 key update's answer
                            self._writer.write(tls.take_output())
                        if not data and not tls.closed:
                            continue
                    if not data:
                        raise (tls.ended("closed the connection") or
                               ConnectionLost(f"{self.host}:{self.port} closed the connection"))
                if not data:
                    raise ConnectionLost(f"{self.host}:{self.port} closed the connection")
                self._decoder.feed(data)
                for frame in self._decoder.frames():
                    rid, op, status, body = frame
                    if op == P.NOTICE:
                        raise notice_error(f"{self.host}:{self.port}", P.error_of(status, body))
                    fut = self._pending.pop(rid, None)
                    if fut is not None:
                        if not fut.done():
                            fut.set_result((status, body))
                    elif self.pushes is not None:
                        self.pushes.put_nowait(frame)
        except asyncio.CancelledError:
            return
        except RelgraphError as e:
            self._fail(e)
        except OSError as e:
            self._fail(ConnectionLost(f"{self.host}:{self.port}: {e}"))

    async def request_many(self, requests: Sequence[Tuple[int, bytes]],
                           timeout: Optional[float] = None) -> List[Tuple[int, bytes]]:
        if self._broken is not None:
            b = self._broken
            raise (type(b)(b.message) if isinstance(b, ConnectionLost)
                   else ConnectionLost(b.message))
        loop = asyncio.get_running_loop()
        futs, ids = [], []
        out = self._out
        for opcode, body in requests:
            rid = next(self._ids) & 0xFFFFFFFF
            fut = loop.create_future()
            self._pending[rid] = fut
            futs.append(fut)
            ids.append(rid)
            out.append(P.HEADER.pack(6 + len(body), rid, opcode, 0))
            out.append(body)
        if not self._flush_scheduled:
            # Every request made in this turn of the loop leaves in one write.
            self._flush_scheduled = True
            loop.call_soon(self._flush)
        timer = loop.call_later(self.timeout if timeout is None else timeout, self._expire, ids)
        try:
            if len(futs) == 1:
                return [await futs[0]]
            return list(await asyncio.gather(*futs))
        finally:
            timer.cancel()

    def _flush(self) -> None:
        self._flush_scheduled = False
        if self._out and self._broken is None:
            data = b"".join(self._out)
            self._out.clear()
            self._write(data)

    def _expire(self, ids) -> None:
        for rid in ids:
            fut = self._pending.pop(rid, None)
            if fut is not None and not fut.done():
                fut.set_exception(Timeout(f"no reply from {self.host}:{self.port} in time"))

    def send_raw(self, opcode: int, body: bytes) -> int:
        """Opens a stream: its replies and pushes arrive on self.pushes."""
        self.pushes = asyncio.Queue()
        rid = next(self._ids) & 0xFFFFFFFF
        self._write(P.encode_frame(rid, opcode, body))
        return rid


class AsyncClient(Commands):
    """The asyncio twin of Client: `await c.follow(1, 2)`; same arguments and results."""

    def __init__(self, host: str = "127.0.0.1", port: int = P.DEFAULT_PORT, *, token: str = "",
                 tls: TlsArg = None, pool_size: int = 4, timeout: float = 30.0,
                 connect_timeout: float = 5.0, retries: int = 6,
                 backoff: Optional[Backoff] = None, follow_primary: bool = True):
        self.host, self.port, self.token = host, port, token
        self.tls = tls_config(tls)
        self.timeout, self.connect_timeout = timeout, connect_timeout
        self.retries = retries
        self.backoff = backoff or Backoff()
        self.follow_primary = follow_primary
        self._conns: List[Optional[AsyncConnection]] = [None] * pool_size
        self._connecting: List[Optional[asyncio.Future]] = [None] * pool_size

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"

    async def close(self) -> None:
        for c in self._conns:
            if c is not None:
                c.close()
        self._conns = [None] * len(self._conns)

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc):
        await self.close()

    async def _get(self) -> AsyncConnection:
        best = None
        for i, c in enumerate(self._conns):
            if c is None or not c.healthy:
                best = i
                break
            if best is None or c.in_flight < self._conns[best].in_flight:
                best = i
        c = self._conns[best]
        if c is not None and c.healthy:
            return c
        if self._connecting[best] is None:  # one connect per slot, however many tasks wait
            self._connecting[best] = asyncio.ensure_future(AsyncConnection.open(
                self.host, self.port, self.token, self.connect_timeout, self.timeout,
                tls=self.tls))
        fut = self._connecting[best]
        try:
            c = await asyncio.shield(fut)
        finally:
            if self._connecting[best] is fut and fut.done():
                self._connecting[best] = None
        self._conns[best] = c
        return c

    async def _call(self, opcode: int, body: bytes, decode):
        status, reply = (await self._round_trip(((opcode, body),)))[0]
        if status:
            raise P.error_of(status, reply)
        return decode(reply)

    async def _round_trip(self, requests):
        retry_safe = all(P.COMMANDS[op].retry_safe for op, _ in requests)
        writes = not all(P.COMMANDS[op].reads_only for op, _ in requests)
        attempt = 0
        while True:
            sent = False
            try:
                conn = await self._get()
                sent = True
                replies = await conn.request_many(requests)
            except (ConnectionLost, Timeout) as e:
                if (isinstance(e, Timeout) and sent) or isinstance(e, TlsError):
                    raise
                if (sent and not retry_safe) or attempt >= self.retries:
                    raise
                await asyncio.sleep(self.backoff.delay(attempt))
                attempt += 1
                continue
            if writes and self.follow_primary and retry_safe and attempt < self.retries:
                ro = next((r for r in replies if r[0] == 19), None)
                if ro is not None:
                    primary = P.error_of(*ro).primary
                    if primary:
                        await self.close()
                        self.host, self.port = parse_host_port(primary)
                    else:
                        await asyncio.sleep(self.backoff.delay(attempt))
                    attempt += 1
                    continue
            return replies

    async def execute(self, calls: Sequence[Tuple[int, bytes, object]],
                      raise_on_error: bool = True) -> list:
        """Sends queued calls (AsyncPipeline's) in one write."""
        replies = await self._round_trip([(op, body) for op, body, _ in calls])
        out = [P.error_of(s, r) if s else d(r) for (_, _, d), (s, r) in zip(calls, replies)]
        if raise_on_error:
            for r in out:
                if isinstance(r, RelgraphError):
                    raise r
        return out

    def pipeline(self) -> "AsyncPipeline":
        return AsyncPipeline(self)

    # ---- page iterators ----
    async def _iter_pages(self, fetch, user, page_size, **kw):
        after = None
        while True:
            page = await fetch(user, limit=page_size, after=after, **kw)
            for e in page.entries:
                yield e
            if page.next is None:
                return
            after = page.next

    def iter_following(self, user: int, page_size: int = 100, viewer: Optional[int] = None):
        return self._iter_pages(self.following, user, page_size, viewer=viewer)

    def iter_fans(self, user: int, page_size: int = 100, viewer: Optional[int] = None):
        return self._iter_pages(self.fans, user, page_size, viewer=viewer)

    def iter_friends(self, user: int, page_size: int = 100, viewer: Optional[int] = None):
        return self._iter_pages(self.friends, user, page_size, viewer=viewer)

    def iter_blocks(self, user: int, page_size: int = 100, viewer: Optional[int] = None):
        return self._iter_pages(self.blocks, user, page_size, viewer=viewer)

    def iter_requests(self, user: int, page_size: int = 100, viewer: Optional[int] = None):
        return self._iter_pages(self.requests, user, page_size, viewer=viewer)

    def iter_timeline(self, user: int, page_size: int = 100, kinds: int = 0):
        return self._iter_pages(self.timeline, user, page_size, kinds=kinds)

    def iter_user_posts(self, user: int, page_size: int = 100, kinds: int = 0):
        return self._iter_pages(self.user_posts, user, page_size, kinds=kinds)

    def subscribe(self, from_lsn: Optional[int] = None, *, name: str = "", kinds: int = 0,
                  from_now: bool = False) -> "AsyncSubscription":
        """As Client.subscribe: `async for event in client.subscribe(1): ...`."""
        return AsyncSubscription(self, from_lsn, name, kinds, from_now)


class AsyncPipeline(Commands):
    """Calls queued, then sent in one write by `await p.execute()`."""

    def __init__(self, client: AsyncClient):
        self._client = client
        self._queue = []

    def _call(self, opcode, body, decode):
        self._queue.append((opcode, body, decode))

    async def execute(self, raise_on_error: bool = True) -> list:
        queue, self._queue = self._queue, []
        return await self._client.execute(queue, raise_on_error) if queue else []


class AsyncSubscription:
    """The change stream for asyncio, with Subscription's guarantees (each event once, in
    order, across reconnects)."""

    def __init__(self, client: AsyncClient, from_lsn, name, kinds, from_now):
        self._client = client
        self.name, self.kinds = name, kinds
        self._from_lsn, self._from_now = from_lsn, from_now
        self.position: Optional[int] = None
        self.last_lsn = 0
        self.subscribed: Optional[SubscribeResult] = None
        self.reconnects = 0
        self._conn: Optional[AsyncConnection] = None
        self._buffer: List[Event] = []
        self._after_buffer = 0
        self._closed = False

    async def _open(self) -> None:
        c = self._client
        if self.position is not None:
            from_, lsn = SubscribeFrom.LSN, self.position
        elif self.name and any(k.name == self.name for k in await c.cursors()):
            from_, lsn = SubscribeFrom.CURSOR, 0
        elif self._from_lsn is not None and not self._from_now:
            from_, lsn = SubscribeFrom.LSN, self._from_lsn
        else:
            from_, lsn = SubscribeFrom.NOW, 0
        conn = await AsyncConnection.open(c.host, c.port, c.token, c.connect_timeout, c.timeout,
                                          tls=c.tls)
        self._rid = conn.send_raw(P.SUBSCRIBE, P.enc_subscribe(
            from_, lsn, self.kinds, self.name if from_ == SubscribeFrom.CURSOR else ""))
        self._conn = conn
        frame = await self._next_frame(c.timeout)
        if frame is None:
            conn.close()
            self._conn = None
            raise Timeout("no SUBSCRIBE reply in time")
        rid, op, status, body = frame
        if status:
            conn.close()
            self._conn = None
            raise P.error_of(status, body)
        self.subscribed = P.dec_subscribe(body)
        if self.position is None:
            self.position = self.subscribed.first_lsn

    async def _next_frame(self, timeout):
        try:
            frame = await asyncio.wait_for(self._conn.pushes.get(), timeout)
        except asyncio.TimeoutError:
            return None
        if frame is None:
            raise ConnectionLost("the stream's connection dropped")
        return frame

    async def get(self, timeout: Optional[float] = None) -> Optional[Event]:
        """The next event, or None after `timeout` seconds without one."""
        deadline = None if timeout is None else time.monotonic() + timeout
        attempt = 0
        while True:
            if self._buffer:
                e = self._buffer.pop(0)
                self.position, self.last_lsn = e.lsn + 1, e.lsn
                if not self._buffer:
                    self.position = max(self.position, self._after_buffer)
                return e
            left = None if deadline is None else deadline - time.monotonic()
            if self._closed or (left is not None and left <= 0):
                return None
            try:
                if self._conn is None:
                    await self._open()
                    attempt = 0
                    continue
                frame = await self._next_frame(left)
                if frame is None:
                    continue
                rid, op, status, body = frame
                if rid != self._rid or op != P.EVENTS:
                    continue
                if status:
                    raise P.error_of(status, body)
                f = P.dec_events(body)
                self._buffer = [e for e in f.events if e.lsn >= self.position]
                if self._buffer:
                    self._after_buffer = f.next_lsn
                else:
                    self.position = max(self.position, f.next_lsn)
            except (ConnectionLost, Timeout) as e:
                if isinstance(e, TlsError):
                    raise
                if self._conn is not None:
                    self._conn.close()
                    self._conn = None
                    self.reconnects += 1
                wait = self._client.backoff.delay(attempt)
                if deadline is not None:
                    wait = min(wait, max(0.0, deadline - time.monotonic()))
                await asyncio.sleep(wait)
                attempt += 1

    def __aiter__(self):
        return self

    async def __anext__(self) -> Event:
        e = await self.get()
        if e is None:
            raise StopAsyncIteration
        return e

    async def ack(self, lsn: Optional[int] = None) -> None:
        if not self.name:
            raise ValueError("ack needs a subscription with a name")
        await self._client.ack(self.name, self.last_lsn if lsn is None else lsn)

    def close(self) -> None:
        self._closed = True
        if self._conn is not None:
            self._conn.close()
