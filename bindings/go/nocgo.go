//go:build !cgo

package natsio

// This package calls libnatsio, a C library, through cgo: it cannot be
// built with CGO_ENABLED=0. Go turns cgo off by itself when it finds no C
// compiler (cc, or $CC), so the fix is a C compiler on PATH and
// CGO_ENABLED=1 (`go env -w CGO_ENABLED=1`, or in the environment).
// The identifier below is undefined on purpose: it is the build error.
const _ = natsio_requires_cgo_set_CGO_ENABLED_1_and_install_a_C_compiler

// statusText is the cgo file's; declared here so that the error above is
// the only one a build without cgo reports.
func statusText(int32) string { return "" }
