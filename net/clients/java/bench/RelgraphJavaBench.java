// relgraph-java-bench: the Java client's figures against a running relgraphd, one row a workload
// (pipelined follows/s, relation checks/s, unpipelined fans-page latency), beside relgraph-bench's
// rows for the C++ client. Run from net/clients/java after `mvn ... package`:
//   java -cp target/classes bench/RelgraphJavaBench.java --server=127.0.0.1:7707
// Start relgraphd with --rate-limit=off, or the load is throttled.

import io.relgraph.client.ClientOptions;
import io.relgraph.client.FollowResult;
import io.relgraph.client.PageQuery;
import io.relgraph.client.Pipeline;
import io.relgraph.client.RelgraphClient;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiFunction;

public class RelgraphJavaBench {
  static String server = "127.0.0.1:7707";
  static long users = 63_291, edges = 200_000, ops = 300_000, latencyOps = 20_000;
  static int connections = 4, depth = 64;

  public static void main(String[] args) throws Exception {
    for (String a : args) {
      String[] kv = a.replaceFirst("^--", "").split("=", 2);
      switch (kv[0]) {
        case "server" -> server = kv[1];
        case "users" -> users = Long.parseLong(kv[1]);
        case "edges" -> edges = Long.parseLong(kv[1]);
        case "ops" -> ops = Long.parseLong(kv[1]);
        case "latency-ops" -> latencyOps = Long.parseLong(kv[1]);
        case "connections" -> connections = Integer.parseInt(kv[1]);
        case "pipeline" -> depth = Integer.parseInt(kv[1]);
        default -> {
          System.err.println("flags: --server --users --edges --ops --latency-ops --connections --pipeline");
          System.exit(2);
        }
      }
    }
    try (RelgraphClient c = RelgraphClient.connect(ClientOptions.to(server).withPoolSize(connections))) {
      System.out.printf("server %s, %d connections, %d requests in flight per connection%n", server,
          connections, depth);
      Random seedR = new Random(1);
      long base = 1 + (seedR.nextLong() & 0xffffffL) * 1_000_000L; // fresh ids on a reused server
      // Warm the JIT first (not reported): a JVM runs interpreted code for its first calls.
      batched(c, 200_000, (p, i) -> p.relationAsync(base + 1 + (i % 1000), base + 2));
      windowed(c, 100_000, i -> c.relationAsync(base + 1 + (i % 1000), base + 2));
      row("load (Pipeline batches)", edges, n -> batched(c, edges, (p, i) -> {
        long a = base + Math.floorMod(hash(i), users), b = base + Math.floorMod(hash(i + 7), users);
        return a == b ? p.pingAsync() : p.followAsync(a, b);
      }));
      row("follows/s, Pipeline batches of " + depth, ops, n -> batched(c, ops, (p, i) -> {
        long a = base + Math.floorMod(hash(i + 11), users), b = base + Math.floorMod(hash(i + 13), users);
        return a == b ? p.pingAsync() : p.followAsync(a, b);
      }));
      row("follows/s, async calls, " + depth + " in flight per thread", ops, n -> windowed(c, ops, i -> {
        long a = base + Math.floorMod(hash(i + 17), users), b = base + Math.floorMod(hash(i + 19), users);
        return a == b ? c.pingAsync() : c.followAsync(a, b);
      }));
      row("relation checks/s, Pipeline batches of " + depth, ops, n -> batched(c, ops, (p, i) ->
          p.relationAsync(base + Math.floorMod(hash(i + 23), users), base + Math.floorMod(hash(i + 29), users))));
      row("relation checks/s, async calls, " + depth + " in flight per thread", ops, n -> windowed(c, ops, i ->
          c.relationAsync(base + Math.floorMod(hash(i + 31), users), base + Math.floorMod(hash(i + 37), users))));
      // Unpipelined: one fans page (20, with a viewer) at a time, its latency each.
      long[] lat = new long[(int) latencyOps];
      for (int i = 0; i < 2000; i++) c.fans(PageQuery.of(base + Math.floorMod(hash(i), users), 20).withViewer(base + 1));
      for (int i = 0; i < lat.length; i++) {
        long t = System.nanoTime();
        c.fans(PageQuery.of(base + Math.floorMod(hash(i + 41), users), 20).withViewer(base + Math.floorMod(hash(i + 43), users)));
        lat[i] = System.nanoTime() - t;
      }
      Arrays.sort(lat);
      System.out.printf("%-58s p50 %6.1f us   p99 %7.1f us   (%d pages)%n",
          "fans page (20, with a viewer), unpipelined", lat[lat.length / 2] / 1e3,
          lat[(int) (lat.length * 0.99)] / 1e3, lat.length);
    }
  }

  static long hash(long x) {
    x += 0x9e3779b97f4a7c15L;
    x = (x ^ (x >>> 30)) * 0xbf58476d1ce4e5b9L;
    x = (x ^ (x >>> 27)) * 0x94d049bb133111ebL;
    return x ^ (x >>> 31);
  }

  interface Work {
    void run(long n) throws Exception;
  }

  static void row(String name, long n, Work w) throws Exception {
    long t = System.nanoTime();
    w.run(n);
    double s = (System.nanoTime() - t) / 1e9;
    System.out.printf("%-58s %,10.0f ops/s   (%d ops in %.2f s)%n", name, n / s, n, s);
  }

  /** One thread per connection, each sending Pipeline batches of `depth` and waiting for them. */
  static void batched(RelgraphClient c, long n, BiFunction<Pipeline, Long, CompletableFuture<?>> op)
      throws Exception {
    AtomicLong next = new AtomicLong();
    List<Thread> threads = new ArrayList<>();
    for (int t = 0; t < connections; t++) {
      Thread th = new Thread(() -> {
        Pipeline p = c.pipeline();
        CompletableFuture<?>[] batch = new CompletableFuture<?>[depth];
        while (true) {
          long start = next.getAndAdd(depth);
          if (start >= n) return;
          int k = (int) Math.min(depth, n - start);
          for (int i = 0; i < k; i++) batch[i] = op.apply(p, start + i);
          p.flush();
          for (int i = 0; i < k; i++) batch[i].join();
        }
      });
      th.start();
      threads.add(th);
    }
    for (Thread th : threads) th.join();
  }

  /** One thread per connection, each keeping `depth` plain async calls in flight. */
  static void windowed(RelgraphClient c, long n, java.util.function.LongFunction<CompletableFuture<?>> op)
      throws Exception {
    AtomicLong next = new AtomicLong();
    List<Thread> threads = new ArrayList<>();
    for (int t = 0; t < connections; t++) {
      Thread th = new Thread(() -> {
        Semaphore window = new Semaphore(depth);
        while (true) {
          long i = next.getAndIncrement();
          if (i >= n) break;
          window.acquireUninterruptibly();
          op.apply(i).whenComplete((v, e) -> window.release());
        }
        window.acquireUninterruptibly(depth);
      });
      th.start();
      threads.add(th);
    }
    for (Thread th : threads) th.join();
  }
}
