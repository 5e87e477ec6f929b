"""Rules a real server cannot be made to show on demand, against a scripted one: which
requests follow a read_only reply to the primary, a NOTICE before a close."""

import socket
import threading

import pytest

import relgraph
from relgraph import protocol as P


class Scripted:
    """A loopback server answering HELLO, then every request with answer(opcode) ->
    (status, body), or closing after a NOTICE when answer returns None."""

    def __init__(self, answer):
        self.answer = answer
        self.seen = []
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._session, args=(conn,), daemon=True).start()

    def _session(self, conn):
        d = P.FrameDecoder()
        with conn:
            while True:
                data = conn.recv(65536)
                if not data:
                    return
                d.feed(data)
                for rid, op, _, body in d.frames():
                    if op == P.HELLO:
                        body = bytes.fromhex("0200 00001000 0900") + b"relgraphd\x05\x000.1.0"
                        conn.sendall(P.encode_frame(rid, op, body))
                        continue
                    self.seen.append(op)
                    got = self.answer(op)
                    if got is None:
                        body = error_body("going away")
                        conn.sendall(P.HEADER.pack(6 + len(body), 0, P.NOTICE, 12) + body)
                        return
                    status, rbody = got
                    conn.sendall(P.HEADER.pack(6 + len(rbody), rid, op, status) + rbody)

    def close(self):
        self.sock.close()


def error_body(message):
    raw = message.encode()
    return b"\x00" * 8 + len(raw).to_bytes(2, "little") + raw


def test_read_only_redirects_only_retry_safe_writes():
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    nowhere = f"127.0.0.1:{closed.getsockname()[1]}"
    closed.close()  # the "primary" refuses connections
    s = Scripted(lambda op: (19, error_body(nowhere)))
    try:
        c = relgraph.Client("127.0.0.1", s.port, retries=1, timeout=5,
                            backoff=relgraph.Backoff(0.001, 0.002))
        with pytest.raises(relgraph.ReadOnly) as e:
            c.promote()  # not retry-safe: the read_only reply is the answer
        assert e.value.primary == nowhere and c.address == f"127.0.0.1:{s.port}"
        with pytest.raises(relgraph.ConnectionLost):
            c.follow(1, 2)  # retry-safe: sent on to the primary named, which is not there
        assert c.address == nowhere
        assert s.seen == [P.PROMOTE, P.FOLLOW]
    finally:
        s.close()


def test_a_notice_fails_the_waiting_call_and_the_next_call_reconnects():
    calls = []

    def answer(op):
        calls.append(op)
        return None if len(calls) == 1 else (0, b"")

    s = Scripted(answer)
    try:
        c = relgraph.Client("127.0.0.1", s.port, pool_size=1, timeout=5)
        with pytest.raises(relgraph.ConnectionLost) as e:
            c.promote()  # PROMOTE is not retried after an unknown outcome
        assert "going away" in str(e.value)
        c.ping()  # retry-safe, and on a new connection
        assert calls == [P.PROMOTE, P.PING]
    finally:
        s.close()
