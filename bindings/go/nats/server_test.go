package nats_test

// The nats-server of this package's tests: on a free port, with a config
// file or arguments, and one that can be stopped and started again on the
// same port (to make the client reconnect).

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

type testServer struct {
	t      *testing.T
	port   int
	url    string
	args   []string
	cmd    *exec.Cmd
	exited chan struct{}
}

// freePort is a TCP port nothing listens on right now.
func freePort(t *testing.T) int {
	t.Helper()
	return freePorts(t, 1)[0]
}

// freePorts are n distinct TCP ports nothing listened on a moment ago.
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close() // held until all are chosen: no port twice
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports
}

// startConnServer starts nats-server on a free port with args, and a
// config file holding conf when it is not empty.
func startServer(t *testing.T, conf string, args ...string) *testServer {
	t.Helper()
	if conf != "" {
		path := filepath.Join(t.TempDir(), "server.conf")
		if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
			t.Fatal(err)
		}
		args = append(args, "-c", path)
	}
	for attempt := 0; attempt < 5; attempt++ {
		s := &testServer{t: t, port: freePort(t), args: args}
		s.url = fmt.Sprintf("nats://127.0.0.1:%d", s.port)
		if s.start() {
			t.Cleanup(s.stop)
			return s
		}
	}
	t.Fatal("nats-server did not start")
	return nil
}

// start runs the server and waits until it accepts connections; false
// when it exited first (the port was taken).
func (s *testServer) start() bool {
	bin := os.Getenv("NATS_SERVER_BIN")
	if bin == "" {
		bin = "../../../.tools/nats-server-2.14.3/nats-server"
	}
	args := append([]string{"-a", "127.0.0.1", "-p", fmt.Sprint(s.port)}, s.args...)
	s.cmd = exec.Command(bin, args...)
	if err := s.cmd.Start(); err != nil {
		s.t.Fatalf("nats-server (set NATS_SERVER_BIN): %v", err)
	}
	s.exited = make(chan struct{})
	go func(cmd *exec.Cmd, exited chan struct{}) { cmd.Wait(); close(exited) }(s.cmd, s.exited)
	addr := fmt.Sprintf("127.0.0.1:%d", s.port)
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); {
		select {
		case <-s.exited:
			return false
		case <-time.After(10 * time.Millisecond):
		}
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return true
		}
	}
	s.stop()
	return false
}

func (s *testServer) stop() {
	if s.cmd != nil && s.cmd.Process != nil {
		s.cmd.Process.Kill()
		<-s.exited
	}
}

// restart stops the server and starts it again on its port.
func (s *testServer) restart() {
	s.t.Helper()
	s.stop()
	for attempt := 0; attempt < 50; attempt++ {
		if s.start() {
			return
		}
		time.Sleep(100 * time.Millisecond) // the port is still held: retry
	}
	s.t.Fatal("nats-server did not restart")
}

// connWaitFor waits up to 10 s for ch to deliver, failing the test with what
// otherwise.
func connWaitFor[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
	var zero T
	return zero
}
