# "Uninstalled" pkg-config files, written at configure time for development
# in this tree (the Go binding's cgo flags come from pkg-config):
#
#   <build>/pkgconfig/natsio.pc          -L<cargo output> -lnatsio, with an
#                                        RPATH to it (programs run in place)
#   <build>/pkgconfig/natsio-static.pc   the static library (NATSIO_STATIC_ARCHIVE:
#                                        <build>/natsio-static/libnatsio.a on
#                                        ELF with GNU ld, else cargo's) and the
#                                        system libraries it needs
#
# Both point at the library this build uses (from NATSIO_LIB_DIR, or the
# cargo output it builds) and at include/ of the source tree, so
#
#   PKG_CONFIG_PATH=<build>/pkgconfig go test ./...     (in bindings/go)
#
# builds against the tree without installing it (after `cmake --build
# <build>`, which writes the static library). The installed .pc files
# (lib/pkgconfig, relocatable) are natsio_install.cmake's.

set(NATSIO_UNINSTALLED_PC_DIR "${PROJECT_BINARY_DIR}/pkgconfig")

# Bracket arguments: ${libdir} and ${includedir} are pkg-config's variables,
# only @...@ is substituted here.
file(CONFIGURE OUTPUT "${NATSIO_UNINSTALLED_PC_DIR}/natsio.pc" @ONLY CONTENT [=[
# Uninstalled: the libnatsio source tree and its cargo output (written by CMake).
libdir=@natsio_lib_dir@
includedir=@NATSIO_INCLUDE_DIR@

Name: natsio
Description: NATS client with one native core (uninstalled: build tree)
Version: @PROJECT_VERSION@
Libs: -L${libdir} -lnatsio -Wl,-rpath,${libdir}
Libs.private: @NATSIO_STATIC_SYSTEM_LIBS_FLAGS@
Cflags: -I${includedir}
]=])
file(CONFIGURE OUTPUT "${NATSIO_UNINSTALLED_PC_DIR}/natsio-static.pc" @ONLY CONTENT [=[
# Uninstalled: the libnatsio source tree and its static library (written by CMake).
libdir=@NATSIO_STATIC_ARCHIVE_DIR@
includedir=@NATSIO_INCLUDE_DIR@

Name: natsio-static
Description: NATS client with one native core, linked statically (uninstalled: build tree)
Version: @PROJECT_VERSION@
Libs: ${libdir}/@NATSIO_STATIC_FILE@ @NATSIO_STATIC_SYSTEM_LIBS_FLAGS@
Cflags: -I${includedir}
]=])
