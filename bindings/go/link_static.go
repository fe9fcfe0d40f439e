//go:build !natsio_shared

package natsio

// The default link: libnatsio.a, found through pkg-config's natsio-static
// (installed by `cmake --install` into <prefix>/lib/pkgconfig; in the
// tree, <build>/pkgconfig of a CMake build dir). Binaries need no
// libnatsio.so at run time. If pkg-config cannot find it, add the
// directory holding natsio-static.pc to PKG_CONFIG_PATH.

/*
#cgo pkg-config: natsio-static
*/
import "C"
