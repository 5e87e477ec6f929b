package relgraph

// The suite's servers: a relgraphd started on a free loopback port with a temp data
// directory, stopped by PID. Its path comes from RELGRAPHD (CTest passes the built one), the
// CLI's from RELGRAPH_CLI, docs/protocol.md's from RELGRAPH_PROTOCOL_DOC; without them the
// repository's build/ folder is looked in.

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

func repoPath(rel string) string {
	p, _ := filepath.Abs(filepath.Join("..", "..", "..", rel))
	return p
}

func toolPath(t *testing.T, env, fallback string) string {
	if p := os.Getenv(env); p != "" {
		return p
	}
	p := repoPath(fallback)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("%s is not set and %s does not exist: build relgraphd and relgraph-cli first (see README.md)", env, p)
	}
	return p
}

func relgraphdPath(t *testing.T) string { return toolPath(t, "RELGRAPHD", "build/relgraphd") }
func cliPath(t *testing.T) string       { return toolPath(t, "RELGRAPH_CLI", "build/relgraph-cli") }
func protocolDocPath(t *testing.T) string {
	return toolPath(t, "RELGRAPH_PROTOCOL_DOC", "docs/protocol.md")
}

// freePort asks the kernel for a loopback port nothing listens on.
func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

type server struct {
	t       *testing.T
	addr    string
	dataDir string
	args    []string
	cmd     *exec.Cmd
}

// startServer runs relgraphd with a fresh data directory and extra flags; it is stopped
// when the test ends.
func startServer(t *testing.T, args ...string) *server {
	s := &server{t: t, addr: fmt.Sprintf("127.0.0.1:%d", freePort(t)), dataDir: t.TempDir(), args: args}
	s.start()
	t.Cleanup(s.stop)
	return s
}

func (s *server) start() {
	s.t.Helper()
	args := append([]string{"--listen=" + s.addr, "--data-dir=" + s.dataDir, "--log-level=error",
		"--rate-limit=off", "--fsync=none", "--http=off"}, s.args...)
	s.cmd = exec.Command(relgraphdPath(s.t), args...)
	s.cmd.Stderr = os.Stderr
	if err := s.cmd.Start(); err != nil {
		s.t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		nc, err := net.DialTimeout("tcp", s.addr, time.Second)
		if err == nil {
			nc.Close()
			return
		}
		if time.Now().After(deadline) {
			s.stop()
			s.t.Fatalf("relgraphd did not listen on %s: %v", s.addr, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stop sends SIGTERM to the server's PID and waits for it (SIGKILL after 10 s).
func (s *server) stop() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = s.cmd.Process.Kill()
		<-done
	}
	s.cmd = nil
}

// restart stops the server and starts it again on the same port and data directory.
func (s *server) restart() {
	s.stop()
	s.start()
}

func (s *server) client(t *testing.T, o Options) *Client {
	t.Helper()
	o.Addr = s.addr
	c, err := Connect(context.Background(), o)
	if err != nil {
		t.Fatalf("connect %s: %v", s.addr, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}
