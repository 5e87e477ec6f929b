// relgraph-go-bench: the Go client's throughput and latency against a running relgraphd,
// one line per workload (start the server with --rate-limit=off):
//
//	follow      follows of new random pairs (then unfollowed, untimed)
//	relation    relation checks of random pairs
//	fans_page_unpipelined  first pages (20, with a viewer) of random users' fans, one at a
//	            time: p50, p99
//
// follow and relation run two ways, connections x depth requests in flight either way (as
// relgraph-bench's --connections and --pipeline):
//
//	_goroutines  --depth goroutines per pooled connection, each making plain calls
//	_batch       one goroutine per connection, each Exec-ing Pipelines of --depth requests
package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"runtime/pprof"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"relgraph"
)

func main() {
	server := flag.String("server", "127.0.0.1:7707", "relgraphd HOST:PORT")
	token := flag.String("token", "", "auth token")
	users := flag.Uint64("users", 100000, "ids of the loaded graph: 1..users")
	edges := flag.Int("edges", 1000000, "edges to load first (0: none)")
	ops := flag.Int("ops", 500000, "operations per pipelined workload")
	latencyOps := flag.Int("latency-ops", 20000, "operations of the unpipelined workload")
	conns := flag.Int("connections", 4, "pooled connections")
	depth := flag.Int("depth", 64, "goroutines per connection (requests in flight on each)")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the client here")
	flag.Parse()
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		_ = pprof.StartCPUProfile(f)
		defer pprof.StopCPUProfile()
	}

	ctx := context.Background()
	c, err := relgraph.Connect(ctx, relgraph.Options{Addr: *server, Token: *token, PoolSize: *conns, CallTimeout: time.Minute})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer c.Close()
	workers := *conns * *depth
	r := rand.New(rand.NewSource(1))
	pair := func(r *rand.Rand) (uint64, uint64) {
		a := 1 + uint64(r.Int63n(int64(*users)))
		b := 1 + uint64(r.Int63n(int64(*users)))
		if a == b {
			b = a%*users + 1
		}
		return a, b
	}

	// run calls fn n times from `workers` goroutines and returns ops/s.
	run := func(n int, fn func(r *rand.Rand, i int) error) float64 {
		var next atomic.Int64
		var wg sync.WaitGroup
		start := time.Now()
		for w := 0; w < workers; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				r := rand.New(rand.NewSource(int64(w) + 7))
				for {
					i := int(next.Add(1)) - 1
					if i >= n {
						return
					}
					if err := fn(r, i); err != nil {
						fmt.Fprintln(os.Stderr, err)
						os.Exit(1)
					}
				}
			}(w)
		}
		wg.Wait()
		return float64(n) / time.Since(start).Seconds()
	}

	if *edges > 0 {
		rate := run(*edges, func(r *rand.Rand, i int) error {
			a, b := pair(r)
			_, err := c.FollowAt(ctx, a, b, 1700000000000+int64(i))
			if relgraph.CodeOf(err) == relgraph.CodeFollowLimit {
				return nil
			}
			return err
		})
		fmt.Printf("load                 %10.0f follows/s  (%d edges, %d users)\n", rate, *edges, *users)
	}

	// runBatch runs n requests as Pipelines of depth from `conns` goroutines; ops/s.
	runBatch := func(n int, add func(p *relgraph.Pipeline, r *rand.Rand, i int)) float64 {
		var next atomic.Int64
		var wg sync.WaitGroup
		start := time.Now()
		for w := 0; w < *conns; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				r := rand.New(rand.NewSource(int64(w) + 11))
				p := c.Pipeline()
				for {
					first := int(next.Add(int64(*depth))) - *depth
					if first >= n {
						return
					}
					for i := first; i < first+*depth && i < n; i++ {
						add(p, r, i)
					}
					if err := p.Exec(ctx); err != nil {
						fmt.Fprintln(os.Stderr, err)
						os.Exit(1)
					}
				}
			}(w)
		}
		wg.Wait()
		return float64(n) / time.Since(start).Seconds()
	}

	fresh := make([][2]uint64, *ops)
	for i := range fresh {
		a, b := pair(r)
		fresh[i] = [2]uint64{a + *users, b + *users} // ids outside the loaded graph
	}
	rate := run(*ops, func(_ *rand.Rand, i int) error {
		_, err := c.Follow(ctx, fresh[i][0], fresh[i][1])
		return err
	})
	fmt.Printf("follow_goroutines    %10.0f ops/s  (%d in flight)\n", rate, workers)
	unfollowAll := func() {
		runBatch(*ops, func(p *relgraph.Pipeline, _ *rand.Rand, i int) { p.Unfollow(fresh[i][0], fresh[i][1]) })
	}
	unfollowAll()
	rate = runBatch(*ops, func(p *relgraph.Pipeline, _ *rand.Rand, i int) { p.Follow(fresh[i][0], fresh[i][1]) })
	fmt.Printf("follow_batch         %10.0f ops/s  (%d in flight)\n", rate, workers)
	unfollowAll()
	rate = run(*ops, func(r *rand.Rand, _ int) error {
		a, b := pair(r)
		_, err := c.Relation(ctx, a, b)
		return err
	})
	fmt.Printf("relation_goroutines  %10.0f ops/s  (%d in flight)\n", rate, workers)
	rate = runBatch(*ops, func(p *relgraph.Pipeline, r *rand.Rand, _ int) {
		a, b := pair(r)
		p.Relation(a, b)
	})
	fmt.Printf("relation_batch       %10.0f ops/s  (%d in flight)\n", rate, workers)

	lat := make([]time.Duration, *latencyOps)
	for i := range lat {
		u, v := pair(r)
		t := time.Now()
		if _, err := c.Fans(ctx, relgraph.PageQuery{User: u, Limit: 20, Viewer: v}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		lat[i] = time.Since(t)
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	fmt.Printf("fans_page_unpipelined  p50 %6.1f us  p99 %6.1f us  (%d pages of 20)\n",
		float64(lat[len(lat)/2].Nanoseconds())/1e3, float64(lat[len(lat)*99/100].Nanoseconds())/1e3, len(lat))
}
