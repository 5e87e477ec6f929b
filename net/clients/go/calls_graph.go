package relgraph

// The typed calls of the session, admin and graph commands (docs/protocol.md "Commands").
// Each takes a context (its deadline bounds the call, retries included) and returns the
// typed reply or an error (*Error with the protocol's code, *ConnError, or a timeout).

import "context"

// Calls holds the typed calls, written once for every client shape: a Client sends each
// request to its one server, a ClusterClient routes it to the shard of its user. Both embed
// Calls, so c.Follow(ctx, 1, 2) reads the same on either.
type Calls struct{ rt roundTripper }

// roundTripper sends one request and returns its reply's body (or the error reply as *Error).
type roundTripper interface {
	call(ctx context.Context, op Opcode, body []byte) ([]byte, error)
}

// do runs one request and decodes its reply with fn (which reads the whole body).
func do[T any](ctx context.Context, c roundTripper, op Opcode, body []byte, fn func(*dec) T) (T, error) {
	b, err := c.call(ctx, op, body)
	if err != nil {
		var zero T
		return zero, err
	}
	d := newDec(b, op.String()+" reply")
	v := fn(d)
	if err := d.done(); err != nil {
		var zero T
		return zero, err
	}
	return v, nil
}

func noBody(*dec) struct{} { return struct{}{} }
func boolBody(d *dec) bool { return d.bool() }

func pair(a, b uint64) []byte {
	var e enc
	e.b = make([]byte, 0, 16)
	e.u64(a)
	e.u64(b)
	return e.b
}

func one(a uint64) []byte {
	var e enc
	e.u64(a)
	return e.b
}

// Ping checks the server answers.
func (c *Calls) Ping(ctx context.Context) error {
	_, err := do(ctx, c.rt, OpPing, nil, noBody)
	return err
}

// Info returns the server's INFO fields.
func (c *Calls) Info(ctx context.Context) (Info, error) {
	return do(ctx, c.rt, OpInfo, nil, decodeInfo)
}

// Snapshot writes a snapshot now (a server with a data directory).
func (c *Calls) Snapshot(ctx context.Context) (SnapshotInfo, error) {
	return do(ctx, c.rt, OpSnapshot, nil, decodeSnapshot)
}

// Follow makes follower follow followee at the server's clock.
func (c *Calls) Follow(ctx context.Context, follower, followee uint64) (FollowResult, error) {
	return c.follow(ctx, follower, followee, nil)
}

// FollowAt makes follower follow followee with the given follow time (imports, migrations).
func (c *Calls) FollowAt(ctx context.Context, follower, followee uint64, tsMs int64) (FollowResult, error) {
	return c.follow(ctx, follower, followee, &tsMs)
}

func (c *Calls) follow(ctx context.Context, a, b uint64, ts *int64) (FollowResult, error) {
	e := enc{b: make([]byte, 0, 25)}
	e.u64(a)
	e.u64(b)
	e.optI64(ts)
	return do(ctx, c.rt, OpFollow, e.b, decodeFollow)
}

// Unfollow removes the edge follower -> followee; false when there was none.
func (c *Calls) Unfollow(ctx context.Context, follower, followee uint64) (bool, error) {
	return do(ctx, c.rt, OpUnfollow, pair(follower, followee), boolBody)
}

// Relation returns relation(a, b).
func (c *Calls) Relation(ctx context.Context, a, b uint64) (Relation, error) {
	return do(ctx, c.rt, OpRelation, pair(a, b), func(d *dec) Relation { return Relation(d.u8()) })
}

// Relations returns relation(a, o) for each o of others (1..1000 ids).
func (c *Calls) Relations(ctx context.Context, a uint64, others []uint64) ([]Relation, error) {
	e := enc{b: make([]byte, 0, 10+8*len(others))}
	e.u64(a)
	e.u64s(others)
	return do(ctx, c.rt, OpRelations, e.b, decodeRelations)
}

func encodePageQuery(q PageQuery) []byte {
	e := enc{b: make([]byte, 0, 40)}
	e.u64(q.User)
	e.u16(q.Limit)
	e.u32(q.Offset)
	if q.After == nil {
		e.u8(0)
	} else {
		e.u8(1)
		e.i64(q.After.TS)
		e.u64(q.After.User)
	}
	if q.Viewer == 0 {
		e.u8(0)
	} else {
		e.u8(1)
		e.u64(q.Viewer)
	}
	return e.b
}

func (c *Calls) page(ctx context.Context, op Opcode, q PageQuery) (Page, error) {
	counted := op == OpBlocks || op == OpRequests
	return do(ctx, c.rt, op, encodePageQuery(q), func(d *dec) Page { return decodePage(d, counted) })
}

// Following is a page of whom q.User follows.
func (c *Calls) Following(ctx context.Context, q PageQuery) (Page, error) {
	return c.page(ctx, OpFollowing, q)
}

// Fans is a page of who follows q.User.
func (c *Calls) Fans(ctx context.Context, q PageQuery) (Page, error) {
	return c.page(ctx, OpFans, q)
}

// Friends is a page of q.User's mutual follows.
func (c *Calls) Friends(ctx context.Context, q PageQuery) (Page, error) {
	return c.page(ctx, OpFriends, q)
}

// Counts returns user's following, fans and friends counts.
func (c *Calls) Counts(ctx context.Context, user uint64) (Counts, error) {
	return do(ctx, c.rt, OpCounts, one(user), func(d *dec) Counts {
		return Counts{Following: d.u32(), Fans: d.u32(), Friends: d.u32()}
	})
}

// KnownFollowers returns whom viewer follows that follow target (limit 0..1000; 0: total only).
func (c *Calls) KnownFollowers(ctx context.Context, viewer, target uint64, limit uint16) (KnownFollowers, error) {
	e := enc{b: make([]byte, 0, 18)}
	e.u64(viewer)
	e.u64(target)
	e.u16(limit)
	return do(ctx, c.rt, OpKnownFollowers, e.b, func(d *dec) KnownFollowers {
		return KnownFollowers{Total: d.u32(), Users: d.u64s()}
	})
}

// RemoveUser removes every edge of user in both directions; it returns how many went.
func (c *Calls) RemoveUser(ctx context.Context, user uint64) (uint64, error) {
	return do(ctx, c.rt, OpRemoveUser, one(user), func(d *dec) uint64 { return d.u64() })
}
