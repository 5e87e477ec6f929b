package relgraph

// Cluster mode: the bucket hash against docs/cluster.md's vectors (read from the doc), the
// map's text form, and a randomized differential run of routed commands through a
// ClusterClient against a real three-shard cluster, checked against a model of one node,
// with a bucket move under the writes and a client whose map the move made stale; and a
// shard served by a replication group whose primary is killed.

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

func TestBucketHashMatchesTheDocsVectors(t *testing.T) {
	path := os.Getenv("RELGRAPH_CLUSTER_DOC")
	if path == "" {
		path = repoPath("docs/cluster.md")
	}
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(doc), "Bucket test vectors")
	if !ok {
		t.Fatal("docs/cluster.md has no \"Bucket test vectors\"")
	}
	row := regexp.MustCompile(`(?m)^\| (\d+) \| (\d+) \| (\d+) \|$`)
	rows := row.FindAllStringSubmatch(table, -1)
	if len(rows) < 5 {
		t.Fatalf("found %d vector rows", len(rows))
	}
	for _, r := range rows {
		id, _ := strconv.ParseUint(r[1], 10, 64)
		hash, _ := strconv.ParseUint(r[2], 10, 64)
		bucket, _ := strconv.ParseUint(r[3], 10, 32)
		if got := BucketHash(id); got != hash {
			t.Errorf("XXH3 of user %d: %d, the doc says %d", id, got, hash)
		}
		if got := BucketOf(id, 1024); got != uint32(bucket) {
			t.Errorf("bucket of user %d among 1024: %d, the doc says %d", id, got, bucket)
		}
	}
}

func TestShardMapTextForm(t *testing.T) {
	m, err := ParseShardMap("relgraph-cluster-map 1\nversion 7\nrelgraph-shard-map 1\nbuckets 8\n" +
		"generation 3\nshard 1 127.0.0.1:1\nshard 2 127.0.0.1:2,127.0.0.1:3 group g2\n" +
		"owner 0-3 1\nowner 4-7 2\nmove 2-3 1 2 flip 9 1700000000000\n")
	if err != nil {
		t.Fatal(err)
	}
	if m.Version != 7 || m.Generation != 3 || m.Buckets != 8 || len(m.Shards) != 2 {
		t.Fatalf("%+v", m)
	}
	if s := m.Find(2); s.Group != "g2" || s.Addr != "127.0.0.1:2" || len(s.Addresses()) != 2 {
		t.Fatalf("%+v", s)
	}
	if m.Move == nil || m.Move.Phase != "flip" || m.Move.First != 2 || m.Move.FlippedMs != 1700000000000 {
		t.Fatalf("%+v", m.Move)
	}
	for u := uint64(1); u < 50; u++ {
		if want := map[bool]uint32{true: 1, false: 2}[BucketOf(u, 8) < 4]; m.OwnerOf(u) != want {
			t.Fatalf("owner of %d", u)
		}
	}
	older := *m
	older.Generation = 2
	older.Version = 100
	if !m.NewerThan(&older) || older.NewerThan(m) {
		t.Fatal("(generation, version) order")
	}
	for _, bad := range []string{
		"",
		"relgraph-shard-map 1\nbuckets 4\nshard 1 a:1\nowner 0-2 1\n",            // bucket 3 unowned
		"relgraph-shard-map 1\nbuckets 4\nshard 1 a:1\nowner 0-3 2\n",            // unknown owner
		"relgraph-shard-map 1\nbuckets 4\nshard 1 a:1\nowner 0-3 1\nowner 3-3 1", // owned twice
		"relgraph-shard-map 1\nbuckets 4\nshard 1 a:1,b:2\nowner 0-3 1\n",        // members without a group
		"relgraph-shard-map 1\nbuckets 4\nshard 1 a:1\nowner 0-3 1\nmove 0-1 1 2 fly 3\n",
		"relgraph-cluster-map 1\nrelgraph-shard-map 1\n",
	} {
		if _, err := ParseShardMap(bad); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
}

// graphModel is one node's follow graph: each edge with its follow time.
type graphModel struct{ edges map[[2]uint64]int64 }

func (g *graphModel) rel(a, b uint64) Relation {
	var r Relation
	if _, ok := g.edges[[2]uint64{a, b}]; ok {
		r |= RelFollowing
	}
	if _, ok := g.edges[[2]uint64{b, a}]; ok {
		r |= RelFollowedBy
	}
	return r
}

// list is op's list of user, newest first by (ts, user), with viewer's relations.
func (g *graphModel) list(op Opcode, user, viewer uint64) []PageEntry {
	var out []PageEntry
	for e, ts := range g.edges {
		var other uint64
		switch {
		case op == OpFollowing && e[0] == user:
			other = e[1]
		case op == OpFans && e[1] == user:
			other = e[0]
		case op == OpFriends && e[0] == user && g.rel(user, e[1]) == RelMutual:
			other = e[1]
			if back := g.edges[[2]uint64{e[1], user}]; back > ts {
				ts = back // when the pair became mutual
			}
		default:
			continue
		}
		pe := PageEntry{User: other, TS: ts, Mutual: g.rel(user, other) == RelMutual}
		if viewer != 0 {
			pe.ViewerRelation = g.rel(viewer, other)
		}
		out = append(out, pe)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].TS != out[j].TS {
			return out[i].TS > out[j].TS
		}
		return out[i].User > out[j].User
	})
	return out
}

// clusterRound runs n random follows and unfollows among users 1..users through cc, each
// checked against the model (exact on the follower's shard), and records them in it.
func clusterRound(ctx context.Context, t *testing.T, cc *ClusterClient, g *graphModel, rng *rand.Rand, users, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		a, b := uint64(1+rng.Intn(users)), uint64(1+rng.Intn(users))
		if a == b {
			continue
		}
		key := [2]uint64{a, b}
		_, had := g.edges[key]
		if rng.Intn(3) > 0 {
			r, err := cc.Follow(ctx, a, b)
			if err != nil {
				t.Fatalf("follow %d %d: %v", a, b, err)
			}
			if r.Created == had {
				t.Fatalf("follow %d %d: created %v, the model held the edge: %v", a, b, r.Created, had)
			}
			if !had {
				g.edges[key] = r.FollowedAt
			}
		} else {
			removed, err := cc.Unfollow(ctx, a, b)
			if err != nil {
				t.Fatalf("unfollow %d %d: %v", a, b, err)
			}
			if removed != had {
				t.Fatalf("unfollow %d %d: removed %v, the model held the edge: %v", a, b, removed, had)
			}
			delete(g.edges, key)
		}
	}
}

// clusterReads compares n random reads through cc with the model (after a barrier).
func clusterReads(ctx context.Context, t *testing.T, cc *ClusterClient, g *graphModel, rng *rand.Rand, users, n int) {
	t.Helper()
	ops := []Opcode{OpFollowing, OpFans, OpFriends}
	for i := 0; i < n; i++ {
		u, v := uint64(1+rng.Intn(users)), uint64(1+rng.Intn(users))
		switch rng.Intn(4) {
		case 0, 1: // a whole list, page by page, with a viewer (often on another shard) or none
			op := ops[rng.Intn(len(ops))]
			if rng.Intn(4) == 0 {
				v = 0
			}
			q := PageQuery{User: u, Limit: uint16(1 + rng.Intn(7)), Viewer: v}
			it := map[Opcode]func(PageQuery) *PageIter{OpFollowing: cc.FollowingIter, OpFans: cc.FansIter, OpFriends: cc.FriendsIter}[op](q)
			var got []PageEntry
			for it.Next(ctx) {
				got = append(got, it.Entry())
			}
			if err := it.Err(); err != nil {
				t.Fatalf("%v of %d viewer %d: %v", op, u, v, err)
			}
			if want := g.list(op, u, v); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("%v of %d viewer %d (shards %d, %d):\n got %v\nwant %v", op, u, v,
					cc.Map().OwnerOf(u), cc.Map().OwnerOf(v), got, want)
			}
		case 2: // known followers: whom v follows that follow u, newest first by v's follow
			limit := uint16(rng.Intn(6))
			got, err := cc.KnownFollowers(ctx, v, u, limit)
			if err != nil && v != u {
				t.Fatalf("known_followers %d %d: %v", v, u, err)
			}
			if v == u {
				continue
			}
			want := KnownFollowers{}
			for _, e := range g.list(OpFollowing, v, 0) {
				if _, ok := g.edges[[2]uint64{e.User, u}]; ok {
					want.Total++
					if len(want.Users) < int(limit) {
						want.Users = append(want.Users, e.User)
					}
				}
			}
			if got.Total != want.Total || fmt.Sprint(got.Users) != fmt.Sprint(want.Users) {
				t.Fatalf("known_followers %d %d limit %d: got %+v, want %+v", v, u, limit, got, want)
			}
		case 3: // counts and a relation
			c, err := cc.Counts(ctx, u)
			if err != nil {
				t.Fatal(err)
			}
			want := Counts{Following: uint32(len(g.list(OpFollowing, u, 0))),
				Fans: uint32(len(g.list(OpFans, u, 0))), Friends: uint32(len(g.list(OpFriends, u, 0)))}
			if c != want {
				t.Fatalf("counts %d: got %+v, want %+v", u, c, want)
			}
			if u != v {
				r, err := cc.Relation(ctx, u, v)
				if err != nil || r != g.rel(u, v) {
					t.Fatalf("relation %d %d: %v %v, want %v", u, v, r, err, g.rel(u, v))
				}
			}
		}
	}
}

func TestClusterDifferentialWithABucketMove(t *testing.T) {
	seed := time.Now().UnixNano()
	if s := os.Getenv("RELGRAPH_DIFF_SEED"); s != "" {
		seed, _ = strconv.ParseInt(s, 10, 64)
	}
	t.Logf("seed %d (RELGRAPH_DIFF_SEED replays it)", seed)
	rng := rand.New(rand.NewSource(seed))
	tc := startCluster(t, "--shards=3", "--buckets=64")
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	cc, err := ConnectCluster(ctx, ClusterOptions{Seeds: tc.seeds()[:1]})
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	stale, err := ConnectCluster(ctx, ClusterOptions{Seeds: tc.seeds()[2:]})
	if err != nil {
		t.Fatal(err)
	}
	defer stale.Close()
	// A second stale client, for the pairs the move splits; a shard's map lagging is waited
	// out for 3 s only, so a pair it takes for a lag fails the test at once.
	stale2, err := ConnectCluster(ctx, ClusterOptions{Seeds: tc.seeds()[1:2], MovingWait: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer stale2.Close()
	const users = 40
	g := &graphModel{edges: map[[2]uint64]int64{}}

	// Commands about no user are refused, or asked of a shard by name.
	if err := cc.Ping(ctx); CodeOf(err) != CodeInvalidArgument || !strings.Contains(err.Error(), "Shard") {
		t.Fatalf("ping through the cluster: %v", err)
	}
	shard2, err := cc.Shard(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	if info, err := shard2.Info(ctx); err != nil {
		t.Fatal(err)
	} else if id, _ := info.Get("cluster_shard_id"); id != 2 {
		t.Fatalf("shard 2 says it is %d", id)
	}

	for round := 0; round < 2; round++ {
		clusterRound(ctx, t, cc, g, rng, users, 150)
		if err := cc.Barrier(ctx); err != nil {
			t.Fatal(err)
		}
		clusterReads(ctx, t, cc, g, rng, users, 60)
	}

	// Half of shard 1's buckets go to shard 2 while writes go on: commands about the moving
	// users are answered moved (by the old owner) and moving (by the new one) and retried.
	m := cc.Map()
	var first, last uint32 = m.Buckets, 0
	for b, o := range m.Owner {
		if o == 1 {
			if uint32(b) < first {
				first = uint32(b)
			}
			last = uint32(b)
		}
	}
	last = first + (last-first)/2
	var moveErr error
	var wg sync.WaitGroup
	wg.Add(1)
	done := make(chan struct{})
	go func() {
		defer wg.Done()
		defer close(done)
		_, moveErr = tc.admin(t, "move-bucket", fmt.Sprintf("--buckets=%d-%d", first, last), "--to=2", "--timeout-ms=60000")
	}()
	writes := 0
	for moving := true; moving || writes < 300; writes += 10 {
		clusterRound(ctx, t, cc, g, rng, users, 10)
		select {
		case <-done:
			moving = false
		default:
		}
	}
	wg.Wait()
	if moveErr != nil {
		t.Fatal(moveErr)
	}
	t.Logf("%d writes during the move; moved answers followed %d, moving %d", writes, cc.seenMoved.Load(), cc.seenMoving.Load())
	if err := cc.Barrier(ctx); err != nil {
		t.Fatal(err)
	}
	if cc.Map().Owner[first] != 2 {
		t.Fatalf("bucket %d is still shard %d's after the move", first, cc.Map().Owner[first])
	}
	// Pairs the move split (a user that stayed on shard 1, one that moved to shard 2), through
	// a client whose map says they share a shard: it sends the page with the viewer, and the
	// KNOWN_FOLLOWERS, to one shard, which answers moved about the second user. The client
	// must then complete them across the two shards, not wait for the shard's map to agree.
	var stayed, moved []uint64
	for u := uint64(1); u <= users; u++ {
		if b := BucketOf(u, m.Buckets); b >= first && b <= last {
			moved = append(moved, u)
		} else if m.Owner[b] == 1 {
			stayed = append(stayed, u)
		}
	}
	if len(stayed) == 0 || len(moved) == 0 {
		t.Fatalf("no pair split by the move (stayed %v, moved %v)", stayed, moved)
	}
	for _, pair := range [][2]uint64{{stayed[0], moved[0]}, {moved[0], stayed[0]}} {
		u, v := pair[0], pair[1]
		p, err := stale2.Fans(ctx, PageQuery{User: u, Limit: 1000, Viewer: v})
		if err != nil {
			t.Fatalf("fans of %d viewer %d through a stale map: %v", u, v, err)
		}
		if want := g.list(OpFans, u, v); fmt.Sprint(p.Entries) != fmt.Sprint(want) {
			t.Fatalf("fans of %d viewer %d: got %v, want %v", u, v, p.Entries, want)
		}
		stale2.mu.Lock()
		stale2.m = m // stale again, for the KNOWN_FOLLOWERS
		stale2.mu.Unlock()
		if _, err := stale2.KnownFollowers(ctx, v, u, 3); err != nil {
			t.Fatalf("known_followers %d %d through a stale map: %v", v, u, err)
		}
		stale2.mu.Lock()
		stale2.m = m
		stale2.mu.Unlock()
	}
	// Every acknowledged write is there, through the client that moved with the map and
	// through one whose map is from before the move (it follows moved).
	clusterReads(ctx, t, cc, g, rng, users, 80)
	clusterReads(ctx, t, stale, g, rng, users, 80)
	if cc.seenMoved.Load()+cc.seenMoving.Load() == 0 {
		t.Fatal("the client never met moved or moving across the move")
	}
	if stale.seenMoved.Load() == 0 {
		t.Fatal("the stale client never met moved")
	}
	if !stale.Map().NewerThan(m) {
		t.Fatal("the stale client's map did not move on")
	}
}

func TestClusterGroupShardFollowsItsPrimary(t *testing.T) {
	tc := startCluster(t, "--shards=1", "--buckets=8", "--members=3", "--group-lease-ms=1000",
		"--group-renew-ms=100", "--group-store-timeout-ms=200", "--group-fence-margin-ms=300")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	members := tc.shards()
	// Seeded with the replica first: it hands out the map too.
	cc, err := ConnectCluster(ctx, ClusterOptions{Seeds: []string{members[1].addr, members[0].addr}})
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	if s := cc.Map().Find(1); s.Group != "shard-1" || len(s.Members) != 3 {
		t.Fatalf("%+v", s)
	}
	g := &graphModel{edges: map[[2]uint64]int64{}}
	rng := rand.New(rand.NewSource(1))
	clusterRound(ctx, t, cc, g, rng, 20, 40)
	// The primary dies: the replica takes the lease, and writes go on there.
	primary := cc.primary[1]
	for i := range tc.procs {
		if tc.procs[i].addr == primary {
			t.Logf("killing the primary %s (pid %d)", primary, tc.procs[i].pid)
			stopPID(tc.procs[i].pid, syscall.SIGKILL)
			tc.procs[i].pid = 0
		}
	}
	clusterRound(ctx, t, cc, g, rng, 20, 40)
	if cc.primary[1] == primary || cc.seenFailover.Load() == 0 {
		t.Fatalf("still at %s (failovers met: %d)", cc.primary[1], cc.seenFailover.Load())
	}
	clusterReads(ctx, t, cc, g, rng, 20, 40)
}
