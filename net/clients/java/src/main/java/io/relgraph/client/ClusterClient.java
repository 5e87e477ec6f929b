package io.relgraph.client;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;

/**
 * A client of a relgraph cluster (docs/cluster.md), without NATS: it reads the shard map from a
 * shard with SHARD_MAP and sends each command about a user to the shard owning the user's
 * bucket ({@link Xxh3#bucketOf}), as net/cluster/cluster_client.h does:
 *
 * <ul>
 *   <li>{@code moved} (the map changed): the map is read again, from the refusing shard first,
 *       and the command sent to the owner it names (at most {@code maxRedirects} owners). When
 *       that map gives the user to the very shard that refused (its own map lags), it is asked
 *       again shortly, for up to {@code movingWait};</li>
 *   <li>{@code moving} (the owner is taking the bucket over): asked again after 5 ms, doubling
 *       to 100 ms, for up to {@code movingWait};</li>
 *   <li>a shard served by a replication group: its member whose POSITION says primary; a
 *       {@code read_only} refusal goes to the primary it names, and a broken connection or a
 *       primary gone makes the client ask the members again, for up to {@code failoverTimeout};</li>
 *   <li>a command whose outcome became unknown (its connection broke after it was written) is
 *       sent again only when it is retry-safe ({@link Opcode#retrySafe()}).</li>
 * </ul>
 *
 * A page (following, fans, friends, blocks, requests) whose viewer lives on another shard is
 * fetched without the viewer and completed with one RELATIONS call to the viewer's shard;
 * known-followers of a viewer and a target on two shards is the viewer's following list checked
 * with RELATIONS calls to the target's shard. Commands about no user (INFO, PING, CURSORS, ...)
 * go to a shard named with {@link #shard(int)}; {@link #call} refuses them.
 *
 * <p>Thread-safety: every method may be called from any thread; futures complete on a shard
 * connection's reader thread or on the client's own threads (a callback must not block).
 */
public final class ClusterClient implements GraphCommands, FeedCommands, AccessCommands,
    AutoCloseable {
  /**
   * What the client followed since it was made: moved answers (to another owner), waits on a
   * moving bucket, maps read, a group's members asked for its primary (POSITION rounds), and
   * calls sent on after their group member refused (read_only) or was lost (a broken
   * connection, no member primary).
   */
  public record Stats(long movedFollowed, long movingWaits, long mapReads, long primaryLookups,
      long primaryChanges) {}

  private static final ScheduledExecutorService TIMER = Executors.newSingleThreadScheduledExecutor(r -> {
    Thread t = new Thread(r, "relgraph-cluster-timeouts");
    t.setDaemon(true);
    return t;
  });
  private static final long MOVING_PAUSE_MIN = TimeUnit.MILLISECONDS.toNanos(5);
  private static final long MOVING_PAUSE_MAX = TimeUnit.MILLISECONDS.toNanos(100);

  private final ClusterOptions options;
  private final AtomicReference<ShardMap> map = new AtomicReference<>();
  private final ConcurrentHashMap<String, RelgraphClient> nodes = new ConcurrentHashMap<>();
  // A group's member last found (or named by a read_only) to be its primary.
  private final ConcurrentHashMap<Integer, String> primaryAt = new ConcurrentHashMap<>();
  // A look-up of a group's primary under way: the calls waiting for it share it.
  private final ConcurrentHashMap<Integer, CompletableFuture<Void>> lookups = new ConcurrentHashMap<>();
  private final ExecutorService executor = Executors.newCachedThreadPool(r -> {
    Thread t = new Thread(r, "relgraph-cluster");
    t.setDaemon(true);
    return t;
  });
  private final AtomicLong moved = new AtomicLong(), movingWaits = new AtomicLong(),
      mapReads = new AtomicLong(), primaryLookups = new AtomicLong(), primaryChanges = new AtomicLong();
  private volatile boolean closed;

  private ClusterClient(ClusterOptions options) {
    this.options = options;
  }

  /** Reads the map from the first seed that answers SHARD_MAP; throws when none does. */
  public static ClusterClient connect(ClusterOptions options) {
    ClusterClient c = new ClusterClient(options);
    try {
      c.readMap(0, Opcode.SHARD_MAP);
    } catch (RuntimeException e) {
      c.close();
      throw e;
    }
    return c;
  }

  public static ClusterClient connect(String... seeds) {
    return connect(ClusterOptions.seeds(seeds));
  }

  /** The newest map the client has read. */
  public ShardMap map() {
    return map.get();
  }

  public Stats stats() {
    return new Stats(moved.get(), movingWaits.get(), mapReads.get(), primaryLookups.get(),
        primaryChanges.get());
  }

  public ClusterOptions options() {
    return options;
  }

  /** Reads the map again (from the seeds, then the shards), keeping it when it is newer. */
  public ShardMap refreshMap() {
    readMap(0, Opcode.SHARD_MAP);
    return map.get();
  }

  /**
   * The client of shard {@code id} (its primary's, for a group: looked up now if unknown), for
   * the commands about no user: {@code cluster.shard(2).info()}. Throws INVALID_ARGUMENT for a
   * shard the map does not list, UNAVAILABLE when no member of its group is primary.
   */
  public RelgraphClient shard(int id) {
    ShardMap.Shard s = map.get().find(id);
    if (s == null) {
      throw new RelgraphException(ErrorCode.INVALID_ARGUMENT.code, 0,
          "shard " + id + " is not in the shard map (" + map.get() + ")", null);
    }
    if (!s.grouped()) return node(s.address());
    String p = primaryAt.get(id);
    if (p == null) {
      findPrimary(s, null);
      p = primaryAt.get(id);
    }
    return node(p);
  }

  /**
   * A command about a user, sent to its shard. A command about no user fails with
   * INVALID_ARGUMENT (ask a shard: {@link #shard(int)}), as does a page or KNOWN_FOLLOWERS whose
   * second user lives on another shard (the typed calls complete those).
   */
  @Override
  public <T> CompletableFuture<T> call(Opcode op, byte[] body, Codec.Decoder<T> decoder) {
    if (!Routing.routed(op)) {
      return invalid(op, op + " is about no user: ask a shard (ClusterClient.shard(id))");
    }
    long user, second;
    try {
      user = Routing.user(body);
      second = Routing.viewer(op, body);
    } catch (RelgraphException e) {
      return CompletableFuture.failedFuture(e);
    }
    return route(op, user, m -> second == 0 || m.ownerOf(second) == m.ownerOf(user) ? body : null,
        decoder).exceptionallyCompose(e -> cause(e) instanceof Replan
            ? invalid(op, "user " + Long.toUnsignedString(second) + " is on another shard than user "
                + Long.toUnsignedString(user) + ": use the typed call, which completes it")
            : CompletableFuture.failedFuture(cause(e)));
  }

  // ---- pages and known followers across shards -------------------------------------------------

  @Override
  public CompletableFuture<Page> followingAsync(PageQuery q) {
    return page(Opcode.FOLLOWING, q, Codec.PAGE);
  }

  @Override
  public CompletableFuture<Page> fansAsync(PageQuery q) {
    return page(Opcode.FANS, q, Codec.PAGE);
  }

  @Override
  public CompletableFuture<Page> friendsAsync(PageQuery q) {
    return page(Opcode.FRIENDS, q, Codec.PAGE);
  }

  @Override
  public CompletableFuture<Page> blocksAsync(PageQuery q) {
    return page(Opcode.BLOCKS, q, Codec.COUNTED_PAGE);
  }

  @Override
  public CompletableFuture<Page> requestsAsync(PageQuery q) {
    return page(Opcode.REQUESTS, q, Codec.COUNTED_PAGE);
  }

  /** A page; with a viewer on another shard, its relation to each entry comes from its shard. */
  private CompletableFuture<Page> page(Opcode op, PageQuery q, Codec.Decoder<Page> decoder) {
    AtomicBoolean split = new AtomicBoolean(); // as the map of the attempt answered decided
    return route(op, q.user(), m -> {
      split.set(q.viewer() != 0 && m.ownerOf(q.viewer()) != m.ownerOf(q.user()));
      return Codec.pageQuery(split.get() ? q.withViewer(0) : q);
    }, decoder).thenCompose(p -> {
      if (!split.get() || p.entries().isEmpty()) return CompletableFuture.completedFuture(p);
      List<Long> users = new ArrayList<>(p.entries().size());
      for (PageEntry e : p.entries()) users.add(e.user());
      return relationsAsync(q.viewer(), users).thenApply(rel -> {
        List<PageEntry> out = new ArrayList<>(users.size());
        for (int i = 0; i < users.size(); i++) {
          PageEntry e = p.entries().get(i);
          out.add(new PageEntry(e.user(), e.ts(), rel.get(i), e.mutual()));
        }
        return new Page(p.total(), out, p.next());
      });
    });
  }

  /**
   * Whom the viewer follows that follow the target, newest first by the viewer's follow. With
   * both on one shard, that shard answers; else the viewer's following list (its shard) is
   * checked with RELATIONS calls to the target's shard, 1,000 ids each.
   */
  @Override
  public CompletableFuture<KnownFollowers> knownFollowersAsync(long viewer, long target, int limit) {
    if (viewer == 0 || target == 0) {
      return CompletableFuture.failedFuture(new RelgraphException(ErrorCode.INVALID_USER_ID.code, 0,
          "known_followers: user id 0 (viewer or target)", Opcode.KNOWN_FOLLOWERS));
    }
    if (limit < 0 || limit > 1000) {
      return invalid(Opcode.KNOWN_FOLLOWERS, "known_followers: limit " + limit + " is over 1000");
    }
    byte[] body = Codec.knownFollowers(viewer, target, limit);
    return route(Opcode.KNOWN_FOLLOWERS, viewer,
        m -> m.ownerOf(viewer) == m.ownerOf(target) ? body : null, Codec.KNOWN_FOLLOWERS)
        .exceptionallyCompose(e -> cause(e) instanceof Replan
            ? knownAcross(viewer, target, limit)
            : CompletableFuture.failedFuture(cause(e)));
  }

  private CompletableFuture<KnownFollowers> knownAcross(long viewer, long target, int limit) {
    return followees(PageQuery.of(viewer, 1000), new ArrayList<>()).thenCompose(ids -> {
      List<CompletableFuture<List<Relation>>> parts = new ArrayList<>();
      for (int at = 0; at < ids.size(); at += 1000) {
        parts.add(relationsAsync(target, ids.subList(at, Math.min(ids.size(), at + 1000))));
      }
      return CompletableFuture.allOf(parts.toArray(new CompletableFuture<?>[0])).thenApply(done -> {
        long total = 0;
        List<Long> users = new ArrayList<>();
        int i = 0;
        for (CompletableFuture<List<Relation>> part : parts) {
          for (Relation r : part.join()) {
            long id = ids.get(i++);
            if (!r.has(Relation.FOLLOWED_BY)) continue; // the followee does not follow the target
            total++;
            if (users.size() < limit) users.add(id);
          }
        }
        return new KnownFollowers(total, users);
      });
    });
  }

  /** Every followee of q.user, newest first, page by page. */
  private CompletableFuture<List<Long>> followees(PageQuery q, List<Long> acc) {
    return followingAsync(q).thenCompose(p -> {
      for (PageEntry e : p.entries()) acc.add(e.user());
      return p.next() == null ? CompletableFuture.completedFuture(acc)
          : followees(q.withAfter(p.next()), acc);
    });
  }

  // ---- the barrier -------------------------------------------------------------------------------

  /**
   * Waits until every change logged on any shard is applied wherever it must be (as
   * ClusterClient::Barrier): each shard's INFO, polled, shows its outbox past its last LSN and
   * its inbox with nothing pending, twice in a row with nothing logged between. Writers must
   * pause meanwhile. Throws TIMEOUT after {@code timeout}.
   */
  public void barrier(Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    Map<Integer, Long> previous = null;
    while (true) {
      Map<Integer, Long> last = new HashMap<>();
      boolean quiet = true;
      String why = "the shards did not settle (changes still flowing)";
      try {
        for (ShardMap.Shard s : map.get().shards()) {
          Info f = shard(s.id()).info();
          if (s.grouped() && f.get("role") != 0) {
            primaryAt.remove(s.id()); // stepped down since
            throw new RelgraphException(ErrorCode.UNAVAILABLE.code, 0,
                "shard " + s.id() + ": the member asked is no longer its primary", Opcode.INFO);
          }
          quiet &= f.get("cluster_inbound_pending") == 0
              && Long.compareUnsigned(f.get("cluster_forwarded_lsn"), f.get("last_lsn")) >= 0;
          last.put(s.id(), f.get("last_lsn"));
        }
      } catch (RelgraphException e) { // a shard restarting: waited for like one not yet quiet
        quiet = false;
        last = null;
        why = e.getMessage();
      }
      if (quiet && last.equals(previous)) return;
      previous = quiet ? last : null;
      if (System.nanoTime() - deadline > 0) {
        throw new RelgraphException(ErrorCode.TIMEOUT.code, 0, "barrier: " + why, Opcode.INFO);
      }
      sleep(quiet ? 1 : 5);
    }
  }

  // ---- routing -----------------------------------------------------------------------------------

  /** A plan that no longer fits the map (its two users now on two shards): the caller replans. */
  private static final class Replan extends RuntimeException {
    private static final long serialVersionUID = 1L;

    Replan() {
      super("replan", null, false, false);
    }
  }

  /** One routed call and what its retries have spent. */
  private static final class Routed<T> {
    final Opcode op;
    final long user;
    final Function<ShardMap, byte[]> body; // null: the plan no longer fits the map
    final Codec.Decoder<T> decoder;
    final CompletableFuture<T> result = new CompletableFuture<>();
    final long deadline;
    ShardMap used; // the map of the last attempt
    int shard; // and the shard it went to
    String address; // and the node
    int redirects, reconnects;
    long movingSince, failoverSince; // 0: not waiting yet
    ScheduledFuture<?> timeout;

    Routed(Opcode op, long user, Function<ShardMap, byte[]> body, Codec.Decoder<T> decoder,
        long deadline) {
      this.op = op;
      this.user = user;
      this.body = body;
      this.decoder = decoder;
      this.deadline = deadline;
    }
  }

  private <T> CompletableFuture<T> route(Opcode op, long user, Function<ShardMap, byte[]> body,
      Codec.Decoder<T> decoder) {
    Routed<T> r = new Routed<>(op, user, body, decoder,
        System.nanoTime() + options.client().callTimeout().toNanos());
    attempt(r);
    return r.result;
  }

  private <T> void attempt(Routed<T> r) {
    if (r.result.isDone()) return; // timed out meanwhile
    if (closed) {
      r.result.completeExceptionally(new ConnectionException("the cluster client is closed", false, r.op, null));
      return;
    }
    ShardMap m = map.get();
    r.used = m;
    r.shard = m.ownerOf(r.user);
    byte[] body = r.body.apply(m);
    if (body == null) {
      r.result.completeExceptionally(new Replan());
      return;
    }
    ShardMap.Shard s = m.find(r.shard);
    String address = s.grouped() ? primaryAt.get(s.id()) : s.address();
    if (address == null) { // a group's primary not known yet: asked on the client's threads
      lookupPrimary(s, r.op).whenComplete((v, err) -> {
        if (err == null) {
          later(r, 0, () -> attempt(r));
        } else {
          failed(r, (RelgraphException) cause(err));
        }
      });
      return;
    }
    r.address = address;
    CompletableFuture<T> sent;
    try {
      sent = node(address).call(r.op, body, r.decoder);
    } catch (RelgraphException closing) { // closed meanwhile
      r.result.completeExceptionally(closing);
      return;
    }
    sent.whenComplete((v, err) -> {
      if (err == null) {
        r.result.complete(v);
      } else {
        failed(r, cause(err) instanceof RelgraphException e ? e
            : new RelgraphException(ErrorCode.INTERNAL.code, 0, String.valueOf(err), r.op, err));
      }
    });
  }

  /** After attempt r failed with e: the next step (ClusterRetry), within r's budgets. */
  private <T> void failed(Routed<T> r, RelgraphException e) {
    if (r.result.isDone()) return;
    long now = System.nanoTime();
    if (closed || now - r.deadline > 0) {
      r.result.completeExceptionally(e);
      return;
    }
    if (r.timeout == null) { // from the first retry on, the deadline completes the call
      r.timeout = TIMER.schedule(() -> r.result.completeExceptionally(new RelgraphException(
          ErrorCode.TIMEOUT.code, 0, "no reply in time (last: " + e.getMessage() + ")", r.op)),
          r.deadline - now, TimeUnit.NANOSECONDS);
      r.result.whenComplete((v, err) -> r.timeout.cancel(false));
    }
    ShardMap.Shard s = r.used.find(r.shard);
    switch (ClusterRetry.next(r.op, e, s.grouped())) {
      case FAIL:
        r.result.completeExceptionally(e);
        return;
      case RECONNECT:
        if (++r.reconnects > options.client().maxRetries()) {
          r.result.completeExceptionally(e);
          return;
        }
        later(r, options.client().backoffNanos(r.reconnects), () -> attempt(r));
        return;
      case WAIT_MOVING:
        waitMoving(r, e, now);
        return;
      case FIND_PRIMARY: {
        String named = e.code() == ErrorCode.READ_ONLY ? e.serverMessage() : "";
        primaryChanges.incrementAndGet();
        if (s.addresses().contains(named)) {
          primaryAt.put(s.id(), named);
        } else if (r.address != null) { // unless another call found the next one meanwhile
          primaryAt.remove(s.id(), r.address);
        }
        if (r.failoverSince == 0) r.failoverSince = now;
        long waited = now - r.failoverSince;
        if (waited >= options.failoverTimeout().toNanos()) {
          r.result.completeExceptionally(e);
          return;
        }
        long pause = named.isEmpty() || !s.addresses().contains(named)
            ? Math.max(MOVING_PAUSE_MIN, Math.min(MOVING_PAUSE_MAX, waited / 4)) : 0;
        later(r, pause, () -> attempt(r));
        return;
      }
      case REFRESH_MAP:
        later(r, 0, () -> {
          ShardMap before = r.used;
          if (!map.get().newerThan(before)) {
            try {
              readMap(r.shard, r.op); // the refusing shard first: it names the owner it knows
            } catch (RelgraphException bad) {
              r.result.completeExceptionally(e);
              return;
            }
          }
          if (map.get().ownerOf(r.user) == r.shard) {
            waitMoving(r, e, System.nanoTime()); // its map lags the one read: asked again shortly
            return;
          }
          if (++r.redirects > options.maxRedirects()) {
            r.result.completeExceptionally(e);
            return;
          }
          moved.incrementAndGet();
          attempt(r);
        });
        return;
      default:
        r.result.completeExceptionally(e);
    }
  }

  /** Asks the same shard again after a pause (5 ms doubling to 100 ms), for up to movingWait. */
  private <T> void waitMoving(Routed<T> r, RelgraphException e, long now) {
    if (r.movingSince == 0) r.movingSince = now;
    long waited = now - r.movingSince;
    if (waited >= options.movingWait().toNanos()) {
      r.result.completeExceptionally(e);
      return;
    }
    movingWaits.incrementAndGet();
    later(r, Math.max(MOVING_PAUSE_MIN, Math.min(MOVING_PAUSE_MAX, waited / 2)), () -> attempt(r));
  }

  /** Runs step on the client's threads after pauseNanos (0: now). */
  private <T> void later(Routed<T> r, long pauseNanos, Runnable step) {
    try {
      if (pauseNanos <= 0) {
        executor.execute(step);
      } else {
        CompletableFuture.delayedExecutor(pauseNanos, TimeUnit.NANOSECONDS, executor).execute(step);
      }
    } catch (RejectedExecutionException closing) {
      r.result.completeExceptionally(new ConnectionException("the cluster client is closed", false, r.op, null));
    }
  }

  // ---- the map, the nodes, a group's primary ---------------------------------------------------

  /**
   * Reads the map with SHARD_MAP from shard {@code first}'s addresses (0: none), then the seeds,
   * then every other shard, until one answers; keeps it when it is newer than the one held.
   * Blocking. Throws UNAVAILABLE when none answers.
   */
  private void readMap(int first, Opcode op) {
    Set<String> tries = new LinkedHashSet<>();
    ShardMap held = map.get();
    if (held != null && first != 0) {
      ShardMap.Shard s = held.find(first);
      if (s != null) {
        String p = primaryAt.get(first);
        if (p != null) tries.add(p);
        tries.addAll(s.addresses());
      }
    }
    tries.addAll(options.seeds());
    if (held != null) {
      for (ShardMap.Shard s : held.shards()) tries.addAll(s.addresses());
    }
    StringBuilder why = new StringBuilder();
    for (String address : tries) {
      try {
        String text = node(address).shardMapAsync()
            .get(options.client().connectTimeout().toMillis(), TimeUnit.MILLISECONDS);
        offer(ShardMap.parseVersioned(text));
        mapReads.incrementAndGet();
        return;
      } catch (IllegalArgumentException | ExecutionException | TimeoutException e) {
        why.append(why.length() == 0 ? "" : "; ").append(address).append(": ")
            .append(e instanceof ExecutionException ? e.getCause().getMessage() : e.getMessage());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new ConnectionException("interrupted", false, op, e);
      }
    }
    throw new ConnectionException("no shard answered SHARD_MAP (" + why + ")", false, op, null);
  }

  /** Keeps m when it is newer than the map held (by generation, then version). */
  private void offer(ShardMap m) {
    while (true) {
      ShardMap held = map.get();
      if (held != null && !m.newerThan(held)) return;
      if (map.compareAndSet(held, m)) return;
    }
  }

  /** The client of one node, made on first use (its pool dials on demand). */
  private RelgraphClient node(String address) {
    RelgraphClient c = nodes.computeIfAbsent(address,
        a -> closed ? null : RelgraphClient.create(options.forNode(a)));
    if (c == null) throw new ConnectionException("the cluster client is closed", false, null, null);
    return c;
  }

  /** findPrimary on the client's threads, once at a time per shard. */
  private CompletableFuture<Void> lookupPrimary(ShardMap.Shard s, Opcode op) {
    CompletableFuture<Void> mine = new CompletableFuture<>();
    CompletableFuture<Void> running = lookups.putIfAbsent(s.id(), mine);
    if (running != null) return running;
    try {
      executor.execute(() -> {
        try {
          findPrimary(s, op);
          mine.complete(null);
        } catch (RuntimeException e) {
          mine.completeExceptionally(e);
        } finally {
          lookups.remove(s.id(), mine);
        }
      });
    } catch (RejectedExecutionException closing) {
      lookups.remove(s.id(), mine);
      mine.completeExceptionally(new ConnectionException("the cluster client is closed", false, op, null));
    }
    return mine;
  }

  /**
   * Asks each member of group shard s for its POSITION; the one answering role 0 is its primary
   * from now on. Blocking. Throws an unsent ConnectionException (UNAVAILABLE) when none does.
   */
  private void findPrimary(ShardMap.Shard s, Opcode op) {
    primaryLookups.incrementAndGet();
    StringBuilder why = new StringBuilder();
    for (String address : s.members()) {
      try {
        Position p = node(address).positionAsync()
            .get(options.client().connectTimeout().toMillis(), TimeUnit.MILLISECONDS);
        if (p.role() == 0) {
          primaryAt.put(s.id(), address);
          return;
        }
        why.append(why.length() == 0 ? "" : "; ").append(address).append(" is a replica");
      } catch (ExecutionException | TimeoutException e) {
        why.append(why.length() == 0 ? "" : "; ").append(address).append(": ")
            .append(e instanceof ExecutionException ? e.getCause().getMessage() : "no answer in time");
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new ConnectionException("interrupted", false, op, e);
      }
    }
    throw new ConnectionException("shard " + s.id() + " (group " + s.group()
        + "): no member answers as its primary (" + why + ")", false, op, null);
  }

  private static Throwable cause(Throwable t) {
    while (t instanceof CompletionException && t.getCause() != null) t = t.getCause();
    return t;
  }

  private static <T> CompletableFuture<T> invalid(Opcode op, String message) {
    return CompletableFuture.failedFuture(
        new RelgraphException(ErrorCode.INVALID_ARGUMENT.code, 0, message, op));
  }

  private static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new ConnectionException("interrupted", false, null, e);
    }
  }

  @Override
  public void close() {
    closed = true;
    executor.shutdown();
    for (RelgraphClient c : nodes.values()) c.close();
    nodes.clear();
  }
}
