#!/usr/bin/env bash
# First command for a newcomer: builds libnatsio and its C programs, starts a
# throw-away nats-server on a free loopback port, and runs the API tour
# (examples/demo.c) against it.
#
#   scripts/demo.sh
#
# Steps:
#   1. system tools (cmake, ninja, gcc/g++, GoogleTest; apt-get only if missing)
#   2. nats-server at the pinned version (scripts/install-nats-server.sh)
#   3. cargo build --release, then cmake + ninja (everything, examples included)
#   4. nats-server on 127.0.0.1:<free port>, its own temp dir, stopped on exit
#   5. build/examples/demo nats://127.0.0.1:<port>; the exit code is the demo's
#
# Environment:
#   CARGO_TARGET_DIR     honoured; the C build links <it>/release/libnatsio.so
#   BUILD_DIR            CMake build dir (default: build)
#   NATS_SERVER_VERSION  / NATS_SERVER_BIN: see scripts/install-nats-server.sh
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
if ! command -v cargo >/dev/null; then
    echo "cargo not found: install Rust first (https://rustup.rs), then run this again" >&2
    exit 1
fi
missing=()
command -v cmake >/dev/null || missing+=(cmake)
command -v ninja >/dev/null || missing+=(ninja-build)
command -v cc >/dev/null || missing+=(gcc)
command -v c++ >/dev/null || missing+=(g++)
# The whole tree is built, the C++ binding's GoogleTest suite included.
[ -f /usr/include/gtest/gtest.h ] || missing+=(libgtest-dev)
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
"$NATS_SERVER_BIN" --version

# --------------------------------------------------------------------------
step "cargo build --release"
cargo build --release

step "cmake + ninja ($BUILD_DIR)"
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release -DNATSIO_LIB_DIR="$LIB_DIR"
cmake --build "$BUILD_DIR"
DEMO="$BUILD_DIR/examples/demo"
if [ ! -x "$DEMO" ]; then
    echo "$DEMO was not built (is $LIB_DIR/libnatsio.so there?)" >&2
    exit 1
fi

# --------------------------------------------------------------------------
step "local nats-server"

# A port nobody listens on now: the kernel picks one (python3), or we probe.
free_port() {
    if command -v python3 >/dev/null; then
        python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
        return
    fi
    local port
    for _ in $(seq 1 100); do
        port=$((20000 + RANDOM % 30000))
        if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
            echo "$port"
            return
        fi
    done
    echo "no free port found" >&2
    return 1
}

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

SERVER_DIR="$(mktemp -d "${TMPDIR:-/tmp}/natsio-demo.XXXXXX")"
SERVER_PID=""
stop_server() {
    if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
        kill "$SERVER_PID" 2>/dev/null || true
        # nats-server exits within a second on SIGTERM; SIGKILL as a backstop.
        for _ in $(seq 1 50); do
            kill -0 "$SERVER_PID" 2>/dev/null || break
            sleep 0.1
        done
        kill -9 "$SERVER_PID" 2>/dev/null || true
        wait "$SERVER_PID" 2>/dev/null || true
    fi
    rm -rf "$SERVER_DIR"
}
trap stop_server EXIT
trap 'exit 130' INT TERM

PORT="$(free_port)"
"$NATS_SERVER_BIN" -a 127.0.0.1 -p "$PORT" >"$SERVER_DIR/server.log" 2>&1 &
SERVER_PID=$!
for _ in $(seq 1 100); do
    port_open "$PORT" && break
    if ! kill -0 "$SERVER_PID" 2>/dev/null; then
        echo "nats-server exited; its log:" >&2
        cat "$SERVER_DIR/server.log" >&2
        exit 1
    fi
    sleep 0.1
done
if ! port_open "$PORT"; then
    echo "nats-server did not listen on 127.0.0.1:$PORT within 10 s; its log:" >&2
    cat "$SERVER_DIR/server.log" >&2
    exit 1
fi
URL="nats://127.0.0.1:$PORT"
echo "nats-server (pid $SERVER_PID) listening at $URL"

# --------------------------------------------------------------------------
step "demo: $DEMO $URL"
status=0
"$DEMO" "$URL" || status=$?
if [ "$status" -eq 0 ]; then
    step "done. Try the other examples against your own server, e.g.:"
    echo "    $BUILD_DIR/examples/subscribe nats://127.0.0.1:4222 'greet.>'"
    echo "    $BUILD_DIR/examples/publish   nats://127.0.0.1:4222 greet.joe hello"
else
    echo "demo failed with exit code $status" >&2
fi
exit "$status"
