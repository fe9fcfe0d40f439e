package natsio_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"testing"
	"time"

	natsio "github.com/libnatsio/natsio/bindings/go"
)

// busyCPUsChild marks the child process TestRequestsOnBusyCPUsWaitOnTheQueue
// runs itself in.
const busyCPUsChild = "NATSIO_GO_TEST_BUSY_CPUS_CHILD"

// While other programs keep the CPUs busy the library skips its wait spin,
// and a request's goroutine then waits on the completion queue instead of
// blocked in C (where Go's scheduler would take its P after 20 us): the
// replies and deadlines stay what they are. Run in a process of its own:
// a wait spin set by another test (SetWaitSpin) applies whatever the load,
// for the rest of the process.
func TestRequestsOnBusyCPUsWaitOnTheQueue(t *testing.T) {
	if os.Getenv(busyCPUsChild) == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestRequestsOnBusyCPUsWaitOnTheQueue$", "-test.v", "-test.count=1")
		cmd.Env = append(os.Environ(), busyCPUsChild+"=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("the child process failed: %v\n%s", err, out)
		}
		return
	}
	// Busy loops in processes of their own, one per CPU: the library
	// counts everything but this process.
	for range runtime.NumCPU() {
		hog := exec.Command("sh", "-c", "while :; do :; done")
		if err := hog.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { hog.Process.Kill(); hog.Wait() })
	}
	// The library reads the CPUs' use every 250 ms (the first verdict
	// after the first reading), so it takes a few readings to see them.
	for deadline := time.Now().Add(30 * time.Second); !natsio.WaitSpinSkippedForTest(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the busy loops never made the library skip its wait spin")
		}
	}

	nc := connect(t)
	subj := subject(t, "echo")
	if _, err := nc.Subscribe(subj, func(m *natsio.Msg) { _ = m.Respond(m.Data) }); err != nil {
		t.Fatal(err)
	}
	flush(t, nc)
	const requests = 50
	queuedBefore := natsio.QueuedForBusyCPUsForTest()
	for i := range requests {
		want := fmt.Sprint("busy ", i)
		m, err := nc.Request(ctxTimeout(t, 10*time.Second), subj, []byte(want))
		if err != nil || string(m.Data) != want {
			t.Fatalf("request %d: %v", i, err)
		}
	}
	// Each wait went to the queue while the spin was skipped; the verdict
	// is read again every 250 ms and may turn for a reading, not for most.
	if queued := natsio.QueuedForBusyCPUsForTest() - queuedBefore; queued < requests/2 {
		t.Fatalf("%d of %d requests waited on the queue", queued, requests)
	}
	// A deadline still ends a wait on the queue.
	silent, err := nc.SubscribeSync(subj + ".silent")
	if err != nil {
		t.Fatal(err)
	}
	flush(t, nc)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, err := nc.Request(ctx, subj+".silent", nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a request nobody answers ended with %v", err)
	}
	_ = silent.Unsubscribe()
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("a 100 ms deadline ended the wait after %v", took)
	}
}
