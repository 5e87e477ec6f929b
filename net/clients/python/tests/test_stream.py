"""The change stream: events in order, each once, across a dropped connection and a server
restart; named cursors; snapshot transfer and replication's stream."""

import os
import threading

import pytest

import relgraph
from relgraph import EventKind

T0 = 1700000000000


def drain(sub, n, timeout=20.0):
    """The next n events (fails if they do not come)."""
    out = []
    while len(out) < n:
        e = sub.get(timeout)
        assert e is not None, f"only {len(out)} of {n} events came"
        out.append(e)
    return out


def test_events_in_order_from_lsn_1(fresh_server):
    c = fresh_server.client()
    c.follow(1, 2, T0)
    c.follow(2, 1, T0 + 1000)
    c.publish(2, 500, 3, T0 + 5000)
    with c.subscribe(1) as sub:
        e1, e2, e3 = drain(sub, 3)
        assert sub.subscribed == relgraph.SubscribeResult(1, 3)
    assert (e1.lsn, e1.kind, e1.a, e1.b, e1.ts, e1.friends) == (1, EventKind.FOLLOW, 1, 2, T0, False)
    assert (e2.lsn, e2.friends) == (2, True)
    assert (e3.kind, e3.a, e3.b, e3.detail, e3.ts) == (EventKind.PUBLISH, 2, 500, 3, T0 + 5000)
    c.close()


def test_kinds_filter_and_from_now(fresh_server):
    c = fresh_server.client()
    c.follow(1, 2, T0)
    sub = c.subscribe(from_now=True, kinds=1 << EventKind.PUBLISH)
    assert sub.get(0.05) is None  # opens the stream: nothing new yet
    c.follow(3, 4, T0)
    c.publish(3, 900, 1, T0)
    (e,) = drain(sub, 1)
    assert (e.kind, e.a, e.b) == (EventKind.PUBLISH, 3, 900)
    sub.close()
    c.close()


def test_resume_after_a_dropped_connection_loses_and_repeats_nothing(fresh_server):
    c = fresh_server.client()
    sub = c.subscribe(1)
    seen = []
    for round_ in range(4):
        with c.pipeline() as p:
            for i in range(25):
                p.follow(1000 + round_, 2000 + i, T0 + i)
            p.execute()
        seen += drain(sub, 15 if round_ == 0 else 25)
        sub._conn.sock.shutdown(2)  # the connection drops under the subscription
        if round_ == 0:
            seen += drain(sub, 10)  # events read before the drop are still handed out
    with c.pipeline() as p:
        for i in range(25):
            p.follow(1004, 2000 + i, T0 + i)
        p.execute()
    seen += drain(sub, 25)
    assert sub.get(0.2) is None
    assert sub.reconnects >= 4
    assert [e.lsn for e in seen] == list(range(1, 126))
    assert [(e.a, e.b) for e in seen] == [(1000 + r, 2000 + i) for r in range(5) for i in range(25)]
    sub.close()
    c.close()


def test_resume_across_a_server_restart(fresh_server):
    c = fresh_server.client()
    for i in range(30):
        c.follow(7, 100 + i, T0 + i)
    sub = c.subscribe(1)
    first = drain(sub, 20)
    fresh_server.restart()
    for i in range(30, 40):
        c.follow(7, 100 + i, T0 + i)
    rest = drain(sub, 20)
    assert [e.lsn for e in first + rest] == list(range(1, 41))
    assert [e.b for e in first + rest] == [100 + i for i in range(40)]
    assert sub.get(0.2) is None  # and nothing more, no repeat
    sub.close()
    c.close()


def test_named_cursor_resumes_after_its_ack(fresh_server):
    c = fresh_server.client()
    for i in range(10):
        c.follow(9, 200 + i, T0 + i)
    sub = c.subscribe(1, name="py-consumer")
    drain(sub, 6)
    sub.ack()  # handled up to LSN 6
    sub.close()
    assert [(k.name, k.acked_lsn) for k in c.cursors()] == [("py-consumer", 6)]
    again = c.subscribe(name="py-consumer")  # exists now: resumes at 7
    rest = drain(again, 4)
    assert [e.lsn for e in rest] == [7, 8, 9, 10]
    again.close()
    c.delete_cursor("py-consumer")
    with pytest.raises(relgraph.NotFound):
        c.delete_cursor("py-consumer")
    with pytest.raises(relgraph.InvalidArgument):
        c.ack("bad name!", 1)
    c.close()


def test_close_from_another_thread_ends_iteration(fresh_server):
    c = fresh_server.client()
    sub = c.subscribe(from_now=True)
    assert sub.get(0.05) is None  # subscribed: what follows is in the stream
    got = []
    t = threading.Thread(target=lambda: got.extend(sub))
    t.start()
    c.follow(1, 2, T0)
    for _ in range(2000):
        if got:
            break
        t.join(0.01)
    sub.close()
    t.join(10)
    assert not t.is_alive() and got[0].b == 2
    c.close()


def test_fetch_snapshot_and_replicate(fresh_server, tmp_path):
    c = fresh_server.client()
    c.follow(1, 2, T0)
    snap = c.snapshot()
    path = str(tmp_path / "snap.rgs")
    got = c.fetch_snapshot(path)
    assert got.lsn == snap.lsn and os.path.getsize(path) == got.file_bytes == snap.file_bytes
    reply, frames = c.replicate(1, name="py-test")
    assert reply.newest_lsn >= 1
    frame = next(frames)
    assert frame.first_lsn == 1 and frame.records
    frames.close()
    c.replica_ack("py-test", 1, 1)
    c.close()


def test_a_stream_started_from_now_resumes_where_it_was(fresh_server):
    """After a drop, the stream goes on from its position, not from "now" again: what was
    written while it was away still arrives."""
    c = fresh_server.client()
    c.follow(1, 2, T0)  # before the subscription: never delivered
    sub = c.subscribe(from_now=True)
    assert sub.get(0.05) is None
    c.follow(3, 4, T0)
    (e,) = drain(sub, 1)
    sub._conn.sock.shutdown(2)
    for i in range(5):
        c.follow(5, 10 + i, T0 + i)  # written while the subscription is away
    got = drain(sub, 5)
    assert [(x.a, x.b) for x in [e] + got] == [(3, 4)] + [(5, 10 + i) for i in range(5)]
    assert sub.reconnects == 1 and sub.get(0.2) is None
    sub.close()
    c.close()
