#!/usr/bin/env bash
# The one command that runs the whole libnatsio test suite:
#
#   1. system tools (cmake, ninja, g++, GoogleTest; apt-get only if missing)
#   2. nats-server at the pinned version (scripts/install-nats-server.sh)
#   3. cargo build --release, and the committed include/natsio.h is unchanged
#   4. cargo test --release                      (Rust core)
#   5. cmake + ninja + ctest in build/           (C suite, C++ binding, harness)
#   6. go test -race in bindings/go              (if present)
#   7. npm test in bindings/node                 (if present)
#   8. scripts/sanitize.sh: C tests under ASan+UBSan (build-asan/) and valgrind
#   9. scripts/fuzz.sh $FUZZ_SECONDS: bounded cargo-fuzz runs (default 20 s/target)
#
# Environment:
#   CARGO_TARGET_DIR     honoured; the C/C++ build links <it>/release/libnatsio.so
#   BUILD_DIR            CMake build dir (default: build)
#   NATS_SERVER_VERSION  / NATS_SERVER_BIN: see scripts/install-nats-server.sh
#   FUZZ_SECONDS         seconds of fuzzing per target (default 20; 0 skips it)
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT="$(pwd)"
BUILD_DIR="${BUILD_DIR:-build}"
TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
case "$TARGET_DIR" in /*) ;; *) TARGET_DIR="$ROOT/$TARGET_DIR" ;; esac
LIB_DIR="$TARGET_DIR/release"

step() { printf '\n==> %s\n' "$*"; }

# --------------------------------------------------------------------------
step "system dependencies"
missing=()
command -v cmake >/dev/null || missing+=(cmake)
command -v ninja >/dev/null || missing+=(ninja-build)
command -v cc >/dev/null || missing+=(gcc)
command -v c++ >/dev/null || missing+=(g++)
[ -f /usr/include/gtest/gtest.h ] || missing+=(libgtest-dev)
# libcrypto headers: the C test harness signs NKey nonces (auth callback tests).
[ -f /usr/include/openssl/evp.h ] || missing+=(libssl-dev)
command -v git >/dev/null || missing+=(git)
if [ ${#missing[@]} -gt 0 ]; then
    echo "installing: ${missing[*]}"
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    $SUDO apt-get update
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends "${missing[@]}"
else
    echo "all present"
fi

# --------------------------------------------------------------------------
step "nats-server"
NATS_SERVER_BIN="$(scripts/install-nats-server.sh | tail -n 1)"
export NATS_SERVER_BIN
"$NATS_SERVER_BIN" --version

# Bindings and examples load libnatsio.so from the cargo output in place.
export LD_LIBRARY_PATH="$LIB_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

# --------------------------------------------------------------------------
step "cargo build --release"
cargo build --release

if git rev-parse --is-inside-work-tree >/dev/null 2>&1 &&
    git ls-files --error-unmatch include/natsio.h >/dev/null 2>&1; then
    step "include/natsio.h matches the generated header"
    if ! git diff --exit-code include/natsio.h; then
        echo "include/natsio.h changed during the build: commit the regenerated header" >&2
        exit 1
    fi
fi

# --------------------------------------------------------------------------
step "cargo test --release"
cargo test --release

# --------------------------------------------------------------------------
step "C / C++ (cmake, ctest)"
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release -DNATSIO_LIB_DIR="$LIB_DIR"
cmake --build "$BUILD_DIR"
ctest --test-dir "$BUILD_DIR" --output-on-failure

# --------------------------------------------------------------------------
# Go binding (cgo). Added when bindings/go exists.
# The package's own cgo flags link ../../target/release/libnatsio.a; for
# another CARGO_TARGET_DIR the natsio_custom_link tag drops them and the
# archive is named here instead. Go modules: standard library only.
if [ -d bindings/go ]; then
    step "Go binding: go vet, go test -race"
    (
        cd bindings/go
        export CGO_ENABLED=1
        go_tags=()
        if [ "$LIB_DIR" != "$ROOT/target/release" ]; then
            go_tags=(-tags natsio_custom_link)
            export CGO_LDFLAGS="$LIB_DIR/libnatsio.a -lm -ldl -lpthread${CGO_LDFLAGS:+ $CGO_LDFLAGS}"
        fi
        go vet "${go_tags[@]}" ./...
        go build "${go_tags[@]}" -o /dev/null ./examples/pubsub
        go test "${go_tags[@]}" -race -count=1 ./...
    )
fi

# --------------------------------------------------------------------------
# Node binding (node --test via npm test). Added when bindings/node exists.
if [ -d bindings/node ]; then
    step "Node binding: npm test"
    (
        cd bindings/node
        if [ -f package-lock.json ]; then npm ci; else npm install; fi
        npm test
    )
fi

# --------------------------------------------------------------------------
# Hardening: the C suite under sanitizers, then short fuzz runs (the longer
# runs are `scripts/fuzz.sh 60` or more, by hand).
step "sanitizers: C tests under ASan+UBSan and valgrind"
BUILD_DIR="$BUILD_DIR" scripts/sanitize.sh

if [ "${FUZZ_SECONDS:-20}" != "0" ]; then
    step "fuzzing: ${FUZZ_SECONDS:-20} s per target"
    scripts/fuzz.sh "${FUZZ_SECONDS:-20}"
fi

step "all tests passed"
