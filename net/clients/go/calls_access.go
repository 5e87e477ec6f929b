package relgraph

// The typed calls of blocks, private accounts and follow requests (docs/access.md,
// docs/protocol.md 0x40-0x48).

import "context"

// Block makes user block blocked (removing their edges and requests).
func (c *Calls) Block(ctx context.Context, user, blocked uint64) (BlockResult, error) {
	return do(ctx, c.rt, OpBlock, pair(user, blocked), func(d *dec) BlockResult {
		return BlockResult{Created: d.bool(), TS: d.i64(), Removed: d.u8()}
	})
}

// Unblock undoes Block; false when there was no block.
func (c *Calls) Unblock(ctx context.Context, user, other uint64) (bool, error) {
	return do(ctx, c.rt, OpUnblock, pair(user, other), boolBody)
}

// Blocks is a page of whom q.User blocks (Total set).
func (c *Calls) Blocks(ctx context.Context, q PageQuery) (Page, error) {
	return c.page(ctx, OpBlocks, q)
}

// SetPrivate makes user's account private or public (going public approves every request).
func (c *Calls) SetPrivate(ctx context.Context, user uint64, private bool) (SetPrivateResult, error) {
	e := enc{b: make([]byte, 0, 9)}
	e.u64(user)
	e.bool(private)
	return do(ctx, c.rt, OpSetPrivate, e.b, func(d *dec) SetPrivateResult {
		return SetPrivateResult{Changed: d.bool(), Approved: d.u64(), TS: d.i64()}
	})
}

// IsPrivate says whether user's account is private.
func (c *Calls) IsPrivate(ctx context.Context, user uint64) (bool, error) {
	return do(ctx, c.rt, OpIsPrivate, one(user), boolBody)
}

// Requests is a page of who asks to follow q.User (Total set).
func (c *Calls) Requests(ctx context.Context, q PageQuery) (Page, error) {
	return c.page(ctx, OpRequests, q)
}

// Approve accepts other's pending request to follow user; the result is the new edge
// other -> user. CodeNotFound when there is no such request.
func (c *Calls) Approve(ctx context.Context, user, other uint64) (FollowResult, error) {
	return do(ctx, c.rt, OpApprove, pair(user, other), decodeFollow)
}

// Reject refuses other's pending request to follow user.
func (c *Calls) Reject(ctx context.Context, user, other uint64) (bool, error) {
	return do(ctx, c.rt, OpReject, pair(user, other), boolBody)
}

// Withdraw takes back user's pending request to follow other.
func (c *Calls) Withdraw(ctx context.Context, user, other uint64) (bool, error) {
	return do(ctx, c.rt, OpWithdraw, pair(user, other), boolBody)
}
