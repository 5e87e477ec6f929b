"""The asyncio client against a real relgraphd: many tasks pipelined on one connection,
typed errors, pipelines, page iterators, reconnecting, read_only, the change stream."""

import asyncio

import pytest

import relgraph
from relgraph import Relation as R
from servers import Server

T0 = 1700000000000


def run(coro):
    return asyncio.run(coro)


def test_many_tasks_pipelined_on_one_connection(server):
    async def main():
        async with relgraph.AsyncClient("127.0.0.1", server.port, pool_size=1) as c:
            base = 800000
            created = await asyncio.gather(*(c.follow(base + i, base + 5000, T0 + i)
                                              for i in range(500)))
            assert all(r.created for r in created)
            counts, rels = await asyncio.gather(
                c.counts(base + 5000),
                asyncio.gather(*(c.relation(base + 5000, base + i) for i in range(500))))
            assert counts.fans == 500 and set(rels) == {R.FOLLOWED_BY}
            fans = [e.user async for e in c.iter_fans(base + 5000, page_size=33)]
            assert fans == [base + i for i in reversed(range(500))]
            assert len([x for x in c._conns if x is not None]) == 1
    run(main())


def test_errors_and_pipeline(server):
    async def main():
        c = relgraph.AsyncClient("127.0.0.1", server.port)
        with pytest.raises(relgraph.SelfFollow):
            await c.follow(810000, 810000)
        with pytest.raises(relgraph.InvalidArgument):
            await c.fans(810000, limit=1001)
        p = c.pipeline()
        p.follow(810001, 810002, T0)
        p.follow(810001, 810001)
        p.relation(810001, 810002)
        out = await p.execute(raise_on_error=False)
        assert out[0].created and isinstance(out[1], relgraph.SelfFollow) and out[2] == R.FOLLOWING
        await c.close()
    run(main())


def test_reconnect_and_read_only(fresh_server):
    replica = Server(f"--replica-of={fresh_server.address}")

    async def main():
        c = relgraph.AsyncClient("127.0.0.1", fresh_server.port)
        assert (await c.follow(1, 2, T0)).created
        await asyncio.to_thread(fresh_server.restart)
        assert await c.relation(1, 2) == R.FOLLOWING
        r = relgraph.AsyncClient("127.0.0.1", replica.port)
        assert (await r.follow(3, 4, T0)).created  # redirected to the primary
        assert r.address == fresh_server.address
        await c.close()
        await r.close()
    try:
        run(main())
    finally:
        replica.close()


def test_change_stream_resumes_after_a_drop(fresh_server):
    async def main():
        c = relgraph.AsyncClient("127.0.0.1", fresh_server.port)
        await asyncio.gather(*(c.follow(5, 100 + i, T0 + i) for i in range(10)))
        sub = c.subscribe(1, name="aio")
        got = [await sub.get(10) for _ in range(10)]
        await sub.ack()
        sub._conn._writer.transport.abort()  # the connection drops
        await asyncio.gather(*(c.follow(6, 100 + i, T0 + i) for i in range(10)))
        got += [await sub.get(10) for _ in range(10)]
        # LSN 11 is the ACK's own record, which the stream skips.
        assert [e.lsn for e in got] == list(range(1, 11)) + list(range(12, 22))
        assert [(e.a, e.b) for e in got] == [(u, 100 + i) for u in (5, 6) for i in range(10)]
        assert await sub.get(0.2) is None
        sub.close()
        assert [(k.name, k.acked_lsn) for k in await c.cursors()] == [("aio", 10)]
        again = c.subscribe(name="aio")
        assert (await again.get(10)).lsn == 12  # resumes at 11, the ACK's, skipped
        again.close()
        await c.close()
    run(main())


def test_change_stream_from_now_resumes_where_it_was(fresh_server):
    async def main():
        c = relgraph.AsyncClient("127.0.0.1", fresh_server.port)
        await c.follow(1, 2, T0)  # before the subscription: never delivered
        sub = c.subscribe(from_now=True)
        assert await sub.get(0.05) is None
        await c.follow(3, 4, T0)
        first = await sub.get(10)
        sub._conn._writer.transport.abort()
        for i in range(5):
            await c.follow(5, 10 + i, T0 + i)  # written while the subscription is away
        got = [first] + [await sub.get(10) for _ in range(5)]
        assert [(e.a, e.b) for e in got] == [(3, 4)] + [(5, 10 + i) for i in range(5)]
        assert sub.reconnects == 1 and await sub.get(0.2) is None
        sub.close()
        await c.close()
    run(main())
