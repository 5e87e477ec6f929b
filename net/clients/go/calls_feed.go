package relgraph

// The typed calls of the feed commands (docs/feed.md, docs/protocol.md 0x20-0x29).

import "context"

// Publish adds post (nonzero) of kind 0..63 by author at the server's clock.
func (c *Client) Publish(ctx context.Context, author, post uint64, kind uint8) (PublishResult, error) {
	return c.publish(ctx, author, post, kind, nil)
}

// PublishAt adds a post with the given time.
func (c *Client) PublishAt(ctx context.Context, author, post uint64, kind uint8, tsMs int64) (PublishResult, error) {
	return c.publish(ctx, author, post, kind, &tsMs)
}

func (c *Client) publish(ctx context.Context, author, post uint64, kind uint8, ts *int64) (PublishResult, error) {
	e := enc{b: make([]byte, 0, 26)}
	e.u64(author)
	e.u64(post)
	e.u8(kind)
	e.optI64(ts)
	return do(ctx, c, OpPublish, e.b, func(d *dec) PublishResult {
		return PublishResult{TS: d.i64(), Retained: d.bool(), Evicted: d.u64()}
	})
}

// DeletePost removes author's post (CodeNotFound when the author holds no such post).
func (c *Client) DeletePost(ctx context.Context, author, post uint64) error {
	_, err := do(ctx, c, OpDeletePost, pair(author, post), noBody)
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
func (c *Client) Timeline(ctx context.Context, q FeedQuery) (FeedPage, error) {
	return do(ctx, c, OpTimeline, encodeFeedQuery(q), decodeFeedPage)
}

// UserPosts is a page of q.User's own posts.
func (c *Client) UserPosts(ctx context.Context, q FeedQuery) (FeedPage, error) {
	return do(ctx, c, OpUserPosts, encodeFeedQuery(q), decodeFeedPage)
}

// Mute hides other's posts from user's timeline; false when already muted.
func (c *Client) Mute(ctx context.Context, user, other uint64) (bool, error) {
	return do(ctx, c, OpMute, pair(user, other), boolBody)
}

// Unmute undoes Mute; false when other was not muted.
func (c *Client) Unmute(ctx context.Context, user, other uint64) (bool, error) {
	return do(ctx, c, OpUnmute, pair(user, other), boolBody)
}

// Hide keeps author's posts out of from's timeline; false when already hidden.
func (c *Client) Hide(ctx context.Context, author, from uint64) (bool, error) {
	return do(ctx, c, OpHide, pair(author, from), boolBody)
}

// Unhide undoes Hide.
func (c *Client) Unhide(ctx context.Context, author, from uint64) (bool, error) {
	return do(ctx, c, OpUnhide, pair(author, from), boolBody)
}

// Mutes lists whom user mutes, in id order.
func (c *Client) Mutes(ctx context.Context, user uint64) ([]uint64, error) {
	return do(ctx, c, OpMutes, one(user), func(d *dec) []uint64 { return d.u64s() })
}

// Hides lists whom author hides from, in id order.
func (c *Client) Hides(ctx context.Context, author uint64) ([]uint64, error) {
	return do(ctx, c, OpHides, one(author), func(d *dec) []uint64 { return d.u64s() })
}
