package natsio

// Waiting for the library without holding an OS thread: every operation is
// started with its C `_async` function, and the calling goroutine waits on
// a channel closed when the token's tag comes out of the binding's
// completion queue (natsio_completion_queue): the library appends the tag
// on the thread that completed the operation and wakes one goroutine
// (runCompletions) through an eventfd in Go's netpoller. A context's end
// cancels the token.

/*
#include <stdlib.h>
#include "natsio_go.h"
*/
import "C"

import (
	"context"
	"errors"
	"io"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
)

// tokenWaiter is what a token's tag in the completion queue stands for.
// "The callback" below is its completion, run by runCompletions.
//
// With take set, the callback itself reads the result (of kind) into r
// and frees the token, then closes done: the waiting goroutine never
// touches the token again, so it never blocks in natsio_token_free
// waiting for the callback to return (which would hold its OS thread), and
// a goroutine that gave up (ctx) leaves nothing to free. Without take
// (futures) the callback only closes done.
//
// The callback deletes the handle before closing done. mu orders a
// cancel by the goroutine (whose ctx ended) before the callback's free of
// the token: the callback frees it under mu, the goroutine cancels it
// under mu only while it is not freed.
type tokenWaiter struct {
	done  chan struct{}
	tok   *C.natsio_token
	take  bool
	kind  C.int
	r     C.go_take // set by the callback before done is closed
	mu    sync.Mutex
	freed bool
	// The goroutine gave up (its ctx ended) before the callback ran:
	// nobody reads r, so the callback frees what it took.
	abandoned bool
}

// watch registers the token on the completion queue. It returns false,
// with nothing registered, when tok has completed already.
func (w *tokenWaiter) watch() (bool, error) {
	_, registered, err := w.watchTag()
	return registered, err
}

// watchTag is watch, also returning the registered tag.
func (w *tokenWaiter) watchTag() (uint64, bool, error) {
	if err := startCompletions(); err != nil {
		return 0, false, err
	}
	w.done = make(chan struct{})
	tag := waiters.add(w)
	enterLib()
	r := C.go_token_watch(w.tok, C.uint64_t(tag))
	leaveLib()
	switch r.status {
	case C.NATSIO_OK:
		return tag, true, nil
	case C.NATSIO_DONE:
		waiters.take(tag)
		return 0, false, nil
	}
	waiters.take(tag)
	return 0, false, resultError(r.status, r.detail)
}

// waiterTable maps the tags in the completion queue to their waiters. A
// tag whose waiter is gone (a future freed before its tag was polled) is
// skipped: unlike a cgo.Handle, a stale tag is harmless.
type waiterTable struct {
	mu   sync.Mutex
	next uint64
	m    map[uint64]*tokenWaiter
}

var waiters = waiterTable{m: make(map[uint64]*tokenWaiter)}

func (t *waiterTable) add(w *tokenWaiter) uint64 {
	t.mu.Lock()
	t.next++
	tag := t.next
	t.m[tag] = w
	t.mu.Unlock()
	liveHandles.Add(1)
	return tag
}

// take removes and returns tag's waiter (nil if it is gone).
func (t *waiterTable) take(tag uint64) *tokenWaiter {
	t.mu.Lock()
	w, ok := t.m[tag]
	delete(t.m, tag)
	t.mu.Unlock()
	if ok {
		liveHandles.Add(-1)
	}
	return w
}

var completions struct {
	once sync.Once
	err  error
}

// startCompletions creates the completion queue and its goroutine once.
func startCompletions() error {
	completions.once.Do(func() {
		fd := C.go_cq_start()
		if fd < 0 {
			completions.err = errorOf(ErrInternal, "cannot create the completion queue's wake-up fd")
			return
		}
		// A non-blocking fd: os.NewFile hands it to the netpoller, so the
		// goroutine waits without holding an OS thread.
		f := os.NewFile(uintptr(fd), "natsio-completions")
		go runCompletions(f)
	})
	return completions.err
}

// runCompletions wakes the waiters of completed tokens: one read of the
// wake-up fd per wake-up, then the queue is drained.
func runCompletions(f *os.File) {
	var wake [8]byte
	const batch = 256
	tags := (*[batch]C.uint64_t)(C.malloc(C.size_t(batch * 8)))
	for {
		if _, err := f.Read(wake[:]); err != nil && !errors.Is(err, io.EOF) {
			// Cannot happen for an eventfd or pipe we own; never spin.
			panic("natsio: completion queue wake-up fd: " + err.Error())
		}
		for {
			n := int(C.go_cq_poll(&tags[0], batch))
			for i := range n {
				if w := waiters.take(uint64(tags[i])); w != nil {
					w.completed()
				}
			}
			if n < batch {
				break
			}
		}
	}
}

// completed runs in the completion callback.
func (w *tokenWaiter) completed() {
	if !w.take {
		close(w.done)
		return
	}
	C.go_token_take(w.tok, w.kind, C.GO_KEEP_TOKEN, &w.r)
	// Wake the goroutine first; the token is freed meanwhile (a goroutine
	// whose ctx ended at the same time finds it completed: see cancel).
	close(w.done)
	w.mu.Lock()
	w.freed = true
	C.natsio_token_free(w.tok) // from its own callback: does not wait
	abandoned := w.abandoned
	w.mu.Unlock()
	if abandoned {
		// A cancelled operation (or a leaveOnEnd wait, which takes a
		// status only) has no result object: only the failure detail.
		C.free(unsafe.Pointer(w.r.detail))
	}
}

// giveUp ends the goroutine's wait when its ctx has ended: it cancels the
// operation (cancelOnEnd) or leaves it running (leaveOnEnd). True when the
// goroutine is to return ctx's error, false when the operation completed
// (or its item is on the way) and that outcome is to be returned instead.
func (w *tokenWaiter) giveUp(onEnd int) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.freed {
		if onEnd == leaveOnEnd {
			// Taken already, and not returned: free its detail here.
			C.free(unsafe.Pointer(w.r.detail))
			return true
		}
		return false
	}
	if onEnd == leaveOnEnd || C.natsio_token_cancel(w.tok) == C.NATSIO_OK {
		w.abandoned = true
		return true
	}
	return false
}

// How a wait treats its context's end.
const (
	cancelOnEnd = iota // cancel the operation (a request, a KV get, ...)
	leaveOnEnd         // stop waiting; the operation goes on (a drain)
)

// awaitToken waits until tok completes or ctx ends and reads its result
// of kind (a GO_TAKE_ value) into *r, which the caller has zeroed (the
// caller frees what r.out holds; r is left as it is when no result was
// read). tok is used up: freed here or by its callback. With cancelOnEnd
// the operation is cancelled when ctx ends; if it had completed meanwhile
// (or an iterator's item was already on its way to it), that outcome wins
// over ctx and is returned.
//
// The result goes through a pointer from the caller's frame, not as a
// returned C.go_take (336 bytes): every layer of a wait holding its own
// copies took a waiting goroutine's stack from 4 to 8 KiB, and 256 Gets in
// flight used 1 MB more stack than nats.go's.
func awaitToken(ctx context.Context, tok *C.natsio_token, kind C.int, onEnd int, r *C.go_take) error {
	if onLibraryThread() {
		// This goroutine runs a callback on one of the library's threads:
		// if it is the event thread, which runs the completion callbacks,
		// waiting for a callback would wait forever. Blocking this thread
		// in C is what the library expects there.
		if err := waitTokenBlocking(ctx, tok, onEnd); err != nil {
			C.natsio_token_free(tok)
			return err
		}
		return takeNow(tok, kind, r)
	}
	waits.Add(1)
	defer waits.Add(-1)
	if waitBriefly(ctx, tok) {
		return takeNow(tok, kind, r)
	}
	w := &tokenWaiter{tok: tok, take: true, kind: kind}
	registered, err := w.watch()
	if err != nil {
		C.natsio_token_free(tok)
		return err
	}
	if !registered {
		return takeNow(tok, kind, r)
	}
	if ctx.Done() != nil {
		select {
		case <-w.done:
		case <-ctx.Done():
			// The token is the callback's: it frees it once completed.
			if w.giveUp(onEnd) {
				return contextError(ctx)
			}
			// Completed already, or its item is on the way: that outcome
			// is imminent and must not be lost.
			<-w.done
		}
	} else {
		<-w.done
	}
	*r = w.r
	return resultError(r.status, r.detail)
}

// briefWaitMs bounds waitBriefly: most replies (requests, KV and
// JetStream API calls) come within it.
const briefWaitMs = 2

// briefGate bounds the goroutines in waitBriefly: each holds an OS thread.
var briefGate = make(chan struct{}, max(2, runtime.GOMAXPROCS(0)))

// waits counts the goroutines in awaitToken. With more of them than
// briefGate holds, operations overlap and the queue serves them better:
// threads blocked in C would only take turns with the scheduler.
var waits atomic.Int64

// waitSpinSkipped: whether the library skips its wait spin now (other
// programs keep the CPUs busy).
func waitSpinSkipped() bool { return bool(C.natsio_runtime_wait_spin_skipped()) }

// queuedForBusyCPUs counts the waits sent to the queue because the
// library skipped its wait spin (for the tests).
var queuedForBusyCPUs atomic.Int64

// waitBriefly waits for tok in C, up to briefWaitMs (less if ctx ends
// sooner), when a slot of briefGate is free at once; true when tok has
// completed. A thread blocked in C is woken by the completing library
// thread directly: measured on the request round trip, the completion
// queue's path (an eventfd read by Go's netpoller, then the waiting
// goroutine woken) costs a third more than this for a single waiter.
// Many waiters (more than the gate holds) go straight to the queue, which
// holds no thread per wait and serves overlapping operations better. So
// does every waiter while the library skips its wait spin (other programs
// keep the CPUs busy): without the spin a thread blocked in C saves little,
// and the scheduler takes its P after 20 us and wakes another thread for
// it (req 16 B beside a busy loop: p50 and p99 about 6% lower, rate 3%
// higher, CPU per request 8% lower; bench/README.md).
func waitBriefly(ctx context.Context, tok *C.natsio_token) bool {
	if waits.Load() > int64(cap(briefGate)) {
		return false
	}
	if waitSpinSkipped() {
		queuedForBusyCPUs.Add(1)
		return false
	}
	ms := int64(briefWaitMs)
	if d, ok := ctx.Deadline(); ok {
		left := time.Until(d).Milliseconds()
		if left < 1 {
			return false
		}
		ms = min(ms, left)
	}
	select {
	case briefGate <- struct{}{}:
	default:
		return false
	}
	done := C.natsio_token_wait(tok, C.int64_t(ms)) == C.NATSIO_OK
	<-briefGate
	return done
}

// takeNow reads a completed token's result and frees the token.
func takeNow(tok *C.natsio_token, kind C.int, r *C.go_take) error {
	enterLib()
	C.go_token_take(tok, kind, C.GO_FREE_TOKEN, r)
	leaveLib()
	return resultError(r.status, r.detail)
}

// waitTokenBlocking waits in C on a library thread; ctx's end cancels
// the token (which wakes the wait) or, with leaveOnEnd, is checked
// between slices of the wait.
func waitTokenBlocking(ctx context.Context, tok *C.natsio_token, onEnd int) error {
	if ctx.Done() == nil {
		C.natsio_token_wait(tok, C.NATSIO_WAIT_FOREVER)
		return nil
	}
	if onEnd == leaveOnEnd {
		for C.natsio_token_wait(tok, 20) != C.NATSIO_OK {
			if ctx.Err() != nil {
				return contextError(ctx)
			}
		}
		return nil
	}
	var mu sync.Mutex
	over := false
	stop := context.AfterFunc(ctx, func() {
		mu.Lock()
		defer mu.Unlock()
		if !over {
			C.natsio_token_cancel(tok)
		}
	})
	C.natsio_token_wait(tok, C.NATSIO_WAIT_FOREVER)
	if !stop() {
		// The canceller has started: let it finish before tok can be freed.
		mu.Lock()
		over = true
		mu.Unlock()
	}
	if C.natsio_token_status(tok) == C.NATSIO_ERR_CANCELLED && ctx.Err() != nil {
		return contextError(ctx)
	}
	return nil
}

// libGate bounds the goroutines inside the cgo calls of the asynchronous
// paths (starting an operation, registering its callback, taking an item).
// Such a call is short, but it may take tens of microseconds when it wakes
// a library thread on a busy machine, and past 20 µs Go's scheduler hands
// the goroutine's P to another OS thread: thousands of goroutines starting
// operations at once would add an OS thread per slow call. Beyond the
// bound, goroutines park (holding no thread) until a slot frees.
var libGate = make(chan struct{}, max(2, runtime.GOMAXPROCS(0)))

func enterLib() { libGate <- struct{}{} }

func leaveLib() { <-libGate }

// start makes one C call that starts an operation and reads its failure
// detail on the same thread.
func start(call func(tok **C.natsio_token) C.natsio_status) (*C.natsio_token, error) {
	var tok *C.natsio_token
	enterLib()
	lockThread()
	err := statusError(call(&tok))
	unlockThread()
	leaveLib()
	return tok, err
}

// await runs one asynchronous operation: starts it with call, waits for it
// in this goroutine (ctx's end cancels it) and reads its result of kind;
// the caller frees what r.out holds. A library timeout or cancellation
// while ctx has ended is reported as ctx's error. A ctx made by
// waitingBy asks for another wait (the generated raw verbs all come here,
// and the facade knows which operation is waited for how).
func await(ctx context.Context, kind C.int, call func(tok **C.natsio_token) C.natsio_status) (C.go_take, error) {
	var r C.go_take
	if ctx.Err() != nil {
		return r, contextError(ctx)
	}
	tok, err := start(call)
	if err != nil {
		return r, err
	}
	switch mode, _ := ctx.Value(waitModeKey{}).(int); mode {
	case leaveOnEnd:
		err = awaitToken(ctx, tok, kind, leaveOnEnd, &r)
	case startOnly:
		C.natsio_token_free(tok) // the operation goes on
	default:
		err = awaitStarted(ctx, tok, kind, &r)
	}
	return r, err
}

// startOnly, as a wait mode of waitingBy: start the operation and return
// at once; it goes on (a drain started from a handler that it waits for).
const startOnly = leaveOnEnd + 1

type waitModeKey struct{}

// waitingBy is ctx asking await for mode (leaveOnEnd: ctx's end leaves
// the operation running and awaitToken's outcome is returned as it is;
// startOnly) instead of cancelOnEnd.
func waitingBy(ctx context.Context, mode int) context.Context {
	return context.WithValue(ctx, waitModeKey{}, mode)
}

// awaitStarted is await for an operation already started.
func awaitStarted(ctx context.Context, tok *C.natsio_token, kind C.int, r *C.go_take) error {
	return ctxOutcome(ctx, awaitToken(ctx, tok, kind, cancelOnEnd, r))
}

// ctxOutcome reports a library timeout or cancellation that ctx caused as
// ctx's error, and a library timeout at ctx's deadline (a moment before
// ctx's own timer fired) as one matching context.DeadlineExceeded too.
func ctxOutcome(ctx context.Context, err error) error {
	var e *Error
	if err == nil || !errors.As(err, &e) {
		return err
	}
	if (e.Status == statusTimeout || e.Status == statusCancelled) && ctx.Err() != nil {
		return contextError(ctx)
	}
	if deadlineReached(ctx, err) && e.cause == nil {
		e.cause = context.DeadlineExceeded
	}
	return err
}

// takeString reads a string result and frees it.
func takeString(r C.go_take) string {
	defer C.natsio_string_free((*C.char)(r.out))
	return C.GoString((*C.char)(r.out))
}

// takeStringList copies a natsio_string_list result and frees it (an
// empty slice, not nil, for an empty list).
func takeStringList(r C.go_take) []string {
	list := (*C.natsio_string_list)(r.out)
	defer C.natsio_string_list_free(list)
	return stringList(list)
}

func stringList(list *C.natsio_string_list) []string {
	n := int(C.natsio_string_list_count(list))
	out := make([]string, 0, n)
	for i := range n {
		out = append(out, C.GoString(C.natsio_string_list_get(list, C.size_t(i))))
	}
	return out
}

// ---------------------------------------------------------------------------
// The library's callback threads
// ---------------------------------------------------------------------------

// libThreads are the library threads that have run a Go callback (a
// subscription's dispatcher, a client's event thread), keyed by pthread
// id, with the address of the client they serve (0: not known yet). Code
// running on one of them is inside a callback: it must not wait for a
// token callback (the event thread may be the one to run it), and a
// Drain or Close from there must not wait for the very callback it runs
// in. The client is kept as an address, not a *Conn, so that the registry
// does not keep a dropped Conn from its finalizer.
var (
	libThreads     sync.Map // uintptr (pthread_t) -> uintptr (*C.natsio_client)
	libThreadCount atomic.Int32
)

// currentThread is the calling OS thread's id.
func currentThread() uintptr { return uintptr(C.go_thread_id()) }

// registerLibThread records the calling thread as a callback thread of
// client (0: unknown) and returns its id.
func registerLibThread(client *C.natsio_client) uintptr {
	id, c := currentThread(), uintptr(unsafe.Pointer(client))
	if old, loaded := libThreads.LoadOrStore(id, c); !loaded {
		libThreadCount.Add(1)
	} else if old.(uintptr) == 0 && c != 0 {
		libThreads.Store(id, c)
	}
	return id
}

func unregisterLibThread(id uintptr) {
	if _, ok := libThreads.LoadAndDelete(id); ok {
		libThreadCount.Add(-1)
	}
}

// unregisterClientThreads forgets the threads of a closed client: none of
// its callbacks runs any more (they may end and be reused).
func unregisterClientThreads(client *C.natsio_client) {
	if libThreadCount.Load() == 0 {
		return
	}
	c := uintptr(unsafe.Pointer(client))
	libThreads.Range(func(id, v any) bool {
		if v.(uintptr) == c {
			unregisterLibThread(id.(uintptr))
		}
		return true
	})
}

// libThreadClient is the client (0: unknown) whose callback runs on this
// goroutine's thread, and whether one does. Inside a C-to-Go callback the
// goroutine stays on its thread.
func libThreadClient() (uintptr, bool) {
	if libThreadCount.Load() == 0 {
		return 0, false
	}
	c, ok := libThreads.Load(currentThread())
	if !ok {
		return 0, false
	}
	return c.(uintptr), true
}

func onLibraryThread() bool {
	_, ok := libThreadClient()
	return ok
}

// inCallbackOf reports whether this goroutine runs a callback of client
// (or of a client not known yet).
func inCallbackOf(client *C.natsio_client) bool {
	c, ok := libThreadClient()
	return ok && (c == 0 || c == uintptr(unsafe.Pointer(client)))
}
