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
#include "natsio_go.h"
*/
import "C"

import (
	"runtime"
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
