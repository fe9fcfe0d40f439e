package nats_test

// Conn.ServerPool and SetServerPool and Options.ReconnectErrCB, as nats.go
// has them: the pool moved to another server, each failed attempt told,
// URLs completed and lists checked as nats.go does. (Beside nats.go itself:
// interop/server_pool_interop_test.go.)

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"

	natsio "github.com/libnatsio/natsio/bindings/go"
	"github.com/libnatsio/natsio/bindings/go/nats"
)

// poolOf is nc's server pool as "URL=reconnects" strings, in order.
func poolOf(nc *nats.Conn) []string {
	var pool []string
	for _, s := range nc.ServerPool() {
		pool = append(pool, fmt.Sprintf("%s=%d", s.URL, s.Reconnects))
	}
	return pool
}

func wantPoolOf(t *testing.T, nc *nats.Conn, what string, want ...string) {
	t.Helper()
	if got := poolOf(nc); !slices.Equal(got, want) {
		t.Fatalf("%s: pool %v, want %v", what, got, want)
	}
}

func TestServerPoolMovesWithReconnectErrCB(t *testing.T) {
	a, b := startServer(t, ""), startServer(t, "")
	dead := fmt.Sprintf("nats://127.0.0.1:%d", freePort(t))
	failed, reconnected := make(chan error, 10), make(chan struct{}, 10)
	opts := nats.GetDefaultOptions()
	opts.Url = a.url
	opts.ReconnectErrCB = func(_ *nats.Conn, err error) { failed <- err }
	opts.ReconnectedCB = func(*nats.Conn) { reconnected <- struct{}{} }
	nc, err := opts.Connect()
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	wantPoolOf(t, nc, "connected to A", a.url+"=0")

	if err := nc.SetServerPool([]string{dead, b.url}); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil || nc.ConnectedUrl() != a.url {
		t.Fatalf("after SetServerPool: flush %v, connected to %q; want A still", err, nc.ConnectedUrl())
	}
	wantPoolOf(t, nc, "replaced", dead+"=0", b.url+"=0")
	if err := nc.ForceReconnect(); err != nil {
		t.Fatal(err)
	}
	connWaitFor(t, reconnected, "the reconnect")
	if got := nc.ConnectedUrl(); got != b.url {
		t.Fatalf("connected to %q, want B (%s)", got, b.url)
	}
	// The failed attempt is told before the reconnect, once, in nats.go's
	// wording of errors, naming the server.
	if len(failed) != 1 {
		t.Fatalf("%d ReconnectErrCB calls, want 1", len(failed))
	}
	err = <-failed
	if _, raw := err.(*natsio.Error); raw || !strings.HasPrefix(err.Error(), "nats: ") || !strings.Contains(err.Error(), dead) {
		t.Fatalf("ReconnectErrCB got %v, want a translated error naming %s", err, dead)
	}
	wantPoolOf(t, nc, "moved to B", dead+"=1", b.url+"=0")

	// A URL without a scheme or port is completed as nats.go completes it;
	// a kept server keeps its count.
	host := strings.TrimPrefix(dead, "nats://")
	if err := nc.SetServerPool([]string{b.url, host, "127.0.0.1"}); err != nil {
		t.Fatal(err)
	}
	kept := []string{b.url + "=0", dead + "=1", "nats://127.0.0.1:4222=0"}
	wantPoolOf(t, nc, "completed", kept...)

	// Refused lists change nothing.
	err = nc.SetServerPool([]string{a.url, "invalid://bad url with spaces"})
	var parseErr *url.Error
	if !errors.As(err, &parseErr) {
		t.Fatalf("a bad URL: %v, want url.Parse's error", err)
	}
	if err := nc.SetServerPool([]string{a.url, "ws://127.0.0.1:8080"}); !errors.Is(err, nats.ErrMixingWebsocketSchemes) {
		t.Fatalf("a ws:// URL: %v, want ErrMixingWebsocketSchemes", err)
	}
	if err := nc.SetServerPool(nil); !errors.Is(err, natsio.ErrConfig) || !strings.HasPrefix(err.Error(), "nats: ") {
		t.Fatalf("an empty list: %v, want libnatsio's configuration error", err)
	}
	wantPoolOf(t, nc, "after refused lists", kept...)

	nc.Close()
	if err := nc.SetServerPool([]string{b.url}); !errors.Is(err, nats.ErrConnectionClosed) {
		t.Fatalf("closed: %v, want ErrConnectionClosed", err)
	}
}

// A WebSocket connection takes only ws:// and wss:// servers, and gives a
// URL without a scheme ws:// (port 80 without one), as nats.go.
func TestServerPoolOfWebSocketConnection(t *testing.T) {
	wsPort := freePort(t)
	s := startServer(t, fmt.Sprintf("websocket {\n listen: \"127.0.0.1:%d\"\n no_tls: true\n}\n", wsPort))
	wsURL := fmt.Sprintf("ws://127.0.0.1:%d", wsPort)
	nc, err := nats.Connect(wsURL, nats.ReconnectHandler(func(*nats.Conn) {}))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if err := nc.SetServerPool([]string{wsURL, s.url}); !errors.Is(err, nats.ErrMixingWebsocketSchemes) {
		t.Fatalf("a nats:// URL: %v, want ErrMixingWebsocketSchemes", err)
	}
	wantPoolOf(t, nc, "after the mixed list", wsURL+"=0")
	if err := nc.SetServerPool([]string{strings.TrimPrefix(wsURL, "ws://"), "127.0.0.1"}); err != nil {
		t.Fatal(err)
	}
	wantPoolOf(t, nc, "completed", wsURL+"=0", "ws://127.0.0.1:80=0")
}

// The option sets Options.ReconnectErrCB.
func TestReconnectErrHandlerOption(t *testing.T) {
	o := nats.GetDefaultOptions()
	cb := func(*nats.Conn, error) {}
	if err := nats.ReconnectErrHandler(cb)(&o); err != nil || !sameFunc(o.ReconnectErrCB, cb) {
		t.Fatalf("ReconnectErrHandler: %v, field %p", err, o.ReconnectErrCB)
	}
}
