package relgraph

// Differential: a few hundred random commands (seeded; the seed is printed, and
// RELGRAPH_DIFF_SEED replays one) compared with relgraph-cli --json, the C++ client.
// Two servers take the same commands: every write goes to server A through this client and
// to server B through relgraph-cli, and the two answers must agree (times the server's
// clock chose are masked); every read goes to server A through both, so both see one state
// and must agree exactly.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

type diffCmd struct {
	args  []string
	write bool
	run   func(ctx context.Context, c *Client) (interface{}, error)
}

type obj = map[string]interface{}

func pageJSON(p Page, counted bool) obj {
	entries := []interface{}{}
	for _, e := range p.Entries {
		entries = append(entries, obj{"user": e.User, "ts": e.TS, "viewer_relation": e.ViewerRelation.String(), "mutual": e.Mutual})
	}
	o := obj{"entries": entries, "next": nil}
	if p.Next != nil {
		o["next"] = fmt.Sprintf("%d:%d", p.Next.TS, p.Next.User)
	}
	if counted {
		o["total"] = p.Total
	}
	return o
}

func feedJSON(p FeedPage) obj {
	entries := []interface{}{}
	for _, e := range p.Entries {
		entries = append(entries, obj{"post": e.Post, "author": e.Author, "ts": e.TS, "kind": e.Kind})
	}
	o := obj{"entries": entries, "next": nil}
	if p.Next != nil {
		o["next"] = fmt.Sprintf("%d:%d", p.Next.TS, p.Next.Post)
	}
	return o
}

func followJSON(r FollowResult) obj {
	return obj{"created": r.Created, "relation": r.Relation.String(), "followed_at": r.FollowedAt}
}

func usersJSON(u []uint64) []interface{} {
	out := []interface{}{}
	for _, v := range u {
		out = append(out, v)
	}
	return out
}

// genCommand draws one command over a small universe, so that commands meet.
func genCommand(r *rand.Rand, clock *int64) diffCmd {
	u := func() uint64 { return uint64(1 + r.Intn(12)) }
	s := func(v uint64) string { return strconv.FormatUint(v, 10) }
	a, b := u(), u()
	tick := func() int64 { *clock += 1 + int64(r.Intn(3)); return *clock }
	pageOpts := func(q *PageQuery) []string {
		q.Limit = uint16(1 + r.Intn(6))
		opts := []string{"--limit=" + strconv.Itoa(int(q.Limit))}
		switch r.Intn(3) {
		case 0:
			q.Offset = uint32(r.Intn(4))
			opts = append(opts, "--offset="+strconv.Itoa(int(q.Offset)))
		case 1:
			q.After = &Cursor{TS: t0 + r.Int63n(*clock-t0+2), User: u()}
			opts = append(opts, fmt.Sprintf("--after=%d:%d", q.After.TS, q.After.User))
		}
		if r.Intn(2) == 0 {
			q.Viewer = u()
			opts = append(opts, "--viewer="+s(q.Viewer))
		}
		return opts
	}
	changed := func(name string, f func(*Client, context.Context, uint64, uint64) (bool, error), write bool) diffCmd {
		return diffCmd{[]string{name, s(a), s(b)}, write, func(ctx context.Context, c *Client) (interface{}, error) {
			v, err := f(c, ctx, a, b)
			return obj{"changed": v}, err
		}}
	}
	switch k := r.Intn(100); {
	case k < 22:
		ts := tick()
		return diffCmd{[]string{"follow", s(a), s(b), strconv.FormatInt(ts, 10)}, true, func(ctx context.Context, c *Client) (interface{}, error) {
			v, err := c.FollowAt(ctx, a, b, ts)
			return followJSON(v), err
		}}
	case k < 27:
		return diffCmd{[]string{"unfollow", s(a), s(b)}, true, func(ctx context.Context, c *Client) (interface{}, error) {
			v, err := c.Unfollow(ctx, a, b)
			return obj{"removed": v}, err
		}}
	case k < 32:
		return diffCmd{[]string{"relation", s(a), s(b)}, false, func(ctx context.Context, c *Client) (interface{}, error) {
			v, err := c.Relation(ctx, a, b)
			return obj{"relation": v.String()}, err
		}}
	case k < 36:
		others := []uint64{}
		seen := map[uint64]bool{}
		for i := 0; i < 1+r.Intn(5); i++ {
			if o := u(); !seen[o] {
				seen[o] = true
				others = append(others, o)
			}
		}
		args := []string{"relations", s(a)}
		for _, o := range others {
			args = append(args, s(o))
		}
		return diffCmd{args, false, func(ctx context.Context, c *Client) (interface{}, error) {
			v, err := c.Relations(ctx, a, others)
			o := obj{}
			for i, rel := range v {
				o[s(others[i])] = rel.String()
			}
			return o, err
		}}
	case k < 52:
		names := []string{"following", "fans", "friends", "blocks", "requests"}
		ops := []Opcode{OpFollowing, OpFans, OpFriends, OpBlocks, OpRequests}
		i := r.Intn(len(names))
		q := PageQuery{User: a}
		args := append([]string{names[i], s(a)}, pageOpts(&q)...)
		return diffCmd{args, false, func(ctx context.Context, c *Client) (interface{}, error) {
			v, err := c.page(ctx, ops[i], q)
			return pageJSON(v, ops[i] == OpBlocks || ops[i] == OpRequests), err
		}}
	case k < 56:
		return diffCmd{[]string{"counts", s(a)}, false, func(ctx context.Context, c *Client) (interface{}, error) {
			v, err := c.Counts(ctx, a)
			return obj{"following": v.Following, "fans": v.Fans, "friends": v.Friends}, err
		}}
	case k < 60:
		limit := uint16(r.Intn(5))
		return diffCmd{[]string{"known-followers", s(a), s(b), strconv.Itoa(int(limit))}, false, func(ctx context.Context, c *Client) (interface{}, error) {
			v, err := c.KnownFollowers(ctx, a, b, limit)
			return obj{"total": v.Total, "users": usersJSON(v.Users)}, err
		}}
	case k < 61:
		return diffCmd{[]string{"remove-user", s(a)}, true, func(ctx context.Context, c *Client) (interface{}, error) {
			v, err := c.RemoveUser(ctx, a)
			return obj{"edges_removed": v}, err
		}}
	case k < 68:
		post, kind, ts := uint64(1+r.Intn(60)), uint8(r.Intn(4)), tick()
		return diffCmd{[]string{"publish", s(a), s(post), strconv.Itoa(int(kind)), strconv.FormatInt(ts, 10)}, true, func(ctx context.Context, c *Client) (interface{}, error) {
			v, err := c.PublishAt(ctx, a, post, kind, ts)
			return obj{"ts": v.TS, "retained": v.Retained, "evicted": v.Evicted}, err
		}}
	case k < 70:
		post := uint64(1 + r.Intn(60))
		return diffCmd{[]string{"delete-post", s(a), s(post)}, true, func(ctx context.Context, c *Client) (interface{}, error) {
			return obj{"deleted": true}, c.DeletePost(ctx, a, post)
		}}
	case k < 76:
		q := FeedQuery{User: a, Limit: uint16(1 + r.Intn(5))}
		args := []string{"timeline", s(a), "--limit=" + strconv.Itoa(int(q.Limit))}
		op := OpTimeline
		if r.Intn(2) == 0 {
			args[0], op = "user-posts", OpUserPosts
		}
		if r.Intn(3) == 0 {
			q.After = &PostCursor{TS: t0 + r.Int63n(*clock-t0+2), Post: uint64(1 + r.Intn(60))}
			args = append(args, fmt.Sprintf("--after=%d:%d", q.After.TS, q.After.Post))
		}
		if r.Intn(3) == 0 {
			k1, k2 := r.Intn(4), r.Intn(4)
			q.Kinds = 1<<k1 | 1<<k2
			args = append(args, fmt.Sprintf("--kinds=%d,%d", k1, k2))
		}
		return diffCmd{args, false, func(ctx context.Context, c *Client) (interface{}, error) {
			v, err := do(ctx, c, op, encodeFeedQuery(q), decodeFeedPage)
			return feedJSON(v), err
		}}
	case k < 78:
		return changed("mute", (*Client).Mute, true)
	case k < 79:
		return changed("unmute", (*Client).Unmute, true)
	case k < 81:
		return changed("hide", (*Client).Hide, true)
	case k < 82:
		return changed("unhide", (*Client).Unhide, true)
	case k < 84:
		name, op := "mutes", OpMutes
		if r.Intn(2) == 0 {
			name, op = "hides", OpHides
		}
		return diffCmd{[]string{name, s(a)}, false, func(ctx context.Context, c *Client) (interface{}, error) {
			v, err := do(ctx, c, op, one(a), func(d *dec) []uint64 { return d.u64s() })
			return obj{"users": usersJSON(v)}, err
		}}
	case k < 86:
		return diffCmd{[]string{"block", s(a), s(b)}, true, func(ctx context.Context, c *Client) (interface{}, error) {
			v, err := c.Block(ctx, a, b)
			return obj{"created": v.Created, "ts": v.TS, "unfollowed": v.Removed&1 != 0, "lost_follower": v.Removed&2 != 0, "dropped_request": v.Removed&4 != 0}, err
		}}
	case k < 88:
		return changed("unblock", (*Client).Unblock, true)
	case k < 91:
		on := r.Intn(2) == 0
		word := map[bool]string{true: "on", false: "off"}[on]
		return diffCmd{[]string{"set-private", s(a), word}, true, func(ctx context.Context, c *Client) (interface{}, error) {
			v, err := c.SetPrivate(ctx, a, on)
			return obj{"changed": v.Changed, "approved": v.Approved, "ts": v.TS}, err
		}}
	case k < 92:
		return diffCmd{[]string{"is-private", s(a)}, false, func(ctx context.Context, c *Client) (interface{}, error) {
			v, err := c.IsPrivate(ctx, a)
			return obj{"private": v}, err
		}}
	case k < 95:
		return diffCmd{[]string{"approve", s(a), s(b)}, true, func(ctx context.Context, c *Client) (interface{}, error) {
			v, err := c.Approve(ctx, a, b)
			return followJSON(v), err
		}}
	case k < 97:
		return changed("reject", (*Client).Reject, true)
	case k < 99:
		return changed("withdraw", (*Client).Withdraw, true)
	default:
		return diffCmd{[]string{"ping"}, false, func(ctx context.Context, c *Client) (interface{}, error) {
			return obj{"pong": true}, c.Ping(ctx)
		}}
	}
}

// normalize turns a value into generic JSON (numbers as json.Number); with maskClock, a
// time the server's clock chose (past T0 + 10^9: the test's own times are below) reads
// "clock".
func normalize(t *testing.T, raw []byte, maskClock bool) interface{} {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v interface{}
	if err := d.Decode(&v); err != nil {
		t.Fatalf("not JSON: %q: %v", raw, err)
	}
	if maskClock {
		var mask func(v interface{})
		mask = func(v interface{}) {
			if m, ok := v.(obj); ok {
				for k, x := range m {
					if n, ok := x.(json.Number); ok && (k == "ts" || k == "followed_at") {
						if i, _ := n.Int64(); i > t0+1_000_000_000 {
							m[k] = "clock"
						}
					}
					mask(x)
				}
			}
		}
		mask(v)
	}
	return v
}

func goJSON(t *testing.T, v interface{}, err error) []byte {
	if err != nil {
		e, ok := err.(*Error)
		if !ok {
			t.Fatalf("transport error: %v", err)
		}
		v = obj{"error": e.Code.String(), "message": e.Message}
	}
	b, jerr := json.Marshal(v)
	if jerr != nil {
		t.Fatal(jerr)
	}
	return b
}

func TestDifferentialAgainstCLI(t *testing.T) {
	cli := cliPath(t)
	seed := time.Now().UnixNano()
	if v := os.Getenv("RELGRAPH_DIFF_SEED"); v != "" {
		seed, _ = strconv.ParseInt(v, 10, 64)
	}
	n := 300
	if v := os.Getenv("RELGRAPH_DIFF_COMMANDS"); v != "" {
		n, _ = strconv.Atoi(v)
	}
	t.Logf("seed %d (RELGRAPH_DIFF_SEED=%d replays it), %d commands", seed, seed, n)
	fmt.Printf("differential: seed %d, %d commands\n", seed, n)
	r := rand.New(rand.NewSource(seed))
	srvA, srvB := startServer(t), startServer(t)
	c := srvA.client(t, Options{})
	ctx := ctxT(t)
	runCLI := func(s *server, args []string) []byte {
		host, port, _ := strings.Cut(s.addr, ":")
		cmd := exec.Command(cli, append([]string{"-h", host, "-p", port, "--json"}, args...)...)
		var out, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &stderr
		err := cmd.Run()
		if ee, ok := err.(*exec.ExitError); err != nil && !(ok && ee.ExitCode() == 1) {
			t.Fatalf("relgraph-cli %v: %v: %s", args, err, stderr.String())
		}
		return out.Bytes()
	}
	clock := t0
	counts := map[string]int{}
	for i := 0; i < n; i++ {
		cmd := genCommand(r, &clock)
		counts[cmd.args[0]]++
		if cmd.args[0] == "timeline" || cmd.args[0] == "user-posts" {
			settleFanout(ctx, t, c) // or the two reads may see a post's fan-out at different points
		}
		v, err := cmd.run(ctx, c)
		mine := goJSON(t, v, err)
		var theirs []byte
		if cmd.write {
			theirs = runCLI(srvB, cmd.args)
		} else {
			theirs = runCLI(srvA, cmd.args)
		}
		if !reflect.DeepEqual(normalize(t, mine, cmd.write), normalize(t, theirs, cmd.write)) {
			t.Fatalf("command %d (seed %d): %s\n go:  %s\n cli: %s", i, seed, strings.Join(cmd.args, " "), mine, theirs)
		}
	}
	t.Logf("commands run: %v", counts)
}

// settleFanout waits until no fan-out is under way (INFO fanout_queue counts the waiting and
// running tasks), for up to 5 s.
func settleFanout(ctx context.Context, t *testing.T, c *Client) {
	t.Helper()
	for i := 0; i < 1000; i++ {
		info, err := c.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if q, _ := info.Get("fanout_queue"); q == 0 {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}
