package interop

// The reconnect delay handler (CustomReconnectDelay) beside nats.go: each
// client connects to its own server S with a pool [S, D] (D a loopback
// port nobody listens on, no randomizing) and a handler that records its
// argument and answers 20 ms; S is killed, and the handler's call for
// turn 2 waits until S is restarted. Both clients try D at once, ask the
// handler before S (the last server of each turn), and so make the same
// calls (1, 2), the same 3 failed attempts (D, S, D) and reconnect to S.

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	facadenats "github.com/libnatsio/natsio/bindings/go/nats"
	"github.com/nats-io/nats.go"
)

// restartable is a nats-server on a fixed loopback port that can be
// killed and started again on it.
type restartable struct {
	bin  string
	port int
	cmd  *exec.Cmd
}

func (s *restartable) url() string { return fmt.Sprintf("nats://127.0.0.1:%d", s.port) }

func (s *restartable) start(t *testing.T) {
	t.Helper()
	s.cmd = exec.Command(s.bin, "-a", "127.0.0.1", "-p", fmt.Sprint(s.port))
	noErr(t, s.cmd.Start())
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", s.port)); err == nil {
			c.Close()
			return
		}
	}
	t.Fatalf("nats-server on port %d did not start", s.port)
}

func (s *restartable) kill() {
	s.cmd.Process.Kill()
	s.cmd.Wait()
}

func startRestartable(t *testing.T) *restartable {
	t.Helper()
	bin := os.Getenv("NATS_SERVER_BIN")
	if bin == "" {
		bin, _ = filepath.Abs("../../../.tools/nats-server-2.14.3/nats-server")
	}
	s := &restartable{bin: bin}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	noErr(t, err)
	s.port = l.Addr().(*net.TCPAddr).Port
	l.Close()
	s.start(t)
	t.Cleanup(s.kill)
	return s
}

// pacedRun is what one client's handlers saw.
type pacedRun struct {
	mu          sync.Mutex
	args        []int
	failed      int
	wantRestart chan struct{} // closed by the call for turn 2
	restarted   chan struct{} // closed by the test once S is back
	reconnected chan struct{}
}

func newPacedRun() *pacedRun {
	return &pacedRun{wantRestart: make(chan struct{}), restarted: make(chan struct{}),
		reconnected: make(chan struct{}, 10)}
}

func (r *pacedRun) delay(attempts int) time.Duration {
	r.mu.Lock()
	r.args = append(r.args, attempts)
	r.mu.Unlock()
	if attempts == 2 {
		close(r.wantRestart)
		select {
		case <-r.restarted:
		case <-time.After(20 * time.Second):
		}
	}
	return 20 * time.Millisecond
}

func (r *pacedRun) outage(t *testing.T, who string, s *restartable, connectedURL func() string) {
	t.Helper()
	s.kill()
	select {
	case <-r.wantRestart:
	case <-time.After(20 * time.Second):
		t.Fatalf("%s: the handler was not called for turn 2", who)
	}
	s.start(t)
	close(r.restarted)
	select {
	case <-r.reconnected:
	case <-time.After(20 * time.Second):
		t.Fatalf("%s: no reconnect", who)
	}
	if got := connectedURL(); got != s.url() {
		t.Errorf("%s: connected to %s, want %s", who, got, s.url())
	}
}

func TestCustomReconnectDelayMatchesNatsGo(t *testing.T) {
	type outcome struct {
		args   []int
		failed int
	}
	results := map[string]outcome{}

	s, dead := startRestartable(t), deadServer(t)
	f := newPacedRun()
	fc, err := facadenats.Connect(s.url()+","+dead, facadenats.DontRandomize(), facadenats.MaxReconnects(-1),
		facadenats.CustomReconnectDelay(f.delay),
		facadenats.ReconnectErrHandler(func(*facadenats.Conn, error) { f.mu.Lock(); f.failed++; f.mu.Unlock() }),
		facadenats.ReconnectHandler(func(*facadenats.Conn) { f.reconnected <- struct{}{} }))
	noErr(t, err)
	t.Cleanup(fc.Close)
	f.outage(t, "facade", s, fc.ConnectedUrl)
	fc.Close()
	f.mu.Lock()
	results["facade"] = outcome{slices.Clone(f.args), f.failed}
	f.mu.Unlock()

	s, dead = startRestartable(t), deadServer(t)
	n := newPacedRun()
	nc, err := nats.Connect(s.url()+","+dead, nats.DontRandomize(), nats.MaxReconnects(-1),
		nats.CustomReconnectDelay(n.delay),
		nats.ReconnectErrHandler(func(*nats.Conn, error) { n.mu.Lock(); n.failed++; n.mu.Unlock() }),
		nats.ReconnectHandler(func(*nats.Conn) { n.reconnected <- struct{}{} }))
	noErr(t, err)
	t.Cleanup(nc.Close)
	n.outage(t, "nats.go", s, nc.ConnectedUrl)
	nc.Close()
	n.mu.Lock()
	results["nats.go"] = outcome{slices.Clone(n.args), n.failed}
	n.mu.Unlock()

	want := outcome{[]int{1, 2}, 3}
	for who, got := range results {
		if !slices.Equal(got.args, want.args) || got.failed != want.failed {
			t.Errorf("%s: handler calls %v and %d failed attempts, want %v and %d", who, got.args, got.failed,
				want.args, want.failed)
		}
	}
}

// ForceReconnect with a reconnect delay handler: both clients of a live
// server reconnect to it at once, without calling the handler (nats.go
// skips the wait for the first attempt of a forced reconnect).
func TestCustomReconnectDelayForcedReconnectSkipsTheHandlerAsNatsGo(t *testing.T) {
	url := startServer(t)
	type client struct {
		name      string
		force     func() error
		calls     func() int
		reconnect chan struct{}
	}
	var mu sync.Mutex
	counts := map[string]int{}
	counter := func(name string) func(int) time.Duration {
		return func(int) time.Duration {
			mu.Lock()
			counts[name]++
			mu.Unlock()
			return 50 * time.Millisecond
		}
	}
	calls := func(name string) func() int {
		return func() int { mu.Lock(); defer mu.Unlock(); return counts[name] }
	}
	f := &client{name: "facade", calls: calls("facade"), reconnect: make(chan struct{}, 10)}
	fc, err := facadenats.Connect(url, facadenats.CustomReconnectDelay(counter("facade")),
		facadenats.ReconnectHandler(func(*facadenats.Conn) { f.reconnect <- struct{}{} }))
	noErr(t, err)
	t.Cleanup(fc.Close)
	f.force = fc.ForceReconnect
	n := &client{name: "nats.go", calls: calls("nats.go"), reconnect: make(chan struct{}, 10)}
	nc, err := nats.Connect(url, nats.CustomReconnectDelay(counter("nats.go")),
		nats.ReconnectHandler(func(*nats.Conn) { n.reconnect <- struct{}{} }))
	noErr(t, err)
	t.Cleanup(nc.Close)
	n.force = nc.ForceReconnect
	for _, c := range []*client{f, n} {
		noErr(t, c.force())
		select {
		case <-c.reconnect:
		case <-time.After(20 * time.Second):
			t.Fatalf("%s: no reconnect", c.name)
		}
		if got := c.calls(); got != 0 {
			t.Errorf("%s: %d handler calls for a forced reconnect to a live server, want 0", c.name, got)
		}
	}
}
