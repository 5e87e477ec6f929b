package relgraph

// The change stream against a real relgraphd: a subscription survives a dropped connection
// and a server restart without losing or repeating an event; a named cursor resumes after
// its ACK; a kind filter skips other records.

import (
	"testing"
)

func TestStreamResumeAcrossDropAndRestart(t *testing.T) {
	s := startServer(t)
	c := s.client(t, Options{})
	ctx := ctxT(t)
	type edge struct{ a, b uint64 }
	var wrote []edge
	write := func(from, to int) {
		for i := from; i < to; i++ {
			e := edge{uint64(1 + i%7), uint64(100 + i)}
			if _, err := c.FollowAt(ctx, e.a, e.b, t0+int64(i)); err != nil {
				t.Fatalf("follow %d: %v", i, err)
			}
			wrote = append(wrote, e)
		}
	}
	write(0, 40)
	sub, err := c.Subscribe(ctx, SubscribeOptions{From: FromLSN, LSN: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	if sub.First.FirstLSN != 1 || sub.First.NewestLSN != 40 {
		t.Errorf("subscribe reply %+v", sub.First)
	}
	var got []Event
	read := func(n int) {
		for len(got) < n {
			ev, err := sub.Next(ctx)
			if err != nil {
				t.Fatalf("after %d events: %v", len(got), err)
			}
			got = append(got, ev)
		}
	}
	read(10)
	// The connection drops; events of its last frame may still be unread, and are handed
	// out before the resume.
	sub.mu.Lock()
	sub.cn.Close()
	sub.mu.Unlock()
	read(40)
	write(40, 60)
	read(50)
	// The server restarts from its data directory; writes go on meanwhile.
	s.restart()
	write(60, 80)
	read(80)
	for i, ev := range got {
		if ev.Kind != EvFollow || ev.A != wrote[i].a || ev.B != wrote[i].b || ev.TS != t0+int64(i) || ev.LSN != uint64(i+1) {
			t.Fatalf("event %d: %+v, want follow %v at LSN %d", i, ev, wrote[i], i+1)
		}
	}
	if sub.Resumes < 2 {
		t.Errorf("%d resumes, want 2 (a drop, a restart)", sub.Resumes)
	}
	if sub.NextLSN() != 81 {
		t.Errorf("next LSN %d, want 81", sub.NextLSN())
	}
}

func TestStreamNamedCursorAndKinds(t *testing.T) {
	s := startServer(t)
	c := s.client(t, Options{})
	ctx := ctxT(t)
	if err := c.Ack(ctx, "go-consumer", 0); err != nil { // pins the WAL from LSN 1
		t.Fatal(err)
	}
	for i := 0; i < 30; i++ {
		if _, err := c.FollowAt(ctx, 1, uint64(2+i), t0+int64(i)); err != nil {
			t.Fatal(err)
		}
		if i%10 == 9 {
			if _, err := c.PublishAt(ctx, 1, uint64(i), 5, t0+int64(i)); err != nil {
				t.Fatal(err)
			}
		}
	}
	sub, err := c.Subscribe(ctx, SubscribeOptions{From: FromCursor, Name: "go-consumer"})
	if err != nil {
		t.Fatal(err)
	}
	var last Event
	for i := 0; i < 12; i++ {
		if last, err = sub.Next(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if err := sub.Ack(ctx, last.LSN); err != nil {
		t.Fatal(err)
	}
	sub.Close()
	cur, err := c.Cursors(ctx)
	if err != nil || len(cur) != 1 || cur[0].Name != "go-consumer" || cur[0].AckedLSN != last.LSN || cur[0].Expired {
		t.Fatalf("cursors %+v %v", cur, err)
	}
	sub, err = c.Subscribe(ctx, SubscribeOptions{From: FromCursor, Name: "go-consumer"})
	if err != nil {
		t.Fatal(err)
	}
	ev, err := sub.Next(ctx)
	if err != nil || ev.LSN <= last.LSN || ev.LSN > last.LSN+2 { // the ACK has an LSN, skipped
		t.Errorf("after the cursor: %+v %v (acked %d)", ev, err, last.LSN)
	}
	sub.Close()
	// Only publishes: three, each with its kind in detail.
	sub, err = c.Subscribe(ctx, SubscribeOptions{From: FromLSN, LSN: 1, Kinds: 1 << EvPublish})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	for i := 0; i < 3; i++ {
		ev, err := sub.Next(ctx)
		if err != nil || ev.Kind != EvPublish || ev.Detail != 5 || ev.B != uint64(10*i+9) {
			t.Errorf("publish %d: %+v %v", i, ev, err)
		}
	}
	if err := c.DeleteCursor(ctx, "go-consumer"); err != nil {
		t.Error(err)
	}
}
