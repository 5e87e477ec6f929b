package relgraph

// ClusterClient: a client of a relgraph cluster (docs/cluster.md) that needs no NATS library.
// It reads the shard map from a shard with SHARD_MAP (from the seed addresses, then from any
// shard it knows) and sends each command about a user to the shard owning the user's bucket
// (BucketOf): the typed calls are Calls', as on a Client. What it follows, within the call's
// context (or Options.CallTimeout):
//
//   - moved: the map changed under the client. It reads the map again, from the refusing
//     shard first, and retries on the owner it names (at most MaxRedirects times). When the
//     map read gives the user to the refusing shard all the same, that shard's own map lags:
//     it is asked again shortly, for up to MovingWait, without counting a redirect.
//   - moving: the shard is taking the user's bucket over. Asked again with backoff (5 ms
//     doubling to 100 ms), for up to MovingWait.
//   - a shard served by a replication group (a map line `shard ID A,B group NAME`): commands
//     go to the member whose POSITION says primary (role 0). read_only (the member is a replica
//     now: its message names the primary, or none while the group elects) sends the client to
//     the named member, else to the members in turn; a broken connection likewise. It waits
//     for a primary for up to FailoverTimeout.
//   - an unknown outcome (the connection broke after the request was written, or a group's
//     primary stepped down before acknowledging it) is retried only for a RetrySafe command
//     (every routed command is); else the error is returned.
//
// Pages (FOLLOWING, FANS, FRIENDS, BLOCKS, REQUESTS) whose viewer lives on another shard are
// fetched without the viewer, then completed with one RELATIONS call to the viewer's shard.
// KNOWN_FOLLOWERS with the viewer and the target on two shards reads the viewer's following
// list from its shard and checks it with RELATIONS calls (1,000 ids each) to the target's
// shard: newest first by the viewer's follow, as one node answers. Whether the two users
// share a shard is decided by the map held, and again when a moved answer brings a map that
// parts them (a move took one away). Commands about no user
// (PING, INFO, CURSORS, ...) are refused with CodeInvalidArgument: ask one shard with Shard.
//
// Thread-safety: every method may be called from any goroutine (the map is swapped under a
// lock; each address has one pooled Client).

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// ClusterOptions configure a ClusterClient. Zero values take the defaults in brackets.
type ClusterOptions struct {
	Seeds       []string      // host:port of any shards (or group members) to read the map from
	Token       string        // HELLO's token, for every shard
	PoolSize    int           // connections per shard address [2]
	DialTimeout time.Duration // one connect + HELLO [5 s]
	CallTimeout time.Duration // bounds a call whose context has no deadline [30 s]
	// MaxRedirects: `moved` answers followed per command before its error is returned [3].
	MaxRedirects int
	// MovingWait: how long a command about a user of a moving bucket is asked again [30 s].
	MovingWait time.Duration
	// FailoverTimeout: how long a command waits for a shard's group to have a primary, or a
	// shard whose connection broke to answer again [10 s].
	FailoverTimeout time.Duration
	// TLSConfig: speak TLS to every shard with this configuration; it wins over TLS. An
	// empty ServerName is the host of each shard's address.
	TLSConfig *tls.Config
	// TLS: speak TLS to every shard, configured from PEM files. Both nil: plain TCP.
	TLS *TLSOptions
}

func (o *ClusterOptions) defaults() {
	if o.PoolSize <= 0 {
		o.PoolSize = 2
	}
	if o.DialTimeout <= 0 {
		o.DialTimeout = 5 * time.Second
	}
	if o.CallTimeout <= 0 {
		o.CallTimeout = 30 * time.Second
	}
	if o.MaxRedirects <= 0 {
		o.MaxRedirects = 3
	}
	if o.MovingWait <= 0 {
		o.MovingWait = 30 * time.Second
	}
	if o.FailoverTimeout <= 0 {
		o.FailoverTimeout = 10 * time.Second
	}
}

// ClusterClient routes each command to the shard of its user. Make one with ConnectCluster.
type ClusterClient struct {
	Calls // the typed calls, routed
	opts  ClusterOptions

	mu      sync.Mutex
	m       *ShardMap
	clients map[string]*Client // by address
	primary map[uint32]string  // a group shard's member found to be its primary
	named   map[uint32]string  // a group shard's member a read_only named: asked first

	// What routed calls met, for tests: moved answers, moving answers, lost primaries.
	seenMoved, seenMoving, seenFailover atomic.Int64
}

// ConnectCluster reads the map from the first seed that hands one out.
func ConnectCluster(ctx context.Context, o ClusterOptions) (*ClusterClient, error) {
	o.defaults()
	if len(o.Seeds) == 0 {
		return nil, &Error{Code: CodeInvalidArgument, Message: "cluster: no seed address"}
	}
	setup, err := makeTLS(o.TLSConfig, o.TLS) // the files are read once, for every shard
	if err != nil {
		return nil, err
	}
	if setup != nil {
		o.TLSConfig, o.TLS = setup.config, nil
	}
	cc := &ClusterClient{opts: o, clients: map[string]*Client{}, primary: map[uint32]string{},
		named: map[uint32]string{}}
	cc.Calls = Calls{rt: cc}
	if err := cc.RefreshMap(ctx, ""); err != nil {
		cc.Close()
		return nil, err
	}
	return cc, nil
}

// Map is the shard map the client routes by now.
func (cc *ClusterClient) Map() *ShardMap {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	return cc.m
}

// Close closes every connection.
func (cc *ClusterClient) Close() error {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	for _, c := range cc.clients {
		c.Close()
	}
	cc.clients = map[string]*Client{}
	return nil
}

// client is the pooled Client of one address: no retries or redirects of its own (the
// ClusterClient decides), so a failure says whether the request was written.
func (cc *ClusterClient) client(addr string) *Client {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	c := cc.clients[addr]
	if c == nil {
		c = New(Options{Addr: addr, Token: cc.opts.Token, PoolSize: cc.opts.PoolSize,
			DialTimeout: cc.opts.DialTimeout, CallTimeout: -1, MaxRetries: -1, NoRedirect: true,
			BackoffMin: 5 * time.Millisecond, BackoffMax: 100 * time.Millisecond,
			TLSConfig: cc.opts.TLSConfig, TLS: cc.opts.TLS})
		cc.clients[addr] = c
	}
	return c
}

// RefreshMap reads the map again: from `first` (the shard that answered moved) when given,
// else from the seeds and every shard of the map held. It keeps the newer of the map read
// and the one held, by (generation, version).
func (cc *ClusterClient) RefreshMap(ctx context.Context, first string) error {
	var tries []string
	if first != "" {
		tries = append(tries, first)
	}
	tries = append(tries, cc.opts.Seeds...)
	if m := cc.Map(); m != nil {
		for i := range m.Shards {
			tries = append(tries, m.Shards[i].Addresses()...)
		}
	}
	var why []string
	var tlsErr error // when no shard answered: a TLS refusal among the causes, returned as it is
	seen := map[string]bool{}
	for _, addr := range tries {
		if seen[addr] {
			continue
		}
		seen[addr] = true
		text, err := cc.client(addr).ShardMap(ctx)
		if err == nil {
			var m *ShardMap
			if m, err = ParseShardMap(text); err == nil {
				cc.mu.Lock()
				if cc.m == nil || m.NewerThan(cc.m) {
					cc.m = m
				}
				cc.mu.Unlock()
				return nil
			}
		}
		why = append(why, addr+": "+err.Error())
		if tlsErr == nil && isTLSError(err) {
			tlsErr = err
		}
		if ctx.Err() != nil {
			break
		}
	}
	if tlsErr != nil {
		return tlsErr
	}
	return &Error{Code: CodeUnavailable, Op: OpShardMap,
		Message: "no shard handed out the shard map (" + strings.Join(why, "; ") + ")"}
}

// Shard is a Client of shard id (a group's primary), for the commands about no user: INFO,
// SNAPSHOT, CURSORS, SUBSCRIBE... Do not Close it: the ClusterClient owns it.
func (cc *ClusterClient) Shard(ctx context.Context, id uint32) (*Client, error) {
	s := cc.Map().Find(id)
	if s == nil {
		return nil, &Error{Code: CodeNotFound, Message: fmt.Sprintf("shard %d is not in the shard map", id)}
	}
	return cc.shardClient(ctx, s)
}

// shardClient is the Client of shard s's one address, or of its group's primary.
func (cc *ClusterClient) shardClient(ctx context.Context, s *ShardInfo) (*Client, error) {
	if s.Group == "" {
		return cc.client(s.Addr), nil
	}
	cc.mu.Lock()
	found, named := cc.primary[s.ID], cc.named[s.ID]
	cc.mu.Unlock()
	if found != "" {
		return cc.client(found), nil
	}
	tries := []string{}
	if named != "" {
		tries = append(tries, named)
	}
	for _, m := range s.Members {
		if m != named {
			tries = append(tries, m)
		}
	}
	var why []string
	for _, addr := range tries {
		p, err := cc.client(addr).Position(ctx)
		if err != nil {
			why = append(why, addr+": "+err.Error())
			continue
		}
		if p.Role != 0 {
			why = append(why, addr+" is a replica")
			continue
		}
		cc.mu.Lock()
		cc.primary[s.ID] = addr
		cc.mu.Unlock()
		return cc.client(addr), nil
	}
	cc.losePrimary(s.ID, "")
	return nil, &Error{Code: CodeUnavailable, Message: fmt.Sprintf(
		"shard %d (group %s): no member answers as its primary (%s)", s.ID, s.Group, strings.Join(why, "; "))}
}

// losePrimary forgets shard id's primary; named (a read_only's message) is where to look first.
func (cc *ClusterClient) losePrimary(id uint32, named string) {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	delete(cc.primary, id)
	if named != "" && strings.Contains(named, ":") {
		cc.named[id] = named
	} else {
		delete(cc.named, id)
	}
}

// waiter paces the retries of one call: backoff from 5 ms doubling to 100 ms, for up to a
// limit counted from the first wait.
type waiter struct {
	since time.Time
	step  time.Duration
}

// wait sleeps and says true, or says false once `limit` passed since the first wait (or the
// context ended).
func (w *waiter) wait(ctx context.Context, limit time.Duration) bool {
	if w.since.IsZero() {
		w.since, w.step = time.Now(), 5*time.Millisecond
	}
	if time.Since(w.since) >= limit {
		return false
	}
	if sleepCtx(ctx, w.step) != nil {
		return false
	}
	if w.step *= 2; w.step > 100*time.Millisecond {
		w.step = 100 * time.Millisecond
	}
	return true
}

// call routes one request (the roundTripper of the embedded Calls).
func (cc *ClusterClient) call(ctx context.Context, op Opcode, body []byte) ([]byte, error) {
	if !Routed(op) {
		return nil, &Error{Code: CodeInvalidArgument, Op: op,
			Message: "about no user: a cluster cannot route it; ask one shard (ClusterClient.Shard)"}
	}
	if len(body) < 8 {
		return nil, &Error{Code: CodeInvalidArgument, Op: op, Message: "request without a user"}
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, cc.opts.CallTimeout)
		defer cancel()
	}
	switch op {
	case OpFollowing, OpFans, OpFriends, OpBlocks, OpRequests:
		return cc.page(ctx, op, body)
	case OpKnownFollowers:
		return cc.knownFollowers(ctx, body)
	}
	return cc.routed(ctx, binary.LittleEndian.Uint64(body), 0, op, body)
}

// errReplan: a moved answer showed that the second user a request reads (a page's viewer,
// KNOWN_FOLLOWERS' target) is no longer on the shard of its first: the caller decides again
// how to ask.
var errReplan = errors.New("relgraph: the request's two users are on two shards now")

// routed sends the request to the owner of user's bucket, following moved, moving and a
// group's primary as the type's comment says. also: a second user the request reads, which
// the shard checks it owns as well (0: none); when a new map puts it elsewhere, errReplan.
func (cc *ClusterClient) routed(ctx context.Context, user, also uint64, op Opcode, body []byte) ([]byte, error) {
	var moving, failover waiter
	redirects := 0
	for {
		m := cc.Map()
		owner := m.OwnerOf(user)
		shard := m.Find(owner)
		c, err := cc.shardClient(ctx, shard)
		if err != nil {
			if failover.wait(ctx, cc.opts.FailoverTimeout) {
				continue
			}
			return nil, err
		}
		b, err := c.call(ctx, op, body)
		if err == nil {
			return b, nil
		}
		var ce *ConnError
		var se *Error
		switch {
		case errors.As(err, &ce):
			// The shard restarted, or the group's primary died: unknown outcome if written.
			cc.seenFailover.Add(1)
			if ce.Sent && !RetrySafe(op) || isTLSError(err) {
				return nil, err
			}
			cc.losePrimary(owner, "")
			if failover.wait(ctx, cc.opts.FailoverTimeout) {
				continue
			}
			return nil, err
		case !errors.As(err, &se):
			return nil, err
		case se.Code == CodeReadOnly && shard.Group != "":
			cc.seenFailover.Add(1)
			cc.losePrimary(owner, se.Message) // a replica now; not carried out
			if failover.wait(ctx, cc.opts.FailoverTimeout) {
				continue
			}
			return nil, err
		case se.Code == CodeUnavailable && shard.Group != "" && strings.Contains(se.Message, "outcome is unknown"):
			// The primary stepped down before the write was acknowledged.
			if !RetrySafe(op) {
				return nil, err
			}
			cc.losePrimary(owner, "")
			if failover.wait(ctx, cc.opts.FailoverTimeout) {
				continue
			}
			return nil, err
		case se.Code == CodeMoved:
			cc.seenMoved.Add(1)
			if err := cc.RefreshMap(ctx, c.Addr()); err != nil {
				return nil, err
			}
			if nm := cc.Map(); also != 0 && nm.OwnerOf(also) != nm.OwnerOf(user) {
				return nil, errReplan
			}
			if cc.Map().OwnerOf(user) == owner {
				// The refusing shard's own map lags the one just read: ask it again shortly.
				if moving.wait(ctx, cc.opts.MovingWait) {
					continue
				}
				return nil, err
			}
			if redirects++; redirects > cc.opts.MaxRedirects {
				return nil, err
			}
		case se.Code == CodeMoving:
			cc.seenMoving.Add(1)
			if moving.wait(ctx, cc.opts.MovingWait) {
				continue
			}
			return nil, err
		default:
			return nil, err
		}
	}
}

// Page layout (docs/protocol.md): page_query := user:u64 limit:u16 offset:u32
// after:opt<ts:i64 user:u64> viewer:opt<u64>; a page reply := [total:u32] count:u16
// entry{user:u64 ts:i64 viewer_relation:u8 mutual:u8} next:opt<cursor>.
const pageEntryBytes = 18

// page fetches a page; a viewer on another shard than the list's owner is left out of the
// request, and the page's viewer relations come from one RELATIONS call to its shard.
func (cc *ClusterClient) page(ctx context.Context, op Opcode, body []byte) ([]byte, error) {
	user := binary.LittleEndian.Uint64(body)
	at := 14 // the after flag
	if len(body) > at && body[at] == 1 {
		at += 17
	} else {
		at++
	}
	var viewer uint64
	if len(body) == at+9 && body[at] == 1 {
		viewer = binary.LittleEndian.Uint64(body[at+1:])
	}
	for replans := 0; ; replans++ {
		m := cc.Map()
		if viewer == 0 || m.OwnerOf(viewer) == m.OwnerOf(user) {
			b, err := cc.routed(ctx, user, viewer, op, body)
			if err == errReplan && replans < maxReplans {
				continue
			}
			return b, replanned(op, err)
		}
		return cc.splitPage(ctx, op, user, viewer, append(append([]byte{}, body[:at]...), 0))
	}
}

// maxReplans bounds how often one call decides again how to ask (each time after a new map).
const maxReplans = 10

// replanned turns errReplan, once the replans ran out, into the moved error it came from.
func replanned(op Opcode, err error) error {
	if err == errReplan {
		return &Error{Code: CodeMoved, Op: op, Message: "the shard map kept changing under the request"}
	}
	return err
}

// splitPage asks for the page without the viewer, then completes it from the viewer's shard.
func (cc *ClusterClient) splitPage(ctx context.Context, op Opcode, user, viewer uint64, request []byte) ([]byte, error) {
	b, err := cc.routed(ctx, user, 0, op, request)
	if err != nil {
		return nil, err
	}
	off := 0
	if op == OpBlocks || op == OpRequests {
		off = 4
	}
	if len(b) < off+2 {
		return nil, &Error{Code: CodeProtocolError, Op: op, Message: "short page reply"}
	}
	n := int(binary.LittleEndian.Uint16(b[off:]))
	if n == 0 {
		return b, nil
	}
	if len(b) < off+2+n*pageEntryBytes {
		return nil, &Error{Code: CodeProtocolError, Op: op, Message: "short page reply"}
	}
	users := make([]uint64, n)
	for i := range users {
		users[i] = binary.LittleEndian.Uint64(b[off+2+i*pageEntryBytes:])
	}
	rels, err := cc.Relations(ctx, viewer, users)
	if err != nil {
		return nil, err
	}
	for i, r := range rels {
		b[off+2+i*pageEntryBytes+16] = byte(r)
	}
	return b, nil
}

// maxRelationsIds is the server's RELATIONS batch limit (kMaxRelationsIds), and its page limit.
const maxRelationsIds = 1000

// knownFollowers answers KNOWN_FOLLOWERS (viewer:u64 target:u64 limit:u16) across shards.
func (cc *ClusterClient) knownFollowers(ctx context.Context, body []byte) ([]byte, error) {
	if len(body) != 18 {
		return nil, &Error{Code: CodeInvalidArgument, Op: OpKnownFollowers, Message: "bad request body"}
	}
	viewer, target := binary.LittleEndian.Uint64(body), binary.LittleEndian.Uint64(body[8:])
	limit := int(binary.LittleEndian.Uint16(body[16:]))
	for replans := 0; ; replans++ {
		m := cc.Map()
		if viewer != 0 && target != 0 && limit <= maxRelationsIds && m.OwnerOf(viewer) != m.OwnerOf(target) {
			break
		}
		b, err := cc.routed(ctx, viewer, target, OpKnownFollowers, body) // one shard, or its own errors
		if err == errReplan && replans < maxReplans {
			continue
		}
		return b, replanned(OpKnownFollowers, err)
	}
	// Every followee of the viewer, newest first, page by page.
	var followees []uint64
	it := cc.FollowingIter(PageQuery{User: viewer, Limit: maxRelationsIds})
	for it.Next(ctx) {
		followees = append(followees, it.Entry().User)
	}
	if err := it.Err(); err != nil {
		return nil, err
	}
	var total uint32
	var users []uint64
	for at := 0; at < len(followees); at += maxRelationsIds {
		part := followees[at:]
		if len(part) > maxRelationsIds {
			part = part[:maxRelationsIds]
		}
		rels, err := cc.Relations(ctx, target, part) // followed_by: the followee follows target
		if err != nil {
			return nil, err
		}
		for i, r := range rels {
			if r&RelFollowedBy == 0 {
				continue
			}
			total++
			if len(users) < limit {
				users = append(users, part[i])
			}
		}
	}
	var e enc
	e.u32(total)
	e.u64s(users)
	return e.b, nil
}

// Barrier waits until every change logged on any shard is applied wherever it must be, as
// net::ClusterClient::Barrier does: each shard's INFO, polled, shows its outbox at its last
// LSN and its inbox with nothing pending, twice in a row with nothing logged between. It
// waits for a quiet cluster: writers must pause meanwhile (tests, an operator's check).
func (cc *ClusterClient) Barrier(ctx context.Context) error {
	previous := map[uint32]uint64{}
	for {
		quiet, last, err := true, map[uint32]uint64{}, error(nil)
		for _, s := range cc.Map().Shards {
			var c *Client
			var info Info
			if c, err = cc.shardClient(ctx, &s); err == nil {
				info, err = c.Info(ctx)
			}
			if role, _ := info.Get("role"); err == nil && s.Group != "" && role != 0 {
				err = fmt.Errorf("shard %d: %s is no longer its primary", s.ID, c.Addr())
			}
			if err != nil {
				cc.losePrimary(s.ID, "") // a group's primary may have changed: look again
				break
			}
			f := func(n string) uint64 { v, _ := info.Get(n); return v }
			quiet = quiet && f("cluster_inbound_pending") == 0 && f("cluster_forwarded_lsn") >= f("last_lsn")
			last[s.ID] = f("last_lsn")
		}
		if err == nil && quiet && fmt.Sprint(last) == fmt.Sprint(previous) {
			return nil
		}
		if err != nil || !quiet {
			previous = map[uint32]uint64{}
		} else {
			previous = last
		}
		if sleepCtx(ctx, 5*time.Millisecond) != nil {
			if err == nil {
				err = errors.New("the shards did not settle")
			}
			return timeoutError(0, fmt.Errorf("barrier: %w", err))
		}
	}
}
