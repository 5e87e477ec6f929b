package io.relgraph.client;

import java.io.File;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/**
 * A relgraphd the tests start on a free loopback port with a temp data directory, and stop by
 * PID (SIGTERM, then SIGKILL). Paths come from the environment the CTest entry sets (RELGRAPHD,
 * RELGRAPH_CLI, RELGRAPH_PROTOCOL_DOC), else ../../../build/.
 */
final class TestServer implements AutoCloseable {
  final int port;
  final Path dataDir;
  final List<String> extra;
  private Process process;

  static String env(String name, String fallback) {
    String v = System.getenv(name);
    if (v != null && !v.isEmpty()) return v;
    return new File(fallback).getAbsolutePath();
  }

  static String relgraphd() {
    return env("RELGRAPHD", "../../../build/relgraphd");
  }

  static String cli() {
    return env("RELGRAPH_CLI", "../../../build/relgraph-cli");
  }

  static String protocolDoc() {
    return env("RELGRAPH_PROTOCOL_DOC", "../../../docs/protocol.md");
  }

  static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }

  TestServer(String... flags) throws IOException {
    this(freePort(), Files.createTempDirectory("relgraph-java-"), flags);
  }

  TestServer(int port, Path dataDir, String... flags) throws IOException {
    this.port = port;
    this.dataDir = dataDir;
    this.extra = List.of(flags);
    start();
  }

  String address() {
    return "127.0.0.1:" + port;
  }

  ClientOptions options() {
    return ClientOptions.to(address());
  }

  long pid() {
    return process.pid();
  }

  void start() throws IOException {
    List<String> cmd = new ArrayList<>();
    cmd.add(relgraphd());
    cmd.add("--listen=127.0.0.1:" + port);
    cmd.add("--data-dir=" + dataDir);
    cmd.add("--rate-limit=off");
    cmd.add("--http=off");  // or servers started side by side contend for the default port
    cmd.addAll(extra);
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true)
        .redirectOutput(dataDir.resolveSibling(dataDir.getFileName() + ".log").toFile());
    process = pb.start();
    long until = System.nanoTime() + 20_000_000_000L;
    while (true) {
      try (Socket s = new Socket()) {
        s.connect(new InetSocketAddress("127.0.0.1", port), 200);
        return;
      } catch (IOException e) {
        if (!process.isAlive()) throw new IOException("relgraphd exited: " + cmd);
        if (System.nanoTime() > until) throw new IOException("relgraphd did not listen: " + cmd);
        try {
          Thread.sleep(20);
        } catch (InterruptedException ie) {
          throw new IOException(ie);
        }
      }
    }
  }

  /** SIGTERM (a clean shutdown), waiting for the exit. */
  void stop() {
    if (process == null) return;
    process.destroy();
    try {
      if (!process.waitFor(15, java.util.concurrent.TimeUnit.SECONDS)) {
        process.destroyForcibly().waitFor();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    process = null;
  }

  void restart() throws IOException {
    stop();
    start();
  }

  @Override
  public void close() {
    stop();
    try (Stream<Path> s = Files.walk(dataDir)) {
      s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException ignored) {
      // a temp dir left behind
    }
  }
}
