//go:build !natsio_custom_link

package natsio

// The default link: the static library cargo builds next to the shared
// one, so binaries need no LD_LIBRARY_PATH. Rust's std needs libm, libdl
// and libpthread from the system.

/*
#cgo LDFLAGS: ${SRCDIR}/../../target/release/libnatsio.a -lm -ldl -lpthread
*/
import "C"
