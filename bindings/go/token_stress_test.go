package natsio_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	natsio "github.com/libnatsio/natsio/bindings/go"
)

// The token waiter (token.go) under stress: many requests and flushes in
// flight at once, each with a context that ends at a random moment around
// the reply's arrival (so a context's end races the completion callback),
// and the connection closed while about half of them are still pending.
// Every call returns exactly one outcome: its own reply (never another
// request's: a waiter woken with a wrong result shows as a wrong payload),
// its context's error, or ErrConnectionClosed; none hangs; every waiter's
// tag leaves the table (nothing leaks). Run under -race by scripts/test.sh.
func TestTokenWaiterCompletionsRaceContextsAndClose(t *testing.T) {
	s := startTestServer(t)
	responder := connectTo(t, s.url)
	const subj = "stress.echo"
	if _, err := responder.Subscribe(subj, func(m *natsio.Msg) { m.Respond(m.Data) }); err != nil {
		t.Fatal(err)
	}
	flush(t, responder)
	baseline := natsio.LiveHandlesForTest()
	nc := connectTo(t, s.url)

	// Two rounds: few callers (they wait briefly in C, then on the
	// completion queue) and many (straight to the queue).
	for _, callers := range []int{2, 64} {
		t.Run(fmt.Sprint(callers, "_callers"), func(t *testing.T) {
			stressRound(t, nc, subj, callers, 40)
		})
	}

	// The close round: a fresh connection closed while its calls are in
	// flight.
	closing := connectTo(t, s.url)
	const callers, each = 64, 40
	var finished atomic.Int64
	var replies, cancelled, closed atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, callers*each)
	for g := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				outcome := oneCall(closing, subj, g, i)
				finished.Add(1)
				switch {
				case outcome == nil:
					replies.Add(1)
				case errors.Is(outcome, context.Canceled), errors.Is(outcome, context.DeadlineExceeded):
					cancelled.Add(1)
				case errors.Is(outcome, natsio.ErrConnectionClosed):
					closed.Add(1)
				default:
					errs <- outcome
				}
			}
		}()
	}
	// Close once about half of the calls have returned.
	eventually(t, "half of the calls returned", func() bool { return finished.Load() >= callers*each/2 })
	if err := closing.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	waitGroupWithin(t, &wg, 60*time.Second, "calls pending after close")
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := replies.Load() + cancelled.Load() + closed.Load(); n != callers*each {
		t.Fatalf("%d outcomes for %d calls", n, callers*each)
	}
	if closed.Load() == 0 {
		t.Fatalf("no call was pending at close (%d replies, %d cancelled): the race was not run", replies.Load(), cancelled.Load())
	}
	t.Logf("close round: %d replies, %d cancelled, %d closed", replies.Load(), cancelled.Load(), closed.Load())
	waitHandlesReleased(t, baseline)
}

// stressRound runs callers goroutines making `each` calls on nc, all of
// which must end with their own reply or their context's error.
func stressRound(t *testing.T, nc *natsio.Conn, subj string, callers, each int) {
	var wg sync.WaitGroup
	var replies, cancelled atomic.Int64
	errs := make(chan error, callers*each)
	for g := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				switch outcome := oneCall(nc, subj, g, i); {
				case outcome == nil:
					replies.Add(1)
				case errors.Is(outcome, context.Canceled), errors.Is(outcome, context.DeadlineExceeded):
					cancelled.Add(1)
				default:
					errs <- outcome
				}
			}
		}()
	}
	waitGroupWithin(t, &wg, 60*time.Second, "calls still pending")
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := replies.Load() + cancelled.Load(); n != int64(callers*each) {
		t.Fatalf("%d outcomes for %d calls", n, callers*each)
	}
	if replies.Load() == 0 {
		t.Fatalf("no call got its reply (%d cancelled)", cancelled.Load())
	}
	t.Logf("%d replies, %d cancelled", replies.Load(), cancelled.Load())
}

// oneCall makes call i of goroutine g: a request whose reply must carry
// its own payload, or (every fourth) a flush; its context is cancelled
// at once, after a random pause of up to 2 ms (about a round trip), or
// not at all. nil when it succeeded; an error naming a wrong result.
func oneCall(nc *natsio.Conn, subj string, g, i int) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	switch rand.IntN(3) {
	case 0:
		cancel()
	case 1:
		time.AfterFunc(time.Duration(rand.IntN(2000))*time.Microsecond, cancel)
	}
	if i%4 == 3 {
		if err := nc.Flush(ctx); err != nil {
			return outcomeOf(err, fmt.Sprintf("flush %d/%d", g, i))
		}
		return nil
	}
	payload := fmt.Appendf(nil, "%d/%d", g, i)
	reply, err := nc.Request(ctx, subj, payload)
	if err != nil {
		return outcomeOf(err, fmt.Sprintf("request %s", payload))
	}
	if !bytes.Equal(reply.Data, payload) {
		return fmt.Errorf("request %s got the reply %q", payload, reply.Data)
	}
	return nil
}

// outcomeOf passes an expected failure (a context's end, a closed
// connection) through and names any other.
func outcomeOf(err error, what string) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, natsio.ErrConnectionClosed) {
		return err
	}
	return fmt.Errorf("%s: unexpected %w", what, err)
}

// waitGroupWithin fails the test when wg is not done within d.
func waitGroupWithin(t *testing.T, wg *sync.WaitGroup, d time.Duration, what string) {
	t.Helper()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s after %v", what, d)
	}
}
