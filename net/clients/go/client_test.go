package relgraph

// The client against a real relgraphd: typed errors, pipelining under concurrency, the
// pool, reconnecting after a restart, page iterators, the auth token, the read_only
// redirect, snapshot transfer and replication.

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
	"testing"
)

func TestErrors(t *testing.T) {
	s := startServer(t)
	c := s.client(t, Options{})
	ctx := ctxT(t)
	_, err := c.Follow(ctx, 5, 5)
	if !errors.Is(err, CodeSelfFollow) {
		t.Errorf("self-follow: %v", err)
	}
	var e *Error
	if !errors.As(err, &e) || e.Op != OpFollow || e.Message != "user 5 cannot follow itself" {
		t.Errorf("self-follow error: %#v", err)
	}
	if _, err := c.Relation(ctx, 0, 1); CodeOf(err) != CodeInvalidUserID {
		t.Errorf("user 0: %v", err)
	}
	if _, err := c.Following(ctx, PageQuery{User: 1, Limit: 0}); CodeOf(err) != CodeInvalidArgument {
		t.Errorf("limit 0: %v", err)
	}
	if _, err := c.Following(ctx, PageQuery{User: 1, Limit: 1001}); CodeOf(err) != CodeInvalidArgument {
		t.Errorf("limit 1001: %v", err)
	}
	if _, err := c.Relations(ctx, 1, nil); CodeOf(err) != CodeInvalidArgument {
		t.Errorf("RELATIONS of no ids: %v", err)
	}
	if _, err := c.PublishAt(ctx, 1, 7, 64, t0); CodeOf(err) != CodeInvalidArgument {
		t.Errorf("kind 64: %v", err)
	}
	if _, err := c.FollowAt(ctx, 1, 2, MaxTime+1); CodeOf(err) != CodeInvalidArgument {
		t.Errorf("time past 2^42-1: %v", err)
	}
	// Unknown users: zeros and empty pages, not errors; their posts and requests are not found.
	if n, err := c.Counts(ctx, 999); err != nil || n != (Counts{}) {
		t.Errorf("counts of an unknown user: %v %v", n, err)
	}
	if p, err := c.Fans(ctx, PageQuery{User: 999, Limit: 10}); err != nil || len(p.Entries) != 0 || p.Next != nil {
		t.Errorf("fans of an unknown user: %+v %v", p, err)
	}
	if err := c.DeletePost(ctx, 999, 1); !errors.Is(err, CodeNotFound) {
		t.Errorf("delete a post of an unknown user: %v", err)
	}
	if _, err := c.Approve(ctx, 998, 999); !errors.Is(err, CodeNotFound) {
		t.Errorf("approve no request: %v", err)
	}
	if _, err := c.PublishAt(ctx, 1, 7, 0, t0); err != nil {
		t.Fatal(err)
	}
	if _, err := c.PublishAt(ctx, 1, 7, 0, t0); !errors.Is(err, CodeAlreadyExists) {
		t.Errorf("a post id twice: %v", err)
	}
	if err := c.DeleteCursor(ctx, "nope"); !errors.Is(err, CodeNotFound) {
		t.Errorf("delete an unknown cursor: %v", err)
	}
	// After all these errors the connection still serves.
	if err := c.Ping(ctx); err != nil {
		t.Error(err)
	}
}

// Many goroutines on one connection: every reply reaches the goroutine that asked (each
// checks values only its own request could get), and the state matches a reference model.
func TestPipeliningUnderConcurrency(t *testing.T) {
	s := startServer(t)
	c := s.client(t, Options{PoolSize: 1})
	ctx := ctxT(t)
	const workers, per = 32, 150
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			follower := uint64(1000 + w)
			for i := 0; i < per; i++ {
				ts := t0 + int64(w*per+i)
				r, err := c.FollowAt(ctx, follower, uint64(1+i), ts)
				if err != nil || !r.Created || r.FollowedAt != ts {
					errs <- fmt.Errorf("worker %d follow %d: %+v %v", w, i, r, err)
					return
				}
				rel, err := c.Relation(ctx, uint64(1+i), follower)
				if err != nil || rel != RelFollowedBy {
					errs <- fmt.Errorf("worker %d relation %d: %v %v", w, i, rel, err)
					return
				}
			}
			n, err := c.Counts(ctx, follower)
			if err != nil || n.Following != per {
				errs <- fmt.Errorf("worker %d counts %+v %v", w, n, err)
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for i := 0; i < per; i += 37 {
		n, err := c.Counts(ctx, uint64(1+i))
		if err != nil || n.Fans != workers {
			t.Errorf("fans of %d: %+v %v", 1+i, n, err)
		}
	}
}

func TestPoolSharedAndClosed(t *testing.T) {
	s := startServer(t)
	c := s.client(t, Options{PoolSize: 4})
	ctx := ctxT(t)
	var wg sync.WaitGroup
	for w := 0; w < 16; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				if _, err := c.Mute(ctx, uint64(w+1), uint64(100+i)); err != nil {
					t.Error(err)
					return
				}
			}
		}(w)
	}
	wg.Wait()
	used := 0
	for _, sl := range c.slots {
		if sl.conn.Load() != nil {
			used++
		}
	}
	if used != 4 {
		t.Errorf("%d of 4 pooled connections were used", used)
	}
	m, err := c.Mutes(ctx, 16)
	if err != nil || len(m) != 50 || m[0] != 100 || m[49] != 149 {
		t.Errorf("mutes: %v %v", m, err)
	}
	c.Close()
	if err := c.Ping(ctx); !errors.Is(err, ErrClosed) {
		t.Errorf("a call after Close: %v", err)
	}
}

// The server restarts: calls on the broken connections are dialed again and retried.
func TestReconnectAfterRestart(t *testing.T) {
	s := startServer(t)
	c := s.client(t, Options{PoolSize: 2})
	ctx := ctxT(t)
	if _, err := c.FollowAt(ctx, 1, 2, t0); err != nil {
		t.Fatal(err)
	}
	s.restart()
	for i := 0; i < 4; i++ { // every pooled connection broke; each call still succeeds
		r, err := c.Relation(ctx, 1, 2)
		if err != nil || r != RelFollowing {
			t.Fatalf("after the restart: %v %v", r, err)
		}
	}
	// A write whose connection broke is retried too (FOLLOW is retry-safe).
	s.restart()
	if r, err := c.FollowAt(ctx, 2, 1, t0+1); err != nil || r.Relation != RelMutual {
		t.Fatalf("follow after the restart: %+v %v", r, err)
	}
	// With the server gone, a call gives up with a connection error when its retries end.
	s.stop()
	c2 := New(Options{Addr: s.addr, MaxRetries: 2})
	defer c2.Close()
	var ce *ConnError
	if err := c2.Ping(ctx); !errors.As(err, &ce) {
		t.Errorf("no server: %v", err)
	}
}

func TestIterators(t *testing.T) {
	s := startServer(t)
	c := s.client(t, Options{})
	ctx := ctxT(t)
	const fans = 2345
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for f := w; f < fans; f += 8 {
				if _, err := c.FollowAt(ctx, uint64(10+f), 1, t0+int64(f%500)); err != nil {
					t.Error(err)
					return
				}
			}
		}(w)
	}
	wg.Wait()
	it := c.FansIter(PageQuery{User: 1, Limit: 1000})
	seen := map[uint64]bool{}
	var prev *PageEntry
	for it.Next(ctx) {
		e := it.Entry()
		if seen[e.User] {
			t.Fatalf("fan %d twice", e.User)
		}
		seen[e.User] = true
		if prev != nil && (e.TS > prev.TS || e.TS == prev.TS && e.User > prev.User) {
			t.Fatalf("not newest first: %+v after %+v", e, *prev)
		}
		p := e
		prev = &p
	}
	if it.Err() != nil || len(seen) != fans || it.Pages != 3 {
		t.Errorf("fans: %d seen in %d pages, err %v", len(seen), it.Pages, it.Err())
	}
	for p := uint64(1); p <= 250; p++ {
		if _, err := c.PublishAt(ctx, 1, p, uint8(p%4), t0+int64(p)); err != nil {
			t.Fatal(err)
		}
	}
	fi := c.UserPostsIter(FeedQuery{User: 1, Limit: 100, Kinds: 1 << 2})
	n := 0
	for fi.Next(ctx) {
		if fi.Post().Kind != 2 {
			t.Fatalf("kind filter: %+v", fi.Post())
		}
		n++
	}
	if fi.Err() != nil || n != 63 {
		t.Errorf("user posts of kind 2: %d, %v", n, fi.Err())
	}
}

func TestAuthToken(t *testing.T) {
	s := startServer(t, "--auth-token=s3cret")
	ctx := ctxT(t)
	if _, err := Connect(ctx, Options{Addr: s.addr, Token: "wrong"}); !errors.Is(err, CodeUnauthenticated) {
		t.Errorf("a wrong token: %v", err)
	}
	c := s.client(t, Options{Token: "s3cret"})
	if err := c.Ping(ctx); err != nil {
		t.Error(err)
	}
	if h := c.Hello(); h.Version != 2 || h.Server != "relgraphd" || h.MaxFrame != 1<<20 {
		t.Errorf("hello %+v", h)
	}
}

// A write sent to a replica is refused with read_only naming the primary; the client sends
// it there, and later calls too. With NoRedirect the caller gets the error.
func TestReadOnlyRedirect(t *testing.T) {
	primary := startServer(t)
	replica := startServer(t, "--replica-of="+primary.addr)
	ctx := ctxT(t)
	strict := replica.client(t, Options{NoRedirect: true})
	_, err := strict.Follow(ctx, 1, 2)
	var e *Error
	if !errors.As(err, &e) || e.Code != CodeReadOnly || e.Message != primary.addr {
		t.Fatalf("a write on the replica: %v", err)
	}
	c := replica.client(t, Options{})
	if r, err := c.FollowAt(ctx, 1, 2, t0); err != nil || !r.Created {
		t.Fatalf("redirected follow: %+v %v", r, err)
	}
	if c.Addr() != primary.addr {
		t.Errorf("the client now sends to %s, not the primary %s", c.Addr(), primary.addr)
	}
	p := primary.client(t, Options{})
	if r, err := p.Relation(ctx, 1, 2); err != nil || r != RelFollowing {
		t.Errorf("the follow is on the primary: %v %v", r, err)
	}
}

func TestFetchSnapshotAndReplicate(t *testing.T) {
	s := startServer(t)
	c := s.client(t, Options{})
	ctx := ctxT(t)
	for i := 0; i < 20; i++ {
		if _, err := c.FollowAt(ctx, 1, uint64(2+i), t0+int64(i)); err != nil {
			t.Fatal(err)
		}
	}
	snap, err := c.Snapshot(ctx)
	if err != nil || snap.Edges != 20 || snap.LSN != 20 {
		t.Fatalf("snapshot: %+v %v", snap, err)
	}
	var buf bytes.Buffer
	r, err := c.FetchSnapshot(ctx, &buf)
	if err != nil || r.LSN != snap.LSN || r.FileBytes != snap.FileBytes || uint64(buf.Len()) != r.FileBytes {
		t.Fatalf("fetch snapshot: %+v (%d bytes) %v", r, buf.Len(), err)
	}
	rs, err := c.Replicate(ctx, ReplicateRequest{FromLSN: 1, Epoch: 1, Name: "go-test"})
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	got := uint64(0)
	for got < 20 {
		recs, err := rs.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(recs.Records) > 0 && recs.FirstLSN != got+1 {
			t.Fatalf("records from %d, want %d", recs.FirstLSN, got+1)
		}
		got += uint64(len(recs.Records))
		if err := rs.Ack("go-test", got, got); err != nil {
			t.Fatal(err)
		}
	}
	rep, err := c.Replication(ctx)
	if err != nil || rep.State != "primary" || rep.Role != 0 {
		t.Errorf("replication: %+v %v", rep, err)
	}
	pos, err := c.Position(ctx)
	if err != nil || pos.Role != 0 || pos.AppliedLSN != 20 || pos.DurableLSN > pos.AppliedLSN {
		t.Errorf("position: %+v %v", pos, err)
	}
	if _, err := c.Promote(ctx, false); !errors.Is(err, CodeInvalidArgument) {
		t.Errorf("promote a primary: %v", err)
	}
	info, err := c.Info(ctx)
	if v, ok := info.Get("edges"); err != nil || !ok || v != 20 {
		t.Errorf("info edges: %v %v %v", v, ok, err)
	}
}

// A Pipeline: one write, each Future its own typed result or error; after a restart the
// batch is sent again on a new connection (every request in it is retry-safe).
func TestPipelineBatch(t *testing.T) {
	s := startServer(t)
	c := s.client(t, Options{PoolSize: 1})
	ctx := ctxT(t)
	for round := 0; round < 2; round++ {
		p := c.Pipeline()
		var follows []*Future[FollowResult]
		for i := 0; i < 200; i++ {
			follows = append(follows, p.FollowAt(uint64(1+round), uint64(10+i), t0+int64(i)))
		}
		self := p.Follow(3, 3)
		rel := p.Relation(10, uint64(1+round))
		counts := p.Counts(uint64(1 + round))
		if err := p.Exec(ctx); err != nil {
			t.Fatal(err)
		}
		for i, f := range follows {
			r, err := f.Get()
			if err != nil || !r.Created || r.FollowedAt != t0+int64(i) {
				t.Fatalf("round %d follow %d: %+v %v", round, i, r, err)
			}
		}
		if _, err := self.Get(); !errors.Is(err, CodeSelfFollow) {
			t.Errorf("self-follow in a batch: %v", err)
		}
		if r, err := rel.Get(); err != nil || r != RelFollowedBy {
			t.Errorf("relation in a batch: %v %v", r, err)
		}
		if n, err := counts.Get(); err != nil || n.Following != 200 {
			t.Errorf("counts in a batch: %+v %v", n, err)
		}
		s.restart() // the next round's batch meets a broken connection first
	}
}
