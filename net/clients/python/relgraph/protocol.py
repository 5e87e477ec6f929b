"""The wire protocol's bytes (docs/protocol.md): frames, field types, every request body and
every reply body. Pure functions and one incremental frame decoder; no sockets.

    frame   := length:u32  request_id:u32  opcode:u8  flags_or_status:u8  body
    length  := 6 + |body|
    error_body := detail:i64 message:string

Field types: u8 u16 u32 u64 little-endian; i64 two's complement; bool a u8 0 or 1; string
len:u16 + bytes; opt<T> u8 0 | u8 1 + T; list<T> count:u16 + values.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from .errors import ProtocolError, error_for
from .types import (BlockResult, Counts, CursorInfo, Event, EventsFrame, FeedPage,
                    FetchSnapshotResult, FollowResult, Hello, KnownFollowers, Page, PageEntry,
                    Post, PostCursor, PromoteResult, PublishResult, Record, RecordsFrame,
                    Position, Relation, ReplicaInfo, ReplicateResult, ReplicationStatus,
                    SetPrivateResult, Slowlog, SlowlogEntry,
                    SnapshotInfo, SubscribeResult, Cursor)

PROTOCOL_VERSION = 2
DEFAULT_PORT = 7707
DEFAULT_MAX_FRAME = 1 << 20
HEADER = struct.Struct("<IIBB")
HEADER_SIZE = HEADER.size  # 10
MAX_TIME_MS = (1 << 42) - 1
MAX_LIST = 65535

# ---- opcodes ------------------------------------------------------------------------------
NOTICE = 0x00
HELLO = 0x01
PING = 0x02
INFO = 0x03
SNAPSHOT = 0x04
FOLLOW = 0x10
UNFOLLOW = 0x11
RELATION = 0x12
RELATIONS = 0x13
FOLLOWING = 0x14
FANS = 0x15
FRIENDS = 0x16
COUNTS = 0x17
KNOWN_FOLLOWERS = 0x18
REMOVE_USER = 0x19
PUBLISH = 0x20
DELETE_POST = 0x21
TIMELINE = 0x22
USER_POSTS = 0x23
MUTE = 0x24
UNMUTE = 0x25
HIDE = 0x26
UNHIDE = 0x27
MUTES = 0x28
HIDES = 0x29
SUBSCRIBE = 0x30
EVENTS = 0x31
FETCH_SNAPSHOT = 0x32
SNAPSHOT_DATA = 0x33
ACK = 0x34
CURSORS = 0x35
DELETE_CURSOR = 0x36
REPLICATE = 0x37
RECORDS = 0x38
REPLICA_ACK = 0x39
PROMOTE = 0x3A
REPLICATION = 0x3B
REPLICA_OF = 0x3C
POSITION = 0x3D
SHARD_MAP = 0x3E
SLOWLOG = 0x3F
BLOCK = 0x40
UNBLOCK = 0x41
BLOCKS = 0x42
SET_PRIVATE = 0x43
IS_PRIVATE = 0x44
REQUESTS = 0x45
APPROVE = 0x46
REJECT = 0x47
WITHDRAW = 0x48


@dataclass(frozen=True)
class Command:
    """One row of the command table (net/protocol/command_table.h): whether a client sends it,
    whether it only reads (a replica answers it), whether it may be sent again after an
    unknown outcome (RetrySafe)."""
    opcode: int
    name: str
    request: bool = True      # False: the server pushes it
    reads_only: bool = False
    retry_safe: bool = True


def _rows() -> Dict[int, Command]:
    reads = {PING, INFO, RELATION, RELATIONS, FOLLOWING, FANS, FRIENDS, COUNTS, KNOWN_FOLLOWERS,
             TIMELINE, USER_POSTS, MUTES, HIDES, BLOCKS, IS_PRIVATE, REQUESTS, CURSORS,
             REPLICATION, POSITION, SHARD_MAP}
    not_retry_safe = {HELLO, PROMOTE, SUBSCRIBE, REPLICATE, FETCH_SNAPSHOT}
    pushes = {NOTICE, EVENTS, SNAPSHOT_DATA, RECORDS}
    rows = {}
    for name, value in globals().items():
        if name.isupper() and isinstance(value, int) and name not in (
                "PROTOCOL_VERSION", "DEFAULT_PORT", "DEFAULT_MAX_FRAME", "HEADER_SIZE",
                "MAX_TIME_MS", "MAX_LIST"):
            rows[value] = Command(value, name, value not in pushes, value in reads,
                                  value not in not_retry_safe and value not in pushes)
    return rows


COMMANDS: Dict[int, Command] = _rows()


def opcode_name(opcode: int) -> str:
    row = COMMANDS.get(opcode)
    return row.name if row else f"opcode_0x{opcode:02x}"


# ---- frames -------------------------------------------------------------------------------
def encode_frame(request_id: int, opcode: int, body: bytes = b"") -> bytes:
    return HEADER.pack(6 + len(body), request_id, opcode, 0) + body


class FrameDecoder:
    """Incremental: feed() bytes as they come, then take whole frames from frames(). Each frame
    is (request_id, opcode, status, body). A frame over max_frame or with length < 6 raises
    ProtocolError (the stream cannot be trusted past it)."""

    __slots__ = ("_buf", "_pos", "max_frame")

    def __init__(self, max_frame: int = DEFAULT_MAX_FRAME):
        self._buf = bytearray()
        self._pos = 0
        self.max_frame = max_frame

    def feed(self, data: bytes) -> None:
        if self._pos:
            del self._buf[:self._pos]
            self._pos = 0
        self._buf += data

    def frames(self) -> List[Tuple[int, int, int, bytes]]:
        out = []
        buf, pos, end = self._buf, self._pos, len(self._buf)
        unpack = HEADER.unpack_from
        while end - pos >= HEADER_SIZE:
            length, rid, op, status = unpack(buf, pos)
            if length < 6 or length + 4 > self.max_frame:
                raise ProtocolError(f"bad frame length {length} (max frame {self.max_frame})")
            stop = pos + 4 + length
            if stop > end:
                break
            out.append((rid, op, status, bytes(buf[pos + HEADER_SIZE:stop])))
            pos = stop
        self._pos = pos
        return out


# ---- field readers ------------------------------------------------------------------------
_U16 = struct.Struct("<H")
_U32 = struct.Struct("<I")
_U64 = struct.Struct("<Q")
_I64 = struct.Struct("<q")


class Reader:
    """Reads fields from a body in order; done() checks no byte is left over."""

    __slots__ = ("b", "p", "what")

    def __init__(self, body: bytes, what: str = "reply"):
        self.b = body
        self.p = 0
        self.what = what

    def _need(self, n: int) -> int:
        p = self.p
        if p + n > len(self.b):
            raise ProtocolError(f"{self.what}: body ends early")
        self.p = p + n
        return p

    def u8(self) -> int:
        return self.b[self._need(1)]

    def u16(self) -> int:
        return _U16.unpack_from(self.b, self._need(2))[0]

    def u32(self) -> int:
        return _U32.unpack_from(self.b, self._need(4))[0]

    def u64(self) -> int:
        return _U64.unpack_from(self.b, self._need(8))[0]

    def i64(self) -> int:
        return _I64.unpack_from(self.b, self._need(8))[0]

    def bool(self) -> bool:
        v = self.u8()
        if v > 1:
            raise ProtocolError(f"{self.what}: bool {v}")
        return v == 1

    def raw_string(self) -> bytes:
        n = self.u16()
        p = self._need(n)
        return bytes(self.b[p:p + n])

    def string(self) -> str:
        return self.raw_string().decode("utf-8", "surrogateescape")

    def present(self) -> bool:  # opt<T>'s tag
        return self.bool()

    def rest(self) -> bytes:
        p = self.p
        self.p = len(self.b)
        return bytes(self.b[p:])

    def done(self):
        if self.p != len(self.b):
            raise ProtocolError(f"{self.what}: {len(self.b) - self.p} trailing bytes")


def decode_error(body: bytes) -> Tuple[int, str]:
    """error_body -> (detail, message)."""
    r = Reader(body, "error body")
    detail = r.i64()
    message = r.string()
    r.done()
    return detail, message


def error_of(status: int, body: bytes):
    """The typed exception of an error reply."""
    try:
        detail, message = decode_error(body)
    except ProtocolError:
        detail, message = 0, ""
    return error_for(status, message, detail)


# ---- field writers ------------------------------------------------------------------------
def _check_u64(v: int, what: str) -> int:
    if not 0 <= v < 1 << 64:
        raise ValueError(f"{what} {v} is not a u64")
    return v


def _string(s) -> bytes:
    raw = s.encode("utf-8", "surrogateescape") if isinstance(s, str) else bytes(s)
    if len(raw) > MAX_LIST:
        raise ValueError("a string holds at most 65535 bytes")
    return _U16.pack(len(raw)) + raw


def _opt_i64(v: Optional[int]) -> bytes:
    return b"\x00" if v is None else b"\x01" + _I64.pack(v)


_PAIR = struct.Struct("<QQ")
_PAIR_OPT = struct.Struct("<QQBq")
_ID = _U64


def enc_empty() -> bytes:
    return b""


def enc_hello(version: int, token) -> bytes:
    return _U16.pack(version) + _string(token)


def enc_pair(a: int, b: int) -> bytes:
    return _PAIR.pack(a, b)


def enc_id(a: int) -> bytes:
    return _ID.pack(a)


def enc_follow(follower: int, followee: int, ts: Optional[int] = None) -> bytes:
    if ts is None:
        return _PAIR.pack(follower, followee) + b"\x00"
    return _PAIR_OPT.pack(follower, followee, 1, ts)


def enc_relations(a: int, others: Sequence[int]) -> bytes:
    n = len(others)
    if n > MAX_LIST:
        raise ValueError("relations: at most 65535 ids fit in one request")
    return struct.pack(f"<QH{n}Q", a, n, *others)


_PAGE_HEAD = struct.Struct("<QHI")
_CURSOR = struct.Struct("<qQ")


def enc_page_query(user: int, limit: int, offset: int, after: Optional[Cursor],
                   viewer: Optional[int]) -> bytes:
    out = _PAGE_HEAD.pack(user, limit, offset)
    out += b"\x00" if after is None else b"\x01" + _CURSOR.pack(after.ts, after.user)
    out += b"\x00" if viewer is None else b"\x01" + _U64.pack(viewer)
    return out


def enc_known_followers(viewer: int, target: int, limit: int) -> bytes:
    return struct.pack("<QQH", viewer, target, limit)


def enc_publish(author: int, post: int, kind: int, ts: Optional[int]) -> bytes:
    return struct.pack("<QQB", author, post, kind) + _opt_i64(ts)


def enc_feed_query(user: int, limit: int, after: Optional[PostCursor], kinds: int) -> bytes:
    out = struct.pack("<QH", user, limit)
    out += b"\x00" if after is None else b"\x01" + _CURSOR.pack(after.ts, after.post)
    return out + _U64.pack(kinds)


def enc_subscribe(from_: int, lsn: int, kinds: int, name: str) -> bytes:
    return struct.pack("<BQI", from_, lsn, kinds) + _string(name)


def enc_ack(name: str, lsn: int) -> bytes:
    return _string(name) + _U64.pack(lsn)


def enc_name(name: str) -> bytes:
    return _string(name)


def enc_replicate(from_lsn: int, epoch: int, epoch_id: int, name: str) -> bytes:
    return struct.pack("<QQQ", from_lsn, epoch, epoch_id) + _string(name)


def enc_replica_ack(name: str, applied_lsn: int, durable_lsn: int) -> bytes:
    return _string(name) + struct.pack("<QQ", applied_lsn, durable_lsn)


def enc_bool(v: bool) -> bytes:
    return b"\x01" if v else b"\x00"


def enc_set_private(user: int, private: bool) -> bytes:
    return _U64.pack(user) + enc_bool(private)


def enc_replica_of(primary: str, resync: bool) -> bytes:
    return _string(primary) + enc_bool(resync)


def enc_slowlog(count: int, reset: bool) -> bytes:
    return struct.pack("<H", count) + enc_bool(reset)


# ---- reply decoders -----------------------------------------------------------------------
def _exact(body: bytes, n: int, what: str) -> None:
    if len(body) != n:
        raise ProtocolError(f"{what} reply: {len(body)} bytes, expected {n}")


def dec_empty(body: bytes) -> None:
    _exact(body, 0, "empty")
    return None


def dec_hello(body: bytes) -> Hello:
    r = Reader(body, "HELLO reply")
    version = r.u16()
    max_frame = r.u32()
    server = r.string()
    server_version = r.string() if version >= 2 else ""
    r.done()
    return Hello(version, max_frame, server, server_version)


def dec_info(body: bytes) -> Dict[str, int]:
    r = Reader(body, "INFO reply")
    out = {}
    for _ in range(r.u16()):
        name = r.string()
        out[name] = r.u64()
    r.done()
    return out


def dec_snapshot(body: bytes) -> SnapshotInfo:
    _exact(body, 32, "SNAPSHOT")
    return SnapshotInfo(*struct.unpack("<QQQq", body))


_FOLLOW_REPLY = struct.Struct("<BBq")


def _bool(v: int) -> bool:
    if v > 1:
        raise ProtocolError(f"bool {v}")
    return v == 1


# Every relation value, made once: Relation(v) builds a flag value on each call.
_REL = tuple(Relation(v) for v in range(64))


def _rel(v: int) -> Relation:
    return _REL[v] if v < 64 else Relation(v)


def dec_follow(body: bytes) -> FollowResult:
    _exact(body, 10, "FOLLOW")
    created, rel, at = _FOLLOW_REPLY.unpack(body)
    return FollowResult(_bool(created), _rel(rel), at)


def dec_bool(body: bytes) -> bool:
    _exact(body, 1, "bool")
    return _bool(body[0])


def dec_relation(body: bytes) -> Relation:
    _exact(body, 1, "RELATION")
    return _rel(body[0])


def dec_relations(body: bytes) -> List[Relation]:
    if len(body) < 2 or len(body) != 2 + _U16.unpack_from(body)[0]:
        raise ProtocolError("RELATIONS reply: bad length")
    return [_rel(v) for v in body[2:]]


_ENTRY = struct.Struct("<QqBB")


def _page(r: Reader, total: Optional[int]) -> Page:
    n = r.u16()
    p = r._need(n * _ENTRY.size)
    entries = [PageEntry(u, ts, _rel(rel), _bool(m))
               for u, ts, rel, m in _ENTRY.iter_unpack(r.b[p:p + n * _ENTRY.size])]
    nxt = None
    if r.present():
        ts = r.i64()
        nxt = Cursor(ts, r.u64())
    r.done()
    return Page(entries, nxt, total)


def dec_page(body: bytes) -> Page:
    return _page(Reader(body, "page reply"), None)


def dec_total_page(body: bytes) -> Page:
    r = Reader(body, "page reply")
    total = r.u32()
    return _page(r, total)


def dec_counts(body: bytes) -> Counts:
    _exact(body, 12, "COUNTS")
    return Counts(*struct.unpack("<III", body))


def dec_known_followers(body: bytes) -> KnownFollowers:
    r = Reader(body, "KNOWN_FOLLOWERS reply")
    total = r.u32()
    n = r.u16()
    p = r._need(8 * n)
    users = list(struct.unpack_from(f"<{n}Q", body, p))
    r.done()
    return KnownFollowers(total, users)


def dec_u64(body: bytes) -> int:
    _exact(body, 8, "u64")
    return _U64.unpack(body)[0]


def dec_publish(body: bytes) -> PublishResult:
    _exact(body, 17, "PUBLISH")
    ts, retained, evicted = struct.unpack("<qBQ", body)
    return PublishResult(ts, _bool(retained), evicted)


_POST = struct.Struct("<QQqB")


def dec_feed_page(body: bytes) -> FeedPage:
    r = Reader(body, "feed page reply")
    n = r.u16()
    p = r._need(n * _POST.size)
    posts = [Post(*t) for t in _POST.iter_unpack(body[p:p + n * _POST.size])]
    nxt = None
    if r.present():
        ts = r.i64()
        nxt = PostCursor(ts, r.u64())
    r.done()
    return FeedPage(posts, nxt)


def dec_users(body: bytes) -> List[int]:
    r = Reader(body, "users reply")
    n = r.u16()
    p = r._need(8 * n)
    r.done()
    return list(struct.unpack_from(f"<{n}Q", body, p))


def dec_subscribe(body: bytes) -> SubscribeResult:
    _exact(body, 16, "SUBSCRIBE")
    return SubscribeResult(*struct.unpack("<QQ", body))


_EVENT = struct.Struct("<QBqQQBBQ")  # 43 bytes


def dec_events(body: bytes) -> EventsFrame:
    r = Reader(body, "EVENTS frame")
    next_lsn = r.u64()
    n = r.u16()
    p = r._need(n * _EVENT.size)
    r.done()
    events = []
    for lsn, kind, ts, a, b, friends, detail, evicted in _EVENT.iter_unpack(
            body[p:p + n * _EVENT.size]):
        events.append(Event(lsn, kind, ts, a, b, _bool(friends), detail, evicted))
    return EventsFrame(next_lsn, events)


def dec_cursors(body: bytes) -> List[CursorInfo]:
    r = Reader(body, "CURSORS reply")
    out = []
    for _ in range(r.u16()):
        name = r.string()
        out.append(CursorInfo(name, r.u64(), r.i64(), r.bool()))
    r.done()
    return out


def dec_fetch_snapshot(body: bytes) -> FetchSnapshotResult:
    _exact(body, 16, "FETCH_SNAPSHOT")
    return FetchSnapshotResult(*struct.unpack("<QQ", body))


def dec_snapshot_data(body: bytes) -> Tuple[int, bytes]:
    if len(body) < 8:
        raise ProtocolError("SNAPSHOT_DATA frame: body ends early")
    return _U64.unpack_from(body)[0], body[8:]


def dec_replicate(body: bytes) -> ReplicateResult:
    _exact(body, 24, "REPLICATE")
    return ReplicateResult(*struct.unpack("<QQQ", body))


def dec_records(body: bytes) -> RecordsFrame:
    r = Reader(body, "RECORDS frame")
    first, newest, sent = r.u64(), r.u64(), r.i64()
    records = []
    for _ in range(r.u16()):
        t = r.u8()
        records.append(Record(t, r.raw_string()))
    r.done()
    return RecordsFrame(first, newest, sent, records)


def dec_promote(body: bytes) -> PromoteResult:
    _exact(body, 24, "PROMOTE")
    return PromoteResult(*struct.unpack("<QQQ", body))


def dec_replication(body: bytes) -> ReplicationStatus:
    r = Reader(body, "REPLICATION reply")
    role = r.u8()
    primary, state, message = r.string(), r.string(), r.string()
    epoch, epoch_id, applied, primary_lsn, lag = r.u64(), r.u64(), r.u64(), r.u64(), r.u64()
    sync = r.u32()
    replicas = []
    for _ in range(r.u16()):
        name = r.string()
        replicas.append(ReplicaInfo(name, r.u64(), r.u64(), r.u64()))
    r.done()
    return ReplicationStatus(role, primary, state, message, epoch, epoch_id, applied,
                             primary_lsn, lag, sync, replicas)


def dec_position(body: bytes) -> Position:
    _exact(body, 25, "POSITION")
    return Position(*struct.unpack("<BQQQ", body))


def dec_shard_map(body: bytes) -> str:
    r = Reader(body, "SHARD_MAP reply")
    text = r.string()
    r.done()
    return text


def dec_slowlog(body: bytes) -> Slowlog:
    r = Reader(body, "SLOWLOG reply")
    threshold_us, max_len = r.i64(), r.u32()
    entries = []
    for _ in range(r.u16()):
        id_, start_ms, duration_us = r.u64(), r.i64(), r.u64()
        command, args, client = r.string(), r.string(), r.string()
        entries.append(SlowlogEntry(id_, start_ms, duration_us, command, args, client))
    r.done()
    return Slowlog(threshold_us, max_len, entries)


def dec_block(body: bytes) -> BlockResult:
    _exact(body, 10, "BLOCK")
    created, ts, removed = struct.unpack("<BqB", body)
    return BlockResult(_bool(created), ts, removed)


def dec_set_private(body: bytes) -> SetPrivateResult:
    _exact(body, 17, "SET_PRIVATE")
    changed, approved, ts = struct.unpack("<BQq", body)
    return SetPrivateResult(_bool(changed), approved, ts)


Decoder = Callable[[bytes], object]
