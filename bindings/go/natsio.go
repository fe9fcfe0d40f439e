// Package natsio is the Go binding of libnatsio, a NATS client whose one
// native core (written in Rust) is shared by C, C++, Go and Node.
//
// The package is a cgo binding over the installed C library; its flags
// come from pkg-config. Install libnatsio (`cmake --install`, see the
// repository's README), then:
//
//	go get github.com/libnatsio/natsio/bindings/go@v0.1.0
//	PKG_CONFIG_PATH=<prefix>/lib/pkgconfig go build   # if <prefix> is not a standard one
//
// By default it links the static library (pkg-config natsio-static), so
// binaries need no libnatsio.so at run time; with `-tags natsio_shared` it
// links the shared one (pkg-config natsio, libnatsio.so.<major> at run
// time). cgo is required: with CGO_ENABLED=0 (Go's default when it finds
// no C compiler) the build fails with
// "undefined: natsio_requires_cgo_set_CGO_ENABLED_1_and_install_a_C_compiler".
//
// In the libnatsio tree, a configured CMake build dir holds uninstalled
// .pc files pointing at cargo's output and include/:
//
//	cmake -S . -B build -DNATSIO_LIB_DIR=$PWD/target/release   # after cargo build --release
//	cd bindings/go && PKG_CONFIG_PATH=$PWD/../../build/pkgconfig go test ./...
//
// Every semantic (subject validation, pending limits, drain, request/reply)
// lives in the core; this package only translates it into Go: contexts,
// errors usable with errors.Is, functional options and iterators.
package natsio

/*
#include "natsio_go.h"
*/
import "C"

import (
	"math"
	"runtime"
	"time"
	"unsafe"
)

// Version is the version of the linked libnatsio core.
func Version() string { return C.GoString(C.natsio_version()) }

// SetWaitSpin sets how long a thread blocked in the library for an answer
// (a request's reply, a JetStream or KV call) first spins, checking for
// it, before it sleeps: an answer within the spin is seen with no thread
// wake-up, which on a virtual machine can cost as much as the round trip;
// the price is CPU time while spinning. At most half the CPUs spin at once.
// 0 or less turns spinning off; the default is 200 microseconds, skipped
// while the machine's CPUs are contended (a value set here applies as
// set). It is
// process-wide (every Conn, and C code using the library in the same
// process), for waits that start after it.
func SetWaitSpin(d time.Duration) {
	us := min(max(d.Microseconds(), 0), int64(^uint32(0)))
	C.natsio_runtime_set_wait_spin_us(C.uint32_t(us))
}

// cString is s as a NUL-terminated byte slice in Go memory. Passing it to
// C for the duration of a call is allowed by the cgo pointer rules and
// saves a malloc/free pair per call. A string holding NUL cannot cross the
// C ABI intact, so it is refused rather than silently truncated.
func cString(s string) ([]byte, error) {
	if err := checkNUL(s); err != nil {
		return nil, err
	}
	b := make([]byte, len(s)+1)
	copy(b, s)
	return b, nil
}

// nonEmpty is s, or nil for "" (a C argument that may be NULL).
func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
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

// statusError turns a status into an error, reading the detail text and
// the error data (the Go twin of go_detail, which does the same in C for
// the wrappers of natsio_go.c). Call it on the thread that made the
// failing call (see lockThread).
func statusError(st C.natsio_status) error {
	if st == C.NATSIO_OK {
		return nil
	}
	return &Error{
		Status:   Status(st),
		Detail:   C.GoString(C.natsio_last_error()),
		APICode:  int(C.natsio_last_error_code()),
		ErrCode:  int(C.natsio_last_error_err_code()),
		Revision: uint64(C.natsio_last_error_revision()),
	}
}

// millis converts a duration to the C ABI's milliseconds, rounding up so
// that a positive duration never becomes 0 (which often means "default").
func millis(d time.Duration) C.int64_t {
	if d <= 0 {
		return C.int64_t(d / time.Millisecond)
	}
	return C.int64_t((d + time.Millisecond - 1) / time.Millisecond)
}

// cInt32 is n as a C int32_t, clamped: a value beyond it stays out of
// range (the library refuses it, or takes it as the most there is) instead
// of wrapping around into a small one.
func cInt32(n int) C.int32_t {
	return C.int32_t(min(max(n, math.MinInt32), math.MaxInt32))
}

func statusText(code int32) string { return C.GoString(C.natsio_status_str(C.int32_t(code))) }

// statusName is the code's name without the NATSIO_ERR_ prefix
// ("TIMEOUT"), "" for an unknown code.
func statusName(code int32) string { return C.GoString(C.natsio_status_name(C.int32_t(code))) }
