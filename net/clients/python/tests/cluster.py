"""The suite's cluster: net/clients/testing/start_cluster.sh starts nats-server, writes the map
with relgraph-admin and starts the shards (RELGRAPHD, RELGRAPH_ADMIN, RELGRAPH_CLI and
NATS_SERVER from CTest's environment); every process is stopped by its PID."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import time

from servers import binary

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..", "..", "..")


def _alive(pid: int) -> bool:
    """The process exists and is no zombie (the script's children are not ours to wait for)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            stat = f.read()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"


def stop_pid(pid: int, sig: int = signal.SIGTERM) -> None:
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + 10
    while _alive(pid):
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            deadline = float("inf")
        time.sleep(0.01)


class Cluster:
    """start_cluster.sh's processes: .nats (url), .shards [(id, address, pid)]."""

    def __init__(self, *args: str, env: dict | None = None):
        """args: start_cluster.sh's (relgraphd flags among them); env: more environment for
        it (RELGRAPH_TLS_CA makes its relgraph-cli probe speak TLS)."""
        self.dir = tempfile.mkdtemp(prefix="relgraph-py-cluster-")
        script = os.environ.get("RELGRAPH_START_CLUSTER") or os.path.join(
            ROOT, "net", "clients", "testing", "start_cluster.sh")
        env = dict(os.environ, RELGRAPHD=binary("RELGRAPHD", "relgraphd"),
                   RELGRAPH_CLI=binary("RELGRAPH_CLI", "relgraph-cli"),
                   RELGRAPH_ADMIN=binary("RELGRAPH_ADMIN", "relgraph-admin"), **(env or {}))
        out = subprocess.run([script, f"--dir={self.dir}", *args], env=env,
                             capture_output=True, text=True)
        if out.returncode != 0:
            raise RuntimeError(f"start_cluster.sh failed:\n{out.stderr}")
        self.nats, self.nats_pid, self.shards = "", 0, []
        for line in out.stdout.splitlines():
            w = line.split()
            if w[0] == "nats":
                self.nats, self.nats_pid = w[1], int(w[2])
            else:
                self.shards.append((int(w[1]), w[2], int(w[3])))

    @property
    def seeds(self):
        return [addr for _, addr, _ in self.shards]

    def admin(self, *args: str) -> str:
        out = subprocess.run([binary("RELGRAPH_ADMIN", "relgraph-admin"), "cluster", *args,
                              f"--nats={self.nats}"], capture_output=True, text=True)
        if out.returncode != 0:
            raise RuntimeError(f"relgraph-admin cluster {args}: {out.stdout}{out.stderr}")
        return out.stdout

    def kill(self, address: str) -> None:
        for i, (sid, addr, pid) in enumerate(self.shards):
            if addr == address and pid:
                stop_pid(pid, signal.SIGKILL)
                self.shards[i] = (sid, addr, 0)

    def close(self) -> None:
        for _, _, pid in self.shards:
            if pid:
                stop_pid(pid)
        if self.nats_pid:
            stop_pid(self.nats_pid)
        self.shards, self.nats_pid = [], 0
        if os.environ.get("RELGRAPH_KEEP_TEST_DIRS") == "1":
            print(f"kept {self.dir}")
        else:
            shutil.rmtree(self.dir, ignore_errors=True)
