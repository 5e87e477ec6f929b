package relgraph

// The typed replies of every command (docs/protocol.md "Commands") and their decoders. Ids
// are uint64, times int64 milliseconds since the Unix epoch. Field order is wire order.

// Hello is the server's HELLO reply.
type Hello struct {
	Version       uint16 // the protocol version agreed (2, or 1 with an old server)
	MaxFrame      uint32 // the largest frame the server takes, header included
	Server        string // "relgraphd"
	ServerVersion string // "0.1.0"; empty in version 1
}

// InfoField is one INFO pair.
type InfoField struct {
	Name  string
	Value uint64
}

// Info is INFO's reply: every field in the server's order.
type Info struct{ Fields []InfoField }

// Get returns the value of the field named name.
func (i Info) Get(name string) (uint64, bool) {
	for _, f := range i.Fields {
		if f.Name == name {
			return f.Value, true
		}
	}
	return 0, false
}

// SnapshotInfo is SNAPSHOT's reply.
type SnapshotInfo struct {
	LSN, Edges, FileBytes uint64
	CreatedMs             int64
}

// FollowResult is FOLLOW's and APPROVE's reply.
type FollowResult struct {
	Created    bool     // false: the edge (or request) existed
	Relation   Relation // relation(follower, followee) afterwards
	FollowedAt int64    // the edge's (or request's) time
}

// Cursor is a position in a user page: entries strictly older than (TS, User) follow it.
type Cursor struct {
	TS   int64
	User uint64
}

// PageQuery asks for a page of FOLLOWING, FANS, FRIENDS, BLOCKS or REQUESTS.
type PageQuery struct {
	User   uint64
	Limit  uint16  // 1..1000
	Offset uint32  // entries skipped (without After)
	After  *Cursor // search-after: the previous page's Next
	Viewer uint64  // 0: none; else each entry's ViewerRelation is relation(Viewer, entry)
}

// PageEntry is one user of a page.
type PageEntry struct {
	User           uint64
	TS             int64 // follow time (FRIENDS: when the pair became mutual)
	ViewerRelation Relation
	Mutual         bool // the list's owner and User follow each other
}

// Page is a page of users, newest first. Total is set for BLOCKS and REQUESTS (the whole
// list's length). Next is present exactly when more entries follow.
type Page struct {
	Total   uint32
	Entries []PageEntry
	Next    *Cursor
}

// Counts is COUNTS's reply.
type Counts struct{ Following, Fans, Friends uint32 }

// KnownFollowers is KNOWN_FOLLOWERS's reply.
type KnownFollowers struct {
	Total uint32
	Users []uint64
}

// PublishResult is PUBLISH's reply.
type PublishResult struct {
	TS       int64
	Retained bool   // false: older than the author's newest K, nothing stored
	Evicted  uint64 // the post this one pushed out, 0 for none
}

// PostCursor is a position in a feed page.
type PostCursor struct {
	TS   int64
	Post uint64
}

// FeedQuery asks for a page of TIMELINE (User = the reader) or USER_POSTS (User = the author).
type FeedQuery struct {
	User  uint64
	Limit uint16 // 1..100
	After *PostCursor
	Kinds uint64 // bit k includes post kind k; 0: every kind
}

// Post is one entry of a feed page.
type Post struct {
	Post, Author uint64
	TS           int64
	Kind         uint8
}

// FeedPage is a page of posts, newest first; Next is present exactly when more follow.
type FeedPage struct {
	Entries []Post
	Next    *PostCursor
}

// BlockResult is BLOCK's reply.
type BlockResult struct {
	Created bool  // false: already blocked, nothing changed
	TS      int64 // the block's time
	Removed uint8 // bit 0: user -> blocked went, bit 1: blocked -> user went, bit 2: a request went
}

// SetPrivateResult is SET_PRIVATE's reply.
type SetPrivateResult struct {
	Changed  bool
	Approved uint64 // pending requests approved by going public
	TS       int64  // the change's time; 0 when nothing changed
}

// CursorInfo is one named cursor of CURSORS.
type CursorInfo struct {
	Name     string
	AckedLSN uint64
	AckedMs  int64
	Expired  bool // the WAL no longer holds AckedLSN + 1
}

// SubscribeFrom says where a subscription starts.
type SubscribeFrom uint8

const (
	FromLSN    SubscribeFrom = 0 // at LSN (>= 1)
	FromNow    SubscribeFrom = 1 // at the first change after the SUBSCRIBE
	FromCursor SubscribeFrom = 2 // after the named cursor's acknowledged LSN
)

// SubscribeReply is SUBSCRIBE's reply.
type SubscribeReply struct{ FirstLSN, NewestLSN uint64 }

// EventKind is a change-stream event's kind (docs/protocol.md "The change stream").
type EventKind uint8

const (
	EvFollow     EventKind = 1
	EvUnfollow   EventKind = 2
	EvRemoveUser EventKind = 3
	EvPublish    EventKind = 4
	EvDeletePost EventKind = 5
	EvMute       EventKind = 6
	EvUnmute     EventKind = 7
	EvHide       EventKind = 8
	EvUnhide     EventKind = 9
	EvBlock      EventKind = 12
	EvUnblock    EventKind = 13
	EvSetPrivate EventKind = 14
	EvRequest    EventKind = 15
	EvApprove    EventKind = 16
	EvReject     EventKind = 17
	EvWithdraw   EventKind = 18
)

// Event is one change of the stream (43 bytes on the wire).
type Event struct {
	LSN     uint64
	Kind    EventKind
	TS      int64
	A, B    uint64
	Friends bool
	Detail  uint8
	Evicted uint64
}

// Events is an EVENTS frame's body.
type Events struct {
	NextLSN uint64 // where the stream goes on from
	Events  []Event
}

// FetchSnapshotReply is FETCH_SNAPSHOT's reply.
type FetchSnapshotReply struct{ LSN, FileBytes uint64 }

// ReplicateRequest is REPLICATE's request.
type ReplicateRequest struct {
	FromLSN, Epoch, EpochID uint64
	Name                    string
}

// ReplicateReply is REPLICATE's reply.
type ReplicateReply struct{ Epoch, EpochID, NewestLSN uint64 }

// Record is one WAL record as logged (docs/wal-format.md).
type Record struct {
	Type    uint8
	Payload []byte
}

// Records is a RECORDS frame's body; no records: a heartbeat.
type Records struct {
	FirstLSN, NewestLSN uint64
	SentUs              int64
	Records             []Record
}

// PromoteReply is PROMOTE's reply.
type PromoteReply struct{ Epoch, EpochID, FirstLSN uint64 }

// ReplicaInfo is one replica of REPLICATION's reply.
type ReplicaInfo struct {
	Name                   string
	AppliedLSN, DurableLSN uint64
	AckAgeMs               uint64
}

// Position is POSITION's reply: where a node's history stands (reading one's own writes from a
// replica: docs/replication.md).
type Position struct {
	Role                          uint8 // 0 primary, 1 replica
	Epoch, AppliedLSN, DurableLSN uint64
}

// Replication is REPLICATION's reply.
type Replication struct {
	Role                                          uint8 // 0 primary, 1 replica
	Primary, State, Message                       string
	Epoch, EpochID, AppliedLSN, PrimaryLSN, LagMs uint64
	SyncReplicas                                  uint32
	Replicas                                      []ReplicaInfo
}

// ---- decoders: each reads a whole reply body -------------------------------------------------

func (d *dec) cursor() *Cursor {
	if !d.present() {
		return nil
	}
	return &Cursor{TS: d.i64(), User: d.u64()}
}

func (d *dec) postCursor() *PostCursor {
	if !d.present() {
		return nil
	}
	return &PostCursor{TS: d.i64(), Post: d.u64()}
}

func decodeHello(d *dec, version uint16) (h Hello) {
	h.Version = d.u16()
	h.MaxFrame = d.u32()
	h.Server = d.str()
	if version >= 2 {
		h.ServerVersion = d.str()
	}
	return
}

func decodeInfo(d *dec) (r Info) {
	n := int(d.u16())
	for i := 0; i < n && d.err == nil; i++ {
		r.Fields = append(r.Fields, InfoField{Name: d.str(), Value: d.u64()})
	}
	return
}

func decodeSnapshot(d *dec) SnapshotInfo {
	return SnapshotInfo{LSN: d.u64(), Edges: d.u64(), FileBytes: d.u64(), CreatedMs: d.i64()}
}

func decodeFollow(d *dec) FollowResult {
	return FollowResult{Created: d.bool(), Relation: Relation(d.u8()), FollowedAt: d.i64()}
}

func decodeRelations(d *dec) []Relation {
	n := int(d.u16())
	out := make([]Relation, 0, n)
	for i := 0; i < n && d.err == nil; i++ {
		out = append(out, Relation(d.u8()))
	}
	return out
}

func decodePage(d *dec, counted bool) (p Page) {
	if counted {
		p.Total = d.u32()
	}
	n := int(d.u16())
	p.Entries = make([]PageEntry, 0, n)
	for i := 0; i < n && d.err == nil; i++ {
		p.Entries = append(p.Entries, PageEntry{User: d.u64(), TS: d.i64(), ViewerRelation: Relation(d.u8()), Mutual: d.bool()})
	}
	p.Next = d.cursor()
	return
}

func decodeFeedPage(d *dec) (p FeedPage) {
	n := int(d.u16())
	p.Entries = make([]Post, 0, n)
	for i := 0; i < n && d.err == nil; i++ {
		p.Entries = append(p.Entries, Post{Post: d.u64(), Author: d.u64(), TS: d.i64(), Kind: d.u8()})
	}
	p.Next = d.postCursor()
	return
}

func decodeEvents(d *dec) (e Events) {
	e.NextLSN = d.u64()
	n := int(d.u16())
	e.Events = make([]Event, 0, n)
	for i := 0; i < n && d.err == nil; i++ {
		e.Events = append(e.Events, Event{LSN: d.u64(), Kind: EventKind(d.u8()), TS: d.i64(), A: d.u64(), B: d.u64(),
			Friends: d.bool(), Detail: d.u8(), Evicted: d.u64()})
	}
	return
}

func decodeRecords(d *dec) (r Records) {
	r.FirstLSN, r.NewestLSN, r.SentUs = d.u64(), d.u64(), d.i64()
	n := int(d.u16())
	for i := 0; i < n && d.err == nil; i++ {
		t := d.u8()
		p := d.take(int(d.u16()))
		r.Records = append(r.Records, Record{Type: t, Payload: append([]byte(nil), p...)})
	}
	return
}

// SlowlogEntry is one command the server's slow-command log kept (docs/protocol.md,
// "Slow-command log").
type SlowlogEntry struct {
	ID         uint64
	StartMs    int64  // when it started, ms since the Unix epoch
	DurationUs uint64 // decoding, executing and encoding it
	Command    string // "follow"
	Args       string // its fields as text, at most 128 bytes
	Client     string // "HOST:PORT"
}

// Slowlog is SLOWLOG's reply: the entries newest first and the threshold in force.
type Slowlog struct {
	ThresholdUs int64 // -1: the log is off
	MaxLen      uint32
	Entries     []SlowlogEntry
}

func decodeSlowlog(d *dec) (r Slowlog) {
	r.ThresholdUs, r.MaxLen = d.i64(), d.u32()
	n := int(d.u16())
	r.Entries = make([]SlowlogEntry, 0, n)
	for i := 0; i < n && d.err == nil; i++ {
		r.Entries = append(r.Entries, SlowlogEntry{ID: d.u64(), StartMs: d.i64(), DurationUs: d.u64(),
			Command: d.str(), Args: d.str(), Client: d.str()})
	}
	return r
}

func decodeCursors(d *dec) []CursorInfo {
	n := int(d.u16())
	out := make([]CursorInfo, 0, n)
	for i := 0; i < n && d.err == nil; i++ {
		out = append(out, CursorInfo{Name: d.str(), AckedLSN: d.u64(), AckedMs: d.i64(), Expired: d.bool()})
	}
	return out
}

func decodeReplication(d *dec) (r Replication) {
	r.Role = d.u8()
	r.Primary, r.State, r.Message = d.str(), d.str(), d.str()
	r.Epoch, r.EpochID, r.AppliedLSN, r.PrimaryLSN, r.LagMs = d.u64(), d.u64(), d.u64(), d.u64(), d.u64()
	r.SyncReplicas = d.u32()
	n := int(d.u16())
	for i := 0; i < n && d.err == nil; i++ {
		r.Replicas = append(r.Replicas, ReplicaInfo{Name: d.str(), AppliedLSN: d.u64(), DurableLSN: d.u64(), AckAgeMs: d.u64()})
	}
	return
}
