package relgraph

// TLS to relgraphd (docs/security.md): the options (a *tls.Config, or PEM files as the C++
// client's net::TlsClientOptions names them), the handshake run right after the TCP connect
// and before HELLO, and the words for a handshake that fails. A failure the server or the
// certificates cause (an untrusted, expired or misnamed certificate, a client certificate the
// server wants, a plain port answering in plain text) is a *TLSError inside the *ConnError:
// redialing cannot cure it, so the Client, a Subscription and the ClusterClient return it at
// once instead of retrying. A broken network during the handshake is a plain *ConnError.
//
// Thread-safety: a TLSOptions is plain data; tlsSetup is read-only once made.

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync/atomic"
	"time"
)

// TLSOptions turn TLS on from PEM files. The zero value (&TLSOptions{}) is TLS trusting the
// system's CAs and verifying the server's certificate and host name.
type TLSOptions struct {
	CAFile string // the CAs that sign the server's certificate (PEM); empty: the system's
	// CertFile and KeyFile: a client certificate and its key (PEM), for mutual TLS; a
	// certificate whose subject CN is a `cert` client of the server's clients file names the
	// client without a token.
	CertFile string
	KeyFile  string
	// ServerName: the name the server's certificate must carry; empty: the host dialed.
	ServerName string
	// InsecureSkipVerify accepts ANY server certificate: the link is encrypted but not
	// authenticated, so anyone on the path can read and change it. For tests only.
	InsecureSkipVerify bool
}

// TLSError is why a TLS connection could not be made: a *ConnError's Err.
type TLSError struct {
	Reason string // in words: "the server's certificate is not signed by a trusted CA"
	// Err is the cause: an x509.UnknownAuthorityError, x509.HostnameError or
	// x509.CertificateInvalidError, the TLS alert the server sent, or the plain-text *Error a
	// server without TLS answered with.
	Err error
}

func (e *TLSError) Error() string {
	s := "TLS handshake failed: " + e.Reason
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}
func (e *TLSError) Unwrap() error { return e.Err }

// isTLSError says err holds a *TLSError: a refusal redialing does not cure.
func isTLSError(err error) bool {
	var te *TLSError
	return errors.As(err, &te)
}

// tlsSetup is a ready TLS configuration; nil means plain TCP.
type tlsSetup struct {
	config *tls.Config
}

// makeTLS builds the configuration: native wins over files; neither is plain TCP (nil). A
// file that does not load is an *Error with CodeInvalidArgument naming it.
func makeTLS(native *tls.Config, files *TLSOptions) (*tlsSetup, error) {
	if native != nil {
		return &tlsSetup{config: native}, nil
	}
	if files == nil {
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: files.ServerName,
		InsecureSkipVerify: files.InsecureSkipVerify}
	if files.CAFile != "" {
		pem, err := os.ReadFile(files.CAFile)
		if err != nil {
			return nil, tlsFileError("cannot read the CA file", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, tlsFileError("no PEM certificate in the CA file "+files.CAFile, nil)
		}
		cfg.RootCAs = pool
	}
	if files.CertFile != "" || files.KeyFile != "" {
		if files.CertFile == "" || files.KeyFile == "" {
			return nil, tlsFileError("a client certificate needs both CertFile and KeyFile", nil)
		}
		pair, err := tls.LoadX509KeyPair(files.CertFile, files.KeyFile)
		if err != nil {
			return nil, tlsFileError("cannot load the client certificate "+files.CertFile+" with its key "+files.KeyFile, err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return &tlsSetup{config: cfg}, nil
}

func tlsFileError(what string, err error) *Error {
	msg := "TLS: " + what
	if err != nil {
		msg += ": " + err.Error()
	}
	return &Error{Code: CodeInvalidArgument, Message: msg}
}

// tlsConn is a TLS connection whose handshake is done, and what it knows for explaining a
// refusal that comes at the first read (TLS 1.3 refuses a missing client certificate after
// the client's handshake is over).
type tlsConn struct {
	*tls.Conn
	cert certStatus
}

// certStatus: what became of a client certificate in the handshake.
type certStatus int32

const (
	certNotAsked    certStatus = iota // the server asked for none
	certGiven                         // the server asked and got one
	certNone                          // the server asked; there was none to give
	certNotAccepted                   // the server asked; none given is from a CA it names
)

// refusal words a refusal that a missing client certificate explains ("" when it does not).
func (s certStatus) refusal() string {
	switch s {
	case certNone:
		return "the server requires a client certificate (TLSOptions.CertFile and KeyFile) and none was given"
	case certNotAccepted:
		return "the server requires a client certificate signed by a CA it trusts, and the one given is not (so it was not sent)"
	}
	return ""
}

// handshake runs TLS on nc for addr within ctx. On failure nc is closed and the error is a
// *ConnError (with a *TLSError when the cause is not the network).
func (t *tlsSetup) handshake(ctx context.Context, nc net.Conn, addr string) (*tlsConn, error) {
	cfg := t.config.Clone()
	if cfg.ServerName == "" {
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			host = addr
		}
		cfg.ServerName = host
	}
	var asked atomic.Int32 // a certStatus
	if cfg.GetClientCertificate == nil {
		// crypto/tls's own choice (the first certificate the server's request accepts, else
		// none), noting what happened: it explains a refusal.
		certs := cfg.Certificates
		cfg.GetClientCertificate = func(cri *tls.CertificateRequestInfo) (*tls.Certificate, error) {
			for i := range certs {
				if cri.SupportsCertificate(&certs[i]) == nil {
					asked.Store(int32(certGiven))
					return &certs[i], nil
				}
			}
			if len(certs) == 0 {
				asked.Store(int32(certNone))
			} else {
				asked.Store(int32(certNotAccepted))
			}
			return &tls.Certificate{}, nil
		}
	}
	rec := &recordingConn{Conn: nc}
	tc := tls.Client(rec, cfg)
	err := tc.HandshakeContext(ctx)
	rec.stop()
	if err == nil {
		return &tlsConn{Conn: tc, cert: certStatus(asked.Load())}, nil
	}
	why := explainHandshake(ctx, err, rec, nc, certStatus(asked.Load()), cfg.ServerName)
	nc.Close()
	return nil, &ConnError{Addr: addr, Err: why}
}

// explainHandshake turns a failed handshake's error into the reason a user can act on.
func explainHandshake(ctx context.Context, err error, rec *recordingConn, nc net.Conn, cert certStatus, name string) error {
	var unknown x509.UnknownAuthorityError
	var host x509.HostnameError
	var invalid x509.CertificateInvalidError
	switch {
	case errors.As(err, &unknown):
		return &TLSError{Reason: "the server's certificate is not signed by a trusted CA (TLSOptions.CAFile)", Err: err}
	case errors.As(err, &host):
		return &TLSError{Reason: fmt.Sprintf("the server's certificate is not for %q (TLSOptions.ServerName names the one it must carry)", name), Err: err}
	case errors.As(err, &invalid) && invalid.Reason == x509.Expired:
		return &TLSError{Reason: "the server's certificate has expired or is not yet valid", Err: err}
	case errors.As(err, &invalid):
		return &TLSError{Reason: "the server's certificate is not valid", Err: err}
	}
	if notice := plainAnswer(ctx, rec.seen, nc); notice != nil {
		return &TLSError{Reason: "the server answered in plain text; is TLS enabled on it?", Err: notice}
	}
	if why := cert.refusal(); why != "" {
		return &TLSError{Reason: why, Err: err}
	}
	if isRemoteAlert(err) {
		return &TLSError{Reason: "the server refused the handshake", Err: err}
	}
	if ctx.Err() != nil {
		return fmt.Errorf("TLS handshake: %w", ctx.Err())
	}
	return fmt.Errorf("TLS handshake: %w", err)
}

// afterHandshake explains a connection that broke at the first read after a handshake: with
// TLS 1.3 a server refuses a missing client certificate only then, with an alert (or a
// close). Other failures come back as they are.
func (t *tlsConn) afterHandshake(err error) error {
	if why := t.cert.refusal(); why != "" {
		return &TLSError{Reason: why + "; it refused the connection after the handshake", Err: err}
	}
	if isRemoteAlert(err) {
		return &TLSError{Reason: "the server refused the connection after the handshake", Err: err}
	}
	return err
}

// isRemoteAlert: the server sent a TLS alert (crypto/tls reports it as an OpError "remote error").
func isRemoteAlert(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "remote error"
}

// plainAnswer decodes the relgraph frame a server without TLS answered a ClientHello with (a
// NOTICE "this port does not speak TLS"); nil when seen does not start one. The rest of the
// frame is read from nc when only its start was seen.
func plainAnswer(ctx context.Context, seen []byte, nc net.Conn) *Error {
	if len(seen) < headerBytes {
		return nil
	}
	length := binary.LittleEndian.Uint32(seen)
	op, status := Opcode(seen[8]), seen[9]
	if op != OpNotice || status == 0 || length < 6 || length > 4096 {
		return nil
	}
	frame := make([]byte, 4+int(length))
	n := copy(frame, seen)
	if n < len(frame) {
		deadline, ok := ctx.Deadline()
		if !ok || time.Until(deadline) > time.Second {
			deadline = time.Now().Add(time.Second)
		}
		_ = nc.SetReadDeadline(deadline)
		if _, err := io.ReadFull(nc, frame[n:]); err != nil {
			return &Error{Code: Code(status), Op: OpNotice, Message: "(the rest of its message was not received)"}
		}
	}
	return decodeError(OpNotice, status, frame[headerBytes:])
}

// recordingConn keeps the first bytes read during the handshake, to explain a plain answer.
type recordingConn struct {
	net.Conn
	seen    []byte
	stopped atomic.Bool
}

func (r *recordingConn) Read(p []byte) (int, error) {
	n, err := r.Conn.Read(p)
	if n > 0 && !r.stopped.Load() && len(r.seen) < 4096 {
		r.seen = append(r.seen, p[:n]...)
	}
	return n, err
}

// stop ends the recording (the handshake is over: only the reader goroutine reads then).
func (r *recordingConn) stop() { r.stopped.Store(true) }
