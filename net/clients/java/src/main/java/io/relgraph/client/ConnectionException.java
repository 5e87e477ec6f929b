package io.relgraph.client;

/**
 * The connection failed or could not be made. {@link #sent()} says whether the request had been
 * handed to the socket: then its outcome is unknown (docs/protocol.md "Durability of
 * acknowledged writes"). {@link #code()} is UNAVAILABLE, or the code of the NOTICE the server
 * closed with.
 */
public class ConnectionException extends RelgraphException {
  private static final long serialVersionUID = 1L;

  private final boolean sent;

  public ConnectionException(String message, boolean sent, Opcode op, Throwable cause) {
    this(ErrorCode.UNAVAILABLE.code, message, sent, op, cause);
  }

  public ConnectionException(int code, String message, boolean sent, Opcode op, Throwable cause) {
    super(code, 0, message, op, cause);
    this.sent = sent;
  }

  /** True when the request may have reached the server (its outcome is unknown). */
  public boolean sent() {
    return sent;
  }

  ConnectionException withOp(Opcode op, boolean sent) {
    return new ConnectionException(rawCode(), serverMessage(), sent, op, getCause());
  }
}
