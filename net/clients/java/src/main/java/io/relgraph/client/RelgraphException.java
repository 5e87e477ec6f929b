package io.relgraph.client;

/**
 * An error the server answered (or a client-side deadline, {@link ErrorCode#TIMEOUT}): the
 * protocol's code, its {@code detail} (rate_limited: ms until a token; lsn_expired: the oldest
 * LSN kept; diverged: the first LSN to discard; else 0) and message. Unchecked, like the
 * exceptions of the other JVM clients; {@link ConnectionException} is the transport's.
 */
public class RelgraphException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final ErrorCode code;
  private final int rawCode;
  private final long detail;
  private final String serverMessage;
  private final Opcode op;

  public RelgraphException(int rawCode, long detail, String serverMessage, Opcode op) {
    this(rawCode, detail, serverMessage, op, null);
  }

  public RelgraphException(int rawCode, long detail, String serverMessage, Opcode op, Throwable cause) {
    super((op == null ? "" : op + ": ") + ErrorCode.of(rawCode).wireName()
        + (serverMessage.isEmpty() ? "" : ": " + serverMessage), cause);
    this.code = ErrorCode.of(rawCode);
    this.rawCode = rawCode;
    this.detail = detail;
    this.serverMessage = serverMessage;
    this.op = op;
  }

  /** The protocol's error code. */
  public ErrorCode code() {
    return code;
  }

  /** The status byte as sent, also for codes this client does not know. */
  public int rawCode() {
    return rawCode;
  }

  /** error_body's detail. */
  public long detail() {
    return detail;
  }

  /** error_body's message, as the server wrote it (read_only: the primary's HOST:PORT). */
  public String serverMessage() {
    return serverMessage;
  }

  /** The command that failed; null for a NOTICE. */
  public Opcode op() {
    return op;
  }
}
