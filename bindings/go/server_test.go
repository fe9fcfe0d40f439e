package natsio_test

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// natsServer is a nats-server process on a free loopback port.
type natsServer struct {
	cmd  *exec.Cmd
	url  string
	bin  string
	args []string // everything after the binary, port included: restart reuses them
	port int
}

func serverBinary() (string, error) {
	if bin := os.Getenv("NATS_SERVER_BIN"); bin != "" {
		return bin, nil
	}
	bin, err := filepath.Abs("../../.tools/nats-server-2.14.3/nats-server")
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(bin); err != nil {
		return "", fmt.Errorf("nats-server not found (set NATS_SERVER_BIN or run scripts/install-nats-server.sh): %w", err)
	}
	return bin, nil
}

// nextPort walks this process's stretch of the ports below the kernel's
// ephemeral range (see freePort).
var nextPort atomic.Uint32

// freePort returns a currently free loopback port for a server's listener,
// picked below the kernel's ephemeral range: a port from listening on port 0
// lies inside it, where any outgoing connection (a test's own client) may
// take it as its local port before the server binds it. Each process walks
// its own stretch of [10000, ephemeral low) from a pid-derived start, so
// ports never repeat within a process; only another process's server can
// collide, which the probe and the start retries absorb.
func freePort() (int, error) {
	const base = 10000
	low := 32768
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) > 0 {
			if v, err := strconv.Atoi(f[0]); err == nil {
				low = v
			}
		}
	}
	if span := uint32(low - base); low > base+1000 {
		start := uint32(os.Getpid()) * 2654435761
		for tries := 0; tries < 200; tries++ {
			port := base + int((start+nextPort.Add(1))%span)
			if l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
				l.Close()
				return port, nil
			}
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// startServer runs nats-server with extra arguments and waits until its
// port accepts connections.
func startServer(extraArgs ...string) (*natsServer, error) {
	bin, err := serverBinary()
	if err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	args := append([]string{"-a", "127.0.0.1", "-p", fmt.Sprint(port)}, extraArgs...)
	s := &natsServer{url: fmt.Sprintf("nats://127.0.0.1:%d", port), bin: bin, args: args, port: port}
	if err := s.launch(); err != nil {
		return nil, err
	}
	return s, nil
}

// launch starts the process and waits until its port accepts connections.
func (s *natsServer) launch() error {
	cmd := exec.Command(s.bin, s.args...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if os.Getenv("NATSIO_GO_SERVER_LOG") == "" {
		cmd.Stdout, cmd.Stderr = nil, nil
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	s.cmd = cmd
	addr := fmt.Sprintf("127.0.0.1:%d", s.port)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return nil
		}
	}
	cmd.Process.Kill()
	cmd.Wait()
	return fmt.Errorf("nats-server on %s did not start", addr)
}

// stop kills the process (harmless when it is not running).
func (s *natsServer) stop() {
	s.cmd.Process.Kill()
	s.cmd.Wait()
}

// restart starts the server again on the same port with the same
// arguments (after a stop, or killing the running one first).
func (s *natsServer) restart(t *testing.T) {
	t.Helper()
	s.stop()
	if err := s.launch(); err != nil {
		t.Fatal(err)
	}
}

// startConfiguredServer runs a per-test server with config text written
// to a file of the test's temp dir (-a/-p on the command line win over any
// listen/port in it).
func startConfiguredServer(t *testing.T, config string) *natsServer {
	t.Helper()
	path := filepath.Join(t.TempDir(), "server.conf")
	if err := os.WriteFile(path, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	return startTestServer(t, "-c", path)
}

// startHubAndLeaf runs a JetStream server in domain HUB and one in domain
// LEAF joined to it as a leaf node, each storing in the test's temp dir.
// The leaf connection comes up in its own time: poll what needs it.
func startHubAndLeaf(t *testing.T) (hub, leaf *natsServer) {
	t.Helper()
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	hub = startConfiguredServer(t, fmt.Sprintf("server_name: hub\njetstream { domain: HUB, store_dir: %q }\n"+
		"leafnodes { listen: \"127.0.0.1:%d\" }\n", t.TempDir(), port))
	leaf = startConfiguredServer(t, fmt.Sprintf("server_name: leaf\njetstream { domain: LEAF, store_dir: %q }\n"+
		"leafnodes { remotes: [ { url: \"nats-leaf://127.0.0.1:%d\" } ] }\n", t.TempDir(), port))
	return hub, leaf
}

// fixture is the absolute path of tests/fixtures/<rel> in the repository.
func fixture(t *testing.T, rel string) string {
	t.Helper()
	path, err := filepath.Abs(filepath.Join("../../tests/fixtures", rel))
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// startTestServer is startServer for one test, stopped at its end.
func startTestServer(t *testing.T, extraArgs ...string) *natsServer {
	t.Helper()
	s, err := startServer(extraArgs...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.stop)
	return s
}

// shared is the server most tests use (started by TestMain).
var shared *natsServer

func TestMain(m *testing.M) {
	var err error
	shared, err = startServer()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	shared.stop()
	os.Exit(code)
}

// pause stops the server process (SIGSTOP) and waits until every one of
// its threads is stopped, so that nothing sent after it is answered; the
// returned resume (SIGCONT) is safe to call more than once.
func (s *natsServer) pause(t *testing.T) (resume func()) {
	t.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	resumed := false
	resume = func() {
		if !resumed {
			resumed = true
			s.cmd.Process.Signal(syscall.SIGCONT)
		}
	}
	dir := fmt.Sprintf("/proc/%d/task", s.cmd.Process.Pid)
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		tasks, err := os.ReadDir(dir)
		if err != nil {
			resume()
			t.Fatal(err)
		}
		stopped := 0
		for _, task := range tasks {
			stat, err := os.ReadFile(filepath.Join(dir, task.Name(), "stat"))
			// The state follows the command's closing parenthesis.
			if i := bytes.LastIndexByte(stat, ')'); err == nil && i >= 0 && i+2 < len(stat) && (stat[i+2] == 'T' || stat[i+2] == 't') {
				stopped++
			}
		}
		if stopped == len(tasks) {
			return resume
		}
	}
	resume()
	t.Fatal("the server did not stop")
	return nil
}
