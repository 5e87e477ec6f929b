"""The typed results of relgraph's commands (docs/protocol.md, "Commands").

Ids are ints holding u64 values, times ints of milliseconds since the Unix epoch. Every class
is a plain dataclass: compare, print and pickle them as any value.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import List, Optional


class Relation(enum.IntFlag):
    """relation(a, b) as a set of bits: FOLLOWING (a follows b), FOLLOWED_BY, so MUTUAL for
    both; REQUESTED (a asked to follow b), REQUESTED_BY, BLOCKING, BLOCKED_BY. NONE is 0."""

    NONE = 0
    FOLLOWING = 1
    FOLLOWED_BY = 2
    MUTUAL = 3
    REQUESTED = 4
    REQUESTED_BY = 8
    BLOCKING = 16
    BLOCKED_BY = 32

    @property
    def label(self) -> str:
        """The protocol's name of the value, as relgraph-cli prints it: "mutual",
        "following+requested_by", "none"."""
        v = int(self)
        parts = []
        if v & 3 == 3:
            parts.append("mutual")
            v &= ~3
        for bit, name in ((1, "following"), (2, "followed_by"), (4, "requested"),
                          (8, "requested_by"), (16, "blocking"), (32, "blocked_by")):
            if v & bit:
                parts.append(name)
        return "+".join(parts) or "none"


class SubscribeFrom(enum.IntEnum):
    LSN = 0     # from a given LSN
    NOW = 1     # the first change after the SUBSCRIBE
    CURSOR = 2  # a named cursor's acknowledged LSN + 1


class EventKind(enum.IntEnum):
    FOLLOW = 1
    UNFOLLOW = 2
    REMOVE_USER = 3
    PUBLISH = 4
    DELETE_POST = 5
    MUTE = 6
    UNMUTE = 7
    HIDE = 8
    UNHIDE = 9
    BLOCK = 12
    UNBLOCK = 13
    SET_PRIVATE = 14
    REQUEST = 15
    APPROVE = 16
    REJECT = 17
    WITHDRAW = 18


@dataclass(slots=True)
class Hello:
    version: int
    max_frame: int
    server: str
    server_version: str = ""


@dataclass(slots=True)
class FollowResult:
    created: bool
    relation: Relation
    followed_at: int


@dataclass(slots=True)
class Cursor:
    """A position in a page of users, newest first by (ts, user)."""
    ts: int
    user: int


@dataclass(slots=True)
class PageEntry:
    user: int
    ts: int
    viewer_relation: Relation
    mutual: bool


@dataclass(slots=True)
class Page:
    entries: List[PageEntry]
    next: Optional[Cursor]
    total: Optional[int] = None  # BLOCKS and REQUESTS: the whole list's length


@dataclass(slots=True)
class Counts:
    following: int
    fans: int
    friends: int


@dataclass(slots=True)
class KnownFollowers:
    total: int
    users: List[int]


@dataclass(slots=True)
class PublishResult:
    ts: int
    retained: bool
    evicted: int


@dataclass(slots=True)
class PostCursor:
    ts: int
    post: int


@dataclass(slots=True)
class Post:
    post: int
    author: int
    ts: int
    kind: int


@dataclass(slots=True)
class FeedPage:
    entries: List[Post]
    next: Optional[PostCursor]


@dataclass(slots=True)
class SnapshotInfo:
    lsn: int
    edges: int
    file_bytes: int
    created_ms: int


@dataclass(slots=True)
class BlockResult:
    created: bool
    ts: int
    removed: int  # bit 0: user -> blocked went, bit 1: blocked -> user went, bit 2: a request

    @property
    def unfollowed(self) -> bool:
        return bool(self.removed & 1)

    @property
    def lost_follower(self) -> bool:
        return bool(self.removed & 2)

    @property
    def dropped_request(self) -> bool:
        return bool(self.removed & 4)


@dataclass(slots=True)
class SetPrivateResult:
    changed: bool
    approved: int
    ts: int


@dataclass(slots=True)
class SubscribeResult:
    first_lsn: int
    newest_lsn: int


@dataclass(slots=True)
class Event:
    """One change of the stream (docs/protocol.md, "The change stream")."""
    lsn: int
    kind: int
    ts: int
    a: int
    b: int
    friends: bool
    detail: int
    evicted: int


@dataclass(slots=True)
class EventsFrame:
    next_lsn: int
    events: List[Event]


@dataclass(slots=True)
class SlowlogEntry:
    """One command the slow-command log kept (docs/protocol.md, "Slow-command log")."""
    id: int
    start_ms: int      # ms since the Unix epoch
    duration_us: int
    command: str       # "follow"
    args: str          # its fields as text, at most 128 bytes
    client: str        # "HOST:PORT"


@dataclass(slots=True)
class Slowlog:
    """SLOWLOG's reply: the threshold in force (-1: off), the log's length, entries newest
    first."""
    threshold_us: int
    max_len: int
    entries: List[SlowlogEntry]


@dataclass(slots=True)
class CursorInfo:
    name: str
    acked_lsn: int
    acked_ms: int
    expired: bool


@dataclass(slots=True)
class FetchSnapshotResult:
    lsn: int
    file_bytes: int


@dataclass(slots=True)
class ReplicateResult:
    epoch: int
    epoch_id: int
    newest_lsn: int


@dataclass(slots=True)
class Record:
    type: int
    payload: bytes


@dataclass(slots=True)
class RecordsFrame:
    first_lsn: int
    newest_lsn: int
    sent_us: int
    records: List[Record]


@dataclass(slots=True)
class PromoteResult:
    epoch: int
    epoch_id: int
    first_lsn: int


@dataclass(slots=True)
class ReplicaInfo:
    name: str
    applied_lsn: int
    durable_lsn: int
    ack_age_ms: int


@dataclass(slots=True)
class Position:
    """POSITION: where a node's history stands (reading one's own writes from a replica)."""
    role: int  # 0 primary, 1 replica
    epoch: int
    applied_lsn: int  # requests executed after POSITION on its connection see this far
    durable_lsn: int


@dataclass(slots=True)
class ReplicationStatus:
    role: int  # 0 primary, 1 replica
    primary: str
    state: str
    message: str
    epoch: int
    epoch_id: int
    applied_lsn: int
    primary_lsn: int
    lag_ms: int
    sync_replicas: int
    replicas: List[ReplicaInfo] = field(default_factory=list)
