package nats_test

// Handlers set after Connect (Conn.Set*Handler) are the ones the events
// call, as with nats.go; the getters return them.

import (
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/libnatsio/natsio/bindings/go/nats"
)

func sameFunc(a, b any) bool { return reflect.ValueOf(a).Pointer() == reflect.ValueOf(b).Pointer() }

func TestConnHandlersSetAfterConnectAreCalled(t *testing.T) {
	s := startServer(t, `authorization { users = [ { user: a, password: b, permissions: { publish: { deny: "forbidden" } } } ] }`)
	replacedCalled := make(chan string, 10)
	nc, err := nats.Connect(s.url, nats.UserInfo("a", "b"), nats.MaxReconnects(-1), nats.ReconnectWait(20*time.Millisecond),
		nats.ClosedHandler(func(*nats.Conn) { replacedCalled <- "closed" }),
		nats.DisconnectErrHandler(func(*nats.Conn, error) { replacedCalled <- "disconnected" }),
		nats.ReconnectHandler(func(*nats.Conn) { replacedCalled <- "reconnected" }),
		nats.ErrorHandler(func(*nats.Conn, *nats.Subscription, error) { replacedCalled <- "error" }))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()

	disconnected, reconnected := make(chan error, 10), make(chan *nats.Conn, 10)
	closed, asyncErrs := make(chan *nats.Conn, 10), make(chan error, 10)
	onDisconnect := func(c *nats.Conn, err error) { disconnected <- err }
	onReconnect := func(c *nats.Conn) { reconnected <- c }
	onClose := func(c *nats.Conn) { closed <- c }
	onError := func(c *nats.Conn, _ *nats.Subscription, err error) { asyncErrs <- err }
	nc.SetDisconnectErrHandler(onDisconnect)
	nc.SetReconnectHandler(onReconnect)
	nc.SetClosedHandler(onClose)
	nc.SetErrorHandler(onError)
	if !sameFunc(nc.DisconnectErrHandler(), onDisconnect) || !sameFunc(nc.ReconnectHandler(), onReconnect) ||
		!sameFunc(nc.ClosedHandler(), onClose) || !sameFunc(nc.ErrorHandler(), onError) {
		t.Fatal("a getter does not return the handler just set")
	}

	if err := nc.Publish("forbidden", nil); err != nil {
		t.Fatal(err)
	}
	if err := connWaitFor(t, asyncErrs, "the error handler"); !errors.Is(err, nats.ErrPermissionViolation) {
		t.Fatalf("error handler got %v, want a permissions violation", err)
	}

	s.restart()
	connWaitFor(t, disconnected, "the disconnect handler")
	if c := connWaitFor(t, reconnected, "the reconnect handler"); c != nc {
		t.Fatal("the reconnect handler did not get the connection")
	}

	nc.Close()
	if c := connWaitFor(t, closed, "the closed handler"); c != nc {
		t.Fatal("the closed handler did not get the connection")
	}
	select {
	case which := <-replacedCalled:
		t.Fatalf("the %s handler given to Connect was called after it was replaced", which)
	default:
	}
}

// A nil *Conn's setters and getters do nothing, as nats.go's.
func TestConnHandlersOfNilConn(t *testing.T) {
	var nc *nats.Conn
	nc.SetClosedHandler(func(*nats.Conn) {})
	nc.SetErrorHandler(nil)
	if nc.ClosedHandler() != nil || nc.ErrorHandler() != nil || nc.ReconnectHandler() != nil ||
		nc.DisconnectErrHandler() != nil || nc.DiscoveredServersHandler() != nil {
		t.Fatal("a nil Conn returned a handler")
	}
}

// The deprecated handler without an error is called only while no
// DisconnectErrHandler is set.
func TestConnDeprecatedDisconnectHandler(t *testing.T) {
	s := startServer(t, "")
	plain := make(chan struct{}, 10)
	nc, err := nats.Connect(s.url, nats.MaxReconnects(-1), nats.ReconnectWait(20*time.Millisecond),
		nats.DisconnectHandler(func(*nats.Conn) { plain <- struct{}{} }))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	reconnected := make(chan struct{}, 10)
	nc.SetReconnectHandler(func(*nats.Conn) { reconnected <- struct{}{} })

	s.restart()
	connWaitFor(t, plain, "the deprecated disconnect handler")
	connWaitFor(t, reconnected, "the reconnect")

	withErr := make(chan error, 10)
	nc.SetDisconnectErrHandler(func(_ *nats.Conn, err error) { withErr <- err })
	s.restart()
	connWaitFor(t, withErr, "the disconnect handler with the error")
	connWaitFor(t, reconnected, "the second reconnect")
	select {
	case <-plain:
		t.Fatal("the deprecated handler was called although DisconnectErrHandler was set")
	default:
	}

	// SetDisconnectHandler replaces the deprecated one.
	nc.SetDisconnectErrHandler(nil)
	replaced := make(chan struct{}, 10)
	nc.SetDisconnectHandler(func(*nats.Conn) { replaced <- struct{}{} })
	s.restart()
	connWaitFor(t, replaced, "the handler of SetDisconnectHandler")
	select {
	case <-plain:
		t.Fatal("the replaced deprecated handler was called")
	default:
	}
}

// SetDiscoveredServersHandler after Connect hears of a server joining the
// cluster; a connection with IgnoreDiscoveredServers keeps its pool.
func TestConnDiscoveredServersHandlerSetAfterConnect(t *testing.T) {
	clusterPort := freePort(t)
	a := startServer(t, "", "--cluster_name", "c", "-cluster", fmt.Sprintf("nats://127.0.0.1:%d", clusterPort))
	nc, err := nats.Connect(a.url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	kept, err := nats.Connect(a.url, nats.IgnoreDiscoveredServers())
	if err != nil {
		t.Fatal(err)
	}
	defer kept.Close()
	discovered := make(chan []string, 10)
	nc.SetDiscoveredServersHandler(func(c *nats.Conn) { discovered <- c.DiscoveredServers() })
	if nc.DiscoveredServersHandler() == nil {
		t.Fatal("DiscoveredServersHandler is nil after SetDiscoveredServersHandler")
	}

	b := startServer(t, "", "--cluster_name", "c", "-cluster", fmt.Sprintf("nats://127.0.0.1:%d", freePort(t)),
		"-routes", fmt.Sprintf("nats://127.0.0.1:%d", clusterPort))
	found := connWaitFor(t, discovered, "the discovered servers handler")
	if len(found) == 0 {
		t.Fatal("the handler ran with no discovered server")
	}
	if len(nc.Servers()) != 2 {
		t.Fatalf("pool %v, want server a and b (%s)", nc.Servers(), b.url)
	}
	// The server told every client at once: once kept has answered a
	// flush, it has read that INFO too.
	if err := kept.Flush(); err != nil {
		t.Fatal(err)
	}
	if pool := kept.Servers(); len(pool) != 1 {
		t.Fatalf("pool with IgnoreDiscoveredServers %v, want only the server given", pool)
	}
}

// Close of a live connection calls the disconnect handler (without an
// error), then the closed one, as nats.go's does. With
// NoCallbacksAfterClientClose, Close calls neither; a Drain still calls
// both.
func TestConnNoCallbacksAfterClientClose(t *testing.T) {
	s := startServer(t, "")
	events := make(chan string, 10)
	record := []nats.Option{
		nats.ClosedHandler(func(*nats.Conn) { events <- "closed" }),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) { events <- fmt.Sprint("disconnected ", err) }),
	}
	wantEvents := func(when string, want ...string) {
		t.Helper()
		for _, w := range want {
			if got := connWaitFor(t, events, when); got != w {
				t.Fatalf("%s: event %q, want %q", when, got, w)
			}
		}
	}

	plain, err := nats.Connect(s.url, record...)
	if err != nil {
		t.Fatal(err)
	}
	plain.Close()
	wantEvents("Close", "disconnected <nil>", "closed")

	quiet, err := nats.Connect(s.url, append(record, nats.NoCallbacksAfterClientClose())...)
	if err != nil {
		t.Fatal(err)
	}
	quiet.Close()
	// The library delivers CLOSED before Close returns: a handler would
	// have run by now.
	select {
	case got := <-events:
		t.Fatalf("%q after Close with NoCallbacksAfterClientClose", got)
	default:
	}

	drained, err := nats.Connect(s.url, append(record, nats.NoCallbacksAfterClientClose())...)
	if err != nil {
		t.Fatal(err)
	}
	if err := drained.Drain(); err != nil {
		t.Fatal(err)
	}
	wantEvents("Drain", "disconnected <nil>", "closed")
}
