package relgraph

// Conn: one connection to relgraphd, multiplexed. Any number of goroutines call RoundTrip
// at once; each request gets its own request id, its frame is appended to a shared write
// buffer that one writer goroutine flushes (so concurrent callers' frames leave in few
// writes: pipelining without a batch API), and one reader goroutine hands each reply to
// the caller waiting on its id. Frames the server pushes (EVENTS, SNAPSHOT_DATA, RECORDS)
// for the request that started a stream go to the pushes channel instead. With TLS (tls.go)
// the handshake runs right after the TCP connect, before HELLO, within DialTimeout; a
// refusal the server sends only at the first read (TLS 1.3, a client certificate missing)
// is explained there.
//
// A transport failure (or a NOTICE, which precedes a close) breaks the Conn for good: every
// waiting call fails with a *ConnError and later calls fail at once; the Client's pool makes
// a new one. A caller whose context ends stops waiting; its reply is dropped when it comes,
// and the Conn stays usable.
//
// Thread-safety: every method may be called from any goroutine.

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime"
	"sync"
	"time"
)

type reply struct {
	status uint8
	body   []byte
	err    error // a transport failure
}

type pending struct {
	op    Opcode
	ch    chan reply // cap 1; nil: nobody waits (fire and forget), or a batch's
	batch *batch     // set for a request of a Pipeline
	idx   int        // its place in the batch
}

// batch collects the replies of a Pipeline's requests; done closes when all have come (or
// the connection broke).
type batch struct {
	replies []reply
	left    int32 // under Conn.mu
	done    chan struct{}
}

// frame is a pushed frame.
type frame struct {
	op     Opcode
	status uint8
	body   []byte
}

// Conn is one connection after a successful HELLO.
type Conn struct {
	addr  string
	nc    net.Conn // what frames are read and written on: raw, or its TLS
	raw   net.Conn // the TCP connection, closed when the Conn breaks
	tls   *tlsConn // nil: plain TCP
	hello Hello

	mu      sync.Mutex
	wbuf    []byte // frames not yet written
	pend    map[uint32]pending
	nextID  uint32
	broken  error // set once; every later call fails with it
	pushID  uint32
	pushOps [2]Opcode // the opcodes pushed for pushID
	pushes  chan frame

	wake chan struct{} // cap 1: the writer has work
	done chan struct{} // closed when broken
}

// DialOptions are what Dial needs besides the address.
type DialOptions struct {
	Token       string        // sent in HELLO
	DialTimeout time.Duration // connect + TLS handshake + HELLO; 0: 5 s
	// TLSConfig: speak TLS with this configuration (it wins over TLS). An empty ServerName
	// is the host of addr.
	TLSConfig *tls.Config
	// TLS: speak TLS configured from PEM files (read at each Dial). Both nil: plain TCP.
	TLS *TLSOptions
}

// Dial connects to addr ("host:port"), runs the TLS handshake when asked, and performs
// HELLO in protocol version 2, or in version 1 when the server answers unsupported. A
// refused token is an *Error with CodeUnauthenticated; a failed handshake a *ConnError
// holding a *TLSError (tls.go); a TLS file that does not load an *Error with
// CodeInvalidArgument.
func Dial(ctx context.Context, addr string, o DialOptions) (*Conn, error) {
	setup, err := makeTLS(o.TLSConfig, o.TLS)
	if err != nil {
		return nil, err
	}
	return dial(ctx, addr, o.Token, o.DialTimeout, setup)
}

// dial is Dial with its TLS configuration made (nil: plain TCP).
func dial(ctx context.Context, addr, token string, timeout time.Duration, setup *tlsSetup) (*Conn, error) {
	c, err := dialVersion(ctx, addr, token, timeout, setup, ProtocolVersion)
	if err != nil && errors.Is(err, CodeUnsupported) {
		return dialVersion(ctx, addr, token, timeout, setup, 1)
	}
	return c, err
}

func dialVersion(ctx context.Context, addr, token string, timeout time.Duration, setup *tlsSetup, version uint16) (*Conn, error) {
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	dctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var d net.Dialer
	nc, err := d.DialContext(dctx, "tcp", addr)
	if err != nil {
		return nil, &ConnError{Addr: addr, Err: err}
	}
	c := &Conn{addr: addr, nc: nc, raw: nc, pend: make(map[uint32]pending), nextID: 1,
		wake: make(chan struct{}, 1), done: make(chan struct{})}
	if setup != nil {
		tc, err := setup.handshake(dctx, nc, addr)
		if err != nil {
			return nil, err
		}
		c.nc, c.tls = tc, tc
	}
	go c.writeLoop()
	go c.readLoop()
	var e enc
	e.u16(version)
	e.str(token)
	body, err := c.RoundTrip(dctx, OpHello, e.b)
	if err != nil {
		c.Close()
		var ce *ConnError
		if errors.As(err, &ce) {
			ce.Sent = false // HELLO was written, not the caller's request
		}
		return nil, err
	}
	d2 := newDec(body, "HELLO reply")
	c.hello = decodeHello(d2, version)
	if err := d2.done(); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// Hello is the server's HELLO reply.
func (c *Conn) Hello() Hello { return c.hello }

// Addr is the address dialed.
func (c *Conn) Addr() string { return c.addr }

// Err is nil while the Conn is usable, else why it broke.
func (c *Conn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.broken
}

// Close breaks the connection; waiting calls fail.
func (c *Conn) Close() error {
	c.fail(ErrClosed)
	return nil
}

// send appends one request frame and registers who waits for its reply. It returns the
// request id, or the error that broke the Conn.
func (c *Conn) send(op Opcode, body []byte, p pending) (uint32, error) {
	c.mu.Lock()
	if c.broken != nil {
		err := c.broken
		c.mu.Unlock()
		return 0, &ConnError{Addr: c.addr, Err: err}
	}
	id := c.nextID
	c.nextID++
	if c.nextID == 0 {
		c.nextID = 1
	}
	c.pend[id] = p
	wasEmpty := len(c.wbuf) == 0
	c.wbuf = appendFrame(c.wbuf, id, op, 0, body)
	c.mu.Unlock()
	if wasEmpty {
		select {
		case c.wake <- struct{}{}:
		default:
		}
	}
	return id, nil
}

// RoundTrip sends one request and waits for its reply body. A server error is an *Error; a
// broken connection a *ConnError (Sent: the outcome is unknown); the context's end a
// CodeTimeout *Error.
func (c *Conn) RoundTrip(ctx context.Context, op Opcode, body []byte) ([]byte, error) {
	ch := make(chan reply, 1)
	id, err := c.send(op, body, pending{op: op, ch: ch})
	if err != nil {
		return nil, err
	}
	return c.wait(ctx, id, op, ch)
}

func (c *Conn) wait(ctx context.Context, id uint32, op Opcode, ch chan reply) ([]byte, error) {
	select {
	case r := <-ch:
		if r.err != nil {
			return nil, &ConnError{Addr: c.addr, Sent: true, Err: r.err}
		}
		if r.status != 0 {
			return nil, decodeError(op, r.status, r.body)
		}
		return r.body, nil
	case <-ctx.Done():
		c.mu.Lock()
		delete(c.pend, id)
		c.mu.Unlock()
		return nil, timeoutError(op, ctx.Err())
	}
}

// startStream sends a request whose success makes the server push frames of pushOps with
// its request id, and returns the reply and the channel those frames arrive on (closed when
// the Conn breaks). One stream per Conn.
func (c *Conn) startStream(ctx context.Context, op Opcode, body []byte, pushOps ...Opcode) ([]byte, <-chan frame, error) {
	ch := make(chan reply, 1)
	c.mu.Lock()
	if c.pushes != nil {
		c.mu.Unlock()
		return nil, nil, &Error{Code: CodeInvalidArgument, Op: op, Message: "this connection already carries a stream"}
	}
	c.pushes = make(chan frame, 64)
	c.pushID = c.nextID // the id send will give
	copy(c.pushOps[:], pushOps)
	c.mu.Unlock()
	id, err := c.send(op, body, pending{op: op, ch: ch})
	if err != nil {
		return nil, nil, err
	}
	if id != c.pushID {
		return nil, nil, &Error{Code: CodeInternal, Op: op, Message: "a stream must start on a quiet connection"}
	}
	b, err := c.wait(ctx, id, op, ch)
	if err != nil {
		return nil, nil, err
	}
	return b, c.pushes, nil
}

// sendBatch appends every request of a batch in one go (one write) and returns the batch
// whose done closes when every reply has come.
func (c *Conn) sendBatch(ops []Opcode, bodies [][]byte) (*batch, error) {
	b := &batch{replies: make([]reply, len(ops)), left: int32(len(ops)), done: make(chan struct{})}
	c.mu.Lock()
	if c.broken != nil {
		err := c.broken
		c.mu.Unlock()
		return nil, &ConnError{Addr: c.addr, Err: err}
	}
	wasEmpty := len(c.wbuf) == 0
	for i, op := range ops {
		id := c.nextID
		c.nextID++
		if c.nextID == 0 {
			c.nextID = 1
		}
		c.pend[id] = pending{op: op, batch: b, idx: i}
		c.wbuf = appendFrame(c.wbuf, id, op, 0, bodies[i])
	}
	if len(ops) == 0 {
		close(b.done)
	}
	c.mu.Unlock()
	if wasEmpty {
		select {
		case c.wake <- struct{}{}:
		default:
		}
	}
	return b, nil
}

// sendNoWait sends a request whose reply only matters when it is an error: that breaks the
// stream (REPLICA_ACK on the replicating connection, which must not wait on pushes).
func (c *Conn) sendNoWait(op Opcode, body []byte) error {
	_, err := c.send(op, body, pending{op: op})
	return err
}

func (c *Conn) fail(err error) {
	c.mu.Lock()
	if c.broken != nil {
		c.mu.Unlock()
		return
	}
	c.broken = err
	pend := c.pend
	c.pend = map[uint32]pending{}
	for _, p := range pend { // batches are counted under mu, as the reader counts them
		if p.batch != nil {
			p.batch.replies[p.idx] = reply{err: err}
			p.batch.left--
			if p.batch.left == 0 {
				close(p.batch.done)
			}
		}
	}
	c.mu.Unlock()
	close(c.done)
	c.raw.Close() // not TLS's Close: its close_notify could wait on a full socket
	for _, p := range pend {
		if p.ch != nil {
			p.ch <- reply{err: err}
		}
	}
}

func (c *Conn) writeLoop() {
	var spare []byte
	for {
		select {
		case <-c.wake:
		case <-c.done:
			return
		}
		runtime.Gosched() // callers woken with us add their frames: fewer, larger writes
		c.mu.Lock()
		buf := c.wbuf
		c.wbuf = spare[:0]
		c.mu.Unlock()
		if len(buf) == 0 {
			spare = buf
			continue
		}
		if _, err := c.nc.Write(buf); err != nil {
			c.fail(err)
			return
		}
		spare = buf
	}
}

func (c *Conn) readLoop() {
	r := bufio.NewReaderSize(c.nc, 64<<10)
	var hdr [headerBytes]byte
	var slab []byte
	first := true // nothing read yet: a TLS refusal after the handshake shows here
	defer func() {
		c.mu.Lock()
		p := c.pushes
		c.mu.Unlock()
		if p != nil {
			close(p)
		}
	}()
	for {
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			if first && c.tls != nil {
				err = c.tls.afterHandshake(err)
			}
			c.fail(err)
			return
		}
		first = false
		length := binary.LittleEndian.Uint32(hdr[0:])
		id := binary.LittleEndian.Uint32(hdr[4:])
		op, status := Opcode(hdr[8]), hdr[9]
		if length < 6 || length > 1<<30 {
			c.fail(fmt.Errorf("bad frame length %d from the server", length))
			return
		}
		// Small bodies are cut from a shared slab (one allocation per 64 KiB of replies).
		n := int(length - 6)
		var body []byte
		if n <= 1024 {
			if len(slab) < n {
				slab = make([]byte, 64<<10)
			}
			body, slab = slab[:n:n], slab[n:]
		} else {
			body = make([]byte, n)
		}
		if _, err := io.ReadFull(r, body); err != nil {
			c.fail(err)
			return
		}
		if op == OpNotice {
			c.fail(decodeError(OpNotice, status, body))
			return
		}
		c.mu.Lock()
		if c.pushes != nil && id == c.pushID && (op == c.pushOps[0] || op == c.pushOps[1]) && op != 0 {
			p := c.pushes
			c.mu.Unlock()
			select {
			case p <- frame{op: op, status: status, body: body}:
			case <-c.done:
				return
			}
			continue
		}
		p, ok := c.pend[id]
		delete(c.pend, id)
		if ok && p.batch != nil && p.op == op {
			p.batch.replies[p.idx] = reply{status: status, body: body}
			p.batch.left--
			if p.batch.left == 0 {
				close(p.batch.done)
			}
			c.mu.Unlock()
			continue
		}
		c.mu.Unlock()
		if !ok {
			continue // its caller stopped waiting
		}
		if p.op != op {
			c.fail(fmt.Errorf("reply to request %d has opcode %v, not %v", id, op, p.op))
			return
		}
		if p.ch != nil {
			p.ch <- reply{status: status, body: body}
		} else if status != 0 {
			c.fail(decodeError(op, status, body))
			return
		}
	}
}
