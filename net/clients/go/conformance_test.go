package relgraph

// Conformance: docs/protocol.md's hex tables ("Examples", "Stream example", the NOTICE and
// the version-1 HELLO), read from the doc at test time. A scripted fake server checks that
// each request this client sends is the doc's request byte for byte, answers with the doc's
// reply bytes, and the test checks the typed values the client decodes from them.

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"io"
	"net"
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

type docRow struct {
	name  string
	cells [][]byte // the row's backticked hex cells, decoded
}

var backticked = regexp.MustCompile("`([0-9a-f ]+)`")

// docTable returns the rows of the first table after the heading `heading`.
func docTable(t *testing.T, doc, heading string) []docRow {
	t.Helper()
	i := strings.Index(doc, "\n"+heading+"\n")
	if i < 0 {
		t.Fatalf("docs/protocol.md has no %q", heading)
	}
	var rows []docRow
	inTable := false
	for _, line := range strings.Split(doc[i+len(heading)+2:], "\n") {
		if strings.HasPrefix(line, "## ") {
			break
		}
		if !strings.HasPrefix(line, "|") {
			if inTable {
				break
			}
			continue
		}
		inTable = true
		cells := strings.Split(line, "|")
		if len(cells) < 4 || strings.HasPrefix(strings.TrimSpace(cells[1]), "---") {
			continue
		}
		r := docRow{name: strings.TrimSpace(cells[1])}
		for _, cell := range cells[2 : len(cells)-1] {
			m := backticked.FindStringSubmatch(cell)
			if m == nil {
				continue
			}
			b, err := hex.DecodeString(strings.ReplaceAll(m[1], " ", ""))
			if err != nil {
				t.Fatalf("row %q: %v", r.name, err)
			}
			r.cells = append(r.cells, b)
		}
		if len(r.cells) > 0 {
			rows = append(rows, r)
		}
	}
	return rows
}

func readDoc(t *testing.T) string {
	b, err := os.ReadFile(protocolDocPath(t))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// fakeServer accepts connections and, for each frame it reads, pops the next step: it
// checks the frame equals step.want and writes step.reply.
type fakeStep struct {
	name        string
	want, reply []byte
}

func fakeServer(t *testing.T, steps []fakeStep) (addr string, done chan struct{}) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done = make(chan struct{})
	go func() {
		defer close(done)
		defer l.Close()
		var nc net.Conn
		var r *bufio.Reader
		for i := 0; i < len(steps); i++ {
			st := steps[i]
			if st.want == nil { // a step that opens a new connection
				if nc != nil {
					nc.Close()
				}
				if nc, err = l.Accept(); err != nil {
					t.Errorf("accept: %v", err)
					return
				}
				r = bufio.NewReader(nc)
				continue
			}
			if st.want != nil && len(st.want) > 0 {
				hdr := make([]byte, 4)
				if _, err := io.ReadFull(r, hdr); err != nil {
					t.Errorf("%s: reading the request: %v", st.name, err)
					return
				}
				rest := make([]byte, binary.LittleEndian.Uint32(hdr))
				if _, err := io.ReadFull(r, rest); err != nil {
					t.Errorf("%s: reading the request: %v", st.name, err)
					return
				}
				if got := append(hdr, rest...); !reflect.DeepEqual(got, st.want) {
					t.Errorf("%s: request\n got % x\nwant % x", st.name, got, st.want)
				}
			}
			if st.reply != nil {
				if _, err := nc.Write(st.reply); err != nil {
					t.Errorf("%s: %v", st.name, err)
				}
			}
		}
		// Hold the last connection until the client is done with it.
		if nc != nil {
			_, _ = io.Copy(io.Discard, nc)
			nc.Close()
		}
	}()
	return l.Addr().String(), done
}

const t0 = int64(1700000000000)

func TestConformanceExamples(t *testing.T) {
	rows := docTable(t, readDoc(t), "## Examples")
	type check struct {
		name string // the row's exchange starts with it
		run  func(ctx context.Context, c *Client) (got, want interface{})
	}
	pq := func(user uint64, limit uint16, after *Cursor, viewer uint64) PageQuery {
		return PageQuery{User: user, Limit: limit, After: after, Viewer: viewer}
	}
	errOf := func(err error) interface{} {
		var e *Error
		if errors.As(err, &e) {
			return *e
		}
		return err
	}
	checks := []check{
		{"HELLO", nil},
		{"PING", func(ctx context.Context, c *Client) (interface{}, interface{}) { return c.Ping(ctx), nil }},
		{"FOLLOW 1 → 2 at T0", func(ctx context.Context, c *Client) (interface{}, interface{}) {
			r, err := c.FollowAt(ctx, 1, 2, t0)
			return []interface{}{r, err}, []interface{}{FollowResult{true, RelFollowing, t0}, nil}
		}},
		{"FOLLOW 2 → 1", func(ctx context.Context, c *Client) (interface{}, interface{}) {
			r, _ := c.FollowAt(ctx, 2, 1, t0+1000)
			return r, FollowResult{true, RelMutual, t0 + 1000}
		}},
		{"FOLLOW 1 → 3", func(ctx context.Context, c *Client) (interface{}, interface{}) {
			r, _ := c.FollowAt(ctx, 1, 3, t0+2000)
			return r, FollowResult{true, RelFollowing, t0 + 2000}
		}},
		{"FOLLOW 3 → 2", func(ctx context.Context, c *Client) (interface{}, interface{}) {
			r, _ := c.FollowAt(ctx, 3, 2, t0+3000)
			return r, FollowResult{true, RelFollowing, t0 + 3000}
		}},
		{"FOLLOW 1 → 2 again", func(ctx context.Context, c *Client) (interface{}, interface{}) {
			r, _ := c.FollowAt(ctx, 1, 2, t0+9000)
			return r, FollowResult{false, RelMutual, t0}
		}},
		{"RELATION 1, 2", func(ctx context.Context, c *Client) (interface{}, interface{}) {
			r, _ := c.Relation(ctx, 1, 2)
			return r, RelMutual
		}},
		{"RELATIONS 1 against [2, 3, 4]", func(ctx context.Context, c *Client) (interface{}, interface{}) {
			r, _ := c.Relations(ctx, 1, []uint64{2, 3, 4})
			return r, []Relation{RelMutual, RelFollowing, 0}
		}},
		{"FOLLOWING of 1, limit 20, viewer 2", func(ctx context.Context, c *Client) (interface{}, interface{}) {
			r, _ := c.Following(ctx, pq(1, 20, nil, 2))
			return r, Page{Entries: []PageEntry{{3, t0 + 2000, RelFollowedBy, false}, {2, t0, 0, true}}}
		}},
		{"FOLLOWING of 1, limit 1:", func(ctx context.Context, c *Client) (interface{}, interface{}) {
			r, _ := c.Following(ctx, pq(1, 1, nil, 0))
			return r, Page{Entries: []PageEntry{{3, t0 + 2000, 0, false}}, Next: &Cursor{t0 + 2000, 3}}
		}},
		{"FOLLOWING of 1 after", func(ctx context.Context, c *Client) (interface{}, interface{}) {
			r, _ := c.Following(ctx, pq(1, 1, &Cursor{t0 + 2000, 3}, 0))
			return r, Page{Entries: []PageEntry{{2, t0, 0, true}}}
		}},
		{"COUNTS of 1", func(ctx context.Context, c *Client) (interface{}, interface{}) {
			r, _ := c.Counts(ctx, 1)
			return r, Counts{2, 1, 1}
		}},
		{"KNOWN_FOLLOWERS", func(ctx context.Context, c *Client) (interface{}, interface{}) {
			r, _ := c.KnownFollowers(ctx, 1, 2, 3)
			return r, KnownFollowers{1, []uint64{3}}
		}},
		{"UNFOLLOW 1 → 3", func(ctx context.Context, c *Client) (interface{}, interface{}) {
			r, _ := c.Unfollow(ctx, 1, 3)
			return r, true
		}},
		{"PUBLISH author 2", func(ctx context.Context, c *Client) (interface{}, interface{}) {
			r, _ := c.PublishAt(ctx, 2, 500, 0, t0+5000)
			return r, PublishResult{t0 + 5000, true, 0}
		}},
		{"TIMELINE of 1", func(ctx context.Context, c *Client) (interface{}, interface{}) {
			r, _ := c.Timeline(ctx, FeedQuery{User: 1, Limit: 10})
			return r, FeedPage{Entries: []Post{{500, 2, t0 + 5000, 0}}}
		}},
		{"MUTE 1, 2", func(ctx context.Context, c *Client) (interface{}, interface{}) {
			r, _ := c.Mute(ctx, 1, 2)
			return r, true
		}},
		{"DELETE_POST", func(ctx context.Context, c *Client) (interface{}, interface{}) {
			return c.DeletePost(ctx, 2, 500), nil
		}},
		{"FOLLOW 1 → 1: error self_follow", func(ctx context.Context, c *Client) (interface{}, interface{}) {
			_, err := c.Follow(ctx, 1, 1)
			return errOf(err), Error{Code: CodeSelfFollow, Op: OpFollow, Message: "user 1 cannot follow itself"}
		}},
		{"SNAPSHOT", func(ctx context.Context, c *Client) (interface{}, interface{}) {
			r, err := c.Snapshot(ctx) // the fake's body: lsn 20, edges 4, 1000 bytes, T0
			return []interface{}{r, err}, []interface{}{SnapshotInfo{20, 4, 1000, t0}, nil}
		}},
		{"REMOVE_USER 2", func(ctx context.Context, c *Client) (interface{}, interface{}) {
			r, _ := c.RemoveUser(ctx, 2)
			return r, uint64(3)
		}},
		{"SET_PRIVATE 3 on", func(ctx context.Context, c *Client) (interface{}, interface{}) {
			r, _ := c.SetPrivate(ctx, 3, true)
			return r, SetPrivateResult{true, 0, t0 + 10000}
		}},
		{"IS_PRIVATE 3", func(ctx context.Context, c *Client) (interface{}, interface{}) {
			r, _ := c.IsPrivate(ctx, 3)
			return r, true
		}},
		{"FOLLOW 1 → 3 at T0 + 6000", func(ctx context.Context, c *Client) (interface{}, interface{}) {
			r, _ := c.FollowAt(ctx, 1, 3, t0+6000)
			return r, FollowResult{true, RelRequested, t0 + 6000}
		}},
		{"FOLLOW 4 → 3", func(ctx context.Context, c *Client) (interface{}, interface{}) {
			r, _ := c.FollowAt(ctx, 4, 3, t0+7000)
			return r, FollowResult{true, RelRequested, t0 + 7000}
		}},
		{"REQUESTS of 3", func(ctx context.Context, c *Client) (interface{}, interface{}) {
			r, _ := c.Requests(ctx, pq(3, 10, nil, 1))
			return r, Page{Total: 2, Entries: []PageEntry{{4, t0 + 7000, 0, false}, {1, t0 + 6000, 0, false}}}
		}},
		{"WITHDRAW 4 → 3", func(ctx context.Context, c *Client) (interface{}, interface{}) {
			r, _ := c.Withdraw(ctx, 4, 3)
			return r, true
		}},
		{"APPROVE", func(ctx context.Context, c *Client) (interface{}, interface{}) {
			r, _ := c.Approve(ctx, 3, 1)
			return r, FollowResult{true, RelFollowing, t0 + 10000}
		}},
		{"BLOCK 3 blocks 1", func(ctx context.Context, c *Client) (interface{}, interface{}) {
			r, _ := c.Block(ctx, 3, 1)
			return r, BlockResult{true, t0 + 10000, 2}
		}},
		{"FOLLOW 1 → 3: error blocked", func(ctx context.Context, c *Client) (interface{}, interface{}) {
			_, err := c.Follow(ctx, 1, 3)
			return errOf(err), Error{Code: CodeBlocked, Op: OpFollow, Message: "user 1 may not follow user 3: a block stands between them"}
		}},
		{"RELATIONS 1 against [3]", func(ctx context.Context, c *Client) (interface{}, interface{}) {
			r, _ := c.Relations(ctx, 1, []uint64{3})
			return r, []Relation{RelBlockedBy}
		}},
		{"BLOCKS of 3", func(ctx context.Context, c *Client) (interface{}, interface{}) {
			r, _ := c.Blocks(ctx, pq(3, 10, nil, 0))
			return r, Page{Total: 1, Entries: []PageEntry{{1, t0 + 10000, 0, false}}}
		}},
		{"UNBLOCK 3, 1", func(ctx context.Context, c *Client) (interface{}, interface{}) {
			r, _ := c.Unblock(ctx, 3, 1)
			return r, true
		}},
		{"REJECT", func(ctx context.Context, c *Client) (interface{}, interface{}) {
			r, _ := c.Reject(ctx, 3, 4)
			return r, false
		}},
		{"SET_PRIVATE 3 off:", func(ctx context.Context, c *Client) (interface{}, interface{}) {
			r, _ := c.SetPrivate(ctx, 3, false)
			return r, SetPrivateResult{true, 0, t0 + 10000}
		}},
		{"SET_PRIVATE 3 off again", func(ctx context.Context, c *Client) (interface{}, interface{}) {
			r, _ := c.SetPrivate(ctx, 3, false)
			return r, SetPrivateResult{false, 0, 0}
		}},
	}
	if len(rows) != len(checks) {
		t.Fatalf("docs/protocol.md's Examples has %d rows; this test knows %d: update both", len(rows), len(checks))
	}
	steps := []fakeStep{{name: "connect"}}
	for i, r := range rows {
		if !strings.HasPrefix(r.name, checks[i].name) {
			t.Fatalf("row %d is %q; this test expects %q there", i+1, r.name, checks[i].name)
		}
		reply := r.cells[len(r.cells)-1]
		if strings.HasPrefix(r.name, "SNAPSHOT") {
			// The doc gives the header only (the body varies): lsn, edges, file_bytes, created_ms.
			var e enc
			e.b = append([]byte(nil), reply...)
			e.u64(20)
			e.u64(4)
			e.u64(1000)
			e.i64(t0)
			if binary.LittleEndian.Uint32(reply) != uint32(len(e.b)-4) {
				t.Fatalf("SNAPSHOT: the doc's header says length %d, a reply of 4 fields has %d", binary.LittleEndian.Uint32(reply), len(e.b)-4)
			}
			reply = e.b
		}
		steps = append(steps, fakeStep{name: r.name, want: r.cells[0], reply: reply})
	}
	addr, done := fakeServer(t, steps)
	ctx := ctxT(t)
	c, err := Connect(ctx, Options{Addr: addr, Token: "secret", PoolSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	if h := c.Hello(); h != (Hello{2, 1 << 20, "relgraphd", "0.1.0"}) {
		t.Errorf("HELLO decoded as %+v", h)
	}
	for i, ch := range checks[1:] {
		got, want := ch.run(ctx, c)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: decoded\n %+v\nwant %+v", rows[i+1].name, got, want)
		}
	}
	c.Close()
	<-done
}

func TestConformanceStreamExample(t *testing.T) {
	doc := readDoc(t)
	rows := docTable(t, doc, "## Stream example")
	if len(rows) != 5 {
		t.Fatalf("the stream example has %d rows, this test knows 5", len(rows))
	}
	hello := docTable(t, doc, "## Examples")[0].cells
	// The stream's connection sends HELLO with the token "secret" as in the Examples table.
	steps := []fakeStep{{name: "connect"}, {name: "HELLO", want: hello[0], reply: hello[1]},
		{name: rows[0].name, want: rows[0].cells[0], reply: append(append([]byte(nil), rows[1].cells[0]...), rows[2].cells[0]...)},
		{name: rows[3].name, want: rows[3].cells[0], reply: rows[4].cells[0]}}
	addr, done := fakeServer(t, steps)
	ctx := ctxT(t)
	c := New(Options{Addr: addr, Token: "secret"})
	defer c.Close()
	sub, err := c.Subscribe(ctx, SubscribeOptions{From: FromLSN, LSN: 1})
	if err != nil {
		t.Fatal(err)
	}
	if sub.First != (SubscribeReply{1, 3}) {
		t.Errorf("SUBSCRIBE reply decoded as %+v", sub.First)
	}
	var got []Event
	for len(got) < 3 {
		ev, err := sub.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ev)
	}
	want := []Event{
		{LSN: 1, Kind: EvFollow, TS: t0, A: 1, B: 2},
		{LSN: 2, Kind: EvFollow, TS: t0 + 1000, A: 2, B: 1, Friends: true},
		{LSN: 3, Kind: EvPublish, TS: t0 + 5000, A: 2, B: 500, Detail: 3},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("EVENTS decoded as\n %+v\nwant %+v", got, want)
	}
	if sub.NextLSN() != 4 {
		t.Errorf("next_lsn %d, want 4", sub.NextLSN())
	}
	// A second SUBSCRIBE on that connection: the doc's request bytes, and its error decoded.
	_, err = sub.cn.RoundTrip(ctx, OpSubscribe, encodeSubscribe(FromNow, 0, 0, ""))
	var e *Error
	if !errors.As(err, &e) || e.Code != CodeInvalidArgument ||
		e.Message != "this connection already carries the pushed frames of request 2; open another connection" {
		t.Errorf("second SUBSCRIBE: %v", err)
	}
	sub.Close()
	<-done
}

// The NOTICE frame of the doc breaks the connection, and the waiting call sees its error;
// the version-1 HELLO exchange of "Handshake" is what a client falls back to after
// unsupported.
func TestConformanceNoticeAndHelloV1(t *testing.T) {
	doc := readDoc(t)
	i := strings.Index(doc, "the version-1 exchange with token \"secret\" is")
	if i < 0 {
		t.Fatal("docs/protocol.md has no version-1 HELLO exchange")
	}
	m := backticked.FindAllStringSubmatch(doc[i:i+400], 2)
	v1req, _ := hex.DecodeString(strings.ReplaceAll(m[0][1], " ", ""))
	v1rep, _ := hex.DecodeString(strings.ReplaceAll(m[1][1], " ", ""))
	j := strings.Index(doc, "| NOTICE: resource_exhausted, idle |")
	if j < 0 {
		t.Fatal("docs/protocol.md has no NOTICE row")
	}
	notice, _ := hex.DecodeString(strings.ReplaceAll(backticked.FindStringSubmatch(doc[j:])[1], " ", ""))
	ex := docTable(t, doc, "## Examples")
	var unsupported enc // what a version-1 server answers a version-2 HELLO
	unsupported.b = []byte{0, 0, 0, 0, 1, 0, 0, 0, byte(OpHello), byte(CodeUnsupported)}
	unsupported.i64(0)
	unsupported.str("protocol version 2 is not supported")
	binary.LittleEndian.PutUint32(unsupported.b, uint32(len(unsupported.b)-4))
	steps := []fakeStep{{name: "connect"}, {name: "HELLO v2", want: ex[0].cells[0], reply: unsupported.b},
		{name: "reconnect"}, {name: "HELLO v1", want: v1req, reply: v1rep},
		{name: "PING", want: ex[1].cells[0], reply: notice}}
	addr, done := fakeServer(t, steps)
	ctx := ctxT(t)
	cn, err := Dial(ctx, addr, DialOptions{Token: "secret"})
	if err != nil {
		t.Fatal(err)
	}
	if h := cn.Hello(); h != (Hello{Version: 1, MaxFrame: 1 << 20, Server: "relgraphd"}) {
		t.Errorf("version-1 HELLO decoded as %+v", h)
	}
	_, err = cn.RoundTrip(ctx, OpPing, nil)
	var ce *ConnError
	var e *Error
	if !errors.As(err, &ce) || !errors.As(err, &e) || e.Code != CodeResourceExhausted ||
		e.Message != "idle for more than 300000 ms" || e.Op != OpNotice {
		t.Errorf("PING answered by the NOTICE: %v", err)
	}
	if _, err := cn.RoundTrip(ctx, OpPing, nil); !errors.As(err, &ce) {
		t.Errorf("a call after the NOTICE: %v", err)
	}
	cn.Close()
	<-done
}
