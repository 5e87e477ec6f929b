// A tour of the Go client: follow, read a page, walk a list, publish, and watch the change
// stream. Run against a relgraphd on 127.0.0.1:7707 (or RELGRAPH_ADDR):
//
//	go run ./examples/basic
package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"time"

	"relgraph"
)

func main() {
	addr := os.Getenv("RELGRAPH_ADDR")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	c, err := relgraph.Connect(ctx, relgraph.Options{Addr: addr, Token: os.Getenv("RELGRAPH_TOKEN")})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	h := c.Hello()
	fmt.Printf("connected to %s %s (protocol %d)\n", h.Server, h.ServerVersion, h.Version)

	// Follows: typed results; ids are uint64, times ms since the epoch.
	for _, e := range [][2]uint64{{1, 2}, {2, 1}, {1, 3}, {3, 2}} {
		r, err := c.Follow(ctx, e[0], e[1])
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("follow %d -> %d: created %v, relation %v\n", e[0], e[1], r.Created, r.Relation)
	}

	// Errors carry the protocol's code.
	if _, err := c.Follow(ctx, 1, 1); errors.Is(err, relgraph.CodeSelfFollow) {
		fmt.Println("follow 1 -> 1:", err)
	}

	// One page, then the whole list by search-after cursor.
	p, err := c.Following(ctx, relgraph.PageQuery{User: 1, Limit: 1, Viewer: 2})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("first page of 1's following: %+v, next %+v\n", p.Entries, p.Next)
	it := c.FansIter(relgraph.PageQuery{User: 2, Limit: 100})
	for it.Next(ctx) {
		fmt.Println("fan of 2:", it.Entry().User)
	}
	if err := it.Err(); err != nil {
		log.Fatal(err)
	}

	// The change stream from now on: a post, seen as an event.
	sub, err := c.Subscribe(ctx, relgraph.SubscribeOptions{From: relgraph.FromNow})
	if err != nil {
		log.Fatal(err) // a server without a data directory has no stream
	}
	defer sub.Close()
	post := uint64(time.Now().UnixNano())
	if _, err := c.Publish(ctx, 2, post, 0); err != nil {
		log.Fatal(err)
	}
	ev, err := sub.Next(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("event at LSN %d: kind %d, author %d, post %d\n", ev.LSN, ev.Kind, ev.A, ev.B)
}
