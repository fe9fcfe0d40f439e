package natsio_test

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	natsio "github.com/libnatsio/natsio/bindings/go"
)

// delayLog records a reconnect delay handler's calls and the failed
// attempts and reconnects around them.
type delayLog struct {
	mu          sync.Mutex
	args        []int
	failed      []error
	reconnected bool
	// panicOn makes that call (1-based) panic.
	panicOn int
}

func (d *delayLog) options() []natsio.Option {
	return []natsio.Option{
		natsio.MaxReconnects(-1),
		natsio.CustomReconnectDelay(func(attempts int) time.Duration {
			d.mu.Lock()
			d.args = append(d.args, attempts)
			fail := len(d.args) == d.panicOn
			d.mu.Unlock()
			if fail {
				panic("no delay today")
			}
			return 20 * time.Millisecond
		}),
		natsio.ReconnectErrHandler(func(_ *natsio.Conn, err error) {
			d.mu.Lock()
			d.failed = append(d.failed, err)
			d.mu.Unlock()
		}),
		natsio.ReconnectHandler(func(*natsio.Conn) {
			d.mu.Lock()
			d.reconnected = true
			d.mu.Unlock()
		}),
	}
}

func (d *delayLog) calls() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.args)
}

// paceReconnect is the conformance case reconnect_delay_callback: a
// client of its own server, which is killed and restarted once the
// handler was called twice; the handler's arguments are 1..n and n-1
// attempts failed.
func paceReconnect(t *testing.T, d *delayLog) {
	t.Helper()
	s := startTestServer(t)
	nc := connectTo(t, s.url, d.options()...)
	s.stop()
	eventually(t, "two calls of the handler", func() bool { return d.calls() >= 2 })
	s.restart(t)
	eventually(t, "reconnected", func() bool {
		d.mu.Lock()
		defer d.mu.Unlock()
		return d.reconnected
	})
	flush(t, nc)
	d.mu.Lock()
	defer d.mu.Unlock()
	for i, a := range d.args {
		if a != i+1 {
			t.Fatalf("handler arguments %v, want 1..%d", d.args, len(d.args))
		}
	}
	if len(d.failed) != len(d.args)-1 {
		t.Fatalf("%d failed attempts for %d calls (%v), want one fewer", len(d.failed), len(d.args), d.failed)
	}
}

func TestCustomReconnectDelayPacesEachAttempt(t *testing.T) {
	paceReconnect(t, &delayLog{})
}

// A panicking handler fails the attempt it paces (ErrConfig, naming the
// callback) and the client goes on.
func TestCustomReconnectDelayPanicFailsThatAttempt(t *testing.T) {
	d := &delayLog{panicOn: 1}
	paceReconnect(t, d)
	d.mu.Lock()
	defer d.mu.Unlock()
	var nerr *natsio.Error
	if !errors.Is(d.failed[0], natsio.ErrConfig) || !errors.As(d.failed[0], &nerr) ||
		!strings.Contains(nerr.Detail, "reconnect delay callback failed") {
		t.Fatalf("first failed attempt %v, want ErrConfig naming the callback", d.failed[0])
	}
}
