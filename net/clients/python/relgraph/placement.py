"""Placement: which shard of a relgraph cluster serves a user (docs/cluster.md, "Placement"),
and the shard map's text form as SHARD_MAP hands it out (docs/cluster.md, "Clients without
NATS"; net/cluster/placement.h has the grammar)::

    relgraph-cluster-map 1
    version <n>
    relgraph-shard-map 1
    buckets <count>
    generation <g>                                        optional; absent: 1
    shard <id> <host:port>                                a shard of one node
    shard <id> <host:port>,<host:port>... group <name>    a shard served by a replication group
    owner <first>-<last> <id>                             buckets first..last belong to shard id
    move <first>-<last> <from> <to> <phase> <id> [<flipped_ms>]   a move in progress

A user's bucket is XXH3-64 (seed 0) of its id's 8 little-endian bytes, modulo the bucket
count. Only XXH3's short-input path (4 to 8 bytes) is needed, written out here.

Thread-safety: pure functions; a ShardMap is not changed after parsing.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import List, Optional

_M64 = (1 << 64) - 1
# Bytes 8..23 of XXH3's default secret, as two little-endian words.
_SECRET8, _SECRET16 = 0x1CAD21F72C81017C, 0xDB979083E96DD4DE


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (64 - r))) & _M64


def xxh3_short(data: bytes) -> int:
    """XXH3-64, seed 0, of 4 to 8 bytes (xxhash's XXH3_len_4to8_64b)."""
    if not 4 <= len(data) <= 8:
        raise ValueError("xxh3_short takes 4 to 8 bytes")
    lo = int.from_bytes(data[:4], "little")
    hi = int.from_bytes(data[-4:], "little")
    h = ((hi + (lo << 32)) & _M64) ^ (_SECRET8 ^ _SECRET16)
    h ^= _rotl(h, 49) ^ _rotl(h, 24)  # rrmxmx
    h = (h * 0x9FB21C651E98DF25) & _M64
    h ^= (h >> 35) + len(data)
    h = (h * 0x9FB21C651E98DF25) & _M64
    return h ^ (h >> 28)


def bucket_hash(user: int) -> int:
    """XXH3-64 (seed 0) of the user id's 8 little-endian bytes."""
    return xxh3_short(struct.pack("<Q", user))


def bucket_of(user: int, buckets: int) -> int:
    return bucket_hash(user) % buckets


@dataclass(frozen=True)
class ShardInfo:
    id: int
    address: str                 # host:port; a group's first member
    group: str = ""              # a replication group's name; "" for a shard of one node
    members: tuple = ()          # a group's members' host:port, address first

    @property
    def addresses(self) -> tuple:
        return self.members or (self.address,)


@dataclass(frozen=True)
class BucketMove:
    first: int
    last: int
    source: int
    target: int
    phase: str                   # prepare, flip, copy
    id: int
    flipped_ms: int = 0


@dataclass
class ShardMap:
    version: int = 0             # the key-value revision it was read at
    generation: int = 1
    buckets: int = 0
    shards: List[ShardInfo] = field(default_factory=list)
    owner: List[int] = field(default_factory=list)   # owner[bucket] = shard id
    move: Optional[BucketMove] = None

    def owner_of(self, user: int) -> int:
        return self.owner[bucket_of(user, self.buckets)]

    def find(self, shard_id: int) -> Optional[ShardInfo]:
        return next((s for s in self.shards if s.id == shard_id), None)

    def newer_than(self, other: "ShardMap") -> bool:
        """Maps are ordered by (generation, version)."""
        return (self.generation, self.version) > (other.generation, other.version)


def parse_shard_map(text: str) -> ShardMap:
    """SHARD_MAP's versioned text form (or the bare map, version 0); ValueError naming the
    line that breaks the format."""
    lines = text.split("\n")
    version = 0
    if lines[0] == "relgraph-cluster-map 1":
        if len(lines) < 2 or not lines[1].startswith("version ") or not lines[1][8:].isdigit():
            raise ValueError("shard map: expected 'version N' on its second line")
        version, lines = int(lines[1][8:]), lines[2:]
    if not lines or lines[0] != "relgraph-shard-map 1":
        raise ValueError("shard map: expected 'relgraph-shard-map 1' first")
    m = ShardMap(version=version)
    covered: List[bool] = []

    def num(s: str, top: int) -> int:
        if not s.isdigit() or int(s) > top:
            raise ValueError
        return int(s)

    def rng(s: str):
        a, _, b = s.partition("-")
        first, last = num(a, m.buckets - 1), num(b or a, m.buckets - 1)
        if first > last:
            raise ValueError
        return first, last

    for i, line in enumerate(lines[1:], start=2):
        w = line.split()
        if not w:
            continue
        try:
            if w[0] == "buckets" and len(w) == 2 and m.buckets == 0:
                m.buckets = num(w[1], 65536)
                if m.buckets == 0:
                    raise ValueError
                m.owner, covered = [0] * m.buckets, [False] * m.buckets
            elif w[0] == "generation" and len(w) == 2 and num(w[1], _M64) >= 2:
                m.generation = int(w[1])
            elif w[0] == "shard" and (len(w) == 3 or (len(w) == 5 and w[3] == "group")):
                sid = num(w[1], 65535)
                if sid == 0 or m.find(sid) is not None:
                    raise ValueError
                if len(w) == 5:
                    members = tuple(w[2].split(","))
                    m.shards.append(ShardInfo(sid, members[0], w[4], members))
                elif "," in w[2]:
                    raise ValueError
                else:
                    m.shards.append(ShardInfo(sid, w[2]))
            elif w[0] == "owner" and len(w) == 3 and m.buckets:
                first, last = rng(w[1])
                sid = num(w[2], 65535)
                for b in range(first, last + 1):
                    if covered[b]:
                        raise ValueError
                    covered[b], m.owner[b] = True, sid
            elif (w[0] == "move" and len(w) in (6, 7) and m.buckets and m.move is None
                  and w[4] in ("prepare", "flip", "copy")):
                first, last = rng(w[1])
                m.move = BucketMove(first, last, num(w[2], 65535), num(w[3], 65535), w[4],
                                    num(w[5], _M64), num(w[6], _M64) if len(w) == 7 else 0)
            else:
                raise ValueError
        except ValueError:
            raise ValueError(f"shard map: line {i} {line!r} breaks the format") from None
    if not m.buckets:
        raise ValueError("shard map: no buckets line")
    for b, ok in enumerate(covered):
        if not ok:
            raise ValueError(f"shard map: bucket {b} has no owner")
        if m.find(m.owner[b]) is None:
            raise ValueError(f"shard map: bucket {b}'s owner {m.owner[b]} is not a shard")
    return m
