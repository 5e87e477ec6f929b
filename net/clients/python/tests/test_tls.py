"""TLS against real relgraphd servers started with --tls-cert/--tls-key (and --tls-ca,
--tls-require-client-cert, --clients-file): round trips through Client, its pool, AsyncClient,
the change stream across a restart and ClusterClient; and every refusal docs/security.md
lists, each a TlsError (a ConnectionLost) naming its cause, never retried. The certificates
are made here with the openssl command line: a CA, a rogue CA, a server certificate for
localhost and 127.0.0.1, one for another name only, client certificates whose CN is a client."""

import asyncio
import hashlib
import os
import shutil
import socket
import ssl
import subprocess
import tempfile
import threading
import time

import pytest

import relgraph
from relgraph import TlsOptions
from servers import Server

T0 = 1700000000000
TOKEN = "s3cret-app-token"


def _openssl(*args: str, cwd: str) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


def _ca(d: str, name: str) -> None:
    _openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
             "-days", "2", "-subj", f"/CN=relgraph test {name}", "-keyout", f"{name}.key",
             "-out", f"{name}.crt", cwd=d)


def _cert(d: str, name: str, cn: str, ca: str, ext: str) -> None:
    with open(os.path.join(d, f"{name}.ext"), "w") as f:
        f.write(ext + "\n")
    _openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-subj",
             f"/CN={cn}", "-keyout", f"{name}.key", "-out", f"{name}.csr", cwd=d)
    _openssl("x509", "-req", "-in", f"{name}.csr", "-CA", f"{ca}.crt", "-CAkey", f"{ca}.key",
             "-CAcreateserial", "-days", "2", "-extfile", f"{name}.ext", "-out", f"{name}.crt",
             cwd=d)


class Certs:
    def __init__(self, d: str):
        self.dir = d

    def __getattr__(self, name: str) -> str:  # certs.ca -> DIR/ca.crt, certs.reader_key
        stem, _, kind = name.rpartition("_")
        if kind == "key":
            return os.path.join(self.dir, f"{stem}.key")
        return os.path.join(self.dir, f"{name}.crt")


@pytest.fixture(scope="module")
def certs():
    if shutil.which("openssl") is None:
        pytest.skip("no openssl command line")
    d = tempfile.mkdtemp(prefix="relgraph-py-tls-")
    _ca(d, "ca")
    _ca(d, "rogue")
    both = "extendedKeyUsage=serverAuth,clientAuth"
    _cert(d, "server", "localhost", "ca", f"subjectAltName=DNS:localhost,IP:127.0.0.1\n{both}")
    _cert(d, "elsewhere", "relgraph.test", "ca", f"subjectAltName=DNS:relgraph.test\n{both}")
    _cert(d, "impostor", "localhost", "rogue",
          f"subjectAltName=DNS:localhost,IP:127.0.0.1\n{both}")
    _cert(d, "reader", "reader", "ca", "extendedKeyUsage=clientAuth")
    _cert(d, "stranger", "reader", "rogue", "extendedKeyUsage=clientAuth")
    digest = hashlib.sha256(TOKEN.encode()).hexdigest()
    with open(os.path.join(d, "clients"), "w") as f:
        f.write("# NAME  PERMISSIONS  CREDENTIAL\n"
                "reader  read         cert\n"
                f"app     read,write   token-sha256:{digest}\n")
    yield Certs(d)
    shutil.rmtree(d, ignore_errors=True)


def _server_flags(certs, cert: str = "server") -> list:
    return [f"--tls-cert={certs.dir}/{cert}.crt", f"--tls-key={certs.dir}/{cert}.key"]


@pytest.fixture(scope="module")
def tls_server(certs):
    """TLS, no clients: anyone who trusts the CA is served."""
    s = Server(*_server_flags(certs), tls=TlsOptions(ca_file=certs.ca))
    yield s
    s.close()


@pytest.fixture(scope="module")
def clients_server(certs):
    """TLS with named clients: `reader` by its certificate (read), `app` by token."""
    s = Server(*_server_flags(certs), f"--tls-ca={certs.ca}",
               f"--clients-file={certs.dir}/clients", tls=TlsOptions(ca_file=certs.ca))
    yield s
    s.close()


@pytest.fixture(scope="module")
def mtls_server(certs):
    """Mutual TLS required: no connection without a certificate the CA signed."""
    s = Server(*_server_flags(certs), f"--tls-ca={certs.ca}", "--tls-require-client-cert",
               f"--clients-file={certs.dir}/clients",
               tls=TlsOptions(ca_file=certs.ca, cert_file=certs.reader,
                              key_file=certs.reader_key))
    yield s
    s.close()


def _client(server, tls, **kw) -> relgraph.Client:
    return relgraph.Client("127.0.0.1", server.port, tls=tls,
                           **{"retries": 2, "connect_timeout": 5.0, **kw})


def _refused(server, tls, **kw) -> relgraph.TlsError:
    """The TlsError a call raises, checked to come at once (not after the retries)."""
    c = _client(server, tls, retries=6, backoff=relgraph.Backoff(5.0, 5.0), **kw)
    start = time.monotonic()
    try:
        with pytest.raises(relgraph.TlsError) as e:
            c.counts(1)
    finally:
        c.close()
    assert time.monotonic() - start < 4.0, "a TLS failure must not be retried"
    assert isinstance(e.value, relgraph.ConnectionLost) and e.value.code == 8
    print(f"refused: {e.value}")  # shown with the output of a failing test
    return e.value


# ---- served over TLS ----
def test_round_trip_over_tls(certs, tls_server):
    c = _client(tls_server, TlsOptions(ca_file=certs.ca), pool_size=1)
    assert c.connection().tls_version in ("TLSv1.2", "TLSv1.3")
    r = c.follow(1, 2, T0)
    assert r.created and r.relation == relgraph.Relation.FOLLOWING
    assert c.follow(2, 1, T0 + 1).relation == relgraph.Relation.MUTUAL
    page = c.fans(2)
    assert [(e.user, e.ts) for e in page.entries] == [(1, T0)]
    assert c.counts(1) == relgraph.Counts(1, 1, 1)
    with c.pipeline() as p:  # many frames in one write: several TLS records at once
        for fan in range(100, 400):
            p.follow(fan, 3, T0 + fan)
        assert all(x.created for x in p.execute())
    assert [e.user for e in c.iter_fans(3, page_size=50)] == list(range(399, 99, -1))
    c.close()


def test_the_pool_over_tls_from_many_threads(certs, tls_server):
    c = _client(tls_server, TlsOptions(ca_file=certs.ca), pool_size=3)
    errors = []

    def work(t: int) -> None:
        try:
            for i in range(40):
                c.follow(1000 + t, 5000 + i, T0 + i)
            assert c.counts(1000 + t).following == 40
        except BaseException as e:  # noqa: BLE001 (reported below)
            errors.append(e)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert c.counts(5000).fans == 8
    assert sum(1 for x in c._pool._conns if x is not None) == 3  # every slot opened, over TLS
    c.close()


def test_a_native_ssl_context_and_its_precedence(certs, tls_server):
    ctx = ssl.create_default_context(cafile=certs.ca)
    c = _client(tls_server, ctx)
    assert c.counts(1).following == 1
    c.close()
    # The context wins over the files given beside it (a CA that would refuse the server).
    c = _client(tls_server, TlsOptions(ca_file=certs.rogue, context=ctx))
    assert c.counts(1).following == 1
    c.close()


def test_async_client_and_stream_over_tls(certs, tls_server):
    async def main():
        async with relgraph.AsyncClient("127.0.0.1", tls_server.port,
                                        tls=TlsOptions(ca_file=certs.ca)) as ac:
            sub = ac.subscribe(from_now=True)
            assert await sub.get(0.2) is None  # subscribed (over a TLS connection of its own)
            rs = await asyncio.gather(*(ac.follow(20000 + u, 20000, T0) for u in range(1, 51)))
            assert all(r.created for r in rs)
            assert (await ac.counts(20000)).fans == 50
            got = []
            while len(got) < 50:
                e = await sub.get(10)
                assert e is not None
                got.append(e.a)
            assert sorted(got) == [20000 + u for u in range(1, 51)]
            sub.close()
        with pytest.raises(relgraph.TlsError, match="certificate verify failed"):
            async with relgraph.AsyncClient("127.0.0.1", tls_server.port, retries=6,
                                            tls=TlsOptions(ca_file=certs.rogue)) as bad:
                await bad.counts(1)
    asyncio.run(main())


def test_reconnect_and_stream_resume_over_tls(certs):
    s = Server(*_server_flags(certs), tls=TlsOptions(ca_file=certs.ca))
    try:
        c = _client(s, TlsOptions(ca_file=certs.ca), retries=8)
        sub = c.subscribe(1)
        c.follow(1, 2, T0)
        assert sub.get(10).lsn == 1
        s.restart()
        c.follow(3, 4, T0)  # the pool reconnects, with TLS again
        e = sub.get(10)     # and so does the stream, from LSN 2
        assert (e.lsn, e.a, e.b) == (2, 3, 4)
        assert sub.reconnects >= 1
        sub.close()
        c.close()
    finally:
        s.close()


# ---- refused, each with its cause ----
def test_an_untrusted_server_is_refused(certs, tls_server):
    err = _refused(tls_server, TlsOptions(ca_file=certs.rogue))
    assert "certificate verify failed" in str(err)
    assert "unable to get local issuer certificate" in str(err)
    # A server presenting a rogue CA's certificate to a client trusting the real CA.
    s = Server(*_server_flags(certs, "impostor"), tls=TlsOptions(insecure=True))
    try:
        assert "certificate verify failed" in str(_refused(s, TlsOptions(ca_file=certs.ca)))
        c = _client(s, TlsOptions(ca_file=certs.ca, insecure=True))  # tests only: unverified
        assert c.ping() is None
        c.close()
    finally:
        s.close()


def test_a_host_name_mismatch_is_refused_unless_server_name_says_it(certs):
    s = Server(*_server_flags(certs, "elsewhere"),
               tls=TlsOptions(ca_file=certs.ca, server_name="relgraph.test"))
    try:
        err = _refused(s, TlsOptions(ca_file=certs.ca))  # 127.0.0.1: not the certificate's
        assert "hostname mismatch" in str(err) and "127.0.0.1" in str(err)
        c = _client(s, TlsOptions(ca_file=certs.ca, server_name="relgraph.test"))
        assert c.counts(1) == relgraph.Counts(0, 0, 0)
        c.close()
    finally:
        s.close()


@pytest.mark.parametrize("version", ["TLSv1.3", "TLSv1.2"])
def test_mutual_tls_without_a_client_certificate_is_refused(certs, mtls_server, version):
    ctx = ssl.create_default_context(cafile=certs.ca)
    ctx.maximum_version = ssl.TLSVersion[version.replace(".", "_")]
    # TLS 1.3 finishes the client's handshake first: the refusal comes at the first read.
    err = _refused(mtls_server, ctx)
    assert "client certificate" in str(err), err
    err = _refused(mtls_server, TlsOptions(ca_file=certs.ca) if version == "TLSv1.3" else ctx)
    assert "client certificate" in str(err), err
    # A certificate from a CA the server does not trust is refused too.
    err = _refused(mtls_server, TlsOptions(ca_file=certs.ca, cert_file=certs.stranger,
                                           key_file=certs.stranger_key))
    assert "certificate" in str(err), err


def test_a_client_named_by_its_certificate_gets_its_permissions(certs, mtls_server,
                                                                clients_server):
    for s in (mtls_server, clients_server):
        c = _client(s, TlsOptions(ca_file=certs.ca, cert_file=certs.reader,
                                  key_file=certs.reader_key))
        with pytest.raises(relgraph.PermissionDenied) as e:
            c.follow(1, 2)
        assert e.value.code == 24 and "reader" in e.value.message
        assert c.counts(1) == relgraph.Counts(0, 0, 0)  # read: served, same connection
        c.close()


def test_a_token_client_over_tls(certs, clients_server):
    c = _client(clients_server, TlsOptions(ca_file=certs.ca), token=TOKEN)
    assert c.follow(7, 8, T0).created
    assert c.counts(8).fans == 1
    c.close()
    c = _client(clients_server, TlsOptions(ca_file=certs.ca), token="not-the-token")
    with pytest.raises(relgraph.Unauthenticated):
        c.counts(8)
    c.close()


def test_a_tls_client_at_a_plain_port(server):
    err = _refused(server, TlsOptions(insecure=True))
    assert "the server answered in plain text; is TLS enabled on it?" in str(err)
    assert "this port does not speak TLS" in str(err)  # the server's own words

    async def main():
        ac = relgraph.AsyncClient("127.0.0.1", server.port, tls=True, retries=6,
                                  backoff=relgraph.Backoff(5.0, 5.0))
        start = time.monotonic()
        with pytest.raises(relgraph.TlsError, match="answered in plain text"):
            await ac.counts(1)
        assert time.monotonic() - start < 4.0, "a TLS failure must not be retried"
        await ac.close()
    asyncio.run(main())


def test_a_plain_client_at_a_tls_port(tls_server):
    err = _refused(tls_server, None)
    assert "this port speaks TLS only" in str(err)
    with pytest.raises(relgraph.TlsError, match="speaks TLS only"):
        with relgraph.Client("127.0.0.1", tls_server.port).subscribe(1) as sub:
            sub.get(5)

    async def main():
        ac = relgraph.AsyncClient("127.0.0.1", tls_server.port)
        with pytest.raises(relgraph.TlsError, match="this port speaks TLS only"):
            await ac.counts(1)
        with pytest.raises(relgraph.TlsError, match="this port speaks TLS only"):
            await ac.subscribe(1).get(5)  # not waited out as a dropped stream
        await ac.close()
    asyncio.run(main())


class _Silent:
    """A loopback TLS server that ends each connection without a word: after its handshake
    (as relgraphd may when it refuses a client certificate and the alert is lost to a
    reset), or before it (handshake=False)."""

    def __init__(self, certs, handshake: bool):
        self.ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.ctx.load_cert_chain(certs.server, certs.server_key)
        self.handshake = handshake
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
            try:
                if self.handshake:
                    conn = self.ctx.wrap_socket(conn, server_side=True)
                    conn.unwrap()  # close_notify, the request unread
            except OSError:
                pass
            conn.close()

    def close(self):
        self.sock.close()


@pytest.mark.parametrize("handshake", [True, False])
def test_a_server_ending_the_session_without_a_word(certs, handshake):
    s = _Silent(certs, handshake)
    try:
        err = _refused(s, TlsOptions(ca_file=certs.ca))
        if handshake:
            assert "ended before the server answered" in str(err)
            assert "client certificate" in str(err)
        else:
            assert "during the TLS handshake (is TLS enabled on it" in str(err)
    finally:
        s.close()


def test_options_that_do_not_load_are_refused_at_once(certs):
    with pytest.raises(ValueError, match="missing.pem"):
        relgraph.Client(tls=TlsOptions(ca_file="/nonexistent/missing.pem"))
    with pytest.raises(ValueError, match="go together"):
        relgraph.Client(tls=TlsOptions(cert_file=certs.reader))
    with pytest.raises(TypeError):
        relgraph.Client(tls="yes")


# ---- the cluster ----
def test_cluster_client_over_tls(certs):
    from cluster import Cluster
    cl = Cluster("--shards=2", "--buckets=16", *_server_flags(certs),
                 env={"RELGRAPH_TLS_CA": certs.ca})
    try:
        opts = TlsOptions(ca_file=certs.ca)
        c = relgraph.ClusterClient(cl.seeds, tls=opts)
        shards = {c.map.owner_of(u) for u in range(1, 40)}
        assert len(shards) == 2  # the users below span both shards
        for u in range(2, 40):
            c.follow(u, 1, T0 + u)
        c.barrier()  # the fans' side of a follow reaches the other shard through NATS
        assert c.counts(1).fans == 38
        assert [e.user for e in c.iter_fans(1, page_size=10, viewer=2)] == list(range(39, 1, -1))
        with c.shard(1) as s1:  # a Client of one shard, with the cluster's TLS
            assert s1.connection().tls_version is not None
        c.close()

        async def main():
            ac = await relgraph.AsyncClusterClient.connect(cl.seeds, tls=opts)
            await asyncio.gather(*(ac.follow(u, 100, T0) for u in range(101, 131)))
            await ac.barrier()
            assert (await ac.counts(100)).fans == 30
            await ac.close()
        asyncio.run(main())

        with pytest.raises(relgraph.TlsError, match="speaks TLS only"):
            relgraph.ClusterClient(cl.seeds)
        with pytest.raises(relgraph.TlsError, match="certificate verify failed"):
            relgraph.ClusterClient(cl.seeds, tls=TlsOptions(ca_file=certs.rogue))
    finally:
        cl.close()
