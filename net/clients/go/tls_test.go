package relgraph

// TLS against a real relgraphd (docs/security.md): each test makes throwaway certificates
// with crypto/x509 (a CA, a server certificate for localhost and 127.0.0.1, client
// certificates whose CN names a client, a rogue CA's, a misnamed and an expired one) and
// starts its own server with the TLS flags. Covered: follow, fans and counts, the pool,
// reconnects and the change stream over TLS; an untrusted, misnamed or expired server
// certificate refused with a clear *TLSError; mutual TLS without a certificate; a client
// named by its certificate (read only: permission_denied for a follow) and by a token; a TLS
// client at a plain port and a plain client at a TLS port; the cluster client over TLS.

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// testCA is a throwaway certificate authority.
type testCA struct {
	cert   *x509.Certificate
	key    *ecdsa.PrivateKey
	dir    string
	CAFile string // its certificate, PEM
}

var serial int64 = 1

func newTestCA(t *testing.T, name string) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial++
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	ca := &testCA{cert: cert, key: key, dir: t.TempDir()}
	ca.CAFile = filepath.Join(ca.dir, "ca.crt")
	writePEM(t, ca.CAFile, "CERTIFICATE", der)
	return ca
}

// leaf is an issued certificate's files.
type leaf struct{ CertFile, KeyFile string }

// issue signs a certificate for cn with the SANs given ("DNS:x" or "IP:x"), valid from
// notBefore to notAfter, usable both ways (serverAuth and clientAuth), as docs/security.md's
// test setup makes them.
func (ca *testCA) issue(t *testing.T, cn string, sans []string, notBefore, notAfter time.Time) leaf {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial++
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: cn},
		NotBefore: notBefore, NotAfter: notAfter, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}}
	for _, s := range sans {
		switch {
		case strings.HasPrefix(s, "DNS:"):
			tmpl.DNSNames = append(tmpl.DNSNames, s[4:])
		case strings.HasPrefix(s, "IP:"):
			tmpl.IPAddresses = append(tmpl.IPAddresses, net.ParseIP(s[3:]))
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	pkcs8, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	l := leaf{CertFile: filepath.Join(ca.dir, cn+".crt"), KeyFile: filepath.Join(ca.dir, cn+".key")}
	writePEM(t, l.CertFile, "CERTIFICATE", der)
	writePEM(t, l.KeyFile, "PRIVATE KEY", pkcs8)
	return l
}

// valid issues a certificate valid from an hour ago for a day.
func (ca *testCA) valid(t *testing.T, cn string, sans ...string) leaf {
	return ca.issue(t, cn, sans, time.Now().Add(-time.Hour), time.Now().Add(24*time.Hour))
}

func writePEM(t *testing.T, path, kind string, der []byte) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}

// startTLSServer runs relgraphd speaking TLS with the server certificate given, and flags.
func startTLSServer(t *testing.T, cert leaf, flags ...string) *server {
	return startServer(t, append([]string{"--http=off", "--tls-cert=" + cert.CertFile,
		"--tls-key=" + cert.KeyFile}, flags...)...)
}

// tlsRefusal checks that err is a *ConnError holding a *TLSError whose text says `says`.
func tlsRefusal(t *testing.T, what string, err error, says string) {
	t.Helper()
	var ce *ConnError
	var te *TLSError
	if !errors.As(err, &ce) || !errors.As(err, &te) {
		t.Fatalf("%s: want a *ConnError holding a *TLSError, got %T: %v", what, err, err)
	}
	if !strings.Contains(err.Error(), says) {
		t.Fatalf("%s: the error does not say %q: %v", what, says, err)
	}
	t.Logf("%s: %v", what, err)
}

func TestTLSRoundTripReconnectAndStream(t *testing.T) {
	ca := newTestCA(t, "relgraph test CA")
	s := startTLSServer(t, ca.valid(t, "localhost", "DNS:localhost", "IP:127.0.0.1"))
	c := s.client(t, Options{PoolSize: 1, TLS: &TLSOptions{CAFile: ca.CAFile}})
	ctx := ctxT(t)

	sub, err := c.Subscribe(ctx, SubscribeOptions{From: FromNow})
	if err != nil {
		t.Fatalf("subscribe over TLS: %v", err)
	}
	defer sub.Close()
	if r, err := c.Follow(ctx, 1, 2); err != nil || !r.Created {
		t.Fatalf("follow over TLS: %+v %v", r, err)
	}
	if _, err := c.Follow(ctx, 3, 2); err != nil {
		t.Fatal(err)
	}
	p, err := c.Fans(ctx, PageQuery{User: 2, Limit: 10, Viewer: 1})
	if err != nil || len(p.Entries) != 2 || p.Entries[0].User != 3 || p.Entries[1].User != 1 {
		t.Fatalf("fans over TLS: %+v %v", p, err)
	}
	if n, err := c.Counts(ctx, 2); err != nil || n.Fans != 2 || n.Following != 0 {
		t.Fatalf("counts over TLS: %+v %v", n, err)
	}
	for i, want := range [][2]uint64{{1, 2}, {3, 2}} {
		ev, err := sub.Next(ctx)
		if err != nil || ev.A != want[0] || ev.B != want[1] {
			t.Fatalf("event %d over TLS: %+v %v, want %v", i, ev, err, want)
		}
	}

	// A restart: the pool and the subscription dial again, with TLS.
	s.restart()
	if _, err := c.Follow(ctx, 4, 2); err != nil {
		t.Fatalf("follow after a restart: %v", err)
	}
	if ev, err := sub.Next(ctx); err != nil || ev.A != 4 || ev.B != 2 {
		t.Fatalf("the stream after a restart: %+v %v", ev, err)
	}
	if n, err := c.Counts(ctx, 2); err != nil || n.Fans != 3 {
		t.Fatalf("counts after a restart: %+v %v", n, err)
	}

	// Dial (one Conn) takes the same options.
	cn, err := Dial(ctx, s.addr, DialOptions{TLS: &TLSOptions{CAFile: ca.CAFile}})
	if err != nil {
		t.Fatalf("Dial over TLS: %v", err)
	}
	defer cn.Close()
	if _, err := cn.RoundTrip(ctx, OpPing, nil); err != nil {
		t.Fatal(err)
	}
}

func TestTLSPoolAndNativeConfig(t *testing.T) {
	ca := newTestCA(t, "relgraph test CA")
	s := startTLSServer(t, ca.valid(t, "localhost", "DNS:localhost", "IP:127.0.0.1"))
	roots := x509.NewCertPool()
	roots.AddCert(ca.cert)
	rogue := newTestCA(t, "rogue CA")
	// The native configuration wins over the files (which trust the wrong CA).
	c := s.client(t, Options{PoolSize: 4, TLSConfig: &tls.Config{RootCAs: roots},
		TLS: &TLSOptions{CAFile: rogue.CAFile}})
	ctx := ctxT(t)
	const workers, per = 16, 25
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < per; i++ {
				if _, err := c.Follow(ctx, uint64(100+w), uint64(1000+i)); err != nil {
					errs <- err
					return
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("a follow through the TLS pool: %v", err)
	}
	for w := 0; w < workers; w++ {
		if n, err := c.Counts(ctx, uint64(100+w)); err != nil || n.Following != per {
			t.Fatalf("counts of %d: %+v %v", 100+w, n, err)
		}
	}
	for i := 0; i < per; i++ {
		if n, err := c.Counts(ctx, uint64(1000+i)); err != nil || n.Fans != workers {
			t.Fatalf("counts of %d: %+v %v", 1000+i, n, err)
		}
	}
	used := 0
	for _, sl := range c.slots {
		if cn := sl.conn.Load(); cn != nil && cn.tls != nil {
			used++
		}
	}
	if used < 2 {
		t.Fatalf("%d pooled TLS connections, want several", used)
	}
}

func TestTLSUntrustedServerRefused(t *testing.T) {
	rogue := newTestCA(t, "rogue CA")
	trusted := newTestCA(t, "relgraph test CA")
	s := startTLSServer(t, rogue.valid(t, "localhost", "DNS:localhost", "IP:127.0.0.1"))
	ctx := ctxT(t)
	_, err := Connect(ctx, Options{Addr: s.addr, TLS: &TLSOptions{CAFile: trusted.CAFile}})
	tlsRefusal(t, "a rogue CA's server", err, "not signed by a trusted CA")
	var unknown x509.UnknownAuthorityError
	if !errors.As(err, &unknown) {
		t.Fatalf("the cause is not an x509.UnknownAuthorityError: %v", err)
	}
	// The dangerous switch: anything goes.
	c2 := s.client(t, Options{TLS: &TLSOptions{InsecureSkipVerify: true}})
	if err := c2.Ping(ctx); err != nil {
		t.Fatalf("InsecureSkipVerify: %v", err)
	}
}

// A running subscription whose server comes back with a certificate from another CA ends
// with the refusal instead of resuming for ever.
func TestTLSSubscriptionEndsOnARefusedResume(t *testing.T) {
	trusted := newTestCA(t, "relgraph test CA")
	rogue := newTestCA(t, "rogue CA")
	s := startTLSServer(t, trusted.valid(t, "localhost", "DNS:localhost", "IP:127.0.0.1"))
	c := s.client(t, Options{TLS: &TLSOptions{CAFile: trusted.CAFile}})
	ctx := ctxT(t)
	sub, err := c.Subscribe(ctx, SubscribeOptions{From: FromNow})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	s.stop()
	bad := rogue.valid(t, "localhost", "DNS:localhost", "IP:127.0.0.1")
	s.args = []string{"--http=off", "--tls-cert=" + bad.CertFile, "--tls-key=" + bad.KeyFile}
	s.start()
	_, err = sub.Next(ctx)
	tlsRefusal(t, "a resume refused", err, "not signed by a trusted CA")
}

func TestTLSHostNameMismatchAndServerName(t *testing.T) {
	ca := newTestCA(t, "relgraph test CA")
	s := startTLSServer(t, ca.valid(t, "relgraph.internal", "DNS:relgraph.internal"))
	ctx := ctxT(t)
	_, err := Connect(ctx, Options{Addr: s.addr, TLS: &TLSOptions{CAFile: ca.CAFile}})
	tlsRefusal(t, "a certificate for another name", err, `not for "127.0.0.1"`)
	var host x509.HostnameError
	if !errors.As(err, &host) {
		t.Fatalf("the cause is not an x509.HostnameError: %v", err)
	}
	c := s.client(t, Options{TLS: &TLSOptions{CAFile: ca.CAFile, ServerName: "relgraph.internal"}})
	if n, err := c.Counts(ctx, 1); err != nil || n != (Counts{}) {
		t.Fatalf("with ServerName: %+v %v", n, err)
	}
}

// An expired certificate: relgraphd refuses to start with one, so a Go TLS server serves it,
// counting the connections it accepts: a refused handshake is not dialed again.
func TestTLSExpiredServerCertificateRefusedNotRetried(t *testing.T) {
	ca := newTestCA(t, "relgraph test CA")
	old := ca.issue(t, "localhost", []string{"IP:127.0.0.1"}, time.Now().Add(-48*time.Hour), time.Now().Add(-24*time.Hour))
	pair, err := tls.LoadX509KeyPair(old.CertFile, old.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	l, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{pair}})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var accepted atomic.Int32
	go func() {
		for {
			nc, err := l.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			go func() { _ = nc.(*tls.Conn).Handshake(); nc.Close() }()
		}
	}()
	ctx := ctxT(t)
	_, err = Connect(ctx, Options{Addr: l.Addr().String(), TLS: &TLSOptions{CAFile: ca.CAFile}})
	tlsRefusal(t, "an expired certificate", err, "has expired")
	var invalid x509.CertificateInvalidError
	if !errors.As(err, &invalid) || invalid.Reason != x509.Expired {
		t.Fatalf("the cause is not x509.Expired: %v", err)
	}
	// A call (5 retries allowed) and a subscription return the refusal after one dial each.
	c := New(Options{Addr: l.Addr().String(), TLS: &TLSOptions{CAFile: ca.CAFile}, BackoffMin: time.Millisecond})
	defer c.Close()
	_, err = c.Counts(ctx, 1)
	tlsRefusal(t, "a call to an expired certificate", err, "has expired")
	_, err = c.Subscribe(ctx, SubscribeOptions{From: FromNow})
	tlsRefusal(t, "a subscription to an expired certificate", err, "has expired")
	if n := accepted.Load(); n != 3 {
		t.Fatalf("%d connections for a connect, a call and a subscription: the refusal was retried", n)
	}
}

func TestTLSMutualWithoutClientCertificateRefused(t *testing.T) {
	ca := newTestCA(t, "relgraph test CA")
	s := startTLSServer(t, ca.valid(t, "localhost", "DNS:localhost", "IP:127.0.0.1"),
		"--tls-ca="+ca.CAFile, "--tls-require-client-cert")
	ctx := ctxT(t)
	_, err := Connect(ctx, Options{Addr: s.addr, TLS: &TLSOptions{CAFile: ca.CAFile}})
	tlsRefusal(t, "no client certificate", err, "the server requires a client certificate")
	if strings.Contains(err.Error(), "EOF") && !strings.Contains(err.Error(), "client certificate") {
		t.Fatalf("a bare EOF: %v", err)
	}
	// A certificate from another CA is refused by the server too.
	rogue := newTestCA(t, "rogue CA")
	bad := rogue.valid(t, "stranger")
	_, err = Connect(ctx, Options{Addr: s.addr, TLS: &TLSOptions{CAFile: ca.CAFile, CertFile: bad.CertFile, KeyFile: bad.KeyFile}})
	tlsRefusal(t, "a rogue client certificate", err, "signed by a CA it trusts, and the one given is not")
	// TLS 1.2: the refusal comes inside the handshake.
	roots := x509.NewCertPool()
	roots.AddCert(ca.cert)
	_, err = Connect(ctx, Options{Addr: s.addr, TLSConfig: &tls.Config{RootCAs: roots, MaxVersion: tls.VersionTLS12}})
	tlsRefusal(t, "no client certificate, TLS 1.2", err, "the server requires a client certificate")
	// With one from the CA it is served (no clients file: no name needed).
	good := ca.valid(t, "anyone")
	c := s.client(t, Options{TLS: &TLSOptions{CAFile: ca.CAFile, CertFile: good.CertFile, KeyFile: good.KeyFile}})
	if err := c.Ping(ctx); err != nil {
		t.Fatalf("with a client certificate: %v", err)
	}
}

func TestTLSClientsByCertificateAndToken(t *testing.T) {
	ca := newTestCA(t, "relgraph test CA")
	const token = "app-token-for-tests"
	sum := sha256.Sum256([]byte(token))
	clients := filepath.Join(t.TempDir(), "clients")
	if err := os.WriteFile(clients, []byte(fmt.Sprintf(
		"# the test's clients\nreader  read        cert\napp     read,write  token-sha256:%s\n",
		hex.EncodeToString(sum[:]))), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startTLSServer(t, ca.valid(t, "localhost", "DNS:localhost", "IP:127.0.0.1"),
		"--tls-ca="+ca.CAFile, "--clients-file="+clients)
	ctx := ctxT(t)

	// The token client over TLS writes.
	app := s.client(t, Options{Token: token, TLS: &TLSOptions{CAFile: ca.CAFile}})
	if _, err := app.Follow(ctx, 1, 2); err != nil {
		t.Fatalf("the token client's follow: %v", err)
	}
	if _, err := Connect(ctx, Options{Addr: s.addr, Token: "wrong", TLS: &TLSOptions{CAFile: ca.CAFile}}); !errors.Is(err, CodeUnauthenticated) {
		t.Fatalf("a wrong token over TLS: %v", err)
	}
	// The certificate client (CN reader) reads only.
	rc := ca.valid(t, "reader")
	reader := s.client(t, Options{TLS: &TLSOptions{CAFile: ca.CAFile, CertFile: rc.CertFile, KeyFile: rc.KeyFile}})
	_, err := reader.Follow(ctx, 3, 2)
	if !errors.Is(err, CodePermissionDenied) || CodeOf(err) != CodePermissionDenied {
		t.Fatalf("the read-only client's follow: %v", err)
	}
	if n, err := reader.Counts(ctx, 2); err != nil || n.Fans != 1 {
		t.Fatalf("the read-only client's counts: %+v %v", n, err)
	}
	// Neither a token nor a certificate naming a client: refused at HELLO.
	_, err = Connect(ctx, Options{Addr: s.addr, TLS: &TLSOptions{CAFile: ca.CAFile}})
	if !errors.Is(err, CodeUnauthenticated) {
		t.Fatalf("no credential: %v", err)
	}
}

func TestTLSClientAtAPlainPort(t *testing.T) {
	ca := newTestCA(t, "relgraph test CA")
	s := startServer(t, "--http=off")
	_, err := Connect(ctxT(t), Options{Addr: s.addr, TLS: &TLSOptions{CAFile: ca.CAFile}})
	tlsRefusal(t, "TLS at a plain port", err, "the server answered in plain text; is TLS enabled on it?")
	if !strings.Contains(err.Error(), "this port does not speak TLS") || !errors.Is(err, CodeProtocolError) {
		t.Fatalf("the server's own words are missing: %v", err)
	}
}

func TestPlainClientAtATLSPort(t *testing.T) {
	ca := newTestCA(t, "relgraph test CA")
	s := startTLSServer(t, ca.valid(t, "localhost", "DNS:localhost", "IP:127.0.0.1"))
	_, err := Connect(ctxT(t), Options{Addr: s.addr})
	var ce *ConnError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "this port speaks TLS only") || ce.Sent {
		t.Fatalf("a plain client at a TLS port: %#v %v", err, err)
	}
	t.Logf("a plain client at a TLS port: %v", err)
}

func TestTLSFilesThatDoNotLoad(t *testing.T) {
	ctx := ctxT(t)
	missing := filepath.Join(t.TempDir(), "none.crt")
	_, err := Connect(ctx, Options{Addr: "127.0.0.1:1", TLS: &TLSOptions{CAFile: missing}})
	if !errors.Is(err, CodeInvalidArgument) || !strings.Contains(err.Error(), missing) {
		t.Fatalf("a missing CA file: %v", err)
	}
	ca := newTestCA(t, "relgraph test CA")
	_, err = Connect(ctx, Options{Addr: "127.0.0.1:1", TLS: &TLSOptions{CertFile: ca.CAFile}})
	if !errors.Is(err, CodeInvalidArgument) || !strings.Contains(err.Error(), "KeyFile") {
		t.Fatalf("a certificate without its key: %v", err)
	}
	_, err = ConnectCluster(ctx, ClusterOptions{Seeds: []string{"127.0.0.1:1"}, TLS: &TLSOptions{CAFile: missing}})
	if !errors.Is(err, CodeInvalidArgument) {
		t.Fatalf("a missing CA file, cluster: %v", err)
	}
}

func TestClusterOverTLS(t *testing.T) {
	ca := newTestCA(t, "relgraph test CA")
	cert := ca.valid(t, "localhost", "DNS:localhost", "IP:127.0.0.1")
	t.Setenv("RELGRAPH_TLS_CA", ca.CAFile) // start_cluster.sh's relgraph-cli checks the shards over TLS
	tc := startCluster(t, "--shards=2", "--buckets=16", "--tls-cert="+cert.CertFile, "--tls-key="+cert.KeyFile)
	ctx := ctxT(t)
	seeds := []string{tc.shards()[0].addr}
	if _, err := ConnectCluster(ctx, ClusterOptions{Seeds: seeds}); err == nil || !strings.Contains(err.Error(), "this port speaks TLS only") {
		t.Fatalf("a plain cluster client at TLS shards: %v", err)
	}
	rogue := newTestCA(t, "rogue CA")
	_, err := ConnectCluster(ctx, ClusterOptions{Seeds: seeds, TLS: &TLSOptions{CAFile: rogue.CAFile}})
	tlsRefusal(t, "a cluster client trusting another CA", err, "not signed by a trusted CA")
	cc, err := ConnectCluster(ctx, ClusterOptions{Seeds: seeds, TLS: &TLSOptions{CAFile: ca.CAFile}})
	if err != nil {
		t.Fatalf("connect the cluster over TLS: %v", err)
	}
	defer cc.Close()
	m := cc.Map()
	// Users on both shards follow user 1; a viewer on the other shard sees its relations.
	var onOther, onSame uint64
	for u := uint64(2); u < 200; u++ {
		if _, err := cc.Follow(ctx, u, 1); err != nil {
			t.Fatalf("follow %d 1: %v", u, err)
		}
		if onOther == 0 && m.OwnerOf(u) != m.OwnerOf(1) {
			onOther = u
		}
		if onSame == 0 && m.OwnerOf(u) == m.OwnerOf(1) {
			onSame = u
		}
	}
	if onOther == 0 || onSame == 0 {
		t.Fatal("the users are not on both shards")
	}
	if _, err := cc.Follow(ctx, onOther, onSame); err != nil {
		t.Fatal(err)
	}
	if err := cc.Barrier(ctx); err != nil {
		t.Fatal(err)
	}
	if n, err := cc.Counts(ctx, 1); err != nil || n.Fans != 198 {
		t.Fatalf("counts of 1: %+v %v", n, err)
	}
	if n, err := cc.Counts(ctx, onOther); err != nil || n.Following != 2 {
		t.Fatalf("counts of %d: %+v %v", onOther, n, err)
	}
	p, err := cc.Fans(ctx, PageQuery{User: 1, Limit: 1000, Viewer: onOther})
	if err != nil || len(p.Entries) != 198 {
		t.Fatalf("fans of 1 with viewer %d: %d entries, %v", onOther, len(p.Entries), err)
	}
	for _, e := range p.Entries {
		if e.User == onSame && e.ViewerRelation&RelFollowing == 0 {
			t.Fatalf("the entry of %d, followed by the viewer on the other shard: %+v", onSame, e)
		}
	}
	for _, sh := range m.Shards {
		c, err := cc.Shard(ctx, sh.ID)
		if err != nil {
			t.Fatal(err)
		}
		if cn := c.slots[0].conn.Load(); cn != nil && cn.tls == nil {
			t.Fatalf("shard %d's connection is plain", sh.ID)
		}
	}
}
