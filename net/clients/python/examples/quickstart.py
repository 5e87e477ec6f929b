#!/usr/bin/env python3
"""A tour of the Python client: follows, pages, a pipeline, errors, the change stream with a
named cursor, and the same calls from asyncio.

    quickstart.py [HOST:PORT]       (a relgraphd with a data directory; default 127.0.0.1:7707)
"""

import asyncio
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import relgraph  # noqa: E402


def main(address):
    host, port = relgraph.parse_host_port(address)
    client = relgraph.Client(host, port, token=os.environ.get("RELGRAPH_TOKEN", ""))
    print("server:", client.connection().hello)

    # Writes and reads, typed: ids are ints, times ms since the epoch.
    r = client.follow(1, 2)
    print("follow 1 -> 2:", r.created, r.relation.label, r.followed_at)
    client.follow(2, 1)
    print("relation(1, 2):", client.relation(1, 2).label)

    # A pipeline: one write, many replies.
    with client.pipeline() as p:
        for fan in range(10, 60):
            p.follow(fan, 2)
        p.execute()
    print("counts(2):", client.counts(2))

    # Every fan of 2, newest first, following the search-after cursor page by page.
    fans = [e.user for e in client.iter_fans(2, page_size=20, viewer=1)]
    print(f"{len(fans)} fans of 2, newest first: {fans[:5]} ...")

    # Errors are typed and carry the protocol's code.
    try:
        client.follow(1, 1)
    except relgraph.SelfFollow as e:
        print(f"follow 1 -> 1: {e.name} ({e.code}): {e.message}")

    # The change stream, resumed from a named cursor: run this twice and the second run
    # starts after what the first one acknowledged.
    with client.subscribe(1, name="quickstart") as stream:
        n = 0
        while n < 5 and (event := stream.get(timeout=0.5)) is not None:
            print(f"event lsn={event.lsn} kind={relgraph.EventKind(event.kind).name} "
                  f"{event.a} -> {event.b}")
            n += 1
        if n:
            stream.ack()

    # The same calls from asyncio: concurrent calls share one connection.
    async def with_asyncio():
        async with relgraph.AsyncClient(host, port) as ac:
            rels = await asyncio.gather(*(ac.relation(fan, 2) for fan in range(10, 15)))
            print("asyncio relations:", [x.label for x in rels])
            async for entry in ac.iter_following(1):
                print("1 follows", entry.user)
    asyncio.run(with_asyncio())
    client.close()


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "127.0.0.1:7707")
