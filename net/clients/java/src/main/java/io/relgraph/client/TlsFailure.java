package io.relgraph.client;

import java.io.EOFException;
import java.io.IOException;
import java.net.SocketException;
import java.security.cert.CertPathBuilderException;
import java.security.cert.CertPathValidatorException;
import java.security.cert.CertificateException;
import java.security.cert.CertificateExpiredException;
import java.security.cert.CertificateNotYetValidException;

/**
 * Says why a TLS connection failed, in the words of docs/security.md's table, as a
 * {@link ConnectionException} (never sent) whose cause is the JDK's exception:
 *
 * <ul>
 *   <li>UNAUTHENTICATED: the server's certificate is not trusted, expired, or not for the name
 *       connected to; the server refused the handshake or ended the session right after it
 *       (mutual TLS without an acceptable client certificate: with TLS 1.3 the refusal comes
 *       after the handshake, at HELLO's reply);
 *   <li>PROTOCOL_ERROR: the server answered the ClientHello in plain text (a port without TLS);
 *   <li>UNAVAILABLE: the connection ended in the handshake, or anything else.
 * </ul>
 *
 * <p>Thread-safety: pure functions.
 */
final class TlsFailure {
  private TlsFailure() {}

  static ConnectionException handshake(String where, String host, Exception e, String plainReply,
      boolean clientCert) {
    if (plainReply != null) {
      return fail(ErrorCode.PROTOCOL_ERROR, "TLS with " + where + " failed: the server answered"
          + " in plain text; is TLS enabled on it? It said: " + plainReply, e);
    }
    String prefix = "TLS handshake with " + where + " failed: ";
    if (causedBy(e, CertificateExpiredException.class) != null) {
      return fail(ErrorCode.UNAUTHENTICATED, prefix + "certificate verify failed: the server's"
          + " certificate has expired (" + causedBy(e, CertificateExpiredException.class)
              .getMessage() + ")", e);
    }
    if (causedBy(e, CertificateNotYetValidException.class) != null) {
      return fail(ErrorCode.UNAUTHENTICATED, prefix + "certificate verify failed: the server's"
          + " certificate is not valid yet", e);
    }
    Throwable untrusted = causedBy(e, CertPathBuilderException.class);
    if (untrusted == null) untrusted = causedBy(e, CertPathValidatorException.class);
    if (untrusted != null) {
      return fail(ErrorCode.UNAUTHENTICATED, prefix + "certificate verify failed: the server's"
          + " certificate is not signed by a trusted CA (" + untrusted.getMessage() + "); trust"
          + " its CA with TlsOptions.caFile", e);
    }
    Throwable name = causedBy(e, CertificateException.class);
    if (name != null && name.getMessage() != null && (name.getMessage().contains("No name matching")
        || name.getMessage().contains("No subject alternative"))) {
      return fail(ErrorCode.UNAUTHENTICATED, prefix + "certificate verify failed (hostname"
          + " mismatch): the server's certificate is not for \"" + host + "\" (" + name.getMessage()
          + "); connect by a name it carries, or set TlsOptions.withServerName", e);
    }
    String alert = alert(e);
    if (alert != null) {
      return fail(ErrorCode.UNAUTHENTICATED, prefix + "the server refused it (" + alert + ")"
          + hint(clientCert), e);
    }
    if (causedBy(e, EOFException.class) != null || causedBy(e, SocketException.class) != null) {
      return fail(ErrorCode.UNAVAILABLE, prefix + "the server closed the connection during the"
          + " handshake (is TLS enabled on it, and does it want a client certificate?): "
          + e.getMessage(), e);
    }
    return fail(ErrorCode.UNAVAILABLE, prefix + e.getMessage(), e);
  }

  /**
   * The handshake passed but the session ended at HELLO: with TLS 1.3 a server that refuses the
   * client's certificate (or its absence) says so only now.
   */
  static ConnectionException afterHandshake(String where, IOException e, boolean clientCert) {
    String alert = alert(e);
    return fail(ErrorCode.UNAUTHENTICATED, "TLS with " + where + ": the server ended the session"
        + " right after the handshake, before HELLO's reply ("
        + (alert != null ? alert : e.getMessage()) + ")" + hint(clientCert), e);
  }

  private static String hint(boolean clientCert) {
    return clientCert
        ? "; does the server trust this client certificate (its --tls-ca)?"
        : "; the server may require a client certificate (TlsOptions.withClientCert)";
  }

  /** "Received fatal alert: X" somewhere in the chain, as that text. */
  private static String alert(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      String m = t.getMessage();
      if (m != null && m.contains("fatal alert")) return m;
    }
    return null;
  }

  @SuppressWarnings("unchecked")
  static <T extends Throwable> T causedBy(Throwable e, Class<T> type) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (type.isInstance(t)) return (T) t;
      if (t.getCause() == t) break;
    }
    return null;
  }

  /** A TLS record's header: a content type 20-23 and major version 3. */
  static boolean looksLikeTlsRecord(byte[] head) {
    return head.length >= 2 && head[0] >= 20 && head[0] <= 23 && head[1] == 3;
  }

  /** The message of a relgraph frame with an error status (a NOTICE), or null. */
  static String plainFrameMessage(byte[] frame) {
    if (frame.length < Connection.HEADER_BYTES) return null;
    int status = frame[9] & 0xff;
    if (status == 0) return null;
    WireReader body = new WireReader(frame, Connection.HEADER_BYTES,
        frame.length - Connection.HEADER_BYTES, null);
    RelgraphException err = Codec.error(status, body, null);
    return err.code().wireName() + ": " + err.serverMessage();
  }

  private static ConnectionException fail(ErrorCode code, String message, Throwable cause) {
    return new ConnectionException(code.code, message, false, Opcode.HELLO, cause);
  }
}
