# Shared by scripts/test.sh, scripts/sanitize.sh and bench/run.sh (sourced,
# not run): the cgo settings that build the Go binding against one libnatsio
# build, found through the natsio(-static).pc files in a directory.
#
#   go_cgo_env PC_DIR   exports CGO_ENABLED=1, PKG_CONFIG_PATH with PC_DIR
#                       first, and CGO_CPPFLAGS carrying a checksum of
#                       pkg-config's output and of the static library
#
# Why the checksum: Go's build cache sees neither pkg-config's output nor
# the contents of the static library it links, so a binary built against
# another library (a rebuilt core, another build directory) would be taken
# from the cache, linked against the first library it was built with. A
# flag Go does see makes each library a build of its own.
go_cgo_env() {
    export CGO_ENABLED=1
    export PKG_CONFIG_PATH="$1${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
    local id
    id="$({ pkg-config --cflags --libs natsio-static natsio
        cat "$(pkg-config --variable=libdir natsio-static)/libnatsio.a" 2>/dev/null || true; } |
        cksum | cut -d ' ' -f 1)"
    export CGO_CPPFLAGS="-DNATSIO_PKG_CONFIG_ID=$id${CGO_CPPFLAGS:+ $CGO_CPPFLAGS}"
}
