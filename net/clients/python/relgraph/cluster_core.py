"""The cluster client's logic, once for the blocking and the asyncio client (cluster.py).

Why this design: routing, following `moved` and `moving`, finding a group's primary and
completing pages across shards are the same decisions whether the bytes travel through a
thread's socket or an event loop's. So they are written once, as generators that yield what
they need done (``Call``: send one request to an address; ``Sleep``) and receive its result;
each client runs them with a small driver that does the I/O its own way. A ``Call`` answers
``(status, body)`` or raises the driver's ``ConnectionLost`` with ``sent`` telling whether the
request was written (its outcome is then unknown).

What is followed, within ``call_timeout`` (docs/cluster.md, "Clients without NATS"):

- ``moved``: the map is read again, from the refusing shard first, and the command retried on
  the owner it names (at most ``max_redirects`` times). When the map read still gives the
  user to the refusing shard, that shard's own map lags: it is asked again shortly, for up to
  ``moving_wait``.
- ``moving``: asked again with backoff (5 ms doubling to 100 ms) for up to ``moving_wait``.
- a shard served by a replication group: the member whose POSITION says primary; on
  ``read_only`` the member it names (else every member in turn), likewise after a broken
  connection, for up to ``failover_timeout``.
- an unknown outcome is retried only for a retry-safe command (every routed command is).

Pages whose viewer lives on another shard are fetched without the viewer and completed with
one RELATIONS call to the viewer's shard; KNOWN_FOLLOWERS across two shards reads the viewer's
following list and checks it with RELATIONS calls (1,000 ids each) to the target's shard.
Whether the two users share a shard is decided by the map held, and again when a moved answer
brings a map that parts them (a move took one away).

Thread-safety: a ClusterCore may run generators of several threads at once (its map and
primaries change under a lock).
"""

from __future__ import annotations

import struct
import threading
import time
from collections import Counter
from typing import NamedTuple, Optional, Sequence

from . import protocol as P
from .errors import (ConnectionLost, InvalidArgument, Moved, Moving, NotFound, ProtocolError,
                     ReadOnly, RelgraphError, Timeout, TlsError, Unavailable)
from .placement import ShardInfo, ShardMap, parse_shard_map


class Call(NamedTuple):
    address: str
    opcode: int
    body: bytes


class Sleep(NamedTuple):
    seconds: float


# The commands a cluster routes (the command table's "cluster" column): each about the user
# its first field, a u64, names.
ROUTED = frozenset(range(P.FOLLOW, P.REMOVE_USER + 1)) | frozenset(
    range(P.PUBLISH, P.HIDES + 1)) | frozenset(range(P.BLOCK, P.WITHDRAW + 1))
PAGES = frozenset({P.FOLLOWING, P.FANS, P.FRIENDS, P.BLOCKS, P.REQUESTS})
MAX_RELATIONS_IDS = 1000  # the server's RELATIONS batch and page limit
MAX_REPLANS = 10          # how often one call decides again how to ask (each after a new map)
_ENTRY_BYTES = 18         # entry := user:u64 ts:i64 viewer_relation:u8 mutual:u8


class _Replan(Exception):
    """A moved answer showed that the second user a request reads (a page's viewer,
    KNOWN_FOLLOWERS' target) is no longer on its first user's shard: decide again how to ask."""

    def __init__(self, moved: Moved):
        super().__init__(str(moved))
        self.moved = moved


class _Waiter:
    """Paces one call's retries: 5 ms doubling to 100 ms, for up to a limit from the first."""

    def __init__(self):
        self.since = None
        self.step = 0.005

    def wait(self, limit: float, deadline: float):
        now = time.monotonic()
        if self.since is None:
            self.since = now
        if now - self.since >= limit or now + self.step > deadline:
            return False
        yield Sleep(self.step)
        self.step = min(self.step * 2, 0.1)
        return True


class ClusterCore:
    def __init__(self, seeds: Sequence[str], *, call_timeout: float = 30.0,
                 moving_wait: float = 30.0, failover_timeout: float = 10.0,
                 max_redirects: int = 3):
        if not seeds:
            raise ValueError("a cluster client needs at least one seed HOST:PORT")
        self.seeds = list(seeds)
        self.call_timeout, self.moving_wait = call_timeout, moving_wait
        self.failover_timeout, self.max_redirects = failover_timeout, max_redirects
        self.map: Optional[ShardMap] = None
        self.primary = {}          # group shard id -> the member found to be its primary
        self.named = {}            # group shard id -> the member a read_only named: asked first
        self.seen = Counter()      # moved, moving, failover answers met (for tests)
        self._lock = threading.Lock()

    # ---- the map ----
    def refresh_map(self, first: str = ""):
        """Reads the map from `first` (the shard that answered moved), else the seeds and every
        shard known; keeps the newer of it and the map held."""
        tries = ([first] if first else []) + self.seeds
        if self.map is not None:
            for s in self.map.shards:
                tries += s.addresses
        why, tls_only = [], True
        for addr in dict.fromkeys(tries):
            try:
                status, body = yield Call(addr, P.SHARD_MAP, b"")
                if status:
                    raise P.error_of(status, body)
                m = parse_shard_map(P.dec_shard_map(body))
            except (RelgraphError, ValueError) as e:
                why.append(f"{addr}: {e}")
                tls_only = tls_only and isinstance(e, TlsError)
                continue
            with self._lock:
                if self.map is None or m.newer_than(self.map):
                    self.map = m
            return self.map
        # Every address refusing TLS is a configuration to fix, not a cluster to wait for.
        raise (TlsError if why and tls_only else Unavailable)(
            "no shard handed out the shard map (" + "; ".join(why) + ")")

    # ---- where a shard is ----
    def address_of(self, shard: ShardInfo):
        """Shard's one address, or its group's primary (the member POSITION says is one)."""
        if not shard.group:
            return shard.address
        found = self.primary.get(shard.id)
        if found:
            return found
        named = self.named.get(shard.id, "")
        why = []
        for addr in dict.fromkeys(([named] if named else []) + list(shard.members)):
            try:
                status, body = yield Call(addr, P.POSITION, b"")
            except TlsError:
                raise  # every member would refuse the same way
            except (ConnectionLost, Timeout) as e:
                why.append(f"{addr}: {e}")
                continue
            if status or P.dec_position(body).role != 0:
                why.append(f"{addr} is a replica" if not status else f"{addr}: {P.error_of(status, body)}")
                continue
            with self._lock:
                self.primary[shard.id] = addr
            return addr
        self.lose_primary(shard.id)
        raise Unavailable(f"shard {shard.id} (group {shard.group}): no member answers as its "
                          f"primary ({'; '.join(why)})")

    def lose_primary(self, shard_id: int, named: str = "") -> None:
        with self._lock:
            self.primary.pop(shard_id, None)
            if ":" in named:
                self.named[shard_id] = named
            else:
                self.named.pop(shard_id, None)

    def shard_address(self, shard_id: int):
        """The address to send shard `shard_id`'s own commands (INFO, CURSORS...) to."""
        shard = self.map.find(shard_id)
        if shard is None:
            raise NotFound(f"shard {shard_id} is not in the shard map (version {self.map.version})")
        return (yield from self.address_of(shard))

    # ---- one command ----
    def request(self, opcode: int, body: bytes):
        """Routes one request; returns its reply's body or raises its typed error."""
        if opcode not in ROUTED:
            raise InvalidArgument(f"{P.opcode_name(opcode)} is about no user: a cluster cannot "
                                  "route it; ask one shard (client.shard(ID))")
        if len(body) < 8:
            raise InvalidArgument(f"{P.opcode_name(opcode)}: a request without a user")
        deadline = time.monotonic() + self.call_timeout
        if opcode in PAGES:
            return (yield from self._page(opcode, body, deadline))
        if opcode == P.KNOWN_FOLLOWERS:
            return (yield from self._known_followers(body, deadline))
        return (yield from self.routed(struct.unpack_from("<Q", body)[0], opcode, body, deadline))

    def routed(self, user: int, opcode: int, body: bytes, deadline: float, also: int = 0):
        """Sends the request to the owner of user's bucket, following moved, moving and a
        group's primary. also: a second user the request reads, which the shard checks it owns
        as well (0: none); when a new map puts it on another shard, _Replan."""
        moving, failover = _Waiter(), _Waiter()
        redirects = 0
        while True:
            owner = self.map.owner_of(user)
            shard = self.map.find(owner)
            try:
                addr = yield from self.address_of(shard)
            except Unavailable:
                if (yield from failover.wait(self.failover_timeout, deadline)):
                    continue
                raise
            try:
                status, reply = yield Call(addr, opcode, body)
            except ConnectionLost as e:
                # The shard restarted, or the group's primary died (a TlsError: no retry cures).
                if ((getattr(e, "sent", True) and not P.COMMANDS[opcode].retry_safe)
                        or isinstance(e, TlsError)):
                    raise
                self.seen["failover"] += 1
                self.lose_primary(owner)
                if (yield from failover.wait(self.failover_timeout, deadline)):
                    continue
                raise
            if not status:
                return reply
            err = P.error_of(status, reply)
            if isinstance(err, ReadOnly) and shard.group:
                self.seen["failover"] += 1
                self.lose_primary(owner, err.primary)  # a replica now: not carried out
                if (yield from failover.wait(self.failover_timeout, deadline)):
                    continue
            elif (isinstance(err, Unavailable) and shard.group
                  and "outcome is unknown" in err.message and P.COMMANDS[opcode].retry_safe):
                self.lose_primary(owner)  # the primary stepped down before acknowledging
                if (yield from failover.wait(self.failover_timeout, deadline)):
                    continue
            elif isinstance(err, Moved):
                self.seen["moved"] += 1
                yield from self.refresh_map(addr)
                if also and self.map.owner_of(also) != self.map.owner_of(user):
                    raise _Replan(err)
                if self.map.owner_of(user) == owner:
                    # The refusing shard's own map lags the one just read: ask it again shortly.
                    if (yield from moving.wait(self.moving_wait, deadline)):
                        continue
                else:
                    redirects += 1
                    if redirects <= self.max_redirects:
                        continue
            elif isinstance(err, Moving):
                self.seen["moving"] += 1
                if (yield from moving.wait(self.moving_wait, deadline)):
                    continue
            raise err

    def _page(self, opcode: int, body: bytes, deadline: float):
        """A page; a viewer on another shard is left out of the request and its relations come
        from one RELATIONS call to its shard."""
        user = struct.unpack_from("<Q", body)[0]
        at = 14 + (17 if len(body) > 14 and body[14] == 1 else 1)  # past the after cursor
        viewer = 0
        if len(body) == at + 9 and body[at] == 1:
            viewer = struct.unpack_from("<Q", body, at + 1)[0]
        for replans in range(MAX_REPLANS + 1):
            if viewer and self.map.owner_of(viewer) != self.map.owner_of(user):
                break
            try:
                return (yield from self.routed(user, opcode, body, deadline, also=viewer))
            except _Replan as e:
                if replans == MAX_REPLANS:
                    raise e.moved from None
        reply = bytearray((yield from self.routed(user, opcode, body[:at] + b"\x00", deadline)))
        off = 4 if opcode in (P.BLOCKS, P.REQUESTS) else 0
        if len(reply) < off + 2:
            raise ProtocolError("short page reply")
        n = struct.unpack_from("<H", reply, off)[0]
        if n == 0:
            return bytes(reply)
        if len(reply) < off + 2 + n * _ENTRY_BYTES:
            raise ProtocolError("short page reply")
        users = [struct.unpack_from("<Q", reply, off + 2 + i * _ENTRY_BYTES)[0] for i in range(n)]
        rels = P.dec_relations((yield from self.routed(
            viewer, P.RELATIONS, P.enc_relations(viewer, users), deadline)))
        for i, r in enumerate(rels):
            reply[off + 2 + i * _ENTRY_BYTES + 16] = int(r)
        return bytes(reply)

    def _known_followers(self, body: bytes, deadline: float):
        if len(body) != 18:
            raise InvalidArgument("KNOWN_FOLLOWERS: bad request body")
        viewer, target, limit = struct.unpack("<QQH", body)
        for replans in range(MAX_REPLANS + 1):
            if (viewer and target and limit <= MAX_RELATIONS_IDS
                    and self.map.owner_of(viewer) != self.map.owner_of(target)):
                break
            try:  # one shard, or the server's own errors
                return (yield from self.routed(viewer, P.KNOWN_FOLLOWERS, body, deadline,
                                               also=target))
            except _Replan as e:
                if replans == MAX_REPLANS:
                    raise e.moved from None
        followees, after = [], None  # the viewer's, newest first, page by page
        while True:
            page = P.dec_page((yield from self.routed(viewer, P.FOLLOWING, P.enc_page_query(
                viewer, MAX_RELATIONS_IDS, 0, after, None), deadline)))
            followees += [e.user for e in page.entries]
            if page.next is None:
                break
            after = page.next
        total, users = 0, []
        for at in range(0, len(followees), MAX_RELATIONS_IDS):
            part = followees[at:at + MAX_RELATIONS_IDS]
            rels = P.dec_relations((yield from self.routed(  # followed_by: it follows target
                target, P.RELATIONS, P.enc_relations(target, part), deadline)))
            for u, r in zip(part, rels):
                if int(r) & 2:
                    total += 1
                    if len(users) < limit:
                        users.append(u)
        return struct.pack(f"<IH{len(users)}Q", total, len(users), *users)

    # ---- the barrier ----
    def barrier(self, timeout: float = 30.0):
        """Waits until every change logged on any shard is applied wherever it must be, as
        net::ClusterClient::Barrier: every shard's INFO shows its outbox at its last LSN and its
        inbox with nothing pending, twice in a row with nothing logged between. Writers must
        pause meanwhile."""
        deadline = time.monotonic() + timeout
        previous = None
        while True:
            last, quiet, why = {}, True, ""
            for s in self.map.shards:
                try:
                    addr = yield from self.address_of(s)
                    status, body = yield Call(addr, P.INFO, b"")
                    if status:
                        raise P.error_of(status, body)
                    f = P.dec_info(body)
                    if s.group and f.get("role") != 0:
                        raise Unavailable(f"{addr} is no longer its primary")
                except RelgraphError as e:
                    quiet, why = False, f"shard {s.id}: {e}"
                    self.lose_primary(s.id)  # a group's primary may have changed: look again
                    break
                quiet = quiet and f.get("cluster_inbound_pending") == 0 and \
                    f.get("cluster_forwarded_lsn", 0) >= f.get("last_lsn", 0)
                last[s.id] = f.get("last_lsn")
            if quiet and last == previous:
                return
            previous = last if quiet else None
            if time.monotonic() > deadline:
                raise Timeout("barrier: the shards did not settle " + (f"({why})" if why else
                                                                       "(changes still flowing)"))
            yield Sleep(0.005)
