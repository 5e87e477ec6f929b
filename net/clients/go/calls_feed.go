package relgraph

// The typed calls of the feed commands (docs/feed.md, docs/protocol.md 0x20-0x29).

import "context"

// Publish adds post (nonzero) of kind 0..63 by author at the server's clock.
func (c *Calls) Publish(ctx context.Context, author, post uint64, kind uint8) (PublishResult, error) {
	return c.publish(ctx, author, post, kind, nil)
}

// PublishAt adds a post with the given time.
func (c *Calls) PublishAt(ctx context.Context, author, post uint64, kind uint8, tsMs int64) (PublishResult, error) {
	return c.publish(ctx, author, post, kind, &tsMs)
}

func (c *Calls) publish(ctx context.Context, author, post uint64, kind uint8, ts *int64) (PublishResult, error) {
	e := enc{b: make([]byte, 0, 26)}
	e.u64(author)
	e.u64(post)
	e.u8(kind)
	e.optI64(ts)
	return do(ctx, c.rt, OpPublish, e.b, func(d *dec) PublishResult {
		return PublishResult{TS: d.i64(), Retained: d.bool(), Evicted: d.u64()}
	})
}

// DeletePost removes author's post (CodeNotFound when the author holds no such post).
func (c *Calls) DeletePost(ctx context.Context, author, post uint64) error {
	_, err := do(ctx, c.rt, OpDeletePost, pair(author, post), noBody)
	return err
}

func encodeFeedQuery(q FeedQuery) []byte {
	e := enc{b: make([]byte, 0, 36)}
	e.u64(q.User)
	e.u16(q.Limit)
	if q.After == nil {
		e.u8(0)
	} else {
		e.u8(1)
		e.i64(q.After.TS)
		e.u64(q.After.Post)
	}
	e.u64(q.Kinds)
	return e.b
}

// Timeline is a page of q.User's home timeline.
func (c *Calls) Timeline(ctx context.Context, q FeedQuery) (FeedPage, error) {
	return do(ctx, c.rt, OpTimeline, encodeFeedQuery(q), decodeFeedPage)
}

// UserPosts is a page of q.User's own posts.
func (c *Calls) UserPosts(ctx context.Context, q FeedQuery) (FeedPage, error) {
	return do(ctx, c.rt, OpUserPosts, encodeFeedQuery(q), decodeFeedPage)
}

// Mute hides other's posts from user's timeline; false when already muted.
func (c *Calls) Mute(ctx context.Context, user, other uint64) (bool, error) {
	return do(ctx, c.rt, OpMute, pair(user, other), boolBody)
}

// Unmute undoes Mute; false when other was not muted.
func (c *Calls) Unmute(ctx context.Context, user, other uint64) (bool, error) {
	return do(ctx, c.rt, OpUnmute, pair(user, other), boolBody)
}

// Hide keeps author's posts out of from's timeline; false when already hidden.
func (c *Calls) Hide(ctx context.Context, author, from uint64) (bool, error) {
	return do(ctx, c.rt, OpHide, pair(author, from), boolBody)
}

// Unhide undoes Hide.
func (c *Calls) Unhide(ctx context.Context, author, from uint64) (bool, error) {
	return do(ctx, c.rt, OpUnhide, pair(author, from), boolBody)
}

// Mutes lists whom user mutes, in id order.
func (c *Calls) Mutes(ctx context.Context, user uint64) ([]uint64, error) {
	return do(ctx, c.rt, OpMutes, one(user), func(d *dec) []uint64 { return d.u64s() })
}

// Hides lists whom author hides from, in id order.
func (c *Calls) Hides(ctx context.Context, author uint64) ([]uint64, error) {
	return do(ctx, c.rt, OpHides, one(author), func(d *dec) []uint64 { return d.u64s() })
}
