// Package relgraph is a Go client of relgraphd (docs/protocol.md, protocol version 2).
//
// This file holds the protocol's constants: opcodes, error codes, relation bits, and the
// command table's two facts a client acts on (RetrySafe, ReadsOnly), as
// net/protocol/command_table.h states them.
package relgraph

// Opcode is a frame's command byte.
type Opcode uint8

// The opcodes of docs/protocol.md.
const (
	OpNotice         Opcode = 0x00
	OpHello          Opcode = 0x01
	OpPing           Opcode = 0x02
	OpInfo           Opcode = 0x03
	OpSnapshot       Opcode = 0x04
	OpFollow         Opcode = 0x10
	OpUnfollow       Opcode = 0x11
	OpRelation       Opcode = 0x12
	OpRelations      Opcode = 0x13
	OpFollowing      Opcode = 0x14
	OpFans           Opcode = 0x15
	OpFriends        Opcode = 0x16
	OpCounts         Opcode = 0x17
	OpKnownFollowers Opcode = 0x18
	OpRemoveUser     Opcode = 0x19
	OpPublish        Opcode = 0x20
	OpDeletePost     Opcode = 0x21
	OpTimeline       Opcode = 0x22
	OpUserPosts      Opcode = 0x23
	OpMute           Opcode = 0x24
	OpUnmute         Opcode = 0x25
	OpHide           Opcode = 0x26
	OpUnhide         Opcode = 0x27
	OpMutes          Opcode = 0x28
	OpHides          Opcode = 0x29
	OpSubscribe      Opcode = 0x30
	OpEvents         Opcode = 0x31 // server push
	OpFetchSnapshot  Opcode = 0x32
	OpSnapshotData   Opcode = 0x33 // server push
	OpAck            Opcode = 0x34
	OpCursors        Opcode = 0x35
	OpDeleteCursor   Opcode = 0x36
	OpReplicate      Opcode = 0x37
	OpRecords        Opcode = 0x38 // server push
	OpReplicaAck     Opcode = 0x39
	OpPromote        Opcode = 0x3a
	OpReplication    Opcode = 0x3b
	OpReplicaOf      Opcode = 0x3c
	OpPosition       Opcode = 0x3d
	OpShardMap       Opcode = 0x3e
	OpSlowlog        Opcode = 0x3f
	OpBlock          Opcode = 0x40
	OpUnblock        Opcode = 0x41
	OpBlocks         Opcode = 0x42
	OpSetPrivate     Opcode = 0x43
	OpIsPrivate      Opcode = 0x44
	OpRequests       Opcode = 0x45
	OpApprove        Opcode = 0x46
	OpReject         Opcode = 0x47
	OpWithdraw       Opcode = 0x48
)

var opNames = map[Opcode]string{
	OpNotice: "NOTICE", OpHello: "HELLO", OpPing: "PING", OpInfo: "INFO", OpSnapshot: "SNAPSHOT",
	OpFollow: "FOLLOW", OpUnfollow: "UNFOLLOW", OpRelation: "RELATION", OpRelations: "RELATIONS",
	OpFollowing: "FOLLOWING", OpFans: "FANS", OpFriends: "FRIENDS", OpCounts: "COUNTS",
	OpKnownFollowers: "KNOWN_FOLLOWERS", OpRemoveUser: "REMOVE_USER", OpPublish: "PUBLISH",
	OpDeletePost: "DELETE_POST", OpTimeline: "TIMELINE", OpUserPosts: "USER_POSTS", OpMute: "MUTE",
	OpUnmute: "UNMUTE", OpHide: "HIDE", OpUnhide: "UNHIDE", OpMutes: "MUTES", OpHides: "HIDES",
	OpSubscribe: "SUBSCRIBE", OpEvents: "EVENTS", OpFetchSnapshot: "FETCH_SNAPSHOT",
	OpSnapshotData: "SNAPSHOT_DATA", OpAck: "ACK", OpCursors: "CURSORS",
	OpDeleteCursor: "DELETE_CURSOR", OpReplicate: "REPLICATE", OpRecords: "RECORDS",
	OpReplicaAck: "REPLICA_ACK", OpPromote: "PROMOTE", OpReplication: "REPLICATION",
	OpReplicaOf: "REPLICA_OF", OpPosition: "POSITION", OpShardMap: "SHARD_MAP", OpSlowlog: "SLOWLOG", OpBlock: "BLOCK", OpUnblock: "UNBLOCK", OpBlocks: "BLOCKS",
	OpSetPrivate: "SET_PRIVATE", OpIsPrivate: "IS_PRIVATE", OpRequests: "REQUESTS",
	OpApprove: "APPROVE", OpReject: "REJECT", OpWithdraw: "WITHDRAW",
}

// String is the opcode's name as docs/protocol.md spells it ("FOLLOW"), or "0x.." when unknown.
func (o Opcode) String() string {
	if n, ok := opNames[o]; ok {
		return n
	}
	const hex = "0123456789abcdef"
	return "0x" + string([]byte{hex[o>>4], hex[o&15]})
}

// RetrySafe says whether a request may be sent again after an unknown outcome (the
// connection dropped after it was sent; a replica answered read_only): true when doing it
// twice leaves the state doing it once leaves. PROMOTE starts a new epoch each time; HELLO,
// SUBSCRIBE, REPLICATE and FETCH_SNAPSHOT start something on their own connection.
func RetrySafe(op Opcode) bool {
	switch op {
	case OpHello, OpPromote, OpSubscribe, OpReplicate, OpFetchSnapshot:
		return false
	}
	return true
}

// ReadsOnly says whether a request only reads (a replica answers it); every other request
// a client sends is a write, which a replica refuses with read_only.
func ReadsOnly(op Opcode) bool {
	switch op {
	case OpPing, OpInfo, OpRelation, OpRelations, OpFollowing, OpFans, OpFriends, OpCounts,
		OpKnownFollowers, OpTimeline, OpUserPosts, OpMutes, OpHides, OpBlocks, OpIsPrivate,
		OpRequests, OpCursors, OpReplication, OpPosition, OpShardMap:
		return true
	}
	return false
}

// Routed says whether a cluster's shard runs the request for the users of its buckets (the
// command table's "cluster" column): every command about a user, whose first field, a u64,
// is the user it is routed by. The others (PING, INFO, the stream, replication) are about no
// user: a shard answers them about itself.
func Routed(op Opcode) bool {
	return (op >= OpFollow && op <= OpRemoveUser) || (op >= OpPublish && op <= OpHides) ||
		(op >= OpBlock && op <= OpWithdraw)
}

// Relation is a set of bits: relation(a, b) as docs/protocol.md "Field types" defines it.
type Relation uint8

const (
	RelFollowing   Relation = 1  // a follows b
	RelFollowedBy  Relation = 2  // b follows a
	RelMutual      Relation = 3  // both
	RelRequested   Relation = 4  // a asked to follow b (pending)
	RelRequestedBy Relation = 8  // b asked to follow a
	RelBlocking    Relation = 16 // a blocks b
	RelBlockedBy   Relation = 32 // b blocks a
)

// Has says whether every bit of bits is set.
func (r Relation) Has(bits Relation) bool { return r&bits == bits }

// String names the relation as relgraph-cli does: "none", "mutual", "following+requested_by", ...
func (r Relation) String() string {
	if r > 63 {
		return "invalid"
	}
	names := [...]string{"following", "followed_by", "requested", "requested_by", "blocking", "blocked_by"}
	out, rest := "", r
	if r&3 == 3 {
		out, rest = "mutual", r&^3
	}
	for bit := 0; bit < 6; bit++ {
		if rest&(1<<bit) != 0 {
			if out != "" {
				out += "+"
			}
			out += names[bit]
		}
	}
	if out == "" {
		return "none"
	}
	return out
}

// Protocol versions and defaults.
const (
	ProtocolVersion = 2       // the version this client speaks first
	DefaultMaxFrame = 1 << 20 // the server's default max_frame
	headerBytes     = 10      // length:u32 request_id:u32 opcode:u8 flags_or_status:u8
	// MaxTime is the largest time a client may send (2^42 - 1 ms).
	MaxTime = int64(1)<<42 - 1
)
