// Package natsio is the Go binding of libnatsio, a NATS client whose one
// native core (written in Rust) is shared by C, C++, Go and Node.
//
// The package links the static library target/release/libnatsio.a built
// by `cargo build --release` at the repository root, so nothing has to be
// set in the environment: the cgo flags find the header and the archive
// relative to this directory (see link_default.go). To link another build
// (another CARGO_TARGET_DIR, or the shared library), build with
// `-tags natsio_custom_link` and give the linker flags in CGO_LDFLAGS.
//
// Every semantic (subject validation, pending limits, drain, request/reply)
// lives in the core; this package only translates it into Go: contexts,
// errors usable with errors.Is, functional options and iterators.
package natsio

/*
#cgo CFLAGS: -I${SRCDIR}/../../include
#include <stdint.h>
#include <stdlib.h>
#include "natsio.h"

// Trampolines exported from callbacks.go (cgo generates their definitions).
extern void natsioGoRelease(void *user_data);
extern void natsioGoTokenDone(void *user_data, natsio_token *token);
extern void natsioGoError(void *user_data, natsio_status status, char *text, uint64_t sid, char *subject);
extern void natsioGoEvent(void *user_data, natsio_event_kind kind, natsio_status status, char *text);
extern char *natsioGoJWT(void *user_data);
extern natsio_status natsioGoSign(void *user_data, uint8_t *nonce, size_t nonce_len, uint8_t *signature_out);

// The helpers below take cgo.Handle values as uintptr_t and turn them into
// user_data here, so the Go side never converts an integer into a pointer.

static natsio_status go_token_on_complete(natsio_token *token, uintptr_t handle) {
	return natsio_token_on_complete(token, natsioGoTokenDone, (void *)handle, natsioGoRelease);
}

static natsio_status go_options_set_error_callback(natsio_options *opts, uintptr_t handle) {
	return natsio_options_set_error_callback(opts, (natsio_error_cb)natsioGoError,
		(void *)handle, natsioGoRelease);
}

static natsio_status go_options_set_event_callback(natsio_options *opts, uintptr_t handle) {
	return natsio_options_set_event_callback(opts, (natsio_event_cb)natsioGoEvent,
		(void *)handle, natsioGoRelease);
}

static natsio_status go_options_set_auth_callbacks(natsio_options *opts, uintptr_t handle) {
	return natsio_options_set_auth_callbacks(opts, (natsio_jwt_cb)natsioGoJWT,
		(natsio_sign_cb)natsioGoSign, (void *)handle, natsioGoRelease);
}

*/
import "C"

import (
	"runtime"
	"runtime/cgo"
	"strings"
	"time"
	"unsafe"
)

// Version is the version of the linked libnatsio core.
func Version() string { return C.GoString(C.natsio_version()) }

// cString is s as a NUL-terminated byte slice in Go memory. Passing it to
// C for the duration of a call is allowed by the cgo pointer rules and
// saves a malloc/free pair per call. A string holding NUL cannot cross the
// C ABI intact, so it is refused rather than silently truncated.
func cString(s string) ([]byte, error) {
	if strings.IndexByte(s, 0) >= 0 {
		return nil, &Error{Status: statusInvalidArgument, Detail: "string contains a NUL byte: " + strings.ReplaceAll(s, "\x00", `\0`)}
	}
	b := make([]byte, len(s)+1)
	copy(b, s)
	return b, nil
}

func cPtr(b []byte) *C.char {
	if b == nil {
		return nil
	}
	return (*C.char)(unsafe.Pointer(&b[0]))
}

// dataPtr points at the payload for the duration of a call; an empty
// payload is passed as NULL with length 0, as the C ABI allows.
func dataPtr(data []byte) (unsafe.Pointer, C.size_t) {
	if len(data) == 0 {
		return nil, 0
	}
	return unsafe.Pointer(&data[0]), C.size_t(len(data))
}

// lockThread pins the goroutine to its OS thread around a C call whose
// failure detail is read with natsio_last_error(), which is thread-local:
// without the pin the goroutine could move to another thread between the
// call and the read and report another call's detail.
func lockThread() { runtime.LockOSThread() }

func unlockThread() { runtime.UnlockOSThread() }

// statusError turns a status into an error, reading the detail text. Call
// it on the thread that made the failing call (see lockThread).
func statusError(st C.natsio_status) error {
	if st == C.NATSIO_OK {
		return nil
	}
	return &Error{Status: Status(st), Detail: C.GoString(C.natsio_last_error())}
}

// millis converts a duration to the C ABI's milliseconds, rounding up so
// that a positive duration never becomes 0 (which often means "default").
func millis(d time.Duration) C.int64_t {
	if d <= 0 {
		return C.int64_t(d / time.Millisecond)
	}
	return C.int64_t((d + time.Millisecond - 1) / time.Millisecond)
}

func statusText(code int32) string { return C.GoString(C.natsio_status_str(C.int32_t(code))) }

// Go entry points to the C helpers above (static, so callable from this file only).

func cTokenOnComplete(t *C.natsio_token, h cgo.Handle) C.natsio_status {
	return C.go_token_on_complete(t, C.uintptr_t(h))
}

func cOptionsSetErrorCallback(o *C.natsio_options, h cgo.Handle) C.natsio_status {
	return C.go_options_set_error_callback(o, C.uintptr_t(h))
}

func cOptionsSetEventCallback(o *C.natsio_options, h cgo.Handle) C.natsio_status {
	return C.go_options_set_event_callback(o, C.uintptr_t(h))
}

func cOptionsSetAuthCallbacks(o *C.natsio_options, h cgo.Handle) C.natsio_status {
	return C.go_options_set_auth_callbacks(o, C.uintptr_t(h))
}
