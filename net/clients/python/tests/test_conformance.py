"""docs/protocol.md's hex examples, read from the doc at test time: every request the typed
calls encode must equal the doc's bytes, and every reply must decode to the values the row
describes."""

import re

import pytest

import relgraph
from relgraph import protocol as P
from relgraph.commands import Commands
from relgraph.types import (BlockResult, Counts, Cursor, Event, EventsFrame, FeedPage,
                            FollowResult, Hello, KnownFollowers, Page, PageEntry, Post,
                            PublishResult, Relation as R, SetPrivateResult, SubscribeResult)

T0 = 1700000000000
HEX = re.compile(r"`((?:[0-9a-f]{2} )*[0-9a-f]{2})`")


class Recorder(Commands):
    """Captures what a typed call would send: (opcode, body, decoder)."""

    def _call(self, opcode, body, decode):
        return opcode, body, decode


def section(doc, title):
    start = doc.index(f"\n## {title}\n")
    end = doc.find("\n## ", start + 1)
    return doc[start:end if end > 0 else len(doc)]


def table_rows(text):
    """(label, [hex bytes ...]) of each table row holding hex."""
    rows = []
    for line in text.splitlines():
        if not line.startswith("| ") or "`" not in line:
            continue
        label = line.split("|")[1].strip()
        rows.append((label, [bytes.fromhex(h) for h in HEX.findall(line)]))
    return rows


def split_frame(frame):
    d = P.FrameDecoder()
    d.feed(frame)
    frames = d.frames()
    assert len(frames) == 1, "one whole frame, nothing left over"
    return frames[0]


def E(user, ts, rel=R.NONE, mutual=False):
    return PageEntry(user, ts, rel, mutual)


c = Recorder()
ERR = object()  # marks a row whose reply is an error: (ERR, class, message)

# One entry per row of the Examples table, in order: the label's start, the typed call, and
# what its reply decodes to.
EXAMPLES = [
    ("HELLO", (P.HELLO, P.enc_hello(2, "secret"), P.dec_hello),
     Hello(2, 1048576, "relgraphd", "0.1.0")),
    ("PING", c.ping(), None),
    ("FOLLOW 1 → 2 at T0", c.follow(1, 2, T0), FollowResult(True, R.FOLLOWING, T0)),
    ("FOLLOW 2 → 1", c.follow(2, 1, T0 + 1000), FollowResult(True, R.MUTUAL, T0 + 1000)),
    ("FOLLOW 1 → 3", c.follow(1, 3, T0 + 2000), FollowResult(True, R.FOLLOWING, T0 + 2000)),
    ("FOLLOW 3 → 2", c.follow(3, 2, T0 + 3000), FollowResult(True, R.FOLLOWING, T0 + 3000)),
    ("FOLLOW 1 → 2 again", c.follow(1, 2, T0 + 9000), FollowResult(False, R.MUTUAL, T0)),
    ("RELATION 1, 2", c.relation(1, 2), R.MUTUAL),
    ("RELATIONS 1 against [2, 3, 4]", c.relations(1, [2, 3, 4]), [R.MUTUAL, R.FOLLOWING, R.NONE]),
    ("FOLLOWING of 1, limit 20, viewer 2", c.following(1, limit=20, viewer=2),
     Page([E(3, T0 + 2000, R.FOLLOWED_BY), E(2, T0, R.NONE, True)], None)),
    ("FOLLOWING of 1, limit 1:", c.following(1, limit=1),
     Page([E(3, T0 + 2000)], Cursor(T0 + 2000, 3))),
    ("FOLLOWING of 1 after", c.following(1, limit=1, after=Cursor(T0 + 2000, 3)),
     Page([E(2, T0, R.NONE, True)], None)),
    ("COUNTS of 1", c.counts(1), Counts(2, 1, 1)),
    ("KNOWN_FOLLOWERS", c.known_followers(1, 2, 3), KnownFollowers(1, [3])),
    ("UNFOLLOW 1 → 3", c.unfollow(1, 3), True),
    ("PUBLISH", c.publish(2, 500, 0, T0 + 5000), PublishResult(T0 + 5000, True, 0)),
    ("TIMELINE", c.timeline(1, limit=10), FeedPage([Post(500, 2, T0 + 5000, 0)], None)),
    ("MUTE 1, 2", c.mute(1, 2), True),
    ("DELETE_POST", c.delete_post(2, 500), None),
    ("FOLLOW 1 → 1", c.follow(1, 1), (ERR, relgraph.SelfFollow, "user 1 cannot follow itself")),
    ("SNAPSHOT", c.snapshot(), "varies"),
    ("REMOVE_USER 2", c.remove_user(2), 3),
    ("SET_PRIVATE 3 on", c.set_private(3, True), SetPrivateResult(True, 0, T0 + 10000)),
    ("IS_PRIVATE 3", c.is_private(3), True),
    ("FOLLOW 1 → 3 at T0 + 6000", c.follow(1, 3, T0 + 6000),
     FollowResult(True, R.REQUESTED, T0 + 6000)),
    ("FOLLOW 4 → 3", c.follow(4, 3, T0 + 7000), FollowResult(True, R.REQUESTED, T0 + 7000)),
    ("REQUESTS of 3", c.requests(3, limit=10, viewer=1),
     Page([E(4, T0 + 7000), E(1, T0 + 6000)], None, 2)),
    ("WITHDRAW 4 → 3", c.withdraw(4, 3), True),
    ("APPROVE", c.approve(3, 1), FollowResult(True, R.FOLLOWING, T0 + 10000)),
    ("BLOCK 3 blocks 1", c.block(3, 1), BlockResult(True, T0 + 10000, 2)),
    ("FOLLOW 1 → 3: error blocked", c.follow(1, 3),
     (ERR, relgraph.Blocked, "user 1 may not follow user 3: a block stands between them")),
    ("RELATIONS 1 against [3]", c.relations(1, [3]), [R.BLOCKED_BY]),
    ("BLOCKS of 3", c.blocks(3, limit=10), Page([E(1, T0 + 10000)], None, 1)),
    ("UNBLOCK 3, 1", c.unblock(3, 1), True),
    ("REJECT", c.reject(3, 4), False),
    ("SET_PRIVATE 3 off:", c.set_private(3, False), SetPrivateResult(True, 0, T0 + 10000)),
    ("SET_PRIVATE 3 off again", c.set_private(3, False), SetPrivateResult(False, 0, 0)),
]


def check_row(request_id, call, request, reply, expected):
    opcode, body, decode = call
    assert P.encode_frame(request_id, opcode, body) == request
    if expected == "varies":  # only the header is given: the body's length and the echo
        length, rid, op, status = P.HEADER.unpack_from(reply)
        assert (rid, op, status, length) == (request_id, opcode, 0, 6 + 32)
        return
    rid, op, status, rbody = split_frame(reply)
    assert (rid, op) == (request_id, opcode), "the reply echoes the request's id and opcode"
    if isinstance(expected, tuple) and expected[0] is ERR:
        assert status == expected[1].code
        err = P.error_of(status, rbody)
        assert type(err) is expected[1]
        assert err.message == expected[2] and err.detail == 0
        return
    assert status == 0
    got = decode(rbody)
    assert got == expected
    if isinstance(expected, list) and expected and isinstance(expected[0], R):
        assert all(isinstance(g, R) for g in got)


def test_the_examples_table_has_the_rows_this_test_knows(protocol_doc):
    rows = table_rows(section(protocol_doc, "Examples"))
    labels = [label for label, _ in rows]
    assert len(rows) == len(EXAMPLES) + 1, labels  # + the NOTICE table's row
    for (label, _), (start, _, _) in zip(rows, EXAMPLES):
        assert label.startswith(start), (label, start)


@pytest.mark.parametrize("index", range(len(EXAMPLES)), ids=[e[0] for e in EXAMPLES])
def test_example_row(protocol_doc, index):
    label, frames = table_rows(section(protocol_doc, "Examples"))[index]
    start, call, expected = EXAMPLES[index]
    assert len(frames) == 2, label
    check_row(index + 1, call, frames[0], frames[1], expected)


def test_notice_frame_decodes_to_its_error(protocol_doc):
    label, frames = table_rows(section(protocol_doc, "Examples"))[-1]
    assert label.startswith("NOTICE")
    rid, op, status, body = split_frame(frames[0])
    assert (rid, op) == (0, P.NOTICE)
    err = P.error_of(status, body)
    assert isinstance(err, relgraph.ResourceExhausted)
    assert err.message == "idle for more than 300000 ms"


def test_version_1_handshake(protocol_doc):
    m = re.search(r"version-1 exchange with token \"secret\" is\s+"
                  r"`([0-9a-f ]+)` →\s+`([0-9a-f ]+)`", protocol_doc)
    assert m, "docs/protocol.md states the version-1 HELLO exchange"
    request, reply = bytes.fromhex(m.group(1)), bytes.fromhex(m.group(2))
    check_row(1, (P.HELLO, P.enc_hello(1, "secret"), P.dec_hello), request, reply,
              Hello(1, 1048576, "relgraphd", ""))


def test_stream_example(protocol_doc):
    rows = table_rows(section(protocol_doc, "Stream example"))
    assert [len(f) for _, f in rows] == [1, 1, 1, 1, 1]
    (_, [sub]), (_, [sub_reply]), (_, [events]), (_, [again]), (_, [refused]) = rows
    assert P.encode_frame(2, P.SUBSCRIBE, P.enc_subscribe(0, 1, 0, "")) == sub
    rid, op, status, body = split_frame(sub_reply)
    assert (rid, op, status) == (2, P.SUBSCRIBE, 0)
    assert P.dec_subscribe(body) == SubscribeResult(1, 3)
    rid, op, status, body = split_frame(events)
    assert (rid, op, status) == (2, P.EVENTS, 0)
    assert P.dec_events(body) == EventsFrame(4, [
        Event(1, 1, T0, 1, 2, False, 0, 0),
        Event(2, 1, T0 + 1000, 2, 1, True, 0, 0),
        Event(3, 4, T0 + 5000, 2, 500, False, 3, 0)])
    assert P.encode_frame(3, P.SUBSCRIBE, P.enc_subscribe(1, 0, 0, "")) == again
    rid, op, status, body = split_frame(refused)
    err = P.error_of(status, body)
    assert (rid, op) == (3, P.SUBSCRIBE) and isinstance(err, relgraph.InvalidArgument)
    assert err.message.startswith("this connection already carries the pushed frames")


def test_every_command_of_the_doc_is_in_the_command_table(protocol_doc):
    listed = {int(m.group(1), 16): m.group(2) for m in
              re.finditer(r"^\| 0x([0-9a-f]{2}) \| ([A-Z_]+) \|", protocol_doc, re.M)}
    assert len(listed) >= 40
    for opcode, name in listed.items():
        assert P.COMMANDS[opcode].name == name and P.COMMANDS[opcode].request
    # docs/protocol.md, "Retrying": every request may be sent again except these.
    assert {o for o, c in P.COMMANDS.items() if c.request and not c.retry_safe} == {
        P.HELLO, P.PROMOTE, P.SUBSCRIBE, P.REPLICATE, P.FETCH_SNAPSHOT}


def test_every_request_of_the_doc_has_a_typed_call(protocol_doc):
    streams = {P.HELLO: "Connection", P.SUBSCRIBE: "subscribe", P.REPLICATE: "replicate",
               P.FETCH_SNAPSHOT: "fetch_snapshot"}
    for opcode, row in P.COMMANDS.items():
        if not row.request:
            continue
        name = streams.get(opcode, row.name.lower())
        assert hasattr(relgraph.Client, name) or name == "Connection", row.name
        assert hasattr(relgraph.AsyncClient, name) or opcode in (P.HELLO, P.REPLICATE,
                                                                  P.FETCH_SNAPSHOT), row.name


def test_decoder_takes_frames_one_byte_at_a_time(protocol_doc):
    frames = [f for _, fs in table_rows(section(protocol_doc, "Examples"))[:-1] for f in fs[1:]
              if len(f) > 10 and f[:4] != b"\x26\x00\x00\x00"]
    d = P.FrameDecoder()
    got = []
    for b in b"".join(frames):
        d.feed(bytes([b]))
        got.extend(d.frames())
    assert [P.encode_frame(rid, op, body)[:8] + bytes([op, st]) + body for rid, op, st, body in got] \
        == frames


def test_malformed_replies_are_protocol_errors():
    with pytest.raises(relgraph.ProtocolError):
        P.dec_follow(b"\x02\x01" + b"\x00" * 8)  # a bool of 2
    with pytest.raises(relgraph.ProtocolError):
        P.dec_page(b"\x01\x00" + b"\x00" * 5)  # ends early
    with pytest.raises(relgraph.ProtocolError):
        P.dec_bool(b"\x01\x00")  # trailing byte
    d = P.FrameDecoder()
    d.feed(b"\x05\x00\x00\x00" + b"\x00" * 6)
    with pytest.raises(relgraph.ProtocolError):
        d.frames()
