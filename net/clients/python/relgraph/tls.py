"""TLS on relgraphd's binary port (docs/security.md): the client's options, and one TLS
session over memory buffers that the blocking and the asyncio connections drive with their
own I/O.

    relgraph.Client(host, port, tls=relgraph.TlsOptions(ca_file="ca.crt"))
    relgraph.Client(host, port, tls=my_ssl_context)          # a native ssl.SSLContext
    relgraph.Client(host, port, tls=True)                    # the system's CAs

Why this design: the session is an ``ssl.SSLObject`` on two ``MemoryBIO``s rather than an
``SSLSocket`` (or asyncio's ``ssl=``), for three reasons. The blocking Connection reads on
one thread while others write, and one OpenSSL session may not be used by two threads at
once: Connection uses the session under a short lock and does the socket I/O outside it. A
failed handshake can be explained from the raw bytes the server sent: a relgraph frame where
a TLS record should be means the port speaks plain text. And both clients share this one
code, so they fail with the same words. Every failure is a ``TlsError``, a
``ConnectionLost`` the clients do not retry: a new connection would fail the same way.

Thread-safety: TlsOptions and TlsConfig are immutable and may be shared; a TlsSession is
not thread-safe (its Connection serialises it).
"""

from __future__ import annotations

import ssl
from dataclasses import dataclass
from typing import Optional, Union

from . import protocol as P
from .errors import ConnectionLost, ProtocolError, RelgraphError, TlsError


@dataclass(frozen=True)
class TlsOptions:
    """TLS from PEM files, as net::TlsClientOptions and the programs' --tls-* flags.

    ca_file: the CAs the server's certificate must chain to (None: the system's).
    cert_file, key_file: this client's certificate and key, for mutual TLS (a certificate
    whose CN is a client of the server's clients file names the client without a token).
    server_name: the name the server's certificate must carry (None: the host connected to).
    insecure: DANGEROUS, for tests only: accept any server certificate and name (still
    encrypted, no longer authenticated; --tls-insecure, C++ verify_server = false).
    context: a native ssl.SSLContext; when given it wins over the files and `insecure`
    (server_name still names the host to check).
    """

    ca_file: Optional[str] = None
    cert_file: Optional[str] = None
    key_file: Optional[str] = None
    server_name: Optional[str] = None
    insecure: bool = False
    context: Optional[ssl.SSLContext] = None


@dataclass(frozen=True)
class TlsConfig:
    """Options made ready: the context built once, for every connection of a client."""

    context: ssl.SSLContext
    server_name: Optional[str] = None
    client_cert: Optional[bool] = None  # None: unknown (a context given by the caller)


TlsArg = Union[None, bool, ssl.SSLContext, TlsOptions, TlsConfig]


def tls_config(tls: TlsArg) -> Optional[TlsConfig]:
    """A client's `tls` argument made ready: None or False (plain TCP), True (the system's
    CAs), an ssl.SSLContext, TlsOptions, or a TlsConfig already made. Raises ValueError
    naming a file that does not load."""
    if tls is None or tls is False:
        return None
    if isinstance(tls, TlsConfig):
        return tls
    if tls is True:
        tls = TlsOptions()
    if isinstance(tls, ssl.SSLContext):
        return TlsConfig(tls)
    if not isinstance(tls, TlsOptions):
        raise TypeError(f"tls: expected None, a bool, an ssl.SSLContext or a TlsOptions, "
                        f"not {type(tls).__name__}")
    if tls.context is not None:
        return TlsConfig(tls.context, tls.server_name, None)
    return TlsConfig(_context_of(tls), tls.server_name, bool(tls.cert_file))


def _context_of(o: TlsOptions) -> ssl.SSLContext:
    if bool(o.cert_file) != bool(o.key_file):
        raise ValueError("tls: cert_file and key_file go together")
    try:
        ctx = ssl.create_default_context(cafile=None if o.insecure else o.ca_file)
    except (OSError, ssl.SSLError) as e:
        raise ValueError(f"tls: the CA file {o.ca_file} does not load: {e}") from None
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2  # as the server: 1.2 or 1.3
    if o.insecure:
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    if o.cert_file:
        try:
            ctx.load_cert_chain(o.cert_file, o.key_file)
        except (OSError, ssl.SSLError) as e:
            raise ValueError(f"tls: the certificate {o.cert_file} with the key {o.key_file} "
                             f"does not load: {e}") from None
    return ctx


def _reason(e: ssl.SSLError) -> str:
    """OpenSSL's reason in words: "tlsv13 alert certificate required"."""
    if getattr(e, "reason", None):
        return e.reason.lower().replace("_", " ")
    return str(e)


def notice_error(where: str, err: RelgraphError) -> ConnectionLost:
    """The error of a NOTICE: the server is closing. A plain client at a TLS port gets
    "this port speaks TLS only", which no retry cures."""
    if isinstance(err, ProtocolError) and "speaks TLS only" in err.message:
        return TlsError(f"{where} speaks TLS only, and this client connected without TLS "
                        f"(give tls=...): server notice: {err}")
    return ConnectionLost(f"server notice: {err}")


class TlsSession:
    """One client TLS session, bytes in and bytes out: no sockets.

    handshake(raw) until `established` (sending what it returns each time); then encrypt()
    what to send, decrypt() what arrives, and send take_output() when has_output(). Failures
    come as TlsError (`failed` after handshake(); raised by decrypt() and ended()).
    """

    def __init__(self, config: TlsConfig, host: str, port: int):
        self.where = f"{host}:{port}"
        self.config = config
        self._in, self._out = ssl.MemoryBIO(), ssl.MemoryBIO()
        self._obj = config.context.wrap_bio(self._in, self._out, server_side=False,
                                            server_hostname=config.server_name or host)
        self.established = False
        self.failed: Optional[TlsError] = None
        self.answered = False  # the server sent application data
        self.closed = False    # the server ended the session (close_notify)
        self._seen = bytearray()  # the server's bytes during the handshake, to explain one

    # ---- the handshake ----
    def handshake(self, raw: bytes = b"") -> bytes:
        """Takes what the server sent (nothing at first) and returns what to send to it. Sets
        `established` when done, or `failed`: send the bytes returned (an alert), then raise it."""
        if raw:
            if len(self._seen) < 4096:
                self._seen += raw[:4096]
            self._in.write(raw)
        try:
            self._obj.do_handshake()
            self.established = True
        except ssl.SSLWantReadError:
            pass
        except ssl.SSLCertVerificationError as e:
            self.failed = self._verify_failed(e)
        except ssl.SSLError as e:
            self.failed = self._plain_text() or self._refused("handshake", _reason(e))
        return self._out.read()

    def handshake_eof(self, cause: str = "closed the connection") -> TlsError:
        """The error when the connection ends (or breaks) in the handshake."""
        return self._plain_text() or TlsError(
            f"the server at {self.where} {cause} during the TLS handshake (is TLS enabled on "
            "it, and does it want a client certificate?)")

    def _verify_failed(self, e: ssl.SSLCertVerificationError) -> TlsError:
        why = e.verify_message or _reason(e)
        if e.verify_code in (62, 64):  # X509_V_ERR_HOSTNAME_MISMATCH, _IP_ADDRESS_MISMATCH
            name = self.config.server_name or self.where.rpartition(":")[0]
            why = (f"hostname mismatch: the server's certificate is not valid for {name!r}; "
                   "server_name names the host it should carry")
        return TlsError(f"TLS handshake with {self.where} failed: certificate verify failed "
                        f"({why})")

    def _plain_text(self) -> Optional[TlsError]:
        """A relgraph frame where a TLS record should be: a plain server said why it refused."""
        d = P.FrameDecoder()
        d.feed(bytes(self._seen))
        try:
            frames = d.frames()
        except ProtocolError:
            return None
        if not frames or not frames[0][2]:
            return None
        err = P.error_of(frames[0][2], frames[0][3])
        return TlsError(f"TLS with {self.where} failed: the server answered in plain text; is "
                        f"TLS enabled on it? ({err})")

    def _refused(self, during: str, reason: str) -> TlsError:
        hint = ""
        if "certificate" in reason or "handshake failure" in reason or "unknown ca" in reason:
            if self.config.client_cert is False:
                hint = ("; the server requires a client certificate: give cert_file and "
                        "key_file")
            elif self.config.client_cert:
                hint = "; the server refused this client's certificate"
            else:
                hint = "; does the server require a client certificate?"
        return TlsError(f"TLS {during} with {self.where} failed: {reason}{hint}")

    @property
    def version(self) -> Optional[str]:
        """The TLS version agreed ("TLSv1.3"), None before the handshake."""
        return self._obj.version()

    # ---- after the handshake ----
    def encrypt(self, data: bytes) -> bytes:
        """The records to send for `data`, after any output already pending."""
        view = memoryview(data)
        while view:
            n = self._obj.write(view)
            view = view[n:]
        return self._out.read()

    def decrypt(self, raw: bytes) -> bytes:
        """The application data in `raw` (b"" until a record is whole). Sets `closed` at the
        server's close_notify; raises TlsError when the server sends an alert."""
        self._in.write(raw)
        chunks = []
        while True:
            try:
                chunk = self._obj.read(262144)
            except ssl.SSLWantReadError:
                break
            except ssl.SSLZeroReturnError:
                self.closed = True
                break
            except ssl.SSLError as e:
                # TLS 1.3 checks the client's certificate after the client's handshake is
                # done: a refusal arrives as an alert at the first read.
                during = "session" if self.answered else "session (refused at the first read)"
                raise self._refused(during, _reason(e)) from None
            if not chunk:
                self.closed = True
                break
            chunks.append(chunk)
        data = b"".join(chunks)
        if data:
            self.answered = True
        return data

    def has_output(self) -> bool:
        return self._out.pending > 0

    def take_output(self) -> bytes:
        return self._out.read()

    def ended(self, cause: str) -> Optional[TlsError]:
        """The error for a connection that ended (`cause`) before the server sent anything
        over TLS: the server refused the session after the handshake, most likely for want
        of a client certificate. None once the server has answered (an ordinary close)."""
        if self.answered:
            return None
        if self.config.client_cert is False:
            hint = "does it require a client certificate? give cert_file and key_file"
        elif self.config.client_cert:
            hint = "did it refuse this client's certificate?"
        else:
            hint = "does it require a client certificate?"
        return TlsError(f"the TLS session with {self.where} ended before the server answered "
                        f"({cause}): {hint}")
