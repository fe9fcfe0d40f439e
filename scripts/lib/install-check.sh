# Shared by scripts/test-install*.sh (sourced, not run): a temporary work
# dir removed at exit, a nats-server of their own, and counted checks.
#
#   install_check_begin NAME   WORK=<temp dir>; cleanup at exit (the server
#                              killed, WORK removed, read-only parts included)
#   start_nats_server          a server with JetStream on a free loopback
#                              port (needs NATS_SERVER_BIN); sets URL
#   ok TEXT / die TEXT         a passed check (counted in $passed) / a failure
#   no_libnatsio PROGRAM       fails if PROGRAM needs libnatsio.so (static link)

install_check_begin() {
    WORK="$(mktemp -d "${TMPDIR:-/tmp}/natsio-$1.XXXXXX")"
    server_pid=""
    passed=0
    trap install_check_cleanup EXIT
}

install_check_cleanup() {
    [ -z "$server_pid" ] || kill "$server_pid" 2>/dev/null || true
    chmod -R u+w "$WORK" 2>/dev/null || true # Go's module cache is read-only
    rm -rf "$WORK"
}

ok() {
    passed=$((passed + 1))
    printf '  ok   %s\n' "$*"
}

die() {
    printf '  FAIL %s\n' "$*" >&2
    exit 1
}

start_nats_server() {
    local port
    port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
    "$NATS_SERVER_BIN" -a 127.0.0.1 -p "$port" -js -sd "$WORK/js" >"$WORK/server.log" 2>&1 &
    server_pid=$!
    for _ in $(seq 100); do
        (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
        sleep 0.1
    done
    URL="nats://127.0.0.1:$port"
}

no_libnatsio() {
    if readelf -d "$1" | grep -q 'NEEDED.*libnatsio'; then
        die "$(basename "$1") needs libnatsio.so though linked statically"
    fi
}
