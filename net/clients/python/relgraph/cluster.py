"""Cluster mode: ClusterClient (blocking, safe to share across threads) and AsyncClusterClient
(asyncio), each the typed calls of Commands routed to the shard of the command's user.

Both run ClusterCore's generators (cluster_core.py, where the routing rules are written and
explained), doing its I/O their own way: the blocking client keeps one Pool per shard
address, the asyncio client one AsyncConnection per address.

    c = relgraph.ClusterClient(["127.0.0.1:7701", "127.0.0.1:7702"])
    c.follow(1, 2)                       # on user 1's shard
    c.fans(2, viewer=1)                  # the viewer's relations from its own shard
    c.shard(2).info()                    # commands about no user: ask one shard

Thread-safety: a ClusterClient may be shared by threads; an AsyncClusterClient belongs to
its event loop.
"""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Dict, Sequence

from . import protocol as P
from .aio import AsyncClient, AsyncConnection
from .client import Client, Pool, parse_host_port
from .cluster_core import Call, ClusterCore, Sleep
from .commands import Commands
from .errors import ConnectionLost, RelgraphError, Timeout
from .placement import ShardMap
from .tls import TlsArg, tls_config


def _drive(gen, perform):
    """Runs a ClusterCore generator to its end with `perform(action)` doing each action."""
    value, exc = None, None
    while True:
        try:
            action = gen.throw(exc) if exc is not None else gen.send(value)
        except StopIteration as stop:
            return stop.value
        value, exc = None, None
        try:
            value = perform(action)
        except RelgraphError as e:
            exc = e


class ClusterClient(Commands):
    """A client of a relgraph cluster, from seed addresses (any shards or group members).

    Every command about a user goes to its shard (docs/cluster.md, "Clients without NATS");
    a command about no user (ping, info, cursors, ...) raises InvalidArgument: use shard(id).
    call_timeout bounds one call with its retries; moving_wait, how long a moving bucket is
    waited for; failover_timeout, how long a group shard may lack a primary. tls: as
    Client's, for every shard's connections (each checked against the address it connects
    to, unless a server_name is given).
    """

    def __init__(self, seeds: Sequence[str], *, token: str = "", tls: TlsArg = None,
                 pool_size: int = 2, timeout: float = 30.0, connect_timeout: float = 5.0,
                 call_timeout: float = 30.0, moving_wait: float = 30.0,
                 failover_timeout: float = 10.0, max_redirects: int = 3):
        self.token, self.pool_size = token, pool_size
        self.tls = tls_config(tls)
        self.timeout, self.connect_timeout = timeout, connect_timeout
        self.core = ClusterCore(seeds, call_timeout=call_timeout, moving_wait=moving_wait,
                                failover_timeout=failover_timeout, max_redirects=max_redirects)
        self._pools: Dict[str, Pool] = {}
        self._lock = threading.Lock()
        try:
            _drive(self.core.refresh_map(), self._perform)
        except BaseException:
            self.close()
            raise

    @property
    def map(self) -> ShardMap:
        return self.core.map

    def refresh_map(self) -> ShardMap:
        return _drive(self.core.refresh_map(), self._perform)

    def barrier(self, timeout: float = 30.0) -> None:
        """Waits until every change is applied on every shard it concerns (writers paused)."""
        _drive(self.core.barrier(timeout), self._perform)

    def shard(self, shard_id: int) -> Client:
        """A Client of shard `shard_id` (a group's primary, found now) for the commands about
        no user. The caller closes it."""
        host, port = parse_host_port(_drive(self.core.shard_address(shard_id), self._perform))
        return Client(host, port, token=self.token, tls=self.tls, pool_size=1,
                      timeout=self.timeout, connect_timeout=self.connect_timeout)

    def close(self) -> None:
        with self._lock:
            pools, self._pools = self._pools, {}
        for p in pools.values():
            p.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _pool(self, addr: str) -> Pool:
        with self._lock:
            p = self._pools.get(addr)
            if p is None:
                host, port = parse_host_port(addr)
                p = self._pools[addr] = Pool(host, port, self.token, self.pool_size,
                                             self.connect_timeout, self.timeout, self.tls)
            return p

    def _perform(self, action):
        if isinstance(action, Sleep):
            time.sleep(action.seconds)
            return None
        try:
            conn = self._pool(action.address).get()
        except (ConnectionLost, Timeout) as e:
            lost = e if isinstance(e, ConnectionLost) else ConnectionLost(str(e))
            lost.sent = False
            raise lost
        try:
            return conn.request_many(((action.opcode, action.body),))[0]
        except ConnectionLost as e:
            e.sent = True
            raise

    def _call(self, opcode: int, body: bytes, decode):
        return decode(_drive(self.core.request(opcode, body), self._perform))

    # The page iterators of Client, over the routed calls.
    _iter_pages, _iter_posts = Client._iter_pages, Client._iter_posts
    iter_following, iter_fans, iter_friends = (
        Client.iter_following, Client.iter_fans, Client.iter_friends)
    iter_blocks, iter_requests = Client.iter_blocks, Client.iter_requests
    iter_timeline, iter_user_posts = Client.iter_timeline, Client.iter_user_posts


async def _drive_async(gen, perform):
    value, exc = None, None
    while True:
        try:
            action = gen.throw(exc) if exc is not None else gen.send(value)
        except StopIteration as stop:
            return stop.value
        value, exc = None, None
        try:
            value = await perform(action)
        except RelgraphError as e:
            exc = e


class AsyncClusterClient(Commands):
    """The asyncio twin of ClusterClient: ``c = await AsyncClusterClient.connect(seeds)``, then
    ``await c.follow(1, 2)``; same arguments and results."""

    def __init__(self, seeds: Sequence[str], *, token: str = "", tls: TlsArg = None,
                 timeout: float = 30.0, connect_timeout: float = 5.0,
                 call_timeout: float = 30.0, moving_wait: float = 30.0,
                 failover_timeout: float = 10.0, max_redirects: int = 3):
        self.token, self.timeout, self.connect_timeout = token, timeout, connect_timeout
        self.tls = tls_config(tls)
        self.core = ClusterCore(seeds, call_timeout=call_timeout, moving_wait=moving_wait,
                                failover_timeout=failover_timeout, max_redirects=max_redirects)
        self._conns: Dict[str, AsyncConnection] = {}
        self._opening: Dict[str, asyncio.Future] = {}

    @classmethod
    async def connect(cls, seeds: Sequence[str], **kw) -> "AsyncClusterClient":
        c = cls(seeds, **kw)
        try:
            await c.refresh_map()
        except BaseException:
            await c.close()
            raise
        return c

    @property
    def map(self) -> ShardMap:
        return self.core.map

    async def refresh_map(self) -> ShardMap:
        return await _drive_async(self.core.refresh_map(), self._perform)

    async def barrier(self, timeout: float = 30.0) -> None:
        await _drive_async(self.core.barrier(timeout), self._perform)

    async def shard(self, shard_id: int) -> AsyncClient:
        """An AsyncClient of shard `shard_id` (a group's primary) for the commands about no
        user. The caller closes it."""
        host, port = parse_host_port(
            await _drive_async(self.core.shard_address(shard_id), self._perform))
        return AsyncClient(host, port, token=self.token, tls=self.tls, pool_size=1,
                           timeout=self.timeout, connect_timeout=self.connect_timeout)

    async def close(self) -> None:
        conns, self._conns = self._conns, {}
        for c in conns.values():
            c.close()

    async def __aenter__(self):
        if self.core.map is None:
            await self.refresh_map()
        return self

    async def __aexit__(self, *exc):
        await self.close()

    async def _conn(self, addr: str) -> AsyncConnection:
        c = self._conns.get(addr)
        if c is not None and c.healthy:
            return c
        fut = self._opening.get(addr)
        if fut is None:  # one connect per address, however many tasks wait
            host, port = parse_host_port(addr)
            fut = self._opening[addr] = asyncio.ensure_future(AsyncConnection.open(
                host, port, self.token, self.connect_timeout, self.timeout, tls=self.tls))
        try:
            c = await asyncio.shield(fut)
        finally:
            if self._opening.get(addr) is fut and fut.done():
                del self._opening[addr]
        self._conns[addr] = c
        return c

    async def _perform(self, action):
        if isinstance(action, Sleep):
            await asyncio.sleep(action.seconds)
            return None
        try:
            conn = await self._conn(action.address)
        except (ConnectionLost, Timeout) as e:
            lost = e if isinstance(e, ConnectionLost) else ConnectionLost(str(e))
            lost.sent = False
            raise lost
        try:
            return (await conn.request_many(((action.opcode, action.body),)))[0]
        except ConnectionLost as e:
            e.sent = True
            raise

    async def _call(self, opcode: int, body: bytes, decode):
        return decode(await _drive_async(self.core.request(opcode, body), self._perform))

    # The async page iterators of AsyncClient, over the routed calls.
    _iter_pages = AsyncClient._iter_pages
    iter_following, iter_fans, iter_friends = (
        AsyncClient.iter_following, AsyncClient.iter_fans, AsyncClient.iter_friends)
    iter_blocks, iter_requests = AsyncClient.iter_blocks, AsyncClient.iter_requests
    iter_timeline, iter_user_posts = AsyncClient.iter_timeline, AsyncClient.iter_user_posts
