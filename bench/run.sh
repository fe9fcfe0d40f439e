#!/usr/bin/env bash
# One-command benchmark run: builds the harnesses, starts a fresh nats-server
# with JetStream on a free loopback port, runs every scenario for every client
# interleaved (A B C, then B C A, ...) for R repeats, collects all result
# lines into one file and prints the median table (bench/summarize.py).
# Each scenario and size runs in a fresh harness process, so a line's
# rss_peak_kb (VmHWM) is that run's peak alone (obj-put/obj-get: one
# process per scenario, which runs each measurement in a child of its own).
#
#   bench/run.sh [run options] [harness options]
#
# Run options (consumed here):
#   --repeats R        repeats of the whole interleaved set (default 3)
#   --clients a,b      only these harnesses, by name (default: all of them;
#                      each is built or installed here: nats.c from Debian's
#                      libnats-dev when the system has none, see
#                      peers/natsc/build.sh; a peer that cannot be had
#                      stops the run)
#   --skip-missing     go on without a harness that cannot be built
#   --harness NAME=CMD add a harness (CMD is split on spaces); repeatable
#   --out FILE         results file (default bench/results/run-<time>.txt); the
#                      ratio chart goes beside it (same name, .png; matplotlib
#                      installed by bench/install-plot.sh)
#   --no-build         use already built harnesses
#   --no-extras        skip the libnatsio-only extras (pub4: --threads 4
#                      publishers on one client, run after each repeat
#                      when pub is among the scenarios)
#   --contention N     N CPU hogs (busy loops, ordinary priority) run beside
#                      the server and the harnesses for the whole run, so
#                      tail latencies are measured on a machine with other
#                      work on it (the results file says contention=N)
#   -h | --help
# Harness options (passed unchanged to every harness, see shared bench spec):
#   --scenarios pub,pubsub,req,jspub,jspub-sync,kv,kv-par,js-consume,obj-put,obj-get,svc
#   --sizes 16,1024 --n N --js-n N --k K --kv-k K --window W --par P
#   --obj-mb MiB --obj-small N --warmup W --idle-timeout S --max-secs S
#   --obj-mode memory|stream   obj-put/obj-get from/into one buffer (the
#                      spec's, default) or through the streaming APIs with
#                      no buffer of the object's size (for peak RSS)
#   (only the options given here are passed: a harness uses the spec's
#   defaults for the others)
#   --url URL          use this server instead of starting one
#
# nats-server: scripts/install-nats-server.sh if present (it honours
# NATS_SERVER_BIN), else $NATS_SERVER_BIN, else nats-server from PATH.
set -euo pipefail

BENCH="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$BENCH/.." && pwd)"
# shellcheck source=scripts/lib/go-cgo-env.sh
. "$ROOT/scripts/lib/go-cgo-env.sh"

log() { echo "run.sh: $*" >&2; }

# ---------------------------------------------------------------------------
# Harnesses: "name|command|build function". Adding one is one line here.
# The name must be the client= value the harness prints.
# ---------------------------------------------------------------------------
HARNESSES=(
    "libnatsio|@natsio|build_natsio"
    "nats.c|$BENCH/peers/natsc/natsc_bench|build_natsc"
    "async-nats|$BENCH/peers/async-nats/target/release/async-nats-bench|build_async_nats"
    # the pub loop straight through the Rust core: libnatsio/natsio-rust-core
    # on the pub rows is the cost of the C ABI (FFI overhead)
    "natsio-rust-core|$BENCH/natsio/rust-core-pub/target/release/natsio-rust-core-pub|build_natsio_rust_core"
    # the bindings over the same core: their ratio to libnatsio (the C ABI)
    # is the binding overhead (summarize.py prints it as its own table)
    "libnatsio-go|$ROOT/build/bench-go/natsio-go-bench|build_natsio_go"
    "libnatsio-node|node $BENCH/node/natsio-node-bench.js|build_natsio_node"
    # the official Go and JavaScript clients: the references for the Go and
    # Node bindings (summarize.py compares each binding with its ecosystem's
    # client in its own table)
    "nats.go|$ROOT/build/bench-natsgo/natsgo-bench|build_natsgo"
    "nats.js|node $BENCH/peers/natsjs/natsjs-bench.js|build_natsjs"
)

build_natsc() { "$BENCH/peers/natsc/build.sh" >/dev/null; }

# nats.go peer: its own module in bench/peers/natsgo (nats.go from the Go
# module proxy, pinned by go.mod/go.sum), built into build/bench-natsgo/.
build_natsgo() {
    command -v go >/dev/null || { log "go not found"; return 1; }
    mkdir -p "$ROOT/build/bench-natsgo"
    (cd "$BENCH/peers/natsgo" && go build -o "$ROOT/build/bench-natsgo/natsgo-bench" .)
}

# nats.js peer: a small npm project in bench/peers/natsjs (versions pinned
# by its package-lock.json); npm ci only when node_modules is missing or
# older than the lock file.
build_natsjs() {
    command -v node >/dev/null && command -v npm >/dev/null || { log "node/npm not found"; return 1; }
    local dir="$BENCH/peers/natsjs"
    if [ ! -f "$dir/node_modules/.package-lock.json" ] ||
        [ "$dir/package-lock.json" -nt "$dir/node_modules/.package-lock.json" ]; then
        (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error >/dev/null) || return 1
    fi
}

build_async_nats() {
    cargo build --release --quiet --manifest-path "$BENCH/peers/async-nats/Cargo.toml"
}

# Our own harness: a C program in bench/natsio/, built by its own small CMake
# project into build/bench-natsio (bench/natsio/build.sh; cargo builds
# libnatsio.so first). Its binary is looked up in these places.
NATSIO_CANDIDATES=(
    "$ROOT/build/bench-natsio/natsio_bench"
    "$ROOT/build/bench/natsio/natsio_bench"
    "$ROOT/build/bench/natsio_bench"
    "$ROOT/bench/natsio/natsio_bench"
)
build_natsio() {
    [ -x "$BENCH/natsio/build.sh" ] || { log "bench/natsio/ not present yet"; return 1; }
    NATSIO_BENCH_SKIP_RUST_CORE=1 "$BENCH/natsio/build.sh" >/dev/null
}
build_natsio_rust_core() {
    cargo build --release --quiet --manifest-path "$BENCH/natsio/rust-core-pub/Cargo.toml"
}

# The bindings link target/release/libnatsio.a statically; build it once
# per run (a no-op when up to date; build_natsio runs it too).
CORE_BUILT=0
build_core() {
    [ "$CORE_BUILT" = 1 ] && return 0
    (cd "$ROOT" && cargo build --release --quiet) && CORE_BUILT=1
}

# Go harness: its own module in bench/go (a replace directive points at
# bindings/go, whose cgo flags come from pkg-config natsio-static). The
# .pc files are the uninstalled ones a CMake configure writes (naming
# include/ and the static library its build reduces from
# target/release/libnatsio.a, as users get it): a build dir of its own,
# build/bench-go/cmake, with no tests or examples (go_cgo_env also keeps
# Go's build cache from linking a previously built core). The binary is removed
# first so that a stale one is never run if the build fails.
build_natsio_go() {
    command -v go >/dev/null || { log "go not found"; return 1; }
    command -v pkg-config >/dev/null || { log "pkg-config not found"; return 1; }
    build_core || return 1
    mkdir -p "$ROOT/build/bench-go"
    rm -f "$ROOT/build/bench-go/natsio-go-bench"
    cmake -S "$ROOT" -B "$ROOT/build/bench-go/cmake" -DNATSIO_LIB_DIR="$ROOT/target/release" \
        -DNATSIO_BUILD_TESTS=OFF -DNATSIO_BUILD_EXAMPLES=OFF >/dev/null || return 1
    cmake --build "$ROOT/build/bench-go/cmake" >/dev/null || return 1
    (cd "$BENCH/go" && go_cgo_env "$ROOT/build/bench-go/cmake/pkgconfig" &&
        go build -o "$ROOT/build/bench-go/natsio-go-bench" .)
}

# Node harness: a script over bindings/node, whose addon is built there
# (npm ci only when node_modules is missing or older than the lock file, so
# a run does not pull the registry or disturb a test run using it;
# npm run build is a no-op when the addon is up to date).
build_natsio_node() {
    command -v node >/dev/null && command -v npm >/dev/null || { log "node/npm not found"; return 1; }
    build_core || return 1
    local dir="$ROOT/bindings/node"
    if [ ! -f "$dir/node_modules/.package-lock.json" ] ||
        [ "$dir/package-lock.json" -nt "$dir/node_modules/.package-lock.json" ]; then
        (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error >/dev/null) || return 1
    fi
    (cd "$dir" && npm run --silent build >/dev/null)
}
find_natsio() {
    local c
    for c in "${NATSIO_CANDIDATES[@]}"; do
        if [ -x "$c" ] && [ -f "$c" ]; then echo "$c"; return 0; fi
    done
    return 1
}

# ---------------------------------------------------------------------------
# arguments
# ---------------------------------------------------------------------------
REPEATS=3
CLIENTS=""
OUT=""
BUILD=1
EXTRAS=1
PASS=()
SKIP_MISSING=0
CONTENTION=0
URL=""
SCENARIOS="pub,pubsub,req,jspub,jspub-sync,kv,kv-par,js-consume,obj-put,obj-get,svc"
SIZES="16,1024"
MAX_SECS=120
OBJ_MB=64

usage() { sed -n '2,/^set -euo/p' "$0" | grep '^#' | sed 's/^# \{0,1\}//'; }

while [ $# -gt 0 ]; do
    arg="$1"; val=""
    case "$arg" in
        -h|--help) usage; exit 0 ;;
        --no-build) BUILD=0; shift; continue ;;
        --no-extras) EXTRAS=0; shift; continue ;;
        --skip-missing) SKIP_MISSING=1; shift; continue ;;
        --*=*) val="${arg#*=}"; arg="${arg%%=*}"; shift ;;
        --*)
            [ $# -ge 2 ] || { log "missing value for $arg"; exit 2; }
            val="$2"; shift 2 ;;
        *) log "unexpected argument: $arg"; exit 2 ;;
    esac
    case "$arg" in
        --repeats) REPEATS="$val" ;;
        --clients) CLIENTS="$val" ;;
        --out) OUT="$val" ;;
        --harness)
            name="${val%%=*}"; cmd="${val#*=}"
            [ -n "$name" ] && [ "$name" != "$val" ] || { log "--harness wants NAME=CMD"; exit 2; }
            HARNESSES+=("$name|$cmd|") ;;
        --url) URL="$val" ;;
        --contention) CONTENTION="$val" ;;
        --scenarios) SCENARIOS="$val" ;;
        --sizes) SIZES="$val" ;;
        --max-secs) MAX_SECS="$val"; PASS+=("$arg" "$val") ;;
        --obj-mb) OBJ_MB="$val"; PASS+=("$arg" "$val") ;;
        --n|--js-n|--k|--kv-k|--window|--par|--obj-small|--obj-mode|--warmup|--idle-timeout) PASS+=("$arg" "$val") ;;
        *) log "unknown option: $arg"; exit 2 ;;
    esac
done
[[ "$REPEATS" =~ ^[0-9]+$ ]] && [ "$REPEATS" -ge 1 ] || { log "bad --repeats: $REPEATS"; exit 2; }
[[ "$OBJ_MB" =~ ^[0-9]+$ ]] || { log "bad --obj-mb: $OBJ_MB"; exit 2; }
[[ "$CONTENTION" =~ ^[0-9]+$ ]] || { log "bad --contention: $CONTENTION"; exit 2; }

# ---------------------------------------------------------------------------
# build and select harnesses
# ---------------------------------------------------------------------------
want() { # is client $1 selected?
    [ -z "$CLIENTS" ] && return 0
    case ",$CLIENTS," in *",$1,"*) return 0 ;; esac
    return 1
}

NAMES=(); CMDS=()
for h in "${HARNESSES[@]}"; do
    IFS='|' read -r name cmd buildfn <<<"$h"
    want "$name" || continue
    if [ "$BUILD" = 1 ] && [ -n "$buildfn" ]; then
        log "building $name"
        if ! "$buildfn"; then
            # A table without a peer reads as a comparison with it: refuse,
            # unless asked to go on without it.
            if [ "$SKIP_MISSING" = 1 ]; then
                log "build of $name failed or not available; skipping it (--skip-missing)"
                continue
            fi
            log "build of $name failed or not available (--skip-missing runs the others)"
            exit 1
        fi
    fi
    if [ "$cmd" = "@natsio" ]; then
        cmd="$(find_natsio)" || { log "libnatsio harness not found; skipping it"; continue; }
    fi
    exe="${cmd%% *}"
    case "$exe" in */*) ;; *) exe="$(command -v "$exe" || echo "$exe")" ;; esac
    if [ ! -x "$exe" ]; then
        log "$name: $exe not found/executable; skipping it"
        continue
    fi
    NAMES+=("$name"); CMDS+=("$cmd")
done
[ ${#NAMES[@]} -gt 0 ] || { log "no harness to run"; exit 1; }
log "clients: ${NAMES[*]}"
# the chart's plotting library (pinned, in a venv under .tools/)
PLOT_PYTHON="$("$BENCH/install-plot.sh")" || { log "could not install matplotlib (bench/install-plot.sh)"; exit 1; }

# ---------------------------------------------------------------------------
# nats-server
# ---------------------------------------------------------------------------
SERVER_PID=""
HOG_PIDS=()
TMPD="$(mktemp -d "${TMPDIR:-/tmp}/natsio-bench.XXXXXX")"
cleanup() {
    local p
    for p in "${HOG_PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
    if [ -n "$SERVER_PID" ]; then
        kill "$SERVER_PID" 2>/dev/null || true
        wait "$SERVER_PID" 2>/dev/null || true
    fi
    rm -rf "$TMPD"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

SERVER_VERSION="external"
if [ -z "$URL" ]; then
    SERVER_BIN=""
    if [ -f "$ROOT/scripts/install-nats-server.sh" ]; then
        SERVER_BIN="$(bash "$ROOT/scripts/install-nats-server.sh" | tail -n 1)" || SERVER_BIN=""
    fi
    if [ -z "$SERVER_BIN" ] && [ -n "${NATS_SERVER_BIN:-}" ]; then SERVER_BIN="$NATS_SERVER_BIN"; fi
    if [ -z "$SERVER_BIN" ]; then SERVER_BIN="$(command -v nats-server || true)"; fi
    [ -n "$SERVER_BIN" ] && [ -x "$SERVER_BIN" ] || { log "no nats-server found"; exit 1; }
    SERVER_VERSION="$("$SERVER_BIN" --version 2>&1 | head -n 1)"

    PORT="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')"
    "$SERVER_BIN" -a 127.0.0.1 -p "$PORT" -js -sd "$TMPD/js" >"$TMPD/server.log" 2>&1 &
    SERVER_PID=$!
    URL="nats://127.0.0.1:$PORT"
    for _ in $(seq 1 100); do
        if (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; then break; fi
        kill -0 "$SERVER_PID" 2>/dev/null || { log "nats-server exited:"; cat "$TMPD/server.log" >&2; exit 1; }
        sleep 0.1
    done
    # JetStream ready?
    for _ in $(seq 1 50); do
        grep -q "Server is ready" "$TMPD/server.log" && break
        sleep 0.1
    done
    log "nats-server ($SERVER_VERSION) pid $SERVER_PID at $URL"
fi

# --contention: busy loops competing for the CPUs with the server and the
# harness (each a subshell spinning on a shell builtin: no allocation, no
# I/O, only CPU time taken from the others by the scheduler).
for _ in $(seq 1 "$CONTENTION"); do
    (trap - INT TERM EXIT; while :; do :; done) &
    HOG_PIDS+=("$!")
done
[ "$CONTENTION" -gt 0 ] && log "contention: ${#HOG_PIDS[@]} CPU hogs (pids ${HOG_PIDS[*]})"

# ---------------------------------------------------------------------------
# run
# ---------------------------------------------------------------------------
if [ -z "$OUT" ]; then
    OUT="$BENCH/results/run-$(date +%Y%m%d-%H%M%S).txt"
fi
mkdir -p "$(dirname "$OUT")"
: >"$OUT"
{
    echo "# bench/run.sh $(date -u +%Y-%m-%dT%H:%M:%SZ) host=$(hostname) cpus=$(nproc) load=$(cut -d' ' -f1-3 /proc/loadavg | tr ' ' ',')"
    echo "# server=$SERVER_VERSION url=$URL repeats=$REPEATS clients=$(IFS=,; echo "${NAMES[*]}") contention=$CONTENTION"
    echo "# args: --scenarios $SCENARIOS --sizes $SIZES ${PASS[*]}"
} | tee -a "$OUT"

IFS=',' read -r -a SCEN_LIST <<<"$SCENARIOS"
IFS=',' read -r -a SIZE_LIST <<<"$SIZES"
# hard guard per harness invocation: kv has two timed phases (js-consume:
# the fill and the consume); obj-put/obj-get run twice (the large object,
# the small ones) whatever the sizes, each with an untimed put (obj-get)
# and a timed part
guard_size=$(python3 -c "import math; print(math.ceil(2*float('$MAX_SECS')+60))")
guard_obj=$(python3 -c "import math; print(math.ceil(4*float('$MAX_SECS')+60))")

# libnatsio-only figures that have no peer counterpart: pub4 (the pub
# scenario from 4 threads sharing one client).
run_extras() {
    local r="$1" i
    [ "$EXTRAS" = 1 ] || return 0
    case ",$SCENARIOS," in *",pub,"*) ;; *) return 0 ;; esac
    for i in "${!NAMES[@]}"; do
        [ "${NAMES[$i]}" = libnatsio ] || continue
        for sz in "${SIZE_LIST[@]}"; do
            echo "# repeat=$r scenario=pub4 client=libnatsio size=$sz" >>"$OUT"
            log "repeat $r/$REPEATS: pub4 $sz libnatsio"
            # shellcheck disable=SC2086
            timeout -k 10 "$guard_size" ${CMDS[$i]} --url "$URL" --scenarios pub4 --threads 4 \
                --sizes "$sz" "${PASS[@]}" >"$TMPD/out.txt" 2>"$TMPD/err.txt" ||
                log "libnatsio pub4 $sz: exit $?"
            cat "$TMPD/out.txt" >>"$OUT"
            grep -v '^#' "$TMPD/out.txt" | grep -v '^$' >&2 || true
        done
    done
}

# CPU seconds the server process has used (empty with --url): printed per
# harness run as a comment, to show when a scenario is bounded by the
# server (server CPU close to the run's wall time) rather than the client.
server_cpu() {
    [ -n "${SERVER_PID:-}" ] && [ -r "/proc/$SERVER_PID/stat" ] || return 0
    awk -v hz="$(getconf CLK_TCK)" '{printf "%.2f", ($14 + $15) / hz}' "/proc/$SERVER_PID/stat"
}

# One harness invocation: client $1 (index), scenario $2, sizes $3 (one
# size; obj-put/obj-get: all of them, their runs have sizes of their own),
# its lines appended to $OUT; a run that ends badly gets a status=failed line
# for every size it printed nothing for.
run_one() {
    local i="$1" sc="$2" sizes="$3" name="${NAMES[$1]}" guard="$guard_size" rc cpu0 cpu1 t0 t1
    case "$sc" in obj-put|obj-get) guard="$guard_obj" ;; esac
    echo "# repeat=$r scenario=$sc client=$name size=$sizes" >>"$OUT"
    log "repeat $r/$REPEATS: $sc $sizes $name"
    set +e
    cpu0="$(server_cpu)"; t0="$(date +%s.%N)"
    # shellcheck disable=SC2086
    timeout -k 10 "$guard" ${CMDS[$i]} --url "$URL" --scenarios "$sc" --sizes "$sizes" "${PASS[@]}" \
        >"$TMPD/out.txt" 2>"$TMPD/err.txt"
    rc=$?
    cpu1="$(server_cpu)"; t1="$(date +%s.%N)"
    set -e
    cat "$TMPD/out.txt" >>"$OUT"
    if [ -n "$cpu0" ]; then
        awk -v sc="$sc" -v n="$name" -v sz="$sizes" -v t0="$t0" -v t1="$t1" -v c0="$cpu0" -v c1="$cpu1" \
            'BEGIN {printf "# server_cpu scenario=%s client=%s size=%s wall_s=%.2f server_cpu_s=%.2f\n", sc, n, sz, t1 - t0, c1 - c0}' >>"$OUT"
    fi
    grep -v '^#' "$TMPD/out.txt" | grep -v '^$' >&2 || true
    if [ "$rc" -ne 0 ]; then
        local why err1 sz s2 SZ scs
        why="exit_$rc"; [ "$rc" -eq 124 ] && why="killed_after_${guard}s"
        err1="$(head -c 200 "$TMPD/err.txt" | tr -s ' \t\n\r' '____')"
        log "$name $sc $sizes: $why ${err1}"
        # (obj-put/obj-get: the --obj-mb object and the 1 KiB ones)
        IFS=',' read -r -a SZ <<<"$sizes"
        case "$sc" in obj-put|obj-get) SZ=("$((OBJ_MB * 1048576))" 1024) ;; esac
        for sz in "${SZ[@]}"; do
            scs=("$sc"); [ "$sc" = kv ] && scs=(kv-put kv-get)
            for s2 in "${scs[@]}"; do
                if ! grep -q "^scenario=$s2 .*size=$sz " "$TMPD/out.txt"; then
                    echo "scenario=$s2 client=$name size=$sz n=- status=failed error=$why${err1:+:$err1}" >>"$OUT"
                fi
            done
        done
    fi
}

for r in $(seq 1 "$REPEATS"); do
    for sc in "${SCEN_LIST[@]}"; do
        case "$sc" in
            obj-put|obj-get) run_sizes=("$SIZES") ;;
            *) run_sizes=("${SIZE_LIST[@]}") ;;
        esac
        for sz in "${run_sizes[@]}"; do
            # Each repeat starts one client later (A B C, B C A, C A B):
            # no client always runs first, or always right after the same
            # one, so what a run leaves behind on the server and the
            # machine weighs on every client alike.
            for j in "${!NAMES[@]}"; do
                run_one "$(((j + r - 1) % ${#NAMES[@]}))" "$sc" "$sz"
            done
        done
    done
    run_extras "$r"
done

log "results: $OUT"
echo
"$PLOT_PYTHON" "$BENCH/summarize.py" --chart "${OUT%.txt}.png" "$OUT"
