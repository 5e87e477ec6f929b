"""Starts and stops relgraphd for the tests: a free loopback port, a temporary data directory,
stopped by its PID. RELGRAPHD names the binary (CTest passes the built one)."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time

import relgraph


def free_port() -> int:
    """A loopback port nothing listens on now (the kernel's pick of an ephemeral port)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def binary(env: str, name: str) -> str:
    path = os.environ.get(env)
    if not path:
        here = os.path.dirname(os.path.abspath(__file__))
        path = os.path.join(here, "..", "..", "..", "..", "build", name)
    if not os.access(path, os.X_OK):
        raise RuntimeError(f"{env} does not name an executable {name}: {path}")
    return path


class Server:
    """relgraphd on 127.0.0.1:<port> with its own data directory; restart() keeps both.
    tls: how the readiness probe connects (a TLS server's flags call for one)."""

    def __init__(self, *flags: str, data_dir: str | None = None, port: int | None = None,
                 tls=None):
        self.port = port or free_port()
        self.data_dir = data_dir or tempfile.mkdtemp(prefix="relgraph-py-")
        self.flags = list(flags)
        self.tls = tls
        self.proc = None
        self.start()

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self) -> None:
        log = open(os.path.join(self.data_dir, "relgraphd.log"), "ab")
        self.proc = subprocess.Popen(
            [binary("RELGRAPHD", "relgraphd"), f"--listen=127.0.0.1:{self.port}",
             f"--data-dir={self.data_dir}", "--rate-limit=off", "--log-level=error",
             "--http=off", *self.flags], stdout=log, stderr=log)
        log.close()
        deadline = time.monotonic() + 30
        while True:
            try:
                c = relgraph.Connection("127.0.0.1", self.port, connect_timeout=1.0,
                                        tls=self.tls)
                c.close()
                return
            except relgraph.Unauthenticated:
                return  # it answers: a server with --auth-token
            except relgraph.RelgraphError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(f"relgraphd did not start: see {self.data_dir}")
                time.sleep(0.02)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                os.kill(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        self.proc = None

    def restart(self) -> None:
        self.stop()
        self.start()

    def client(self, **kw) -> relgraph.Client:
        return relgraph.Client("127.0.0.1", self.port, **kw)

    def close(self) -> None:
        self.stop()
        if os.environ.get("RELGRAPH_KEEP_TEST_DIRS") == "1":
            print(f"kept {self.data_dir}")
        else:
            shutil.rmtree(self.data_dir, ignore_errors=True)
