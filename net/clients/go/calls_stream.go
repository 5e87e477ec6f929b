package relgraph

// The typed calls of named cursors, snapshot transfer and replication (docs/protocol.md
// 0x32-0x3c), the shard map and the slow-command log (0x3e, 0x3f). SUBSCRIBE is subscriber.go's.

import (
	"context"
	"fmt"
	"io"
)

// Ack records that the consumer name has handled every change up to lsn; the cursor resumes
// at lsn + 1 (SUBSCRIBE FromCursor). A new name creates the cursor.
func (c *Calls) Ack(ctx context.Context, name string, lsn uint64) error {
	var e enc
	e.str(name)
	e.u64(lsn)
	_, err := do(ctx, c.rt, OpAck, e.b, noBody)
	return err
}

// Cursors lists every named cursor in name order.
func (c *Calls) Cursors(ctx context.Context) ([]CursorInfo, error) {
	return do(ctx, c.rt, OpCursors, nil, decodeCursors)
}

// DeleteCursor forgets a named cursor (CodeNotFound when there is none).
func (c *Calls) DeleteCursor(ctx context.Context, name string) error {
	var e enc
	e.str(name)
	_, err := do(ctx, c.rt, OpDeleteCursor, e.b, noBody)
	return err
}

// Replication returns the node's role, link state and replicas.
func (c *Calls) Replication(ctx context.Context) (Replication, error) {
	return do(ctx, c.rt, OpReplication, nil, decodeReplication)
}

// Position tells the node's role, epoch and applied and durable LSN. Requests sent after it on
// the same connection see at least AppliedLSN.
func (c *Calls) Position(ctx context.Context) (Position, error) {
	return do(ctx, c.rt, OpPosition, nil, func(d *dec) Position {
		return Position{Role: d.u8(), Epoch: d.u64(), AppliedLSN: d.u64(), DurableLSN: d.u64()}
	})
}

// ShardMap returns the shard map a cluster's shard holds, in its versioned text form
// (docs/cluster.md, "Clients without NATS").
func (c *Calls) ShardMap(ctx context.Context) (string, error) {
	return do(ctx, c.rt, OpShardMap, nil, func(d *dec) string { return d.str() })
}

// Slowlog reads the server's slow-command log: its newest count entries (0: all), newest
// first; with reset the server empties it after the read. It is about the node asked.
func (c *Client) Slowlog(ctx context.Context, count uint16, reset bool) (Slowlog, error) {
	var e enc
	e.u16(count)
	e.bool(reset)
	return do(ctx, c, OpSlowlog, e.b, decodeSlowlog)
}

// Promote makes a replica a primary of a new epoch (never retried: each starts an epoch).
func (c *Calls) Promote(ctx context.Context, force bool) (PromoteReply, error) {
	var e enc
	e.bool(force)
	return do(ctx, c.rt, OpPromote, e.b, func(d *dec) PromoteReply {
		return PromoteReply{Epoch: d.u64(), EpochID: d.u64(), FirstLSN: d.u64()}
	})
}

// ReplicaOf makes the node follow primary ("HOST:PORT"); resync copies its snapshot first.
func (c *Calls) ReplicaOf(ctx context.Context, primary string, resync bool) error {
	var e enc
	e.str(primary)
	e.bool(resync)
	_, err := do(ctx, c.rt, OpReplicaOf, e.b, noBody)
	return err
}

// ReplicaAck reports a replica's position (usually sent on its ReplicationStream instead).
func (c *Calls) ReplicaAck(ctx context.Context, name string, applied, durable uint64) error {
	_, err := do(ctx, c.rt, OpReplicaAck, encodeReplicaAck(name, applied, durable), noBody)
	return err
}

func encodeReplicaAck(name string, applied, durable uint64) []byte {
	var e enc
	e.str(name)
	e.u64(applied)
	e.u64(durable)
	return e.b
}

// dialStream makes a connection of its own for a stream (not one of the pool's).
func (c *Client) dialStream(ctx context.Context) (*Conn, error) {
	return c.dial(ctx, c.Addr())
}

// FetchSnapshot copies the server's newest snapshot file to w, on a connection of its own,
// and returns the LSN it holds and its size. Save it as snapshot-<lsn, 20 digits>.rgs in an
// empty data directory and subscribe from LSN + 1. Not retried.
func (c *Client) FetchSnapshot(ctx context.Context, w io.Writer) (FetchSnapshotReply, error) {
	cn, err := c.dialStream(ctx)
	if err != nil {
		return FetchSnapshotReply{}, err
	}
	defer cn.Close()
	b, frames, err := cn.startStream(ctx, OpFetchSnapshot, nil, OpSnapshotData)
	if err != nil {
		return FetchSnapshotReply{}, err
	}
	d := newDec(b, "FETCH_SNAPSHOT reply")
	r := FetchSnapshotReply{LSN: d.u64(), FileBytes: d.u64()}
	if err := d.done(); err != nil {
		return r, err
	}
	var at uint64
	for at < r.FileBytes {
		select {
		case f, ok := <-frames:
			if !ok {
				return r, &ConnError{Addr: cn.addr, Sent: true, Err: cn.Err()}
			}
			if f.status != 0 {
				return r, decodeError(OpSnapshotData, f.status, f.body)
			}
			if len(f.body) < 8 {
				return r, &Error{Code: CodeProtocolError, Op: OpSnapshotData, Message: "frame shorter than its offset"}
			}
			d := newDec(f.body[:8], "SNAPSHOT_DATA")
			if off := d.u64(); off != at {
				return r, &Error{Code: CodeProtocolError, Op: OpSnapshotData, Message: fmt.Sprintf("offset %d, expected %d", off, at)}
			}
			if _, err := w.Write(f.body[8:]); err != nil {
				return r, err
			}
			at += uint64(len(f.body) - 8)
		case <-ctx.Done():
			return r, timeoutError(OpFetchSnapshot, ctx.Err())
		}
	}
	return r, nil
}

// ReplicationStream is a REPLICATE stream on a connection of its own: what a replica reads.
//
// Thread-safety: Next from one goroutine at a time; Ack and Close from any.
type ReplicationStream struct {
	cn     *Conn
	frames <-chan frame
	Reply  ReplicateReply
}

// Replicate asks for every WAL record from req.FromLSN on. Not retried.
func (c *Client) Replicate(ctx context.Context, req ReplicateRequest) (*ReplicationStream, error) {
	cn, err := c.dialStream(ctx)
	if err != nil {
		return nil, err
	}
	var e enc
	e.u64(req.FromLSN)
	e.u64(req.Epoch)
	e.u64(req.EpochID)
	e.str(req.Name)
	b, frames, err := cn.startStream(ctx, OpReplicate, e.b, OpRecords)
	if err != nil {
		cn.Close()
		return nil, err
	}
	d := newDec(b, "REPLICATE reply")
	rs := &ReplicationStream{cn: cn, frames: frames, Reply: ReplicateReply{Epoch: d.u64(), EpochID: d.u64(), NewestLSN: d.u64()}}
	if err := d.done(); err != nil {
		cn.Close()
		return nil, err
	}
	return rs, nil
}

// Next returns the next RECORDS frame (a heartbeat has no records).
func (rs *ReplicationStream) Next(ctx context.Context) (Records, error) {
	select {
	case f, ok := <-rs.frames:
		if !ok {
			return Records{}, &ConnError{Addr: rs.cn.addr, Sent: true, Err: rs.cn.Err()}
		}
		if f.status != 0 {
			return Records{}, decodeError(OpRecords, f.status, f.body)
		}
		d := newDec(f.body, "RECORDS")
		r := decodeRecords(d)
		return r, d.done()
	case <-ctx.Done():
		return Records{}, timeoutError(OpRecords, ctx.Err())
	}
}

// Ack sends REPLICA_ACK on the replicating connection without waiting for its reply (an
// error reply breaks the stream, and Next reports it).
func (rs *ReplicationStream) Ack(name string, applied, durable uint64) error {
	return rs.cn.sendNoWait(OpReplicaAck, encodeReplicaAck(name, applied, durable))
}

// Close ends the stream.
func (rs *ReplicationStream) Close() error { return rs.cn.Close() }
