"""The blocking client against a real relgraphd: typed errors, pipelining from many threads
on one connection, the pool, page iterators, reconnecting after a restart, timeouts,
following read_only to the primary, the auth token."""

import random
import socket
import threading
import time

import pytest

import relgraph
from relgraph import Relation as R
from servers import Server

T0 = 1700000000000


def test_errors_are_typed_and_leave_the_connection_usable(server):
    c = server.client(pool_size=1)
    with pytest.raises(relgraph.SelfFollow) as e:
        c.follow(101, 101)
    assert e.value.code == 3 and "101" in e.value.message
    with pytest.raises(relgraph.InvalidUserId):
        c.follow(0, 101)
    with pytest.raises(relgraph.InvalidArgument):
        c.following(101, limit=0)
    with pytest.raises(relgraph.InvalidArgument):
        c.follow(101, 102, ts=1 << 42)  # past the protocol's time range
    with pytest.raises(relgraph.NotFound):
        c.delete_post(101, 999999)
    with pytest.raises(relgraph.AlreadyExists):
        c.publish(101, 777001, 0, T0)
        c.publish(101, 777001, 0, T0)
    # An unknown user is no error: an empty page, zeros.
    assert c.following(999999999) == relgraph.Page([], None)
    assert c.counts(999999999) == relgraph.Counts(0, 0, 0)
    assert c.relation(101, 999999999) == R.NONE
    assert len(c.connection().hello.server) > 0  # still the one connection, still usable
    c.close()


def test_u64_ids_round_trip(server):
    c = server.client()
    big = (1 << 64) - 1
    assert c.follow(big, big - 1, T0).created
    page = c.fans(big - 1)
    assert page.entries[0].user == big and page.entries[0].ts == T0
    assert c.relation(big - 1, big) == R.FOLLOWED_BY
    c.close()


def test_pipelining_from_many_threads_on_one_connection(server):
    """16 threads share one connection; each reply must reach the thread that asked."""
    c = server.client(pool_size=1)
    base = 200000
    with c.pipeline() as p:
        for u in range(1, 17):
            for v in range(1, u + 1):  # user base+u follows u users: counts tell them apart
                p.follow(base + u, base + 1000 + v, T0 + v)
        p.execute()
    errors = []

    def worker(u):
        try:
            for _ in range(60):
                assert c.counts(base + u).following == u
                assert c.relation(base + u, base + 1000 + u) == R.FOLLOWING
                page = c.following(base + u, limit=1)
                assert page.entries[0].user == base + 1000 + u
        except BaseException as e:  # noqa: B902 - reported below
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(u,)) for u in range(1, 17)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]
    assert c.info()["connections"] >= 1
    conns = [x for x in c._pool._conns if x is not None]
    assert len(conns) == 1  # a pool of one: everything went through it
    c.close()


def test_pipeline_results_in_order_with_errors_in_place(server):
    c = server.client()
    with c.pipeline() as p:
        p.follow(301, 302, T0)
        p.follow(301, 301)
        p.relation(301, 302)
        out = p.execute(raise_on_error=False)
    assert out[0].created and isinstance(out[1], relgraph.SelfFollow) and out[2] == R.FOLLOWING
    with c.pipeline() as p:
        p.follow(301, 301)
        p.ping()
        with pytest.raises(relgraph.SelfFollow):
            p.execute()
    c.close()


def test_pool_shared_by_threads_opens_at_most_its_size(server):
    c = server.client(pool_size=3)
    before = c.info()["connections_total"]
    errors = []

    def worker(i):
        try:
            for j in range(50):
                c.follow(400000 + i, 401000 + j, T0 + j)
        except BaseException as e:  # noqa: B902
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]
    assert c.info()["connections_total"] - before <= 2  # the first one existed already
    assert all(c.counts(400000 + i).following == 50 for i in range(12))
    c.close()


def test_page_iterators_follow_the_cursor_to_the_end(server):
    c = server.client()
    user = 500000
    rng = random.Random(5)
    times = {500001 + i: T0 + rng.randrange(0, 50) for i in range(237)}  # ties on time too
    with c.pipeline() as p:
        for fan, ts in times.items():
            p.follow(fan, user, ts)
        p.execute()
    got = [e.user for e in c.iter_fans(user, page_size=10)]
    assert got == sorted(times, key=lambda u: (times[u], u), reverse=True)
    # Entries added while iterating (newer than the cursor) do not disturb the walk.
    it = c.iter_fans(user, page_size=10)
    first = [next(it) for _ in range(15)]
    c.follow(600000, user, T0 + 10**6)
    rest = list(it)
    assert [e.user for e in first + rest] == got
    c.close()


def test_reconnects_after_a_server_restart(fresh_server):
    c = fresh_server.client(pool_size=2)
    assert c.follow(1, 2, T0).created
    fresh_server.restart()  # same port, same data directory
    assert c.relation(1, 2) == R.FOLLOWING  # a dropped connection, reopened with backoff
    assert not c.follow(1, 2, T0 + 5).created
    c.close()


def test_connection_refused_is_connection_lost_after_retries():
    port = Server.__module__ and __import__("servers").free_port()
    c = relgraph.Client("127.0.0.1", port, retries=2, backoff=relgraph.Backoff(0.001, 0.002))
    with pytest.raises(relgraph.ConnectionLost) as e:
        c.ping()
    assert isinstance(e.value, ConnectionError) and e.value.code == 8


def test_a_server_that_does_not_answer_times_out():
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(1)
    try:
        c = relgraph.Client("127.0.0.1", silent.getsockname()[1], timeout=0.2,
                            connect_timeout=0.2, retries=0)
        with pytest.raises(relgraph.Timeout) as e:
            c.ping()
        assert isinstance(e.value, TimeoutError) and e.value.code == 15
    finally:
        silent.close()


def test_auth_token():
    s = Server("--auth-token=s3cret")
    try:
        with pytest.raises(relgraph.Unauthenticated):
            relgraph.Client("127.0.0.1", s.port, token="wrong", retries=0).ping()
        c = relgraph.Client.from_url(f"relgraph://s3cret@127.0.0.1:{s.port}")
        c.ping()
        c.close()
    finally:
        s.close()


def test_writes_on_a_replica_follow_read_only_to_the_primary(fresh_server):
    replica = Server(f"--replica-of={fresh_server.address}")
    try:
        direct = replica.client(follow_primary=False, retries=0)
        with pytest.raises(relgraph.ReadOnly) as e:
            direct.follow(1, 2, T0)
        assert e.value.primary == fresh_server.address
        c = replica.client()
        assert c.follow(1, 2, T0).created  # sent again to the primary the message named
        assert c.address == fresh_server.address
        assert fresh_server.client().relation(1, 2) == R.FOLLOWING
        # PROMOTE is not retry-safe: never redirected (here the node is the primary anyway).
        with pytest.raises(relgraph.InvalidArgument):
            c.promote()
        # POSITION: the replica applies what the primary logged; the roles say which is which.
        primary = fresh_server.client().position()
        assert primary.role == 0 and primary.applied_lsn >= 1
        for _ in range(200):
            mirror = direct.position()
            if mirror.applied_lsn >= primary.applied_lsn:
                break
            time.sleep(0.01)
        assert mirror.role == 1 and mirror.applied_lsn >= primary.applied_lsn
        assert mirror.epoch == primary.epoch
        direct.close()
        c.close()
    finally:
        replica.close()
