"""The blocking client: a pool of shared connections, typed calls, retries, pipelines, page
iterators and the change stream.

Why this design: a Client is meant to be created once and shared by every thread of a
program, like redis-py's. Its Pool holds a few multiplexed Connections (connection.py), so
threads never wait for each other's round trips and no thread owns a connection. Failures
are split by what the protocol allows (docs/protocol.md, "Retrying"): a request that could
not reach the server is retried on a new connection after a backoff; one whose outcome is
unknown (the connection broke after it was sent) is retried only when its command is
retry-safe; a write refused by a replica with `read_only` goes to the primary the message
names, again only when retry-safe. Every other error reaches the caller as its typed class.

Thread-safety: Client, Pool and the iterators' calls are safe from any thread; a Pipeline and
a Subscription belong to the thread using them.
"""

from __future__ import annotations

import os
import random
import threading
import time
from typing import Callable, Iterator, List, Optional, Sequence, Tuple

from . import protocol as P
from .commands import Commands
from .connection import Connection
from .errors import (ConnectionLost, NotFound, ReadOnly, RelgraphError, Timeout, TlsError,
                     error_for)
from .tls import TlsArg, notice_error, tls_config
from .types import (Cursor, Event, FetchSnapshotResult, PageEntry, Post, RecordsFrame,
                    ReplicateResult, SubscribeFrom, SubscribeResult)


def parse_host_port(text: str) -> Tuple[str, int]:
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"not HOST:PORT: {text!r}")
    return host.strip("[]"), int(port)


class Backoff:
    """Exponential backoff with jitter: base, 2·base, ... up to cap, each × [0.5, 1)."""

    def __init__(self, base: float = 0.05, cap: float = 2.0):
        self.base, self.cap = base, cap

    def delay(self, attempt: int) -> float:
        d = min(self.cap, self.base * (2 ** attempt))
        return d * (0.5 + random.random() / 2)


_OPENING = object()  # a pool slot whose connection is being opened


class Pool:
    """`size` multiplexed connections to one address, opened when first needed and replaced
    when broken; get() hands out the least busy one."""

    def __init__(self, host: str, port: int, token: str = "", size: int = 4,
                 connect_timeout: float = 5.0, timeout: float = 30.0, tls: TlsArg = None):
        if size < 1:
            raise ValueError("pool size must be at least 1")
        self.host, self.port, self.token = host, port, token
        self.tls = tls_config(tls)
        self.connect_timeout, self.timeout = connect_timeout, timeout
        self._conns: List[Optional[Connection]] = [None] * size
        self._cond = threading.Condition()
        self._closed = False

    def get(self) -> Connection:
        with self._cond:
            while True:
                if self._closed:
                    raise ConnectionLost("the client is closed")
                # An idle connection first; else open one in a free slot; else the least busy.
                best = free = None
                for i, c in enumerate(self._conns):
                    if c is _OPENING:
                        continue
                    if c is None or not c.healthy:
                        if free is None:
                            free = i
                        continue
                    if c.in_flight == 0:
                        return c
                    if best is None or c.in_flight < self._conns[best].in_flight:
                        best = i
                if free is not None:
                    self._conns[free] = _OPENING  # one connect per slot, however many ask
                    break
                if best is not None:
                    return self._conns[best]
                self._cond.wait()  # every slot is opening: take the first that opens
        # Connect outside the lock: a slow connect must not hold up the healthy connections.
        try:
            c = Connection(self.host, self.port, self.token, self.connect_timeout, self.timeout,
                           self.tls)
        except BaseException:
            with self._cond:
                self._conns[free] = None
                self._cond.notify_all()
            raise
        with self._cond:
            self._conns[free] = c
            self._cond.notify_all()
            if self._closed:
                c.close()
                raise ConnectionLost("the client is closed")
        return c

    def close(self) -> None:
        with self._cond:
            self._closed = True
            conns, self._conns = self._conns, [None] * len(self._conns)
            self._cond.notify_all()
        for c in conns:
            if c is not None and c is not _OPENING:
                c.close()


class Client(Commands):
    """A relgraphd client to share across threads.

    host/port: the server (or a replica: writes follow its `read_only` to the primary when
    follow_primary). token: sent in HELLO. tls: None (plain TCP), True (the system's CAs), an
    ssl.SSLContext or a TlsOptions (tls.py), for every connection, the primary's included.
    pool_size: connections, each carrying any number of requests at once. timeout: seconds
    for one reply. retries: how many times a failed attempt is tried again (reconnects and
    read_only redirects), waiting backoff between; a TlsError is not retried.
    """

    def __init__(self, host: str = "127.0.0.1", port: int = P.DEFAULT_PORT, *, token: str = "",
                 tls: TlsArg = None, pool_size: int = 4, timeout: float = 30.0,
                 connect_timeout: float = 5.0, retries: int = 6,
                 backoff: Optional[Backoff] = None, follow_primary: bool = True):
        self.token = token
        self.tls = tls_config(tls)
        self.pool_size = pool_size
        self.timeout, self.connect_timeout = timeout, connect_timeout
        self.retries = retries
        self.backoff = backoff or Backoff()
        self.follow_primary = follow_primary
        self._lock = threading.Lock()
        self._pool = self._new_pool(host, port)

    @classmethod
    def from_url(cls, url: str, **kw) -> "Client":
        """relgraph://[TOKEN@]HOST:PORT; relgraphs://... connects with TLS (tls=True, the
        system's CAs, unless `tls` is given)."""
        scheme, sep, rest = url.partition("://")
        if not sep:
            scheme, rest = "relgraph", url
        token, _, hp = rest.rpartition("@")
        host, port = parse_host_port(hp)
        if scheme == "relgraphs":
            kw.setdefault("tls", True)
        return cls(host, port, token=token or kw.pop("token", ""), **kw)

    def _new_pool(self, host: str, port: int) -> Pool:
        return Pool(host, port, self.token, self.pool_size, self.connect_timeout, self.timeout,
                    self.tls)

    @property
    def address(self) -> str:
        return f"{self._pool.host}:{self._pool.port}"

    def close(self) -> None:
        self._pool.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def connection(self) -> Connection:
        """A connection of the pool (opened if needed), e.g. to read its HELLO reply."""
        return self._pool.get()

    # ---- the one path of every call ----
    def _call(self, opcode: int, body: bytes, decode):
        status, reply = self._round_trip(((opcode, body),))[0]
        if status:
            raise P.error_of(status, reply)
        return decode(reply)

    def _round_trip(self, requests: Sequence[Tuple[int, bytes]]) -> List[Tuple[int, bytes]]:
        retry_safe = all(P.COMMANDS[op].retry_safe for op, _ in requests)
        writes = not all(P.COMMANDS[op].reads_only for op, _ in requests)
        attempt = 0
        while True:
            pool = self._pool
            sent = False
            try:
                conn = pool.get()
                sent = True
                replies = conn.request_many(requests)
            except (ConnectionLost, Timeout) as e:
                # Not connected: nothing was sent, any request may go again. Sent: only a
                # retry-safe one (its outcome is unknown). A reply that is late is not retried.
                if (isinstance(e, Timeout) and sent) or isinstance(e, TlsError):
                    raise
                if (sent and not retry_safe) or attempt >= self.retries:
                    raise
                time.sleep(self.backoff.delay(attempt))
                attempt += 1
                continue
            if writes and self.follow_primary and retry_safe and attempt < self.retries:
                ro = next((r for r in replies if r[0] == 19), None)
                if ro is not None:
                    primary = P.error_of(*ro).primary
                    if primary:
                        self._switch_to(pool, primary)
                    else:  # a group electing its primary: ask again shortly
                        time.sleep(self.backoff.delay(attempt))
                    attempt += 1
                    continue
            return replies

    def _switch_to(self, old: Pool, primary: str) -> None:
        host, port = parse_host_port(primary)
        with self._lock:
            if self._pool is old:
                self._pool = self._new_pool(host, port)
                old.close()

    # ---- pipelines ----
    def pipeline(self) -> "Pipeline":
        """Queues calls and sends them in one write: `with c.pipeline() as p: p.follow(1, 2);
        results = p.execute()`."""
        return Pipeline(self)

    # ---- page iterators: follow the search-after cursor to the end of a list ----
    def _iter_pages(self, fetch, user: int, page_size: int, viewer: Optional[int]) -> Iterator[PageEntry]:
        after = None
        while True:
            page = fetch(user, limit=page_size, after=after, viewer=viewer)
            yield from page.entries
            if page.next is None:
                return
            after = page.next

    def iter_following(self, user: int, page_size: int = 100, viewer: Optional[int] = None):
        """Every user `user` follows, newest first, page by page (stable while the list
        changes: each page starts strictly after the last entry seen)."""
        return self._iter_pages(self.following, user, page_size, viewer)

    def iter_fans(self, user: int, page_size: int = 100, viewer: Optional[int] = None):
        return self._iter_pages(self.fans, user, page_size, viewer)

    def iter_friends(self, user: int, page_size: int = 100, viewer: Optional[int] = None):
        return self._iter_pages(self.friends, user, page_size, viewer)

    def iter_blocks(self, user: int, page_size: int = 100, viewer: Optional[int] = None):
        return self._iter_pages(self.blocks, user, page_size, viewer)

    def iter_requests(self, user: int, page_size: int = 100, viewer: Optional[int] = None):
        return self._iter_pages(self.requests, user, page_size, viewer)

    def _iter_posts(self, fetch, user: int, page_size: int, kinds: int) -> Iterator[Post]:
        after = None
        while True:
            page = fetch(user, limit=page_size, after=after, kinds=kinds)
            yield from page.entries
            if page.next is None:
                return
            after = page.next

    def iter_timeline(self, user: int, page_size: int = 100, kinds: int = 0):
        return self._iter_posts(self.timeline, user, page_size, kinds)

    def iter_user_posts(self, user: int, page_size: int = 100, kinds: int = 0):
        return self._iter_posts(self.user_posts, user, page_size, kinds)

    # ---- streams: each on a connection of its own ----
    def _stream_connection(self) -> Connection:
        return Connection(self._pool.host, self._pool.port, self.token, self.connect_timeout,
                          self.timeout, self.tls)

    def subscribe(self, from_lsn: Optional[int] = None, *, name: str = "", kinds: int = 0,
                  from_now: bool = False) -> "Subscription":
        """The change stream, resumed by itself after a dropped connection.

        from_lsn: the first LSN; from_now: only changes after the subscribe; name: a named
        cursor: resumes at its acknowledged LSN + 1 when it exists (else starts as from_lsn /
        from_now say; the first ack() creates it). kinds: bit k selects event kind k, 0 all.
        """
        return Subscription(self, from_lsn, name, kinds, from_now)

    def fetch_snapshot(self, path: str) -> FetchSnapshotResult:
        """FETCH_SNAPSHOT: writes the server's newest snapshot to `path`."""
        conn = self._stream_connection()
        try:
            rid = conn.send_raw(P.FETCH_SNAPSHOT, b"")
            info = None
            got = 0
            with open(path + ".part", "wb") as f:
                while info is None or got < info.file_bytes:
                    frames = conn.read_frames(self.timeout)
                    if not frames:
                        raise Timeout("snapshot transfer stalled")
                    for frid, op, status, body in frames:
                        if frid != rid:
                            continue
                        if status:
                            raise P.error_of(status, body)
                        if op == P.FETCH_SNAPSHOT:
                            info = P.dec_fetch_snapshot(body)
                        elif op == P.SNAPSHOT_DATA:
                            offset, data = P.dec_snapshot_data(body)
                            if offset != got:
                                raise P.ProtocolError(f"snapshot data at {offset}, expected {got}")
                            f.write(data)
                            got += len(data)
            os.replace(path + ".part", path)
            return info
        finally:
            conn.close()

    def replicate(self, from_lsn: int, epoch: int = 1, epoch_id: int = 0,
                  name: str = "python") -> Tuple[ReplicateResult, Iterator[RecordsFrame]]:
        """REPLICATE: the reply and an iterator of RECORDS frames (heartbeats included) on a
        connection of its own; close the iterator to end it. A replica answers each frame
        with replica_ack()."""
        conn = self._stream_connection()
        rid = conn.send_raw(P.REPLICATE, P.enc_replicate(from_lsn, epoch, epoch_id, name))
        backlog = []
        reply = None
        while reply is None:
            frames = conn.read_frames(self.timeout)
            if not frames:
                conn.close()
                raise Timeout("no REPLICATE reply in time")
            for i, (frid, op, status, body) in enumerate(frames):
                if frid == rid and op == P.REPLICATE:
                    if status:
                        conn.close()
                        raise P.error_of(status, body)
                    reply = P.dec_replicate(body)
                    backlog = frames[i + 1:]
                    break

        def records() -> Iterator[RecordsFrame]:
            try:
                pending = backlog
                while True:
                    for frid, op, status, body in pending:
                        if frid == rid and op == P.RECORDS:
                            if status:
                                raise P.error_of(status, body)
                            yield P.dec_records(body)
                    pending = conn.read_frames(None)
            finally:
                conn.close()

        return reply, records()


class Pipeline(Commands):
    """Calls queued by a Client, sent in one write by execute(); each returns None until
    then. Retry-safe batches are sent again whole after a dropped connection."""

    def __init__(self, client: Client):
        self._client = client
        self._queue: List[Tuple[int, bytes, Callable]] = []

    def _call(self, opcode: int, body: bytes, decode):
        self._queue.append((opcode, body, decode))
        return None

    def __len__(self):
        return len(self._queue)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._queue.clear()

    def execute(self, raise_on_error: bool = True) -> list:
        """The results in call order. raise_on_error: the first error reply is raised (after
        every reply has arrived); else each error takes its call's place in the list."""
        queue, self._queue = self._queue, []
        if not queue:
            return []
        replies = self._client._round_trip([(op, body) for op, body, _ in queue])
        out = []
        for (op, body, decode), (status, reply) in zip(queue, replies):
            out.append(P.error_of(status, reply) if status else decode(reply))
        if raise_on_error:
            for r in out:
                if isinstance(r, RelgraphError):
                    raise r
        return out


class Subscription:
    """The change stream of a Client: iterate it for Event values, in LSN order, each once,
    across dropped connections and server restarts (it subscribes again from the LSN after
    the last event it handed out), retrying with backoff for as long as it is read. Errors a
    reconnect cannot cure (lsn_expired, a bad argument, a refused token, a TlsError) are
    raised. Not thread-safe, except close(), which may come from any thread.
    """

    def __init__(self, client: Client, from_lsn: Optional[int], name: str, kinds: int,
                 from_now: bool):
        self._client = client
        self.name = name
        self.kinds = kinds
        self._from_lsn, self._from_now = from_lsn, from_now
        self.position: Optional[int] = None  # the next LSN to hand out, once known
        self.last_lsn = 0                    # the LSN of the last event handed out
        self.subscribed: Optional[SubscribeResult] = None
        self.reconnects = 0
        self._conn: Optional[Connection] = None
        self._rid = 0
        self._buffer: List[Event] = []
        self._next_after_buffer = 0
        self._closed = False

    def _start(self) -> Tuple[int, int]:
        if self.position is not None:
            return SubscribeFrom.LSN, self.position
        if self.name and any(c.name == self.name for c in self._client.cursors()):
            return SubscribeFrom.CURSOR, 0
        if self._from_lsn is not None and not self._from_now:
            return SubscribeFrom.LSN, self._from_lsn
        return SubscribeFrom.NOW, 0

    def _open(self) -> None:
        from_, lsn = self._start()
        conn = self._client._stream_connection()
        try:
            self._rid = conn.send_raw(
                P.SUBSCRIBE, P.enc_subscribe(from_, lsn, self.kinds,
                                             self.name if from_ == SubscribeFrom.CURSOR else ""))
            while True:
                frames = conn.read_frames(self._client.timeout)
                if not frames:
                    raise Timeout("no SUBSCRIBE reply in time")
                for i, (rid, op, status, body) in enumerate(frames):
                    if rid == self._rid and op == P.SUBSCRIBE:
                        if status:
                            raise P.error_of(status, body)
                        self.subscribed = P.dec_subscribe(body)
                        if self.position is None:
                            self.position = self.subscribed.first_lsn
                        self._conn = conn
                        self._take(frames[i + 1:])
                        return
        except BaseException:
            conn.close()
            raise

    def _take(self, frames) -> None:
        for rid, op, status, body in frames:
            if op == P.NOTICE:
                raise notice_error(self._client.address, P.error_of(status, body))
            if rid != self._rid or op != P.EVENTS:
                continue
            if status:
                raise P.error_of(status, body)
            f = P.dec_events(body)
            self._buffer.extend(e for e in f.events if e.lsn >= self.position)
            if not self._buffer:
                self.position = max(self.position, f.next_lsn)
            else:
                self._next_after_buffer = f.next_lsn

    def get(self, timeout: Optional[float] = None) -> Optional[Event]:
        """The next event, or None when `timeout` seconds pass without one (None: wait)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        attempt = 0
        while True:
            if self._buffer:
                e = self._buffer.pop(0)
                self.position = e.lsn + 1
                self.last_lsn = e.lsn
                if not self._buffer:
                    self.position = max(self.position, self._next_after_buffer)
                return e
            if self._closed:
                return None
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                return None
            try:
                if self._conn is None:
                    self._open()
                    attempt = 0
                    continue
                self._take(self._conn.read_frames(left))
            except (ConnectionLost, Timeout) as e:
                if self._closed:
                    return None
                if isinstance(e, TlsError):
                    raise
                if self._conn is not None:
                    self._conn.close()
                    self._conn = None
                    self.reconnects += 1
                wait = self._client.backoff.delay(attempt)
                if deadline is not None:
                    wait = min(wait, max(0.0, deadline - time.monotonic()))
                time.sleep(wait)
                attempt += 1

    def __iter__(self) -> Iterator[Event]:
        while True:
            e = self.get()
            if e is None:
                return
            yield e

    def ack(self, lsn: Optional[int] = None) -> None:
        """ACK the named cursor at lsn (default: the last event handed out)."""
        if not self.name:
            raise ValueError("ack needs a subscription with a name")
        self._client.ack(self.name, self.last_lsn if lsn is None else lsn)

    def close(self) -> None:
        self._closed = True
        if self._conn is not None:
            self._conn.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
