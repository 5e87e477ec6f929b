package io.relgraph.client;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One connection to relgraphd after a successful HELLO, multiplexed: any number of threads' requests
 * are in flight at once, each matched to its reply by request id (docs/protocol.md "Frames").
 *
 * <p>Why this design: writes are combined. A caller appends its frame to the output buffer under a
 * lock. A request alone on the connection is written by its caller at once (no thread hand-off
 * on the latency path); one sent while others are in flight is left to the connection's writer
 * thread, which writes whatever the buffer holds, frames other callers append meanwhile
 * included, until it is empty. So many concurrent (or {@link #enqueue}d and {@link #flush}ed)
 * requests leave in few system calls. One reader thread per connection reads frames,
 * decodes each reply on that thread and completes its future (callbacks attached with
 * {@code thenApply} and friends run there unless an executor is given: they must not block).
 * Frames pushed by a stream (EVENTS, SNAPSHOT_DATA, RECORDS) go to the {@link PushHandler} the
 * request that started it named.
 *
 * <p>Thread-safety: every method may be called from any thread.
 */
public final class Connection implements AutoCloseable {
  static final int HEADER_BYTES = 10;

  /** Closes a TLS dial's socket at its deadline (see open). */
  private static final ScheduledExecutorService WATCHDOG =
      Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "relgraph-connect-deadline");
        t.setDaemon(true);
        return t;
      });

  /**
   * Closes a TLS dial's socket at its deadline unless the dial settled first. Exactly one of the
   * two wins (a compare-and-set, not the scheduled task's cancel, which succeeds even while the
   * task runs), so a dial that ended in time never has its socket closed under it, and a
   * failure the close caused is always reported as the timeout it is.
   */
  private static final class DialWatchdog {
    private static final int WATCHING = 0, FIRED = 1, SETTLED = 2;
    private final AtomicInteger state = new AtomicInteger(WATCHING);
    private final ScheduledFuture<?> task;

    DialWatchdog(Socket raw, int timeoutMs) {
      task = WATCHDOG.schedule(() -> {
        if (state.compareAndSet(WATCHING, FIRED)) closeQuietly(raw);
      }, timeoutMs, TimeUnit.MILLISECONDS);
    }

    /** Ends the watch (idempotent); whether the deadline closed the socket first. */
    boolean fired() {
      state.compareAndSet(WATCHING, SETTLED);
      task.cancel(false);
      return state.get() == FIRED;
    }
  }

  /** Receives the frames a stream pushes, on the reader thread; may block it (flow control). */
  public interface PushHandler {
    /** A pushed frame: status 0 and its body, or an error status and error_body. */
    void onPush(Opcode op, int status, WireReader body);

    /** The connection ended; no more frames come. */
    void onClose(RelgraphException cause);
  }

  private static final class Pending<T> {
    final Opcode op;
    final Codec.Decoder<T> decoder;
    final CompletableFuture<T> future;
    final long deadlineNanos; // 0: none

    Pending(Opcode op, Codec.Decoder<T> decoder, CompletableFuture<T> future, long deadlineNanos) {
      this.op = op;
      this.decoder = decoder;
      this.future = future;
      this.deadlineNanos = deadlineNanos;
    }

    void complete(int status, WireReader body) {
      if (status != 0) {
        future.completeExceptionally(Codec.error(status, body, op));
        return;
      }
      try {
        T v = decoder.decode(body);
        body.end();
        future.complete(v);
      } catch (RuntimeException e) {
        future.completeExceptionally(e);
      }
    }
  }

  private final InetSocketAddress address;
  private final Socket raw; // the TCP socket
  private final Socket socket; // what frames go through: raw, or the TLS socket over it
  private final OutputStream out;
  private final InputStream in;
  private final Hello hello;
  private final Map<Integer, Pending<?>> pending = new ConcurrentHashMap<>();
  private final Map<Integer, PushHandler> pushes = new ConcurrentHashMap<>();

  private final ReentrantLock lock = new ReentrantLock();
  private byte[] outBuf = new byte[16 * 1024]; // guarded by lock: frames not yet written
  private int outLen; // guarded by lock
  private byte[] writeBuf = new byte[16 * 1024]; // the writer's own
  private boolean writing; // guarded by lock: a caller is writing
  private int nextId = 1; // guarded by lock
  private final java.util.concurrent.locks.Condition work = lock.newCondition();
  private boolean writerParked; // guarded by lock: the writer thread waits for frames
  private volatile RelgraphException closed; // why the connection ended, once it has
  private volatile RelgraphException notice; // the NOTICE the server sent before closing

  private Connection(InetSocketAddress address, Socket raw, Socket socket, Hello hello, int nextId)
      throws IOException {
    this.address = address;
    this.raw = raw;
    this.socket = socket;
    this.out = socket.getOutputStream();
    this.in = socket.getInputStream();
    this.hello = hello;
    this.nextId = nextId;
  }

  /**
   * Connects and says HELLO (protocol version 2, falling back to 1 when the server answers
   * {@code unsupported}); the HELLO is request 1. Throws the server's error (unauthenticated, ...)
   * or a {@link ConnectionException}.
   */
  public static Connection open(InetSocketAddress address, String token, int timeoutMs) {
    return open(address, token, timeoutMs, (Tls) null);
  }

  /**
   * {@link #open(InetSocketAddress, String, int)} with TLS when {@code tls} says so: the
   * handshake runs after the TCP connect and before HELLO, within {@code timeoutMs}; a failed
   * one is a {@link ConnectionException} saying why (docs/security.md).
   */
  public static Connection open(InetSocketAddress address, String token, int timeoutMs,
      TlsOptions tls) {
    return open(address, token, timeoutMs, Tls.of(tls));
  }

  static Connection open(InetSocketAddress address, String token, int timeoutMs, Tls tls) {
    try {
      return open(address, token, timeoutMs, 2, tls);
    } catch (RelgraphException e) {
      if (e.code() != ErrorCode.UNSUPPORTED || e instanceof ConnectionException) throw e;
      return open(address, token, timeoutMs, 1, tls);
    }
  }

  static Connection open(InetSocketAddress address, String token, int timeoutMs, int version,
      Tls tls) {
    long deadline = System.nanoTime() + timeoutMs * 1_000_000L;
    Socket raw = Tls.newSocket(tls);
    Socket s = raw;
    boolean handshook = false; // the TLS handshake passed: a failure now is the server's refusal
    // SO_TIMEOUT bounds each read; a handshake is many reads, so with TLS a watchdog closes the
    // socket at the deadline (a server trickling bytes cannot hold the dial past it).
    DialWatchdog watchdog = tls == null ? null : new DialWatchdog(raw, timeoutMs);
    try {
      raw.setTcpNoDelay(true);
      raw.connect(address, timeoutMs);
      raw.setSoTimeout(msLeft(deadline));
      if (tls != null) {
        s = tls.handshake(raw, address, deadline);
        handshook = true;
        s.setSoTimeout(msLeft(deadline));
      }
      byte[] frame = frame(1, Opcode.HELLO, Codec.hello(version, token));
      s.getOutputStream().write(frame);
      InputStream in = s.getInputStream();
      byte[] head = readFully(in, 4);
      int length = (int) new WireReader(head, Opcode.HELLO).u32();
      if (length < 6 || length > (1 << 20)) throw new IOException("bad HELLO reply length " + length);
      byte[] rest = readFully(in, length);
      WireReader r = new WireReader(rest, Opcode.HELLO);
      r.u32(); // request id
      int opcode = r.u8();
      int status = r.u8();
      if (opcode == 0 && status != 0) { // a NOTICE: the server refuses the connection
        RelgraphException n = Codec.error(status, r, null);
        throw new ConnectionException(n.rawCode(), n.serverMessage(), false, Opcode.HELLO, n);
      }
      if (status != 0) throw Codec.error(status, r, Opcode.HELLO);
      Hello h = Codec.hello(version).decode(r);
      r.end();
      s.setSoTimeout(0);
      if (watchdog != null && watchdog.fired()) throw new SocketTimeoutException();
      Connection c = new Connection(address, raw, s, h, 2);
      Thread t = new Thread(c::readLoop, "relgraph-reader-" + address);
      t.setDaemon(true);
      t.start();
      Thread w = new Thread(c::writeLoop, "relgraph-writer-" + address);
      w.setDaemon(true);
      w.start();
      return c;
    } catch (SocketTimeoutException e) {
      closeQuietly(s);
      closeQuietly(raw);
      throw timeout(address, timeoutMs, tls, e);
    } catch (IOException e) {
      closeQuietly(s);
      closeQuietly(raw);
      if (watchdog != null && watchdog.fired()) throw timeout(address, timeoutMs, tls, e);
      if (handshook) throw tls.afterHandshake(address, e);
      throw new ConnectionException("connect to " + address + ": " + e.getMessage(), false,
          Opcode.HELLO, e);
    } catch (RuntimeException e) {
      closeQuietly(s);
      closeQuietly(raw);
      if (watchdog != null && watchdog.fired() && e instanceof ConnectionException) {
        throw timeout(address, timeoutMs, tls, e); // the watchdog's close, seen by the handshake
      }
      throw e;
    } finally {
      if (watchdog != null) watchdog.fired();
    }
  }

  private static ConnectionException timeout(InetSocketAddress address, int timeoutMs, Tls tls,
      Exception e) {
    return new ConnectionException(ErrorCode.TIMEOUT.code, "connect + "
        + (tls != null ? "TLS handshake + " : "") + "HELLO to " + address + " took more than "
        + timeoutMs + " ms", false, Opcode.HELLO, e);
  }

  /** Milliseconds until the deadline, at least 1 (0 would mean no timeout). */
  private static int msLeft(long deadlineNanos) {
    long ms = (deadlineNanos - System.nanoTime()) / 1_000_000;
    return (int) Math.max(1, Math.min(ms, Integer.MAX_VALUE));
  }

  private static byte[] readFully(InputStream in, int n) throws IOException {
    byte[] b = in.readNBytes(n);
    if (b.length != n) throw new IOException("connection closed during HELLO");
    return b;
  }

  private static void closeQuietly(Socket s) {
    try {
      s.close();
    } catch (IOException ignored) {
      // closing: nothing to do
    }
  }

  /** A whole frame: {@code length:u32 request_id:u32 opcode:u8 flags:u8 body}. */
  public static byte[] frame(int id, Opcode op, byte[] body) {
    byte[] f = new byte[HEADER_BYTES + body.length];
    putHeader(f, 0, id, op, body.length);
    System.arraycopy(body, 0, f, HEADER_BYTES, body.length);
    return f;
  }

  private static void putHeader(byte[] f, int at, int id, Opcode op, int bodyLen) {
    int length = 6 + bodyLen;
    for (int i = 0; i < 4; i++) f[at + i] = (byte) (length >>> (8 * i));
    for (int i = 0; i < 4; i++) f[at + 4 + i] = (byte) (id >>> (8 * i));
    f[at + 8] = (byte) op.code;
    f[at + 9] = 0;
  }

  public Hello hello() {
    return hello;
  }

  public InetSocketAddress address() {
    return address;
  }

  /** Whether the connection has ended (then every call fails). */
  public boolean isClosed() {
    return closed != null;
  }

  /** Requests sent and not yet answered (nor timed out). */
  public int inFlight() {
    return pending.size();
  }

  /**
   * Sends a request; the future completes with the decoded reply or the error. A request alone
   * on the connection is written by its caller at once; one among others in flight is left to
   * the writer thread, which writes all that callers appended meanwhile in one system call.
   */
  public <T> CompletableFuture<T> send(Opcode op, byte[] body, Codec.Decoder<T> decoder,
      long deadlineNanos) {
    boolean alone = pending.isEmpty();
    CompletableFuture<T> f = enqueue(op, body, decoder, deadlineNanos, null, !alone);
    if (alone) flush();
    return f;
  }

  /** The writer thread: writes whatever callers left to it, until the connection ends. */
  private void writeLoop() {
    while (closed == null) {
      lock.lock();
      try {
        while ((outLen == 0 || writing) && closed == null) {
          writerParked = true;
          try {
            work.await();
          } catch (InterruptedException e) {
            return;
          } finally {
            writerParked = false;
          }
        }
      } finally {
        lock.unlock();
      }
      flush();
    }
  }

  /**
   * Appends a request to the output buffer without writing it: {@link #flush} (or any later send)
   * writes it. With a push handler, the frames the request's stream pushes go to it.
   */
  public <T> CompletableFuture<T> enqueue(Opcode op, byte[] body, Codec.Decoder<T> decoder,
      long deadlineNanos, PushHandler push) {
    return enqueue(op, body, decoder, deadlineNanos, push, false);
  }

  private <T> CompletableFuture<T> enqueue(Opcode op, byte[] body, Codec.Decoder<T> decoder,
      long deadlineNanos, PushHandler push, boolean wakeWriter) {
    CompletableFuture<T> f = new CompletableFuture<>();
    int frameLen = HEADER_BYTES + body.length;
    if (frameLen > hello.maxFrame()) {
      f.completeExceptionally(new RelgraphException(ErrorCode.RESOURCE_EXHAUSTED.code, 0,
          "request of " + frameLen + " bytes is larger than the server's max_frame "
              + hello.maxFrame(), op));
      return f;
    }
    lock.lock();
    try {
      RelgraphException why = closed;
      if (why != null) {
        f.completeExceptionally(new ConnectionException(why.rawCode(), why.serverMessage(), false,
            op, why));
        return f;
      }
      int id = nextId++;
      if (nextId == 0) nextId = 1;
      pending.put(id, new Pending<>(op, decoder, f, deadlineNanos));
      if (push != null) pushes.put(id, push);
      if (outLen + frameLen > outBuf.length) {
        outBuf = java.util.Arrays.copyOf(outBuf, Math.max(outBuf.length * 2, outLen + frameLen));
      }
      putHeader(outBuf, outLen, id, op, body.length);
      System.arraycopy(body, 0, outBuf, outLen + HEADER_BYTES, body.length);
      outLen += frameLen;
      if (wakeWriter && writerParked) work.signal();
    } finally {
      lock.unlock();
    }
    return f;
  }

  /** Writes what the output buffer holds, unless another caller is writing (it will). */
  public void flush() {
    lock.lock();
    try {
      if (writing || outLen == 0) return;
      writing = true;
    } finally {
      lock.unlock();
    }
    while (true) {
      byte[] b;
      int n;
      lock.lock();
      try {
        if (outLen == 0 || closed != null) {
          writing = false;
          outLen = closed != null ? 0 : outLen;
          return;
        }
        b = outBuf;
        n = outLen;
        outBuf = writeBuf;
        outLen = 0;
        writeBuf = b;
      } finally {
        lock.unlock();
      }
      try {
        out.write(b, 0, n);
      } catch (IOException e) {
        lock.lock();
        try {
          writing = false;
        } finally {
          lock.unlock();
        }
        fail(new ConnectionException("write to " + address + ": " + e.getMessage(), true, null, e));
        return;
      }
    }
  }

  /** Fails the requests whose deadline passed with TIMEOUT; their replies, if they come, are dropped. */
  void sweep(long nowNanos) {
    for (Map.Entry<Integer, Pending<?>> e : pending.entrySet()) {
      Pending<?> p = e.getValue();
      if (p.deadlineNanos != 0 && nowNanos - p.deadlineNanos > 0 && pending.remove(e.getKey(), p)) {
        pushes.remove(e.getKey());
        p.future.completeExceptionally(new RelgraphException(ErrorCode.TIMEOUT.code, 0,
            "no reply before the deadline", p.op));
      }
    }
  }

  /** Stops pushing a stream's frames to its handler (the stream's owner is done with it). */
  void forgetPush(int id) {
    pushes.remove(id);
  }

  @Override
  public void close() {
    fail(new ConnectionException("connection closed by the client", true, null, null));
  }

  /** Ends the connection: every request in flight fails with a ConnectionException (sent). */
  void fail(RelgraphException cause) {
    lock.lock();
    try {
      if (closed != null) return;
      closed = cause;
      work.signalAll();
    } finally {
      lock.unlock();
    }
    closeQuietly(socket);
    closeQuietly(raw);
    for (Integer id : pending.keySet()) {
      Pending<?> p = pending.remove(id);
      if (p != null) {
        p.future.completeExceptionally(new ConnectionException(cause.rawCode(),
            cause.serverMessage(), true, p.op, cause));
      }
    }
    for (Integer id : pushes.keySet()) {
      PushHandler h = pushes.remove(id);
      if (h != null) h.onClose(cause);
    }
  }

  // ---- the reader thread ----------------------------------------------------------------------

  private void readLoop() {
    byte[] buf = new byte[64 * 1024];
    int start = 0;
    int end = 0;
    RelgraphException why;
    try {
      while (true) {
        // One frame: its length, then the whole of it.
        while (end - start < 4) {
          if (start > 0 && start == end) {
            start = end = 0;
          }
          int n = in.read(buf, end, buf.length - end);
          if (n < 0) throw new IOException("connection closed by the server");
          end += n;
        }
        long length = (buf[start] & 0xffL) | (buf[start + 1] & 0xffL) << 8
            | (buf[start + 2] & 0xffL) << 16 | (buf[start + 3] & 0xffL) << 24;
        if (length < 6 || length + 4 > Math.max(hello.maxFrame(), 1 << 20) + 4L) {
          throw new ProtocolViolation("a frame of length " + length);
        }
        int whole = (int) length + 4;
        if (end - start < whole) {
          if (whole > buf.length - start) { // make room: compact, or grow
            byte[] nb = whole > buf.length ? new byte[Math.max(whole, buf.length * 2)] : buf;
            System.arraycopy(buf, start, nb, 0, end - start);
            buf = nb;
            end -= start;
            start = 0;
          }
          while (end - start < whole) {
            int n = in.read(buf, end, buf.length - end);
            if (n < 0) throw new IOException("connection closed by the server");
            end += n;
          }
        }
        dispatch(buf, start);
        start += whole;
        if (start == end) start = end = 0;
      }
    } catch (ProtocolViolation e) {
      why = new ConnectionException(ErrorCode.PROTOCOL_ERROR.code, e.getMessage(), true, null, e);
    } catch (IOException e) {
      RelgraphException n = notice;
      why = n != null
          ? new ConnectionException(n.rawCode(), n.serverMessage(), true, null, n)
          : new ConnectionException(e.getMessage() + " (" + address + ")", true, null, e);
    } catch (RuntimeException e) {
      why = new ConnectionException(ErrorCode.INTERNAL.code, "reader: " + e, true, null, e);
    }
    fail(why);
  }

  private static final class ProtocolViolation extends IOException {
    private static final long serialVersionUID = 1L;

    ProtocolViolation(String what) {
      super("the server sent " + what);
    }
  }

  private void dispatch(byte[] buf, int at) throws ProtocolViolation {
    int length = (buf[at] & 0xff) | (buf[at + 1] & 0xff) << 8 | (buf[at + 2] & 0xff) << 16
        | (buf[at + 3] & 0xff) << 24;
    int id = (buf[at + 4] & 0xff) | (buf[at + 5] & 0xff) << 8 | (buf[at + 6] & 0xff) << 16
        | (buf[at + 7] & 0xff) << 24;
    int opcode = buf[at + 8] & 0xff;
    int status = buf[at + 9] & 0xff;
    Opcode op = Opcode.of(opcode);
    WireReader body = new WireReader(buf, at + HEADER_BYTES, length - 6, op);
    if (opcode == 0) { // NOTICE: why the server is about to close
      notice = Codec.error(status, body, null);
      return;
    }
    if (op == Opcode.EVENTS || op == Opcode.SNAPSHOT_DATA || op == Opcode.RECORDS) {
      PushHandler h = pushes.get(id);
      if (h != null) h.onPush(op, status, body);
      return;
    }
    Pending<?> p = pending.remove(id);
    if (p == null) return; // timed out already
    if (p.op != op) {
      p.future.completeExceptionally(new RelgraphException(ErrorCode.PROTOCOL_ERROR.code, 0,
          "reply opcode 0x" + Integer.toHexString(opcode) + " to a " + p.op, p.op));
      throw new ProtocolViolation("a reply with another request's opcode");
    }
    if (status != 0) pushes.remove(id); // the stream did not start
    p.complete(status, body);
  }
}
