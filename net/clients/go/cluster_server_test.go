package relgraph

// The suite's cluster: net/clients/testing/start_cluster.sh starts nats-server, writes the
// map with relgraph-admin and starts the shards (RELGRAPHD, RELGRAPH_ADMIN, RELGRAPH_CLI and
// NATS_SERVER from CTest's environment); every process is stopped by its PID when the test
// ends.

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

type clusterProc struct {
	kind string // nats or shard
	id   uint32 // a shard's id
	addr string // a shard's host:port, nats' URL
	pid  int
}

type testCluster struct {
	dir   string
	nats  string
	procs []clusterProc
}

// startCluster runs start_cluster.sh with args (--shards=N --buckets=N --members=M ...).
func startCluster(t *testing.T, args ...string) *testCluster {
	t.Helper()
	tc := &testCluster{dir: t.TempDir()}
	script := os.Getenv("RELGRAPH_START_CLUSTER")
	if script == "" {
		script = repoPath("net/clients/testing/start_cluster.sh")
	}
	cmd := exec.Command(script, append([]string{"--dir=" + tc.dir}, args...)...)
	cmd.Env = append(os.Environ(), "RELGRAPHD="+relgraphdPath(t), "RELGRAPH_CLI="+cliPath(t),
		"RELGRAPH_ADMIN="+toolPath(t, "RELGRAPH_ADMIN", "build/relgraph-admin"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("start_cluster.sh: %v\n%s", err, stderr.String())
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		w := strings.Fields(sc.Text())
		switch {
		case len(w) == 3 && w[0] == "nats":
			pid, _ := strconv.Atoi(w[2])
			tc.nats = w[1]
			tc.procs = append(tc.procs, clusterProc{kind: "nats", addr: w[1], pid: pid})
		case len(w) == 4 && w[0] == "shard":
			id, _ := strconv.Atoi(w[1])
			pid, _ := strconv.Atoi(w[3])
			tc.procs = append(tc.procs, clusterProc{kind: "shard", id: uint32(id), addr: w[2], pid: pid})
		default:
			t.Fatalf("start_cluster.sh printed %q", sc.Text())
		}
	}
	t.Cleanup(tc.stop)
	return tc
}

// shards are the shards' processes, in the script's order.
func (tc *testCluster) shards() []clusterProc {
	var out []clusterProc
	for _, p := range tc.procs {
		if p.kind == "shard" {
			out = append(out, p)
		}
	}
	return out
}

func (tc *testCluster) seeds() []string {
	var out []string
	for _, p := range tc.shards() {
		out = append(out, p.addr)
	}
	return out
}

// alive: the process exists and is no zombie (the script's children are not ours to wait for).
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] != 'Z'
	}
	return true
}

// stopPID sends sig to pid and waits until it is gone (SIGKILL after 10 s).
func stopPID(pid int, sig syscall.Signal) {
	_ = syscall.Kill(pid, sig)
	deadline := time.Now().Add(10 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			deadline = time.Now().Add(time.Hour)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// stop: the shards first, then nats-server.
func (tc *testCluster) stop() {
	for i := len(tc.procs) - 1; i >= 0; i-- {
		if tc.procs[i].pid > 0 {
			stopPID(tc.procs[i].pid, syscall.SIGTERM)
			tc.procs[i].pid = 0
		}
	}
}

// admin runs relgraph-admin cluster ARGS... --nats=URL.
func (tc *testCluster) admin(t *testing.T, args ...string) (string, error) {
	cmd := exec.Command(toolPath(t, "RELGRAPH_ADMIN", "build/relgraph-admin"),
		append(append([]string{"cluster"}, args...), "--nats="+tc.nats)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("relgraph-admin cluster %v: %v: %s", args, err, out)
	}
	return string(out), nil
}
