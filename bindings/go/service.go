package natsio

// Services (ADR-32) on the library, for package micro (through
// internal/service: see there why). The core answers $SRV.PING|INFO|STATS
// and keeps the stats; this file runs the Go handlers in each endpoint's
// push mode (natsio_endpoint_set_callback), as callback subscriptions run
// theirs.

/*
#include <stdlib.h>
#include "natsio_go.h"
*/
import "C"

import (
	"context"
	"fmt"
	"iter"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/libnatsio/natsio/bindings/go/internal/service"
)

func init() {
	service.Add = addService
	service.Discover = discoverServices
}

// runningService is a service started on a Conn. Until it has stopped it
// is held by liveServices, so a service the program keeps no reference
// to goes on serving (natsio_service_free would stop it), as its
// connection does.
type runningService struct {
	ptr  *C.natsio_service
	conn *Conn
	id   string

	mu     sync.Mutex
	groups []*C.natsio_service_group // freed with the service
}

var liveServices sync.Map // *runningService -> struct{}

func addService(conn any, configJSON []byte, h service.Handlers) (service.Service, error) {
	nc, ok := conn.(*Conn)
	if !ok || nc == nil {
		return nil, &Error{Status: statusInvalidArgument, Detail: fmt.Sprintf("a service needs a *natsio.Conn, not %T", conn)}
	}
	cfg, err := cString(string(configJSON))
	if err != nil {
		return nil, err
	}
	var ptr *C.natsio_service
	lockThread()
	err = statusError(C.natsio_client_add_service(nc.ptr, cPtr(cfg), &ptr))
	unlockThread()
	runtime.KeepAlive(nc)
	if err != nil {
		return nil, err
	}
	s := &runningService{ptr: ptr, conn: nc, id: C.GoString(C.natsio_service_id(ptr))}
	runtime.SetFinalizer(s, (*runningService).free)
	callbacks := &serviceCallbacks{handlers: h, client: nc.ptr}
	if h.Error != nil {
		err = s.register(callbacks, func(hd C.uintptr_t) C.natsio_status { return C.go_service_set_error_callback(ptr, hd) })
	}
	if err == nil && h.Stats != nil {
		err = s.register(callbacks, func(hd C.uintptr_t) C.natsio_status { return C.go_service_set_stats_callback(ptr, hd) })
	}
	if err != nil {
		runtime.SetFinalizer(s, nil)
		s.free() // stops it at once
		return nil, err
	}
	liveServices.Store(s, struct{}{})
	go s.awaitEnd(h.Done)
	return s, nil
}

// register sets one of the service's callbacks with a handle of its own
// (each is released on its own).
func (s *runningService) register(cb *serviceCallbacks, set func(C.uintptr_t) C.natsio_status) error {
	hd, box := newHandle(cb)
	lockThread()
	err := statusError(set(C.uintptr_t(hd)))
	unlockThread()
	if err != nil {
		discardHandle(hd, box)
	}
	return err
}

// awaitEnd waits (a library token, no OS thread) until the service has
// stopped, by Stop or the connection's close, then lets it go and calls
// done.
func (s *runningService) awaitEnd(done func()) {
	_ = rawServiceEnd(context.Background(), s.ptr)
	liveServices.Delete(s)
	if done != nil {
		defer func() { _ = recover() }() // a panicking DoneHandler must not end the program
		done()
	}
}

func (s *runningService) free() {
	for _, g := range s.groups {
		C.natsio_service_group_free(g)
	}
	C.natsio_service_free(s.ptr)
}

func (s *runningService) ID() string { return s.id }

type serviceGroup struct {
	service.GroupMark
	ptr *C.natsio_service_group
}

func groupPtr(g service.Group) *C.natsio_service_group {
	if g == nil {
		return nil
	}
	return g.(*serviceGroup).ptr
}

func (s *runningService) AddGroup(parent service.Group, configJSON []byte) (service.Group, error) {
	cfg, err := cString(string(configJSON))
	if err != nil {
		return nil, err
	}
	var g *C.natsio_service_group
	lockThread()
	err = statusError(C.natsio_service_add_group(s.ptr, groupPtr(parent), cPtr(cfg), &g))
	unlockThread()
	runtime.KeepAlive(s)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.groups = append(s.groups, g)
	s.mu.Unlock()
	return &serviceGroup{ptr: g}, nil
}

func (s *runningService) AddEndpoint(group service.Group, configJSON []byte, h service.Handler) (subject, queueGroup string, err error) {
	cfg, err := cString(string(configJSON))
	if err != nil {
		return "", "", err
	}
	defer runtime.KeepAlive(s)
	var ep *C.natsio_endpoint
	lockThread()
	err = statusError(C.natsio_service_add_endpoint(s.ptr, groupPtr(group), cPtr(cfg), &ep))
	unlockThread()
	if err != nil {
		return "", "", err
	}
	subject = C.GoString(C.natsio_endpoint_subject(ep))
	if q := C.natsio_endpoint_queue_group(ep); q != nil {
		queueGroup = C.GoString(q)
	}
	// The endpoint runs until the service stops; its handle is only
	// needed to set the push mode. The library's handle of the state is
	// released after the endpoint's last call.
	defer C.natsio_endpoint_free(ep)
	st := &endpointState{svc: s, handler: h}
	hd, box := newHandle(st)
	lockThread()
	err = statusError(C.go_endpoint_set_callback(ep, C.uintptr_t(hd)))
	unlockThread()
	if err != nil {
		discardHandle(hd, box)
		C.natsio_endpoint_stop(ep)
		return "", "", err
	}
	return subject, queueGroup, nil
}

func (s *runningService) InfoJSON() ([]byte, error) {
	defer runtime.KeepAlive(s)
	j, err := s.conn.ownedString(func(out **C.char) C.natsio_status { return C.natsio_service_info_json(s.ptr, out) })
	return []byte(j), err
}

func (s *runningService) StatsJSON() ([]byte, error) {
	defer runtime.KeepAlive(s)
	j, err := s.conn.ownedString(func(out **C.char) C.natsio_status { return C.natsio_service_stats_json(s.ptr, out) })
	return []byte(j), err
}

func (s *runningService) Reset() error {
	lockThread()
	err := statusError(C.natsio_service_reset(s.ptr))
	unlockThread()
	runtime.KeepAlive(s)
	return err
}

// Stop drains every endpoint and the monitoring subscriptions and waits
// for the drain. Called from one of the connection's handlers (an
// endpoint's own, whose final call the drain waits for) it starts the
// stop and returns at once.
func (s *runningService) Stop(ctx context.Context) error {
	defer runtime.KeepAlive(s)
	if inCallbackOf(s.conn.ptr) {
		return rawServiceStop(waitingBy(ctx, startOnly), s.ptr)
	}
	return rawServiceStop(ctx, s.ptr)
}

func (s *runningService) Stopped() bool {
	stopped := bool(C.natsio_service_is_stopped(s.ptr))
	runtime.KeepAlive(s)
	return stopped
}

// serviceCallbacks is the user data of a service's error and stats
// callbacks.
type serviceCallbacks struct {
	handlers service.Handlers
	client   *C.natsio_client
}

//export natsioGoServiceError
func natsioGoServiceError(userData unsafe.Pointer, endpoint, subject *C.char, code C.int32_t, description *C.char) {
	cb := valueOf(userData).(*serviceCallbacks)
	if code == 0 {
		// Requests dropped over an endpoint's pending limits, told on the
		// client's events thread: a library thread, as for natsioGoError
		// (a Stop called from the handler must not wait for the drain
		// there). The other errors come on the thread that saw them,
		// possibly a goroutine's answering a request later.
		registerLibThread(cb.client)
	}
	defer func() { _ = recover() }() // a panicking error handler must not unwind into C
	cb.handlers.Error(C.GoString(endpoint), C.GoString(subject), int32(code), C.GoString(description))
}

//export natsioGoServiceStats
func natsioGoServiceStats(userData unsafe.Pointer, endpoint, subject *C.char) (data *C.char) {
	cb := valueOf(userData).(*serviceCallbacks)
	defer func() {
		if recover() != nil {
			data = nil
		}
	}()
	j := cb.handlers.Stats(C.GoString(endpoint), C.GoString(subject))
	if j == nil {
		return nil
	}
	return C.CString(string(j)) // malloc'd: the library frees it
}

// endpointState is the user data of an endpoint's push mode.
type endpointState struct {
	svc     *runningService
	handler service.Handler
	// thread is the library thread delivering the requests, set at the
	// first call.
	thread      atomic.Uintptr
	lastSubject string // only touched by the delivering thread
}

// natsioGoServiceRequest receives an endpoint's requests, one at a time
// on the endpoint's library thread, then once with no request at its end.
//
//export natsioGoServiceRequest
func natsioGoServiceRequest(userData unsafe.Pointer, req *C.natsio_service_request, status C.natsio_status) C.natsio_status {
	st := valueOf(userData).(*endpointState)
	if st.thread.Load() == 0 {
		st.thread.Store(registerLibThread(st.svc.conn.ptr))
	}
	if req == nil {
		unregisterLibThread(st.thread.Load())
		return C.NATSIO_OK
	}
	var v C.go_msg_view
	C.go_service_request_read(req, &v)
	r := &serviceRequest{ptr: req, msg: msgFromView(&v, st.svc.conn, &st.lastSubject)}
	st.serve(r)
	return C.NATSIO_OK
}

// serve runs the handler; a panic fails the request (a 500 reply unless
// it was answered, an error counted, the error callback called) and the
// endpoint goes on.
func (st *endpointState) serve(r *serviceRequest) {
	defer r.handlerReturned()
	defer func() {
		if v := recover(); v != nil {
			r.fail(fmt.Sprintf("handler panicked: %v", v))
		}
	}()
	st.handler(r)
}

// serviceRequest is a request handed to a Go handler. Its library request
// is borrowed during the handler; one not answered by then is cloned, so
// that it can be answered later from any goroutine (it is counted in the
// stats when answered, or when this value is collected).
type serviceRequest struct {
	msg *Msg

	mu       sync.Mutex
	ptr      *C.natsio_service_request // nil: answered, and the handler has returned
	answered bool
}

func (r *serviceRequest) Subject() string        { return r.msg.Subject }
func (r *serviceRequest) Reply() string          { return r.msg.Reply }
func (r *serviceRequest) Data() []byte           { return r.msg.Data }
func (r *serviceRequest) Header() service.Header { return r.msg.Header }

func (r *serviceRequest) Respond(h service.Header, data []byte) error {
	return r.answer(h, func(p *C.natsio_service_request, hdrs *C.natsio_headers) C.natsio_status {
		d, n := dataPtr(data)
		return C.natsio_service_request_respond(p, hdrs, d, n)
	})
}

func (r *serviceRequest) RespondError(code int32, description string, h service.Header, data []byte) error {
	desc, err := cString(description)
	if err != nil {
		return err
	}
	return r.answer(h, func(p *C.natsio_service_request, hdrs *C.natsio_headers) C.natsio_status {
		d, n := dataPtr(data)
		return C.natsio_service_request_respond_error(p, C.int32_t(code), cPtr(desc), hdrs, d, n)
	})
}

func (r *serviceRequest) answer(h service.Header, send func(*C.natsio_service_request, *C.natsio_headers) C.natsio_status) error {
	hdrs, err := cHeaders(Header(h))
	if err != nil {
		return err
	}
	if hdrs != nil {
		defer C.natsio_headers_free(hdrs)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ptr == nil {
		return &Error{Status: Status(ErrIllegalState.(*sentinel).code), Detail: "the request was answered already"}
	}
	lockThread()
	err = statusError(send(r.ptr, hdrs))
	unlockThread()
	if err == nil {
		r.answered = true
	}
	return err
}

func (r *serviceRequest) fail(description string) {
	// The description becomes a header value: one line.
	desc, err := cString(strings.NewReplacer("\r", " ", "\n", " ").Replace(description))
	if err != nil {
		desc = nil // NUL inside: the library's "handler error"
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ptr != nil {
		C.natsio_service_request_fail(r.ptr, cPtr(desc))
		r.answered = true
	}
}

// handlerReturned ends the borrow of the library's request: an answered
// one is done with, another is kept (a clone) for a later answer.
func (r *serviceRequest) handlerReturned() {
	r.mu.Lock()
	defer r.mu.Unlock()
	var clone *C.natsio_service_request
	if r.answered || C.natsio_service_request_clone(r.ptr, &clone) != C.NATSIO_OK {
		r.ptr = nil
		return
	}
	r.ptr = clone
	runtime.AddCleanup(r, func(p *C.natsio_service_request) { C.natsio_service_request_free(p) }, clone)
}

func discoverServices(ctx context.Context, conn any, verb int32, name, id string, opts any) iter.Seq2[[]byte, error] {
	return func(yield func([]byte, error) bool) {
		nc, ok := conn.(*Conn)
		if !ok || nc == nil {
			yield(nil, &Error{Status: statusInvalidArgument, Detail: fmt.Sprintf("discovery needs a *natsio.Conn, not %T", conn)})
			return
		}
		if ctx.Err() != nil {
			yield(nil, contextError(ctx))
			return
		}
		ropts, _ := opts.([]RequestManyOption)
		copts := requestManyOptions(ctx, ropts)
		var cname, cid []byte
		var err error
		if name != "" {
			if cname, err = cString(name); err != nil {
				yield(nil, err)
				return
			}
		}
		if id != "" {
			if cid, err = cString(id); err != nil {
				yield(nil, err)
				return
			}
		}
		var replies *C.natsio_replies
		lockThread()
		err = statusError(C.natsio_client_service_discover(nc.ptr, C.int32_t(verb), cPtr(cname), cPtr(cid), &copts, &replies))
		unlockThread()
		runtime.KeepAlive(nc)
		if err != nil {
			yield(nil, err)
			return
		}
		nc.yieldReplies(ctx, replies, func(m *Msg, err error) bool {
			if err != nil {
				return yield(nil, err)
			}
			return yield(m.Data, nil)
		})
	}
}
