package relgraph

// Client: a pool of multiplexed connections to one relgraphd, safe to share across
// goroutines. Each call takes the next connection round-robin (dialing it, with backoff
// after failures, when it is missing or broken) and waits for its reply there.
//
// What is retried (Options.MaxRetries times, with backoff, within the call's context):
//   - a request that was never written (no connection could be had, or it broke first);
//   - a request whose connection broke after it was written, only when RetrySafe(op):
//     every command but PROMOTE and the stream starters (docs/protocol.md "Retrying");
//   - a write refused with read_only by a replica, when RetrySafe(op): the error's message
//     is the primary's HOST:PORT, and the Client sends this and every later request there
//     (with an empty message, a group electing its primary, it waits and asks again).
// Server errors are never retried otherwise; they are returned as *Error. Nor is a TLS
// refusal (a *ConnError holding a *TLSError: a certificate not trusted, a plain port...).
//
// Thread-safety: every method may be called from any goroutine.

import (
	"context"
	"crypto/tls"
	"errors"
	"math/rand"
	"sync"
	"sync/atomic"
	"time"
)

// Options configure a Client. Zero values take the defaults in brackets.
type Options struct {
	Addr        string        // "host:port" [127.0.0.1:7707]
	Token       string        // sent in HELLO (the server's --auth-token)
	PoolSize    int           // connections [2]
	DialTimeout time.Duration // one connect + HELLO [5 s]
	// CallTimeout bounds a call whose context has no deadline [30 s]; negative: none.
	CallTimeout time.Duration
	MaxRetries  int           // extra attempts of a call [5]; negative: none
	BackoffMin  time.Duration // first wait before a retry or redial, doubled up to [50 ms]
	BackoffMax  time.Duration // [2 s]
	// NoRedirect: return read_only to the caller instead of following it to the primary.
	NoRedirect bool
	// TLSConfig: speak TLS with this configuration; it wins over TLS. An empty ServerName
	// is the host of the address dialed.
	TLSConfig *tls.Config
	// TLS: speak TLS configured from PEM files (read once, by New). Both nil: plain TCP.
	TLS *TLSOptions
}

func (o *Options) defaults() {
	if o.Addr == "" {
		o.Addr = "127.0.0.1:7707"
	}
	if o.PoolSize <= 0 {
		o.PoolSize = 2
	}
	if o.DialTimeout <= 0 {
		o.DialTimeout = 5 * time.Second
	}
	if o.CallTimeout == 0 {
		o.CallTimeout = 30 * time.Second
	}
	if o.MaxRetries == 0 {
		o.MaxRetries = 5
	} else if o.MaxRetries < 0 {
		o.MaxRetries = 0
	}
	if o.BackoffMin <= 0 {
		o.BackoffMin = 50 * time.Millisecond
	}
	if o.BackoffMax <= 0 {
		o.BackoffMax = 2 * time.Second
	}
}

type slot struct {
	lock     chan struct{} // cap 1: held while dialing
	conn     atomic.Pointer[Conn]
	failures int // consecutive failed dials, under lock
	notUntil time.Time
}

// Client is a pool of connections to one server (or, after a read_only redirect, its primary).
type Client struct {
	Calls  // the typed calls, sent to this server
	opts   Options
	addr   atomic.Pointer[string]
	slots  []*slot
	next   atomic.Uint32
	closed atomic.Bool
	tls    *tlsSetup  // nil: plain TCP
	tlsErr error      // the TLS files did not load: every dial fails with it
	mu     sync.Mutex // guards hello
	hello  Hello
}

// New makes a Client; connections are made on first use. Call Close when done.
func New(o Options) *Client {
	o.defaults()
	c := &Client{opts: o}
	c.tls, c.tlsErr = makeTLS(o.TLSConfig, o.TLS)
	c.Calls = Calls{rt: c}
	a := o.Addr
	c.addr.Store(&a)
	for i := 0; i < o.PoolSize; i++ {
		c.slots = append(c.slots, &slot{lock: make(chan struct{}, 1)})
	}
	return c
}

// Connect makes a Client and one connection now, so a wrong address, token or TLS setting
// shows at once.
func Connect(ctx context.Context, o Options) (*Client, error) {
	c := New(o)
	if _, err := c.conn(ctx, c.slots[0]); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// Addr is the address calls go to now (the primary's after a redirect).
func (c *Client) Addr() string { return *c.addr.Load() }

// Hello is the HELLO reply of the newest connection made.
func (c *Client) Hello() Hello {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.hello
}

// Close closes every connection; later calls fail with ErrClosed.
func (c *Client) Close() error {
	c.closed.Store(true)
	for _, s := range c.slots {
		if cn := s.conn.Load(); cn != nil {
			cn.Close()
		}
	}
	return nil
}

func (c *Client) backoff(attempt int) time.Duration {
	d := c.opts.BackoffMin << uint(min(attempt, 20))
	if d > c.opts.BackoffMax || d <= 0 {
		d = c.opts.BackoffMax
	}
	return d/2 + time.Duration(rand.Int63n(int64(d/2)+1)) // jitter
}

func min(a, b int) int {
	if a < b {
		return a
	}
	return b
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// conn returns the slot's usable connection, dialing one (after the slot's backoff) if needed.
func (c *Client) conn(ctx context.Context, s *slot) (*Conn, error) {
	addr := c.Addr()
	if cn := s.conn.Load(); cn != nil && cn.addr == addr && cn.Err() == nil {
		return cn, nil
	}
	select {
	case s.lock <- struct{}{}:
	case <-ctx.Done():
		return nil, timeoutError(0, ctx.Err())
	}
	defer func() { <-s.lock }()
	if c.closed.Load() {
		return nil, ErrClosed
	}
	addr = c.Addr()
	if cn := s.conn.Load(); cn != nil {
		if cn.addr == addr && cn.Err() == nil {
			return cn, nil // another caller dialed it
		}
		cn.Close()
	}
	if wait := time.Until(s.notUntil); wait > 0 {
		if err := sleepCtx(ctx, wait); err != nil {
			return nil, timeoutError(0, err)
		}
	}
	cn, err := c.dial(ctx, addr)
	if err != nil {
		s.failures++
		s.notUntil = time.Now().Add(c.backoff(s.failures - 1))
		return nil, err
	}
	s.failures = 0
	s.conn.Store(cn)
	c.mu.Lock()
	c.hello = cn.hello
	c.mu.Unlock()
	return cn, nil
}

// dial makes one connection to addr with the Client's token and TLS.
func (c *Client) dial(ctx context.Context, addr string) (*Conn, error) {
	if c.tlsErr != nil {
		return nil, c.tlsErr
	}
	return dial(ctx, addr, c.opts.Token, c.opts.DialTimeout, c.tls)
}

// call sends one request with the retry rules above and returns the reply body.
func (c *Client) call(ctx context.Context, op Opcode, body []byte) ([]byte, error) {
	if c.closed.Load() {
		return nil, ErrClosed
	}
	if _, ok := ctx.Deadline(); !ok && c.opts.CallTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.opts.CallTimeout)
		defer cancel()
	}
	var lastErr error
	for attempt := 0; ; attempt++ {
		if attempt > 0 {
			if attempt > c.opts.MaxRetries || c.closed.Load() {
				return nil, lastErr
			}
			if err := sleepCtx(ctx, c.backoff(attempt-1)); err != nil {
				return nil, lastErr
			}
		}
		s := c.slots[int(c.next.Add(1))%len(c.slots)]
		cn, err := c.conn(ctx, s)
		if err != nil {
			var ce *ConnError
			if errors.As(err, &ce) && !isTLSError(err) {
				lastErr = err // not sent: always safe to try again
				continue
			}
			return nil, err
		}
		b, err := cn.RoundTrip(ctx, op, body)
		if err == nil {
			return b, nil
		}
		lastErr = err
		var ce *ConnError
		var se *Error
		switch {
		case errors.As(err, &ce):
			if ce.Sent && !RetrySafe(op) || isTLSError(err) {
				return nil, err
			}
		case errors.As(err, &se) && se.Code == CodeReadOnly:
			if c.opts.NoRedirect || ReadsOnly(op) || !RetrySafe(op) {
				return nil, err
			}
			if se.Message != "" {
				primary := se.Message
				c.addr.Store(&primary)
			}
		default:
			return nil, err // the server's answer, or the context's end
		}
	}
}
