"""Differential run: random commands (seeded; the seed is printed, RELGRAPH_DIFF_SEED replays
one) through this client and through `relgraph-cli --json` (the C++ client) against the same
relgraphd, comparing the typed answers field by field.

Reads run through both clients on the same state (users 1..N) and must answer alike.
A write cannot run twice, so this client runs it on users 1..N and relgraph-cli runs the same
write on the mirror users OFFSET+1..OFFSET+N (posts mirrored too), whose state evolves alike:
the replies must agree once mirror ids are mapped back, and times that come from the
server's clock (blocks, approvals, privacy changes) are compared as "a time from the clock".
"""

import json
import os
import random
import re
import subprocess
import time

import relgraph
from relgraph import protocol as P
from servers import binary

T0 = 1700000000000
OFFSET = 10**15  # past any id the run picks and any time it sends
USERS = 24
COMMANDS = 800


class Cli:
    """An interactive relgraph-cli --json session; each command's output ends at a ping."""

    def __init__(self, port):
        self.proc = subprocess.Popen(
            [binary("RELGRAPH_CLI", "relgraph-cli"), "-p", str(port), "--json"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def run(self, words):
        self.proc.stdin.write(" ".join(map(str, words)) + "\nping\n")
        self.proc.stdin.flush()
        out = []
        while True:
            line = self.proc.stdout.readline()
            assert line, f"relgraph-cli ended: {self.proc.stderr.read()}"
            if line.strip() == '{"pong":true}':
                break
            out.append(json.loads(line))
        assert len(out) == 1, (words, out)
        return out[0]

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(10)


# ---- this client's answers in relgraph-cli's JSON shape --------------------------------------
def rel(r):
    return relgraph.Relation(r).label


def as_cli_json(name, r, args):
    if isinstance(r, relgraph.RelgraphError):
        out = {"error": r.name, "message": r.message}
        if r.detail:
            out["detail"] = r.detail
        return out
    if name in ("follow", "approve"):
        return {"created": r.created, "relation": rel(r.relation), "followed_at": r.followed_at}
    if name == "unfollow":
        return {"removed": r}
    if name == "relation":
        return {"relation": rel(r)}
    if name == "relations":
        return {str(o): rel(x) for o, x in zip(args[1], r)}
    if name == "counts":
        return {"following": r.following, "fans": r.fans, "friends": r.friends}
    if name == "known-followers":
        return {"total": r.total, "users": r.users}
    if name == "remove-user":
        return {"edges_removed": r}
    if name == "publish":
        return {"ts": r.ts, "retained": r.retained, "evicted": r.evicted}
    if name == "delete-post":
        return {"deleted": True}
    if name in ("mute", "unmute", "hide", "unhide", "unblock", "reject", "withdraw"):
        return {"changed": r}
    if name in ("mutes", "hides"):
        return {"users": r}
    if name == "block":
        return {"created": r.created, "ts": r.ts, "unfollowed": r.unfollowed,
                "lost_follower": r.lost_follower, "dropped_request": r.dropped_request}
    if name == "set-private":
        return {"changed": r.changed, "approved": r.approved, "ts": r.ts}
    if name == "is-private":
        return {"private": r}
    if name in ("following", "fans", "friends", "blocks", "requests"):
        out = {"entries": [{"user": e.user, "ts": e.ts, "viewer_relation": rel(e.viewer_relation),
                            "mutual": e.mutual} for e in r.entries],
               "next": f"{r.next.ts}:{r.next.user}" if r.next else None}
        if r.total is not None:
            out["total"] = r.total
        return out
    if name in ("timeline", "user-posts"):
        return {"entries": [{"post": p.post, "author": p.author, "ts": p.ts, "kind": p.kind}
                            for p in r.entries],
                "next": f"{r.next.ts}:{r.next.post}" if r.next else None}
    raise AssertionError(name)


# ---- the random commands --------------------------------------------------------------------
WRITES = ["follow"] * 12 + ["unfollow"] * 3 + ["publish"] * 4 + ["delete-post", "mute", "unmute",
          "hide", "unhide", "block", "unblock", "set-private", "approve", "reject", "withdraw",
          "remove-user"]
READS = ["relation", "relations", "following", "fans", "friends", "blocks", "requests", "counts",
         "known-followers", "timeline", "user-posts", "mutes", "hides", "is-private"]


class Generator:
    def __init__(self, rng):
        self.rng = rng
        self.next_post = 1
        self.live_posts = []  # (author, post): never reuse a deleted id (it may be leaving)
        self.cursors = {}     # a page's last next cursor, to page on with

    def user(self):
        r = self.rng.random()
        return 0 if r < 0.01 else self.rng.randint(1, USERS)

    def ts(self):
        return T0 + self.rng.randrange(0, 20) * 1000  # ties on time happen

    def write(self):
        """(name, python args, cli words for the mirror users)."""
        name = self.rng.choice(WRITES)
        a, b = self.user(), self.user()
        if name == "follow":
            ts = self.ts() if self.rng.random() < 0.97 else (1 << 42)  # out of range
            return name, (a, b, ts), [("U", a), ("U", b), ts]
        if name == "remove-user":
            return name, (a,), [("U", a)]
        if name == "publish":
            if self.live_posts and self.rng.random() < 0.1:
                a, post = self.rng.choice(self.live_posts)  # already_exists
            else:
                post = self.next_post
                self.next_post += 1
                self.live_posts.append((a, post))
            kind = self.rng.choice([0, 1, 2, 5, 63, 64])
            ts = self.ts()
            return name, (a, post, kind, ts), [("U", a), ("P", post), kind, ts]
        if name == "delete-post":
            if self.live_posts and self.rng.random() < 0.8:
                a, post = self.live_posts.pop(self.rng.randrange(len(self.live_posts)))
            else:
                post = 10**6 + self.rng.randrange(100)  # no such post
            return name, (a, post), [("U", a), ("P", post)]
        if name == "set-private":
            on = self.rng.random() < 0.4
            return name, (a, on), [("U", a), "on" if on else "off"]
        return name, (a, b), [("U", a), ("U", b)]

    def read(self):
        name = self.rng.choice(READS)
        a, b = self.user(), self.user()
        if name == "relation":
            return name, [a, b], (a, b)
        if name == "relations":
            others = [self.user() for _ in range(self.rng.randint(1, 6))]
            return name, [a, *others], (a, others)
        if name in ("counts", "mutes", "hides", "is-private"):
            return name, [a], (a,)
        if name == "known-followers":
            limit = self.rng.choice([0, 1, 3, 10, 1001])
            return name, [a, b, limit], (a, b, limit)
        if name in ("timeline", "user-posts"):
            limit = self.rng.choice([1, 2, 5, 20, 101])
            kinds = self.rng.choice([0, 0, 1 << 1, (1 << 0) | (1 << 2)])
            after = self.cursors.get((name, a)) if self.rng.random() < 0.4 else None
            words = [a, f"--limit={limit}"]
            if after:
                words.append(f"--after={after.ts}:{after.post}")
            if kinds:
                words.append("--kinds=" + ",".join(str(k) for k in range(64) if kinds >> k & 1))
            return name, words, dict(user=a, limit=limit, after=after, kinds=kinds)
        limit = self.rng.choice([1, 2, 3, 5, 20, 0, 1001])
        kw = dict(user=a, limit=limit, offset=0, after=None, viewer=None)
        words = [a, f"--limit={limit}"]
        r = self.rng.random()
        if r < 0.3 and (name, a) in self.cursors:
            kw["after"] = self.cursors[(name, a)]
            words.append(f"--after={kw['after'].ts}:{kw['after'].user}")
        elif r < 0.5:
            kw["offset"] = self.rng.randrange(4)
            words.append(f"--offset={kw['offset']}")
        if self.rng.random() < 0.5:
            kw["viewer"] = self.user()
            words.append(f"--viewer={kw['viewer']}")
        return name, words, kw


def call(c, name, args):
    method = getattr(c, name.replace("-", "_"))
    try:
        if isinstance(args, dict):
            return method(**args)
        return method(*args)
    except relgraph.RelgraphError as e:
        return e


def mirror_words(words):
    """The cli's words for the mirror: user ("U", id) and post ("P", id) ids moved by OFFSET
    (0 stays 0: it is invalid on both sides)."""
    return [(w[1] + OFFSET if w[1] else 0) if isinstance(w, tuple) else w for w in words]


def unmirror(value, clock_from):
    """A mirror reply as the original's: ids back, clock times as "clock"."""
    if isinstance(value, dict):
        return {k: (("clock" if isinstance(v, int) and not isinstance(v, bool) and v >= clock_from
                     and k in ("ts", "followed_at") else unmirror(v, clock_from)))
                for k, v in value.items()}
    if isinstance(value, list):
        return [unmirror(v, clock_from) for v in value]
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value > OFFSET:
        return value - OFFSET
    if isinstance(value, str):
        return re.sub(r"\d{16,}", lambda m: str(int(m.group()) - OFFSET)
                      if int(m.group()) > OFFSET else m.group(), value)
    return value


def settle(c):
    """Waits until no fan-out is under way, so a timeline read twice reads the same state."""
    for _ in range(1000):
        if c.info()["fanout_queue"] == 0:
            return
        time.sleep(0.005)


def test_random_commands_answer_as_the_cpp_client(server):
    seed = int(os.environ.get("RELGRAPH_DIFF_SEED", random.randrange(1 << 32)))
    print(f"differential seed {seed} (RELGRAPH_DIFF_SEED={seed} replays it)")
    rng = random.Random(seed)
    gen = Generator(rng)
    c = server.client()
    # The shared server's other tests use other ids; these start empty.
    assert all(c.counts(u) == relgraph.Counts(0, 0, 0) for u in (1, OFFSET + 1))
    cli = Cli(server.port)
    clock_from = int(time.time() * 1000) - 60_000
    compared = {"reads": 0, "writes": 0, "errors": 0}
    try:
        for step in range(COMMANDS):
            if rng.random() < 0.45:
                name, args, words = gen.write()
                mine = call(c, name, args)
                theirs = unmirror(cli.run([name, *mirror_words(words)]), clock_from)
                expect = unmirror(as_cli_json(name, mine, args), clock_from)
                compared["writes"] += 1
            else:
                name, words, args = gen.read()
                if name in ("timeline", "user-posts"):
                    settle(c)
                mine = call(c, name, args)
                theirs = cli.run([name, *words])
                expect = as_cli_json(name, mine, args)
                compared["reads"] += 1
                if not isinstance(mine, relgraph.RelgraphError) and hasattr(mine, "next") \
                        and mine.next is not None:
                    gen.cursors[(name, args["user"])] = mine.next
            compared["errors"] += isinstance(mine, relgraph.RelgraphError)
            assert expect == theirs, f"seed {seed}, step {step}: {name} {args}"
    finally:
        cli.close()
        c.close()
    print(f"compared {compared}")
    assert compared["reads"] > 100 and compared["writes"] > 100 and compared["errors"] > 10
