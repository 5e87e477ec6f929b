package io.relgraph.client;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The bodies of docs/protocol.md "Commands": request encoders and reply decoders. Field order is
 * wire order. Pure functions: no sockets; thread-safe.
 */
public final class Codec {
  private Codec() {}

  /** Decodes one reply body; the caller checks that nothing is left over. */
  @FunctionalInterface
  public interface Decoder<T> {
    T decode(WireReader r);
  }

  public static final Decoder<Void> EMPTY = r -> null;
  public static final Decoder<Boolean> BOOL = WireReader::bool;

  // ---- requests -------------------------------------------------------------------------------

  public static byte[] empty() {
    return new byte[0];
  }

  public static byte[] one(long id) {
    return new WireWriter(8).u64(id).toBytes();
  }

  public static byte[] pair(long a, long b) {
    return new WireWriter(16).u64(a).u64(b).toBytes();
  }

  public static byte[] hello(int version, String token) {
    return new WireWriter().u16(version).str(token).toBytes();
  }

  /** FOLLOW: {@code follower followee ts:opt<i64>}; ts null: the server's clock. */
  public static byte[] follow(long follower, long followee, Long ts) {
    return new WireWriter(25).u64(follower).u64(followee).optU64(ts).toBytes();
  }

  public static byte[] relations(long a, List<Long> others) {
    WireWriter w = new WireWriter(10 + 8 * others.size()).u64(a).u16(others.size());
    for (long o : others) w.u64(o);
    return w.toBytes();
  }

  public static byte[] pageQuery(PageQuery q) {
    WireWriter w = new WireWriter(48).u64(q.user()).u16(q.limit()).u32(q.offset());
    if (q.after() == null) {
      w.u8(0);
    } else {
      w.u8(1).i64(q.after().ts()).u64(q.after().user());
    }
    return w.optU64(q.viewer() == 0 ? null : q.viewer()).toBytes();
  }

  public static byte[] knownFollowers(long viewer, long target, int limit) {
    return new WireWriter(18).u64(viewer).u64(target).u16(limit).toBytes();
  }

  public static byte[] publish(long author, long post, int kind, Long ts) {
    return new WireWriter(26).u64(author).u64(post).u8(kind).optU64(ts).toBytes();
  }

  public static byte[] feedQuery(FeedQuery q) {
    WireWriter w = new WireWriter(36).u64(q.user()).u16(q.limit());
    if (q.after() == null) {
      w.u8(0);
    } else {
      w.u8(1).i64(q.after().ts()).u64(q.after().post());
    }
    return w.u64(q.kinds()).toBytes();
  }

  public static byte[] userFlag(long user, boolean flag) {
    return new WireWriter(9).u64(user).bool(flag).toBytes();
  }

  public static byte[] subscribe(SubscribeOptions o) {
    return new WireWriter(16 + o.name().length()).u8(o.from().code).u64(o.lsn()).u32(o.kinds())
        .str(o.name()).toBytes();
  }

  public static byte[] ack(String name, long lsn) {
    return new WireWriter().str(name).u64(lsn).toBytes();
  }

  public static byte[] name(String name) {
    return new WireWriter().str(name).toBytes();
  }

  public static byte[] replicate(ReplicateRequest q) {
    return new WireWriter().u64(q.fromLsn()).u64(q.epoch()).u64(q.epochId()).str(q.name()).toBytes();
  }

  public static byte[] replicaAck(String name, long applied, long durable) {
    return new WireWriter().str(name).u64(applied).u64(durable).toBytes();
  }

  public static byte[] promote(boolean force) {
    return new WireWriter(1).bool(force).toBytes();
  }

  public static byte[] replicaOf(String primary, boolean resync) {
    return new WireWriter().str(primary).bool(resync).toBytes();
  }

  public static byte[] slowlog(int count, boolean reset) {
    return new WireWriter(3).u16(count).bool(reset).toBytes();
  }

  // ---- replies --------------------------------------------------------------------------------

  /** HELLO's reply for the version the client sent (version 2 added server_version). */
  public static Decoder<Hello> hello(int version) {
    return r -> new Hello(r.u16(), r.u32(), r.str(), version >= 2 ? r.str() : "");
  }

  public static final Decoder<Info> INFO = r -> {
    int n = r.u16();
    Map<String, Long> fields = new LinkedHashMap<>();
    for (int i = 0; i < n; i++) fields.put(r.str(), r.u64());
    return new Info(fields);
  };

  public static final Decoder<SnapshotInfo> SNAPSHOT =
      r -> new SnapshotInfo(r.u64(), r.u64(), r.u64(), r.i64());

  public static final Decoder<FollowResult> FOLLOW =
      r -> new FollowResult(r.bool(), Relation.of(r.u8()), r.i64());

  public static final Decoder<Relation> RELATION = r -> Relation.of(r.u8());

  public static final Decoder<List<Relation>> RELATIONS = r -> {
    int n = r.u16();
    List<Relation> out = new ArrayList<>(n);
    for (int i = 0; i < n; i++) out.add(Relation.of(r.u8()));
    return out;
  };

  private static Cursor cursor(WireReader r) {
    return r.present() ? new Cursor(r.i64(), r.u64()) : null;
  }

  private static Page page(WireReader r, long total) {
    int n = r.u16();
    List<PageEntry> entries = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      entries.add(new PageEntry(r.u64(), r.i64(), Relation.of(r.u8()), r.bool()));
    }
    return new Page(total, entries, cursor(r));
  }

  /** FOLLOWING, FANS, FRIENDS: {@code page}. */
  public static final Decoder<Page> PAGE = r -> page(r, -1);

  /** BLOCKS, REQUESTS: {@code total:u32} then a page. */
  public static final Decoder<Page> COUNTED_PAGE = r -> page(r, r.u32());

  public static final Decoder<Counts> COUNTS = r -> new Counts(r.u32(), r.u32(), r.u32());

  private static List<Long> ids(WireReader r) {
    int n = r.u16();
    List<Long> out = new ArrayList<>(n);
    for (int i = 0; i < n; i++) out.add(r.u64());
    return out;
  }

  public static final Decoder<KnownFollowers> KNOWN_FOLLOWERS =
      r -> new KnownFollowers(r.u32(), ids(r));

  public static final Decoder<Long> U64 = WireReader::u64;

  public static final Decoder<List<Long>> IDS = Codec::ids;

  public static final Decoder<PublishResult> PUBLISH =
      r -> new PublishResult(r.i64(), r.bool(), r.u64());

  public static final Decoder<FeedPage> FEED_PAGE = r -> {
    int n = r.u16();
    List<Post> entries = new ArrayList<>(n);
    for (int i = 0; i < n; i++) entries.add(new Post(r.u64(), r.u64(), r.i64(), r.u8()));
    PostCursor next = r.present() ? new PostCursor(r.i64(), r.u64()) : null;
    return new FeedPage(entries, next);
  };

  public static final Decoder<BlockResult> BLOCK = r -> new BlockResult(r.bool(), r.i64(), r.u8());

  public static final Decoder<SetPrivateResult> SET_PRIVATE =
      r -> new SetPrivateResult(r.bool(), r.u64(), r.i64());

  public static final Decoder<SubscribeReply> SUBSCRIBE = r -> new SubscribeReply(r.u64(), r.u64());

  public static final Decoder<Events> EVENTS = r -> {
    long next = r.u64();
    int n = r.u16();
    List<Event> events = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      events.add(new Event(r.u64(), r.u8(), r.i64(), r.u64(), r.u64(), r.bool(), r.u8(), r.u64()));
    }
    return new Events(next, events);
  };

  public static final Decoder<List<CursorInfo>> CURSORS = r -> {
    int n = r.u16();
    List<CursorInfo> out = new ArrayList<>(n);
    for (int i = 0; i < n; i++) out.add(new CursorInfo(r.str(), r.u64(), r.i64(), r.bool()));
    return out;
  };

  public static final Decoder<FetchSnapshotReply> FETCH_SNAPSHOT =
      r -> new FetchSnapshotReply(r.u64(), r.u64());

  public static final Decoder<ReplicateReply> REPLICATE =
      r -> new ReplicateReply(r.u64(), r.u64(), r.u64());

  public static final Decoder<Records> RECORDS = r -> {
    long first = r.u64(), newest = r.u64(), sentUs = r.i64();
    int n = r.u16();
    List<WalRecord> records = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      int type = r.u8();
      records.add(new WalRecord(type, r.bytes(r.u16())));
    }
    return new Records(first, newest, sentUs, records);
  };

  public static final Decoder<Position> POSITION =
      r -> new Position(r.u8(), r.u64(), r.u64(), r.u64());

  public static final Decoder<String> SHARD_MAP = WireReader::str;

  public static final Decoder<Slowlog> SLOWLOG = r -> {
    long threshold = r.i64(), maxLen = r.u32();
    int n = r.u16();
    List<SlowlogEntry> entries = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      entries.add(new SlowlogEntry(r.u64(), r.i64(), r.u64(), r.str(), r.str(), r.str()));
    }
    return new Slowlog(threshold, maxLen, entries);
  };

  public static final Decoder<PromoteReply> PROMOTE =
      r -> new PromoteReply(r.u64(), r.u64(), r.u64());

  public static final Decoder<Replication> REPLICATION = r -> {
    int role = r.u8();
    String primary = r.str(), state = r.str(), message = r.str();
    long epoch = r.u64(), epochId = r.u64(), applied = r.u64(), primaryLsn = r.u64(), lag = r.u64();
    long sync = r.u32();
    int n = r.u16();
    List<ReplicaInfo> replicas = new ArrayList<>(n);
    for (int i = 0; i < n; i++) replicas.add(new ReplicaInfo(r.str(), r.u64(), r.u64(), r.u64()));
    return new Replication(role, primary, state, message, epoch, epochId, applied, primaryLsn, lag,
        sync, replicas);
  };

  /** {@code error_body := detail:i64 message:string}, as the exception it stands for. */
  public static RelgraphException error(int status, WireReader r, Opcode op) {
    try {
      long detail = r.i64();
      String message = r.str();
      return new RelgraphException(status, detail, message, op);
    } catch (RelgraphException e) {
      return new RelgraphException(status, 0, "(unreadable error body)", op);
    }
  }
}
