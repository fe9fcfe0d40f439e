package natsio

/*
#include "natsio_go.h"
*/
import "C"

import (
	"context"
	"log/slog"
	"unsafe"
)

// LevelTrace is the slog level of protocol frames (below slog.LevelDebug):
// every frame sent (">>> ") and received ("<<< "), payloads cut to a short
// preview, CONNECT's password, token, JWT and signature redacted.
const LevelTrace = slog.Level(-8)

// Logger sends what the connection does to l: asynchronous errors
// (slog.LevelError), slow consumers, lost connections and failed attempts
// (Warn), connects, reconnects and closes (Info), each connection attempt
// (Debug) and, when l is enabled for LevelTrace, every protocol frame.
// The library asks l which levels it wants once, at Connect. Records come
// from library threads, synchronously: l's handler should be quick, and may
// publish but must not wait on this connection. Independently of any code,
// the environment variable NATSIO_LOG=<off|error|warn|info|debug|trace>
// raises the level (and logs to standard error when no Logger is given).
func Logger(l *slog.Logger) Option {
	return func(cfg *connectConfig) {
		if l == nil {
			return
		}
		// The most verbose library level whose slog level l wants.
		level := C.int32_t(C.NATSIO_LOG_OFF)
		for natsioLevel := C.NATSIO_LOG_ERROR; natsioLevel < len(slogLevels); natsioLevel++ {
			if l.Enabled(context.Background(), slogLevels[natsioLevel]) {
				level = C.int32_t(natsioLevel)
			}
		}
		cfg.add(func(o *C.natsio_options) C.natsio_status {
			if level == C.NATSIO_LOG_OFF {
				return C.NATSIO_OK
			}
			h, box := newHandle(l)
			st := C.go_options_set_log(o, level, C.uintptr_t(h))
			if st != C.NATSIO_OK {
				discardHandle(h, box)
			}
			return st
		})
	}
}

// slogLevels maps the library's levels to slog's.
var slogLevels = [...]slog.Level{
	C.NATSIO_LOG_ERROR: slog.LevelError,
	C.NATSIO_LOG_WARN:  slog.LevelWarn,
	C.NATSIO_LOG_INFO:  slog.LevelInfo,
	C.NATSIO_LOG_DEBUG: slog.LevelDebug,
	C.NATSIO_LOG_TRACE: LevelTrace,
}

//export natsioGoLog
func natsioGoLog(userData unsafe.Pointer, level C.natsio_log_level, message *C.char) {
	l := valueOf(userData).(*slog.Logger)
	lv := slog.LevelInfo
	if int(level) > 0 && int(level) < len(slogLevels) {
		lv = slogLevels[level]
	}
	l.Log(context.Background(), lv, C.GoString(message), slog.String("lib", "natsio"))
}
