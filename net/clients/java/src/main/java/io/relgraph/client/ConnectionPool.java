package io.relgraph.client;

import java.net.InetSocketAddress;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A fixed number of connection slots to one address, handed out round robin. A slot whose
 * connection broke is dialed again on its next use, no sooner than a backoff after a failed dial
 * (doubling, with jitter). {@link #retarget} moves the pool to another address (a read_only
 * redirect). Thread-safe.
 */
final class ConnectionPool implements AutoCloseable {
  private final ClientOptions options;
  private final Tls tls; // null: plain TCP
  private final Slot[] slots;
  private final AtomicInteger next = new AtomicInteger();
  private volatile InetSocketAddress address;
  private volatile boolean closed;

  private final class Slot {
    private volatile Connection conn;
    private int failures; // guarded by this
    private long nextDialNanos; // guarded by this
    private ConnectionException lastError; // guarded by this: why the last dial failed

    Connection live() {
      Connection c = conn;
      return c != null && !c.isClosed() && c.address().equals(address) ? c : null;
    }

    Connection get() {
      Connection c = live();
      if (c != null) return c;
      synchronized (this) {
        c = live();
        if (c != null) return c;
        if (closed) throw new ConnectionException("client closed", false, null, null);
        long now = System.nanoTime();
        if (failures > 0 && now - nextDialNanos < 0) {
          // Say why the last dial failed (a refused certificate stays refused until fixed).
          ConnectionException why = lastError;
          throw new ConnectionException(why.rawCode(), "reconnecting to " + address
              + " (backing off): " + why.serverMessage(), false, null, why);
        }
        Connection old = conn;
        if (old != null) old.close();
        try {
          c = Connection.open(address, options.token(), (int) options.connectTimeout().toMillis(),
              tls);
        } catch (ConnectionException e) {
          failures++;
          lastError = e;
          nextDialNanos = System.nanoTime() + options.backoffNanos(failures);
          throw e;
        }
        failures = 0;
        conn = c;
        if (closed) c.close();
        return c;
      }
    }
  }

  ConnectionPool(ClientOptions options, Tls tls) {
    this.options = options;
    this.tls = tls;
    this.address = ClientOptions.parse(options.address());
    this.slots = new Slot[Math.max(1, options.poolSize())];
    for (int i = 0; i < slots.length; i++) slots[i] = new Slot();
  }

  InetSocketAddress address() {
    return address;
  }

  /**
   * The next slot's connection round robin, dialed if it is not connected; when that dial fails
   * (or backs off), any other live connection.
   */
  Connection get() {
    int start = Math.floorMod(next.getAndIncrement(), slots.length);
    try {
      return slots[start].get();
    } catch (ConnectionException e) {
      for (int i = 1; i < slots.length; i++) {
        Connection c = slots[(start + i) % slots.length].live();
        if (c != null) return c;
      }
      throw e;
    }
  }

  /** Every slot's connection, dialing those that are not connected (for a Pipeline's fan-out). */
  Connection slot(int i) {
    return slots[Math.floorMod(i, slots.length)].get();
  }

  int size() {
    return slots.length;
  }

  /** Points the pool at another server; the current connections close. */
  void retarget(InetSocketAddress to) {
    if (to.equals(address)) return;
    address = to;
    for (Slot s : slots) {
      Connection c = s.conn;
      if (c != null) c.close();
    }
  }

  void sweep(long nowNanos) {
    for (Slot s : slots) {
      Connection c = s.conn;
      if (c != null) c.sweep(nowNanos);
    }
  }

  @Override
  public void close() {
    closed = true;
    for (Slot s : slots) {
      synchronized (s) {
        Connection c = s.conn;
        if (c != null) c.close();
      }
    }
  }
}
