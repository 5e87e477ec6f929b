package relgraph

// Subscription: the change stream with resume (docs/change-stream.md). It keeps the LSN the
// stream goes on from: each EVENTS frame's next_lsn, taken once the whole frame is read, so
// events of kinds not asked for are not read again either. When the connection drops (or
// the server restarts), Next first hands out the events of frames already read, then dials
// again with backoff and subscribes from that LSN: every event once, in LSN order.
// Errors a reconnect cannot cure (lsn_expired, a bad argument, a refused token) end it.
//
// Thread-safety: Next from one goroutine at a time; Ack, NextLSN and Close from any.

import (
	"context"
	"errors"
	"sync"
)

// SubscribeOptions say where a subscription starts and what it carries.
type SubscribeOptions struct {
	From  SubscribeFrom
	LSN   uint64 // with FromLSN
	Kinds uint32 // bit k: event kind k; 0: every kind
	Name  string // the named cursor: FromCursor starts after it; Ack moves it
	// MaxRetries: consecutive failed resumes before Next gives up; 0: until ctx ends.
	MaxRetries int
}

// Subscription is a running change stream.
type Subscription struct {
	c    *Client
	opts SubscribeOptions

	mu      sync.Mutex
	cn      *Conn
	frames  <-chan frame
	nextLSN uint64 // where a resume starts
	closed  bool

	buf     []Event // read, not yet handed out
	First   SubscribeReply
	Resumes int // successful resubscriptions after a dropped connection
}

// Subscribe starts a change stream on a connection of its own. Its reply (where it starts,
// the newest LSN then) is Subscription.First.
func (c *Client) Subscribe(ctx context.Context, o SubscribeOptions) (*Subscription, error) {
	s := &Subscription{c: c, opts: o}
	r, err := s.start(ctx, o.From, o.LSN)
	if err != nil {
		return nil, err
	}
	s.First = r
	return s, nil
}

func (s *Subscription) start(ctx context.Context, from SubscribeFrom, lsn uint64) (SubscribeReply, error) {
	cn, err := s.c.dialStream(ctx)
	if err != nil {
		return SubscribeReply{}, err
	}
	name := ""
	if from == FromCursor {
		name = s.opts.Name
	}
	b, frames, err := cn.startStream(ctx, OpSubscribe, encodeSubscribe(from, lsn, s.opts.Kinds, name), OpEvents)
	if err != nil {
		cn.Close()
		return SubscribeReply{}, err
	}
	d := newDec(b, "SUBSCRIBE reply")
	r := SubscribeReply{FirstLSN: d.u64(), NewestLSN: d.u64()}
	if err := d.done(); err != nil {
		cn.Close()
		return r, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		cn.Close()
		return r, ErrClosed
	}
	s.cn, s.frames, s.nextLSN = cn, frames, r.FirstLSN
	return r, nil
}

// NextLSN is the LSN the stream goes on from: every event before it was read.
func (s *Subscription) NextLSN() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.nextLSN
}

// retryable: failures a new connection may cure (not a TLS refusal).
func retryable(err error) bool {
	var ce *ConnError
	if errors.As(err, &ce) {
		return !isTLSError(err)
	}
	switch CodeOf(err) {
	case CodeUnavailable, CodeResourceExhausted, CodeIOError:
		return true
	}
	return false
}

// Next returns the next event, waiting for one until ctx ends (a CodeTimeout error, after
// which the subscription goes on). A dropped connection is resumed inside.
func (s *Subscription) Next(ctx context.Context) (Event, error) {
	failures := 0
	for {
		if len(s.buf) > 0 {
			ev := s.buf[0]
			s.buf = s.buf[1:]
			return ev, nil
		}
		s.mu.Lock()
		frames, cn, closed := s.frames, s.cn, s.closed
		s.mu.Unlock()
		if closed {
			return Event{}, ErrClosed
		}
		var err error
		if frames != nil {
			select {
			case f, ok := <-frames:
				switch {
				case !ok:
					err = &ConnError{Addr: cn.addr, Sent: true, Err: cn.Err()}
				case f.status != 0:
					cn.Close()
					return Event{}, decodeError(OpEvents, f.status, f.body)
				default:
					d := newDec(f.body, "EVENTS")
					evs := decodeEvents(d)
					if derr := d.done(); derr != nil {
						cn.Close()
						return Event{}, derr
					}
					s.buf = evs.Events
					s.mu.Lock()
					s.nextLSN = evs.NextLSN
					s.mu.Unlock()
					continue
				}
			case <-ctx.Done():
				return Event{}, timeoutError(OpEvents, ctx.Err())
			}
		}
		// Resume from where the stream goes on.
		if err != nil && !retryable(err) {
			return Event{}, err
		}
		s.mu.Lock()
		s.frames = nil
		if s.cn != nil {
			s.cn.Close()
		}
		lsn := s.nextLSN
		s.mu.Unlock()
		if failures > 0 {
			if serr := sleepCtx(ctx, s.c.backoff(failures-1)); serr != nil {
				return Event{}, timeoutError(OpEvents, serr)
			}
		}
		_, rerr := s.start(ctx, FromLSN, lsn)
		if rerr == nil {
			s.Resumes++
			failures = 0
			continue
		}
		if !retryable(rerr) || errors.Is(rerr, CodeTimeout) {
			return Event{}, rerr
		}
		failures++
		if s.opts.MaxRetries > 0 && failures > s.opts.MaxRetries {
			return Event{}, rerr
		}
	}
}

// Ack moves the subscription's named cursor to lsn (through the Client's pool).
func (s *Subscription) Ack(ctx context.Context, lsn uint64) error {
	if s.opts.Name == "" {
		return &Error{Code: CodeInvalidArgument, Op: OpAck, Message: "this subscription has no cursor name"}
	}
	return s.c.Ack(ctx, s.opts.Name, lsn)
}

// Close ends the subscription.
func (s *Subscription) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	if s.cn != nil {
		s.cn.Close()
	}
	return nil
}

// encodeSubscribe is SUBSCRIBE's body: from:u8 lsn:u64 kinds:u32 name:string.
func encodeSubscribe(from SubscribeFrom, lsn uint64, kinds uint32, name string) []byte {
	var e enc
	e.u8(uint8(from))
	e.u64(lsn)
	e.u32(kinds)
	e.str(name)
	return e.b
}
