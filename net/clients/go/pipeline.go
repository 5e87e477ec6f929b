package relgraph

// Pipeline: a batch of requests sent in one write on one connection, their replies read as
// they come, each into its typed Future (go-redis's Pipeliner, the C++ client's Queue and
// Flush). Goroutines sharing a Client pipeline too; a Pipeline saves the per-request
// goroutine wake-ups when one goroutine has many requests at hand.
//
//	p := c.Pipeline()
//	f := p.FollowAt(1, 2, ts)
//	r := p.Relation(2, 1)
//	if err := p.Exec(ctx); err != nil { ... }   // a transport failure or the deadline
//	res, err := f.Get()                           // each request's own result or *Error
//
// Retries follow the Client's rules per request: those whose connection broke are sent
// again on another when RetrySafe; writes refused with read_only follow the primary.
//
// Thread-safety: a Pipeline belongs to one goroutine; Futures may be read by any after Exec.

import (
	"context"
	"errors"
)

// Future is one request's result, set by Exec.
type Future[T any] struct {
	val T
	err error
	set bool
}

// Get returns the result (an error when Exec has not run it).
func (f *Future[T]) Get() (T, error) {
	if !f.set {
		var zero T
		return zero, errors.New("relgraph: Future read before its Pipeline's Exec")
	}
	return f.val, f.err
}

type pipeReq struct {
	op     Opcode
	body   []byte
	finish func(body []byte, err error) // decodes into its Future
}

// Pipeline queues requests for one Exec.
type Pipeline struct {
	c    *Client
	reqs []pipeReq
}

// Pipeline starts an empty batch.
func (c *Client) Pipeline() *Pipeline { return &Pipeline{c: c} }

// Len is the number of queued requests.
func (p *Pipeline) Len() int { return len(p.reqs) }

func queue[T any](p *Pipeline, op Opcode, body []byte, fn func(*dec) T) *Future[T] {
	f := &Future[T]{}
	p.reqs = append(p.reqs, pipeReq{op: op, body: body, finish: func(b []byte, err error) {
		f.set = true
		if err != nil {
			f.err = err
			return
		}
		d := newDec(b, op.String()+" reply")
		v := fn(d)
		if f.err = d.done(); f.err == nil {
			f.val = v
		}
	}})
	return f
}

// Exec sends every queued request and waits for every reply; then the Pipeline is empty
// again. Its error is the first request's transport failure or timeout, if any; each
// Future holds its own result either way.
func (p *Pipeline) Exec(ctx context.Context) error {
	c := p.c
	reqs := p.reqs
	p.reqs = nil
	if c.closed.Load() {
		for _, r := range reqs {
			r.finish(nil, ErrClosed)
		}
		return ErrClosed
	}
	if _, ok := ctx.Deadline(); !ok && c.opts.CallTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.opts.CallTimeout)
		defer cancel()
	}
	var firstErr error
	lastErr := make([]error, len(reqs))
	for attempt := 0; len(reqs) > 0; attempt++ {
		if attempt > 0 {
			if attempt > c.opts.MaxRetries || sleepCtx(ctx, c.backoff(attempt-1)) != nil {
				break
			}
		}
		s := c.slots[int(c.next.Add(1))%len(c.slots)]
		cn, err := c.conn(ctx, s)
		if err == nil {
			ops := make([]Opcode, len(reqs))
			bodies := make([][]byte, len(reqs))
			for i, r := range reqs {
				ops[i], bodies[i] = r.op, r.body
			}
			var b *batch
			if b, err = cn.sendBatch(ops, bodies); err == nil {
				select {
				case <-b.done:
				case <-ctx.Done():
					terr := timeoutError(0, ctx.Err())
					for _, r := range reqs {
						r.finish(nil, terr)
					}
					return terr
				}
				var again []pipeReq
				for i, r := range reqs {
					rep := b.replies[i]
					switch {
					case rep.err != nil:
						lastErr[len(again)] = &ConnError{Addr: cn.addr, Sent: true, Err: rep.err}
						if RetrySafe(r.op) {
							again = append(again, r)
						} else {
							r.finish(nil, lastErr[len(again)])
						}
					case rep.status == uint8(CodeReadOnly) && !c.opts.NoRedirect && !ReadsOnly(r.op) && RetrySafe(r.op):
						e := decodeError(r.op, rep.status, rep.body)
						if e.Message != "" {
							primary := e.Message
							c.addr.Store(&primary)
						}
						lastErr[len(again)] = e
						again = append(again, r)
					case rep.status != 0:
						r.finish(nil, decodeError(r.op, rep.status, rep.body))
					default:
						r.finish(rep.body, nil)
					}
				}
				reqs = again
				continue
			}
		}
		// No connection, or it broke before the batch was written: nothing was sent.
		var ce *ConnError
		if !errors.As(err, &ce) {
			for _, r := range reqs {
				r.finish(nil, err)
			}
			return err
		}
		for i := range reqs {
			lastErr[i] = err
		}
	}
	for i, r := range reqs {
		r.finish(nil, lastErr[i])
		if firstErr == nil {
			firstErr = lastErr[i]
		}
	}
	return firstErr
}

// The typed requests a Pipeline takes: each as the Client's call of the same name.

func (p *Pipeline) Ping() *Future[struct{}] { return queue(p, OpPing, nil, noBody) }
func (p *Pipeline) Follow(follower, followee uint64) *Future[FollowResult] {
	e := enc{b: make([]byte, 0, 17)}
	e.u64(follower)
	e.u64(followee)
	e.u8(0)
	return queue(p, OpFollow, e.b, decodeFollow)
}
func (p *Pipeline) FollowAt(follower, followee uint64, tsMs int64) *Future[FollowResult] {
	e := enc{b: make([]byte, 0, 25)}
	e.u64(follower)
	e.u64(followee)
	e.optI64(&tsMs)
	return queue(p, OpFollow, e.b, decodeFollow)
}
func (p *Pipeline) Unfollow(follower, followee uint64) *Future[bool] {
	return queue(p, OpUnfollow, pair(follower, followee), boolBody)
}
func (p *Pipeline) Relation(a, b uint64) *Future[Relation] {
	return queue(p, OpRelation, pair(a, b), func(d *dec) Relation { return Relation(d.u8()) })
}
func (p *Pipeline) Relations(a uint64, others []uint64) *Future[[]Relation] {
	e := enc{}
	e.u64(a)
	e.u64s(others)
	return queue(p, OpRelations, e.b, decodeRelations)
}
func (p *Pipeline) Counts(user uint64) *Future[Counts] {
	return queue(p, OpCounts, one(user), func(d *dec) Counts {
		return Counts{Following: d.u32(), Fans: d.u32(), Friends: d.u32()}
	})
}
func (p *Pipeline) Following(q PageQuery) *Future[Page] {
	return queue(p, OpFollowing, encodePageQuery(q), func(d *dec) Page { return decodePage(d, false) })
}
func (p *Pipeline) Fans(q PageQuery) *Future[Page] {
	return queue(p, OpFans, encodePageQuery(q), func(d *dec) Page { return decodePage(d, false) })
}
func (p *Pipeline) Friends(q PageQuery) *Future[Page] {
	return queue(p, OpFriends, encodePageQuery(q), func(d *dec) Page { return decodePage(d, false) })
}
func (p *Pipeline) PublishAt(author, post uint64, kind uint8, tsMs int64) *Future[PublishResult] {
	e := enc{}
	e.u64(author)
	e.u64(post)
	e.u8(kind)
	e.optI64(&tsMs)
	return queue(p, OpPublish, e.b, func(d *dec) PublishResult {
		return PublishResult{TS: d.i64(), Retained: d.bool(), Evicted: d.u64()}
	})
}
func (p *Pipeline) Mute(user, other uint64) *Future[bool] {
	return queue(p, OpMute, pair(user, other), boolBody)
}
func (p *Pipeline) Block(user, blocked uint64) *Future[BlockResult] {
	return queue(p, OpBlock, pair(user, blocked), func(d *dec) BlockResult {
		return BlockResult{Created: d.bool(), TS: d.i64(), Removed: d.u8()}
	})
}
