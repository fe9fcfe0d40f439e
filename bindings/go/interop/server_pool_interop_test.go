package interop

// The server pool replaced on a live connection, beside nats.go: the
// facade and nats.go, both connected to server A, get the same new pool
// (A, a dead server D, server B) and a ForceReconnect; both try D once
// (one ReconnectErrCB call each), end on B and list the same servers with
// the same counts. Where they differ: a new pool without the current
// server, [D, B]; nats.go takes its first server for the one just left and
// goes to B without trying D, libnatsio tries D first.

import (
	"fmt"
	"net"
	"sort"
	"testing"
	"time"

	facadenats "github.com/libnatsio/natsio/bindings/go/nats"
	"github.com/nats-io/nats.go"
)

// poolClient is what the test does with either client: the facade's Conn
// and nats.go's, their pools read as "URL=reconnects" sorted by URL (the
// two order a pool differently as they rotate it).
type poolClient struct {
	name           string
	setServerPool  func([]string) error
	forceReconnect func() error
	connectedURL   func() string
	pool           func() []string
	failed         chan error    // ReconnectErrCB's errors
	reconnected    chan struct{} // ReconnectedCB's calls
}

func sortedPool(entries []string) []string {
	sort.Strings(entries)
	return entries
}

// bothAt connects the facade and nats.go to url, each with a
// ReconnectErrHandler and a ReconnectHandler feeding its poolClient.
func bothAt(t *testing.T, url string) []*poolClient {
	t.Helper()
	f := &poolClient{name: "facade", failed: make(chan error, 10), reconnected: make(chan struct{}, 10)}
	fc, err := facadenats.Connect(url,
		facadenats.ReconnectErrHandler(func(_ *facadenats.Conn, err error) { f.failed <- err }),
		facadenats.ReconnectHandler(func(*facadenats.Conn) { f.reconnected <- struct{}{} }))
	noErr(t, err)
	t.Cleanup(fc.Close)
	f.setServerPool, f.forceReconnect, f.connectedURL = fc.SetServerPool, fc.ForceReconnect, fc.ConnectedUrl
	f.pool = func() []string {
		var entries []string
		for _, s := range fc.ServerPool() {
			entries = append(entries, fmt.Sprintf("%s=%d", s.URL, s.Reconnects))
		}
		return sortedPool(entries)
	}

	n := &poolClient{name: "nats.go", failed: make(chan error, 10), reconnected: make(chan struct{}, 10)}
	nc, err := nats.Connect(url,
		nats.ReconnectErrHandler(func(_ *nats.Conn, err error) { n.failed <- err }),
		nats.ReconnectHandler(func(*nats.Conn) { n.reconnected <- struct{}{} }))
	noErr(t, err)
	t.Cleanup(nc.Close)
	n.setServerPool, n.forceReconnect, n.connectedURL = nc.SetServerPool, nc.ForceReconnect, nc.ConnectedUrl
	n.pool = func() []string {
		var entries []string
		for _, s := range nc.ServerPool() {
			entries = append(entries, fmt.Sprintf("%s=%d", s.URL, s.Reconnects))
		}
		return sortedPool(entries)
	}
	return []*poolClient{f, n}
}

// moveTo replaces c's pool with servers, forces a reconnect and waits for
// the reconnect (its failed attempts are told before it); it returns how
// many attempts failed.
func (c *poolClient) moveTo(t *testing.T, servers ...string) int {
	t.Helper()
	noErr(t, c.setServerPool(servers))
	noErr(t, c.forceReconnect())
	select {
	case <-c.reconnected:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: no reconnect", c.name)
	}
	n := len(c.failed)
	for range n {
		if err := <-c.failed; err == nil {
			t.Errorf("%s: ReconnectErrCB called without an error", c.name)
		}
	}
	return n
}

// deadServer is a loopback URL nobody listens on.
func deadServer(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	noErr(t, err)
	defer l.Close()
	return "nats://" + l.Addr().String()
}

func TestServerPoolMovesAsNatsGo(t *testing.T) {
	a, b, dead := startServerWith(t), startServerWith(t), deadServer(t)
	want := sortedPool([]string{a + "=0", b + "=0", dead + "=1"})
	for _, c := range bothAt(t, a) {
		if got := c.pool(); len(got) != 1 || got[0] != a+"=0" {
			t.Fatalf("%s: pool %v, want A alone", c.name, got)
		}
		if failed := c.moveTo(t, a, dead, b); failed != 1 {
			t.Errorf("%s: %d ReconnectErrCB calls, want 1 (for D)", c.name, failed)
		}
		if got := c.connectedURL(); got != b {
			t.Errorf("%s: connected to %q, want B (%s)", c.name, got, b)
		}
		if got := c.pool(); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: pool %v, want %v", c.name, got, want)
		}
	}
}

// The difference: with the current server left out of the new pool,
// nats.go takes the new pool's first server (D) for the one it is leaving
// and moves on to B; libnatsio tries the new pool in order, D first. Both
// end on B.
func TestServerPoolWithoutTheCurrentServerDiffersFromNatsGo(t *testing.T) {
	a, b, dead := startServerWith(t), startServerWith(t), deadServer(t)
	wantFailed := map[string]int{"facade": 1, "nats.go": 0}
	for _, c := range bothAt(t, a) {
		failed := c.moveTo(t, dead, b)
		want := sortedPool([]string{b + "=0", fmt.Sprintf("%s=%d", dead, wantFailed[c.name])})
		if failed != wantFailed[c.name] || fmt.Sprint(c.pool()) != fmt.Sprint(want) || c.connectedURL() != b {
			t.Errorf("%s: %d failed attempts, pool %v, connected to %q; want %d, %v and B (%s)",
				c.name, failed, c.pool(), c.connectedURL(), wantFailed[c.name], want, b)
		}
	}
}
