//go:build natsio_shared

package natsio

// With -tags natsio_shared: libnatsio.so, found through pkg-config's
// natsio (-lnatsio); binaries need libnatsio.so.<major> at run time (on
// the loader's path, or LD_LIBRARY_PATH=<prefix>/lib).

/*
#cgo pkg-config: natsio
*/
import "C"
