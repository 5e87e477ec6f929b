package io.relgraph.client;

import java.io.File;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A relgraph cluster on loopback for tests, as docs/cluster.md starts one: a nats-server with
 * JetStream, the shard map written by relgraph-admin (cluster init), and one relgraphd per
 * shard (--cluster, --shard-id), each on a free port with a temp data directory, stopped by PID.
 * Paths come from the environment the CTest entry sets (NATS_SERVER, RELGRAPH_ADMIN, RELGRAPHD),
 * else nats-server on the PATH and ../../../build/.
 */
final class TestCluster implements AutoCloseable {
  final Path dir;
  final int natsPort;
  final int[][] ports; // ports[id][member], id 1..shards; shard 1 may have several members
  final List<String> nodeFlags; // more relgraphd flags for every node (TLS, ...)
  final TlsOptions tls; // how the fixture's own clients reach the nodes
  private final Process nats;
  private final Process[][] shards;

  static String natsServer() {
    String v = System.getenv("NATS_SERVER");
    if (v != null && !v.isEmpty()) return v;
    return new File("/usr/sbin/nats-server").canExecute() ? "/usr/sbin/nats-server" : "nats-server";
  }

  static String admin() {
    return TestServer.env("RELGRAPH_ADMIN", "../../../build/relgraph-admin");
  }

  TestCluster(int count) throws IOException, InterruptedException {
    this(count, 1);
  }

  /**
   * {@code count} shards; shard 1 served by a replication group of {@code members} nodes
   * (group shard-1, --fsync=always, one synchronous replica) when members &gt; 1.
   */
  TestCluster(int count, int members) throws IOException, InterruptedException {
    this(count, members, List.of(), TlsOptions.off());
  }

  /** With these flags on every node (TLS's, say), reached by the fixture with {@code tls}. */
  TestCluster(int count, int members, List<String> nodeFlags, TlsOptions tls)
      throws IOException, InterruptedException {
    this.nodeFlags = List.copyOf(nodeFlags);
    this.tls = tls;
    dir = Files.createTempDirectory("relgraph-java-cluster-");
    natsPort = TestServer.freePort();
    nats = start(List.of(natsServer(), "-js", "-a", "127.0.0.1", "-p", String.valueOf(natsPort),
        "-sd", dir.resolve("nats").toString()), "nats.log");
    ports = new int[count + 1][];
    shards = new Process[count + 1][];
    try {
      waitListening(nats, natsPort, "nats-server");
      StringBuilder flag = new StringBuilder();
      for (int id = 1; id <= count; id++) {
        ports[id] = new int[id == 1 ? members : 1];
        shards[id] = new Process[ports[id].length];
        flag.append(id > 1 ? "," : "").append(id).append("=");
        for (int k = 0; k < ports[id].length; k++) {
          ports[id][k] = TestServer.freePort();
          flag.append(k > 0 ? "+" : "").append("127.0.0.1:").append(ports[id][k]);
        }
      }
      admin("cluster", "init", "--nats=" + natsUrl(), "--shards=" + flag);
      for (int id = 1; id <= count; id++) {
        for (int k = 0; k < ports[id].length; k++) startNode(id, k);
      }
      for (int id = 1; id <= count; id++) {
        for (int k = 0; k < ports[id].length; k++) waitJoined(address(id, k));
      }
    } catch (IOException | RuntimeException | InterruptedException e) {
      close();
      throw e;
    }
  }

  String natsUrl() {
    return "nats://127.0.0.1:" + natsPort;
  }

  String address(int id) {
    return address(id, 0);
  }

  String address(int id, int member) {
    return "127.0.0.1:" + ports[id][member];
  }

  /** relgraph-admin with these arguments; its output, or an AssertionError with it on failure. */
  String admin(String... args) throws IOException, InterruptedException {
    Process p = adminProcess(args);
    String out = new String(p.getInputStream().readAllBytes());
    if (p.waitFor() != 0) throw new AssertionError("relgraph-admin " + String.join(" ", args) + ": " + out);
    return out;
  }

  /** relgraph-admin started, output and errors in one stream. */
  Process adminProcess(String... args) throws IOException {
    List<String> cmd = new ArrayList<>(List.of(admin()));
    cmd.addAll(List.of(args));
    return new ProcessBuilder(cmd).redirectErrorStream(true).start();
  }

  /** Starts member k of shard id (again: on its port and data directory). */
  void startNode(int id, int k) throws IOException {
    List<String> cmd = new ArrayList<>(List.of(TestServer.relgraphd(),
        "--listen=" + address(id, k), "--data-dir=" + dir.resolve("shard" + id + "." + k),
        "--cluster=" + natsUrl(), "--shard-id=" + id, "--rate-limit=off", "--snapshot-interval-s=0",
        "--http=off"));
    cmd.addAll(nodeFlags);
    if (ports[id].length > 1) {
      cmd.addAll(List.of("--group=shard-" + id, "--fsync=always", "--sync-replicas=1"));
    }
    shards[id][k] = start(cmd, "shard" + id + "." + k + ".log");
    waitListening(shards[id][k], ports[id][k], "relgraphd shard " + id + " member " + k);
  }

  /** SIGKILL, waiting for the exit. */
  void killNode(int id, int k) throws InterruptedException {
    shards[id][k].destroyForcibly().waitFor();
    shards[id][k] = null;
  }

  /** The member of shard id answering POSITION as its primary, or -1. */
  int primaryOf(int id) {
    for (int k = 0; k < ports[id].length; k++) {
      if (shards[id][k] == null) continue;
      try (RelgraphClient c = RelgraphClient.create(ClientOptions.to(address(id, k)).withTls(tls)
          .withMaxRetries(0))) {
        if (c.position().role() == 0) return k;
      } catch (RelgraphException e) {
        // not answering
      }
    }
    return -1;
  }

  /** Until the node's INFO says it joined the cluster (it then answers SHARD_MAP). */
  void waitJoined(String address) throws InterruptedException {
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    try (RelgraphClient c = RelgraphClient.create(ClientOptions.to(address).withTls(tls))) {
      while (true) {
        try {
          if (c.info().get("cluster_joined") == 1) return;
        } catch (RelgraphException e) {
          // not answering yet
        }
        if (System.nanoTime() > until) throw new AssertionError(address + " did not join (see " + dir + ")");
        Thread.sleep(20);
      }
    }
  }

  private Process start(List<String> cmd, String log) throws IOException {
    return new ProcessBuilder(cmd).redirectErrorStream(true)
        .redirectOutput(dir.resolve(log).toFile()).start();
  }

  private static void waitListening(Process p, int port, String what) throws IOException {
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (true) {
      try (Socket s = new Socket()) {
        s.connect(new InetSocketAddress("127.0.0.1", port), 200);
        return;
      } catch (IOException e) {
        if (!p.isAlive()) throw new IOException(what + " exited");
        if (System.nanoTime() > until) throw new IOException(what + " did not listen on " + port);
        try {
          Thread.sleep(20);
        } catch (InterruptedException ie) {
          throw new IOException(ie);
        }
      }
    }
  }

  private static void stop(Process p) throws InterruptedException {
    if (p == null) return;
    p.destroy();
    if (!p.waitFor(15, TimeUnit.SECONDS)) p.destroyForcibly().waitFor();
  }

  @Override
  public void close() throws InterruptedException {
    for (int id = 1; id < shards.length; id++) {
      if (shards[id] == null) continue;
      for (Process p : shards[id]) stop(p);
    }
    stop(nats);
    try (Stream<Path> s = Files.walk(dir)) {
      s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException ignored) {
      // a temp dir left behind
    }
  }
}
