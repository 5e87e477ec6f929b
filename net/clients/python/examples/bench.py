#!/usr/bin/env python3
"""A small benchmark of the Python client, one line per row (and redis-py beside it).

    bench.py --server=127.0.0.1:7707 [--redis=127.0.0.1:6379] [--ops=200000] [--pipeline=64]

Rows (one thread, one connection, as a Python program usually has):
  follow_pipelined     FOLLOW of new random pairs, `pipeline` per round trip (it also loads
                       the graph the next rows read)
  relation_pipelined   RELATION of random pairs, half of them edges, `pipeline` per round trip
  fans_page            a first page (20) of a random user's fans with a viewer, one at a time:
                       p50 and p99 in microseconds
  follow_asyncio       FOLLOW from 64 asyncio tasks at once on one connection
With --redis: redis-py's pipelined SET and SADD (`pipeline` per round trip, transaction off)
and an unpipelined ZREVRANGE of 20 members WITHSCORES from a sorted set of 1000 (the Redis
design's fans page), p50/p99.
"""

import argparse
import asyncio
import random
import sys
import time
import os

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import relgraph  # noqa: E402

T0 = 1700000000000


def row(name, ops, seconds, note=""):
    print(f"{name:<22} {ops / seconds:>12,.0f} ops/s   {ops:>9} ops in {seconds:6.2f} s  {note}")


def latency_row(name, samples):
    samples.sort()
    p50 = samples[len(samples) // 2] * 1e6
    p99 = samples[int(len(samples) * 0.99)] * 1e6
    print(f"{name:<22} p50 {p50:8.1f} us   p99 {p99:8.1f} us   ({len(samples)} calls, one at a time)")


def bench_relgraph(host, port, ops, depth, users, latency_ops, seed):
    rng = random.Random(seed)
    c = relgraph.Client(host, port, pool_size=1)
    pairs = set()
    while len(pairs) < ops:
        a, b = rng.randint(1, users), rng.randint(1, users)
        if a != b:
            pairs.add((a, b))
    pairs = list(pairs)

    start = time.perf_counter()
    for i in range(0, ops, depth):
        p = c.pipeline()
        for a, b in pairs[i:i + depth]:
            p.follow(a, b, T0 + rng.randrange(10**6))
        p.execute()
    row("follow_pipelined", ops, time.perf_counter() - start, f"depth {depth}")

    queries = [pairs[rng.randrange(ops)] if rng.random() < 0.5 else
               (rng.randint(1, users), rng.randint(1, users)) for _ in range(ops)]
    start = time.perf_counter()
    for i in range(0, ops, depth):
        p = c.pipeline()
        for a, b in queries[i:i + depth]:
            p.relation(a, b)
        p.execute(raise_on_error=False)
    row("relation_pipelined", ops, time.perf_counter() - start, f"depth {depth}")

    samples = []
    for _ in range(latency_ops):
        u, v = rng.randint(1, users), rng.randint(1, users)
        t = time.perf_counter()
        c.fans(u, limit=20, viewer=v)
        samples.append(time.perf_counter() - t)
    latency_row("fans_page", samples)

    async def concurrent():
        ac = relgraph.AsyncClient(host, port, pool_size=1)
        n = ops // 4
        base = users * 10

        async def worker(k):
            for i in range(k, n, 64):
                await ac.follow(base + i, base + i + 1, T0)
        start = time.perf_counter()
        await asyncio.gather(*(worker(k) for k in range(64)))
        row("follow_asyncio", n, time.perf_counter() - start, "64 tasks, one connection")
        await ac.close()
    asyncio.run(concurrent())
    c.close()


def bench_redis(host, port, ops, depth, latency_ops, seed):
    import redis  # Debian's python3-redis
    rng = random.Random(seed)
    r = redis.Redis(host=host, port=port)
    r.flushall()
    start = time.perf_counter()
    for i in range(0, ops, depth):
        p = r.pipeline(transaction=False)
        for k in range(i, min(i + depth, ops)):
            p.set(f"k:{k}", k)
        p.execute()
    row("redis-py set_pipelined", ops, time.perf_counter() - start, f"depth {depth}")
    start = time.perf_counter()
    for i in range(0, ops, depth):
        p = r.pipeline(transaction=False)
        for k in range(i, min(i + depth, ops)):
            p.sadd(f"s:{k % 1000}", k)
        p.execute()
    row("redis-py sadd_pipelined", ops, time.perf_counter() - start, f"depth {depth}")
    for z in range(100):
        r.zadd(f"fans:{z}", {str(m): T0 + m for m in range(1000)})
    samples = []
    for _ in range(latency_ops):
        z = rng.randrange(100)
        t = time.perf_counter()
        r.zrevrange(f"fans:{z}", 0, 19, withscores=True)
        samples.append(time.perf_counter() - t)
    latency_row("redis-py zrevrange_page", samples)
    r.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--server", default="127.0.0.1:7707", help="relgraphd (start it with --rate-limit=off)")
    ap.add_argument("--redis", help="a redis-server to measure redis-py against, HOST:PORT")
    ap.add_argument("--ops", type=int, default=200000)
    ap.add_argument("--pipeline", type=int, default=64)
    ap.add_argument("--users", type=int, default=20000)
    ap.add_argument("--latency-ops", type=int, default=5000)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    host, port = relgraph.parse_host_port(a.server)
    print(f"python {sys.version.split()[0]}, relgraph client {relgraph.__version__}, {a.server}")
    bench_relgraph(host, port, a.ops, a.pipeline, a.users, a.latency_ops, a.seed)
    if a.redis:
        rh, rp = relgraph.parse_host_port(a.redis)
        bench_redis(rh, rp, a.ops, a.pipeline, a.latency_ops, a.seed)


if __name__ == "__main__":
    main()
