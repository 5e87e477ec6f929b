package relgraph

// Placement: which shard of a cluster serves a user (docs/cluster.md, "Placement"), and the
// shard map's text form as SHARD_MAP hands it out (docs/cluster.md, "Clients without NATS";
// net/cluster/placement.h has the grammar):
//
//	relgraph-cluster-map 1
//	version <n>
//	relgraph-shard-map 1
//	buckets <count>
//	generation <g>                                  (optional; absent: 1)
//	shard <id> <host:port>                          a shard of one node
//	shard <id> <host:port>,<host:port>... group <name>   a shard served by a replication group
//	owner <first>-<last> <id>                       buckets first..last belong to shard id
//	move <first>-<last> <from> <to> <phase> <id> [<flipped_ms>]   a move in progress
//
// Thread-safety: a ShardMap is not changed after parsing; share it freely.

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"strconv"
	"strings"
)

// xxh3Short is XXH3-64 with seed 0 of an input of 4 to 8 bytes (xxhash's
// XXH3_len_4to8_64b): the only length a bucket hash needs.
func xxh3Short(in []byte) uint64 {
	// Bytes 8..23 of XXH3's default secret, as two little-endian words.
	const secret8, secret16 = 0x1cad21f72c81017c, 0xdb979083e96dd4de
	n := uint64(len(in))
	lo := uint64(binary.LittleEndian.Uint32(in))
	hi := uint64(binary.LittleEndian.Uint32(in[len(in)-4:]))
	h := (hi + lo<<32) ^ (secret8 ^ secret16)
	// rrmxmx
	h ^= bits.RotateLeft64(h, 49) ^ bits.RotateLeft64(h, 24)
	h *= 0x9fb21c651e98df25
	h ^= (h >> 35) + n
	h *= 0x9fb21c651e98df25
	return h ^ (h >> 28)
}

// BucketHash is XXH3-64 (seed 0) of user's 8 little-endian bytes.
func BucketHash(user uint64) uint64 {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], user)
	return xxh3Short(b[:])
}

// BucketOf is user's bucket among buckets (>= 1).
func BucketOf(user uint64, buckets uint32) uint32 {
	return uint32(BucketHash(user) % uint64(buckets))
}

// ShardInfo is one shard of the map.
type ShardInfo struct {
	ID    uint32
	Addr  string // host:port; a group's first member
	Group string // a replication group's name; "" for a shard of one node
	// Members: a group's members' host:port, Addr first; nil for a shard of one node.
	Members []string
}

// Addresses are where the shard may be reached: its members, or its one address.
func (s *ShardInfo) Addresses() []string {
	if len(s.Members) > 0 {
		return s.Members
	}
	return []string{s.Addr}
}

// BucketMove is a bucket move in progress (docs/cluster.md, "Moving buckets online").
type BucketMove struct {
	First, Last uint32 // inclusive
	From, To    uint32
	Phase       string // prepare, flip, copy
	ID          uint64
	FlippedMs   uint64
}

// ShardMap is a cluster's shard map.
type ShardMap struct {
	Version    uint64 // the key-value revision it was read at
	Generation uint64 // raised by a restore; 1 when the text has none
	Buckets    uint32
	Shards     []ShardInfo // in id order
	Owner      []uint32    // Owner[bucket] = shard id
	Move       *BucketMove
}

// OwnerOf is the id of the shard that owns user's bucket.
func (m *ShardMap) OwnerOf(user uint64) uint32 { return m.Owner[BucketOf(user, m.Buckets)] }

// Find returns shard id, or nil when the map has none.
func (m *ShardMap) Find(id uint32) *ShardInfo {
	for i := range m.Shards {
		if m.Shards[i].ID == id {
			return &m.Shards[i]
		}
	}
	return nil
}

// NewerThan orders maps by (generation, version).
func (m *ShardMap) NewerThan(o *ShardMap) bool {
	if m.Generation != o.Generation {
		return m.Generation > o.Generation
	}
	return m.Version > o.Version
}

// ParseShardMap reads SHARD_MAP's versioned text form (or the bare map, version 0).
func ParseShardMap(text string) (*ShardMap, error) {
	lines := strings.Split(text, "\n")
	var version uint64
	if lines[0] == "relgraph-cluster-map 1" {
		if len(lines) < 2 || !strings.HasPrefix(lines[1], "version ") {
			return nil, fmt.Errorf("shard map: expected 'version N' on its second line")
		}
		v, err := strconv.ParseUint(lines[1][len("version "):], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("shard map: bad version line %q", lines[1])
		}
		version, lines = v, lines[2:]
	}
	m, err := parseBareMap(lines)
	if err != nil {
		return nil, err
	}
	m.Version = version
	return m, nil
}

func parseBareMap(lines []string) (*ShardMap, error) {
	if len(lines) == 0 || lines[0] != "relgraph-shard-map 1" {
		return nil, fmt.Errorf("shard map: expected 'relgraph-shard-map 1' first")
	}
	m := &ShardMap{Generation: 1}
	var covered []bool
	bad := func(i int, why string) error {
		return fmt.Errorf("shard map: line %d %q: %s", i+1, lines[i], why)
	}
	num := func(s string, max uint64) (uint64, bool) {
		v, err := strconv.ParseUint(s, 10, 64)
		return v, err == nil && v <= max
	}
	rng := func(s string) (uint32, uint32, bool) {
		a, b, ok := strings.Cut(s, "-")
		if !ok {
			b = a
		}
		f, ok1 := num(a, uint64(m.Buckets)-1)
		l, ok2 := num(b, uint64(m.Buckets)-1)
		return uint32(f), uint32(l), ok1 && ok2 && f <= l
	}
	for i := 1; i < len(lines); i++ {
		w := strings.Fields(lines[i])
		if len(w) == 0 {
			continue
		}
		switch {
		case w[0] == "buckets" && len(w) == 2 && m.Buckets == 0:
			n, ok := num(w[1], 65536)
			if !ok || n == 0 {
				return nil, bad(i, "bucket count out of 1..65536")
			}
			m.Buckets = uint32(n)
			m.Owner = make([]uint32, n)
			covered = make([]bool, n)
		case w[0] == "generation" && len(w) == 2:
			n, ok := num(w[1], ^uint64(0))
			if !ok || n < 2 {
				return nil, bad(i, "generation below 2")
			}
			m.Generation = n
		case w[0] == "shard" && (len(w) == 3 || (len(w) == 5 && w[3] == "group")):
			id, ok := num(w[1], 65535)
			if !ok || id == 0 {
				return nil, bad(i, "shard id out of 1..65535")
			}
			s := ShardInfo{ID: uint32(id), Addr: w[2]}
			if len(w) == 5 {
				s.Group, s.Members = w[4], strings.Split(w[2], ",")
				s.Addr = s.Members[0]
			} else if strings.Contains(w[2], ",") {
				return nil, bad(i, "several addresses without a group")
			}
			if m.Find(s.ID) != nil {
				return nil, bad(i, "shard listed twice")
			}
			m.Shards = append(m.Shards, s)
		case w[0] == "owner" && len(w) == 3 && m.Buckets > 0:
			f, l, ok := rng(w[1])
			id, ok2 := num(w[2], 65535)
			if !ok || !ok2 {
				return nil, bad(i, "expected 'owner FIRST-LAST ID' within the buckets")
			}
			for b := f; b <= l; b++ {
				if covered[b] {
					return nil, bad(i, "bucket owned twice")
				}
				covered[b] = true
				m.Owner[b] = uint32(id)
			}
		case w[0] == "move" && (len(w) == 6 || len(w) == 7) && m.Buckets > 0 && m.Move == nil:
			f, l, ok := rng(w[1])
			from, ok2 := num(w[2], 65535)
			to, ok3 := num(w[3], 65535)
			id, ok4 := num(w[5], ^uint64(0))
			var flipped uint64
			ok5 := true
			if len(w) == 7 {
				flipped, ok5 = num(w[6], ^uint64(0))
			}
			if !(ok && ok2 && ok3 && ok4 && ok5) || (w[4] != "prepare" && w[4] != "flip" && w[4] != "copy") {
				return nil, bad(i, "expected 'move FIRST-LAST FROM TO PHASE ID [FLIPPED_MS]'")
			}
			m.Move = &BucketMove{First: f, Last: l, From: uint32(from), To: uint32(to), Phase: w[4], ID: id, FlippedMs: flipped}
		default:
			return nil, bad(i, "not a buckets, generation, shard, owner or move line")
		}
	}
	if m.Buckets == 0 {
		return nil, fmt.Errorf("shard map: no buckets line")
	}
	for b, ok := range covered {
		if !ok {
			return nil, fmt.Errorf("shard map: bucket %d has no owner", b)
		}
		if m.Find(m.Owner[b]) == nil {
			return nil, fmt.Errorf("shard map: bucket %d's owner %d is not a shard of the map", b, m.Owner[b])
		}
	}
	return m, nil
}
