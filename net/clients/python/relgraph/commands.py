"""The typed calls, written once for every client shape.

``Commands`` turns each call into (opcode, body, decoder) and hands it to ``self._call``: the
blocking Client returns the decoded value, the asyncio client returns an awaitable of it, a
Pipeline queues it. Arguments are checked here only where the wire cannot carry them (a list
longer than 65535); every rule of the server (id 0, limits, time range) is the server's to
enforce, so its typed error comes back unchanged.
"""

from __future__ import annotations

from typing import Optional, Sequence

from . import protocol as P
from .types import Cursor, PostCursor


class Commands:
    """Every request of docs/protocol.md a client sends on an ordinary connection. The stream
    openers (SUBSCRIBE, FETCH_SNAPSHOT, REPLICATE) take a connection of their own and are the
    clients' subscribe(), fetch_snapshot() and replicate()."""

    def _call(self, opcode: int, body: bytes, decode):  # pragma: no cover - each shape has one
        raise NotImplementedError

    # ---- session and admin ----
    def ping(self):
        """PING: None."""
        return self._call(P.PING, b"", P.dec_empty)

    def info(self):
        """INFO: {name: value} in the server's order (docs/protocol.md lists the names)."""
        return self._call(P.INFO, b"", P.dec_info)

    def snapshot(self):
        """SNAPSHOT: writes a snapshot online; SnapshotInfo."""
        return self._call(P.SNAPSHOT, b"", P.dec_snapshot)

    # ---- the graph ----
    def follow(self, follower: int, followee: int, ts: Optional[int] = None):
        """FOLLOW: FollowResult(created, relation, followed_at). ts None: the server's clock."""
        return self._call(P.FOLLOW, P.enc_follow(follower, followee, ts), P.dec_follow)

    def unfollow(self, follower: int, followee: int):
        """UNFOLLOW: whether an edge was removed."""
        return self._call(P.UNFOLLOW, P.enc_pair(follower, followee), P.dec_bool)

    def relation(self, a: int, b: int):
        """RELATION: Relation(a, b)."""
        return self._call(P.RELATION, P.enc_pair(a, b), P.dec_relation)

    def relations(self, a: int, others: Sequence[int]):
        """RELATIONS: [Relation(a, o) for o in others] (1..1000 ids)."""
        return self._call(P.RELATIONS, P.enc_relations(a, others), P.dec_relations)

    def following(self, user: int, limit: int = 20, offset: int = 0,
                  after: Optional[Cursor] = None, viewer: Optional[int] = None):
        """FOLLOWING: a Page, newest first; page.next is the cursor of the next page."""
        return self._call(P.FOLLOWING, P.enc_page_query(user, limit, offset, after, viewer),
                          P.dec_page)

    def fans(self, user: int, limit: int = 20, offset: int = 0,
             after: Optional[Cursor] = None, viewer: Optional[int] = None):
        """FANS: a Page of the users who follow `user`."""
        return self._call(P.FANS, P.enc_page_query(user, limit, offset, after, viewer),
                          P.dec_page)

    def friends(self, user: int, limit: int = 20, offset: int = 0,
                after: Optional[Cursor] = None, viewer: Optional[int] = None):
        """FRIENDS: a Page of mutual follows (ts: when the pair became mutual)."""
        return self._call(P.FRIENDS, P.enc_page_query(user, limit, offset, after, viewer),
                          P.dec_page)

    def counts(self, user: int):
        """COUNTS: Counts(following, fans, friends)."""
        return self._call(P.COUNTS, P.enc_id(user), P.dec_counts)

    def known_followers(self, viewer: int, target: int, limit: int = 3):
        """KNOWN_FOLLOWERS: KnownFollowers(total, users) whom viewer follows that follow
        target."""
        return self._call(P.KNOWN_FOLLOWERS, P.enc_known_followers(viewer, target, limit),
                          P.dec_known_followers)

    def remove_user(self, user: int):
        """REMOVE_USER: the number of edges removed."""
        return self._call(P.REMOVE_USER, P.enc_id(user), P.dec_u64)

    # ---- the feed ----
    def publish(self, author: int, post: int, kind: int = 0, ts: Optional[int] = None):
        """PUBLISH: PublishResult(ts, retained, evicted)."""
        return self._call(P.PUBLISH, P.enc_publish(author, post, kind, ts), P.dec_publish)

    def delete_post(self, author: int, post: int):
        """DELETE_POST: None (NotFound when the author holds no such post)."""
        return self._call(P.DELETE_POST, P.enc_pair(author, post), P.dec_empty)

    def timeline(self, user: int, limit: int = 20, after: Optional[PostCursor] = None,
                 kinds: int = 0):
        """TIMELINE: a FeedPage of the reader's home timeline; kinds: bit k keeps kind k,
        0 every kind."""
        return self._call(P.TIMELINE, P.enc_feed_query(user, limit, after, kinds),
                          P.dec_feed_page)

    def user_posts(self, user: int, limit: int = 20, after: Optional[PostCursor] = None,
                   kinds: int = 0):
        """USER_POSTS: a FeedPage of the author's own posts."""
        return self._call(P.USER_POSTS, P.enc_feed_query(user, limit, after, kinds),
                          P.dec_feed_page)

    def mute(self, user: int, other: int):
        """MUTE: whether the set changed."""
        return self._call(P.MUTE, P.enc_pair(user, other), P.dec_bool)

    def unmute(self, user: int, other: int):
        return self._call(P.UNMUTE, P.enc_pair(user, other), P.dec_bool)

    def hide(self, author: int, from_user: int):
        """HIDE: author's posts stop reaching from_user; whether the set changed."""
        return self._call(P.HIDE, P.enc_pair(author, from_user), P.dec_bool)

    def unhide(self, author: int, from_user: int):
        return self._call(P.UNHIDE, P.enc_pair(author, from_user), P.dec_bool)

    def mutes(self, user: int):
        """MUTES: the muted users, in id order."""
        return self._call(P.MUTES, P.enc_id(user), P.dec_users)

    def hides(self, author: int):
        """HIDES: the users the author hides from, in id order."""
        return self._call(P.HIDES, P.enc_id(author), P.dec_users)

    # ---- blocks, private accounts, follow requests ----
    def block(self, user: int, blocked: int):
        """BLOCK: BlockResult(created, ts, removed)."""
        return self._call(P.BLOCK, P.enc_pair(user, blocked), P.dec_block)

    def unblock(self, user: int, other: int):
        return self._call(P.UNBLOCK, P.enc_pair(user, other), P.dec_bool)

    def blocks(self, user: int, limit: int = 20, offset: int = 0,
               after: Optional[Cursor] = None, viewer: Optional[int] = None):
        """BLOCKS: a Page (with .total) of whom `user` blocks."""
        return self._call(P.BLOCKS, P.enc_page_query(user, limit, offset, after, viewer),
                          P.dec_total_page)

    def set_private(self, user: int, private: bool):
        """SET_PRIVATE: SetPrivateResult(changed, approved, ts)."""
        return self._call(P.SET_PRIVATE, P.enc_set_private(user, private), P.dec_set_private)

    def is_private(self, user: int):
        return self._call(P.IS_PRIVATE, P.enc_id(user), P.dec_bool)

    def requests(self, user: int, limit: int = 20, offset: int = 0,
                 after: Optional[Cursor] = None, viewer: Optional[int] = None):
        """REQUESTS: a Page (with .total) of who asks to follow `user`."""
        return self._call(P.REQUESTS, P.enc_page_query(user, limit, offset, after, viewer),
                          P.dec_total_page)

    def approve(self, user: int, other: int):
        """APPROVE: `user` accepts `other`'s request; the new edge as FollowResult."""
        return self._call(P.APPROVE, P.enc_pair(user, other), P.dec_follow)

    def reject(self, user: int, other: int):
        return self._call(P.REJECT, P.enc_pair(user, other), P.dec_bool)

    def withdraw(self, user: int, other: int):
        """WITHDRAW: `user` takes back its request to `other`."""
        return self._call(P.WITHDRAW, P.enc_pair(user, other), P.dec_bool)

    # ---- named cursors ----
    def ack(self, name: str, lsn: int):
        """ACK: the consumer `name` has handled every change up to lsn."""
        return self._call(P.ACK, P.enc_ack(name, lsn), P.dec_empty)

    def cursors(self):
        """CURSORS: [CursorInfo] in name order."""
        return self._call(P.CURSORS, b"", P.dec_cursors)

    def delete_cursor(self, name: str):
        return self._call(P.DELETE_CURSOR, P.enc_name(name), P.dec_empty)

    # ---- replication ----
    def replica_ack(self, name: str, applied_lsn: int, durable_lsn: int):
        """REPLICA_ACK: a replica's position (relgraphd --replica-of sends it)."""
        return self._call(P.REPLICA_ACK, P.enc_replica_ack(name, applied_lsn, durable_lsn),
                          P.dec_empty)

    def promote(self, force: bool = False):
        """PROMOTE: PromoteResult. Never retried: each starts a new epoch."""
        return self._call(P.PROMOTE, P.enc_bool(force), P.dec_promote)

    def replication(self):
        """REPLICATION: ReplicationStatus."""
        return self._call(P.REPLICATION, b"", P.dec_replication)

    def position(self):
        """POSITION: Position (role, epoch, applied and durable LSN)."""
        return self._call(P.POSITION, b"", P.dec_position)

    def shard_map(self) -> str:
        """SHARD_MAP: the shard map a cluster's shard holds, in its versioned text form."""
        return self._call(P.SHARD_MAP, b"", P.dec_shard_map)

    def slowlog(self, count: int = 0, reset: bool = False):
        """SLOWLOG: Slowlog, the node's slow-command log, its newest `count` entries (0: all),
        newest first; with `reset` the server empties it after the read."""
        return self._call(P.SLOWLOG, P.enc_slowlog(count, reset), P.dec_slowlog)

    def replica_of(self, primary: str, resync: bool = False):
        """REPLICA_OF: follow `primary` (HOST:PORT) from now on."""
        return self._call(P.REPLICA_OF, P.enc_replica_of(primary, resync), P.dec_empty)
