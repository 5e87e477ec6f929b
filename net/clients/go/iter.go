package relgraph

// Page iterators: walk a whole list page by page, each page asked with the previous page's
// Next as its search-after cursor (stable while the list changes: an entry is never seen
// twice, docs/protocol.md "Pages"). Use like bufio.Scanner:
//
//	it := c.FansIter(relgraph.PageQuery{User: 7, Limit: 500})
//	for it.Next(ctx) { use(it.Entry()) }
//	if err := it.Err(); err != nil { ... }
//
// Thread-safety: one goroutine per iterator.

import "context"

// PageIter walks a user list (FOLLOWING, FANS, FRIENDS, BLOCKS, REQUESTS).
type PageIter struct {
	c     *Calls
	op    Opcode
	q     PageQuery
	page  []PageEntry
	cur   PageEntry
	total uint32
	done  bool
	err   error
	Pages int // pages fetched so far
}

func (c *Calls) pageIter(op Opcode, q PageQuery) *PageIter {
	if q.Limit == 0 {
		q.Limit = 1000
	}
	return &PageIter{c: c, op: op, q: q}
}

// FollowingIter iterates whom q.User follows, from q.After (or q.Offset) on.
func (c *Calls) FollowingIter(q PageQuery) *PageIter { return c.pageIter(OpFollowing, q) }

// FansIter iterates who follows q.User.
func (c *Calls) FansIter(q PageQuery) *PageIter { return c.pageIter(OpFans, q) }

// FriendsIter iterates q.User's friends.
func (c *Calls) FriendsIter(q PageQuery) *PageIter { return c.pageIter(OpFriends, q) }

// BlocksIter iterates whom q.User blocks.
func (c *Calls) BlocksIter(q PageQuery) *PageIter { return c.pageIter(OpBlocks, q) }

// RequestsIter iterates who asks to follow q.User.
func (c *Calls) RequestsIter(q PageQuery) *PageIter { return c.pageIter(OpRequests, q) }

// Next advances to the next entry, fetching a page when needed; false at the end or on error.
func (it *PageIter) Next(ctx context.Context) bool {
	for len(it.page) == 0 {
		if it.done || it.err != nil {
			return false
		}
		p, err := it.c.page(ctx, it.op, it.q)
		if err != nil {
			it.err = err
			return false
		}
		it.Pages++
		it.page, it.total = p.Entries, p.Total
		if p.Next == nil {
			it.done = true
		} else {
			it.q.After, it.q.Offset = p.Next, 0
		}
	}
	it.cur, it.page = it.page[0], it.page[1:]
	return true
}

// Entry is the current entry.
func (it *PageIter) Entry() PageEntry { return it.cur }

// Total is the list's length as the last page said (BLOCKS and REQUESTS only).
func (it *PageIter) Total() uint32 { return it.total }

// Err is the error that stopped the iteration, nil at a clean end.
func (it *PageIter) Err() error { return it.err }

// FeedIter walks a feed (TIMELINE, USER_POSTS).
type FeedIter struct {
	c     *Calls
	op    Opcode
	q     FeedQuery
	page  []Post
	cur   Post
	done  bool
	err   error
	Pages int
}

// TimelineIter iterates q.User's home timeline.
func (c *Calls) TimelineIter(q FeedQuery) *FeedIter { return c.feedIter(OpTimeline, q) }

// UserPostsIter iterates q.User's own posts.
func (c *Calls) UserPostsIter(q FeedQuery) *FeedIter { return c.feedIter(OpUserPosts, q) }

func (c *Calls) feedIter(op Opcode, q FeedQuery) *FeedIter {
	if q.Limit == 0 {
		q.Limit = 100
	}
	return &FeedIter{c: c, op: op, q: q}
}

// Next advances to the next post; false at the end or on error.
func (it *FeedIter) Next(ctx context.Context) bool {
	for len(it.page) == 0 {
		if it.done || it.err != nil {
			return false
		}
		p, err := do(ctx, it.c.rt, it.op, encodeFeedQuery(it.q), decodeFeedPage)
		if err != nil {
			it.err = err
			return false
		}
		it.Pages++
		it.page = p.Entries
		if p.Next == nil {
			it.done = true
		} else {
			it.q.After = p.Next
		}
	}
	it.cur, it.page = it.page[0], it.page[1:]
	return true
}

// Post is the current post.
func (it *FeedIter) Post() Post { return it.cur }

// Err is the error that stopped the iteration, nil at a clean end.
func (it *FeedIter) Err() error { return it.err }
