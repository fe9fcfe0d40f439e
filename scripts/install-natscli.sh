#!/usr/bin/env bash
# Install the nats CLI (github.com/nats-io/natscli) at a pinned version into
# <repo>/.tools/natscli-<version>/nats, built by `go install` from the Go
# module proxy. The Go interop tests run `nats micro ls/info/stats` with it.
#
#   NATS_CLI_VERSION  version to install (default 0.5.0)
#   NATS_CLI_BIN      if set to an existing executable, it is used as is and
#                     nothing is installed
#
# Idempotent: skips the build if the binary is present and reports the
# pinned version. Prints the absolute path of the binary as the LAST stdout
# line (progress messages go to stderr).
set -euo pipefail

VERSION="${NATS_CLI_VERSION:-0.5.0}"
REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DEST_DIR="$REPO_ROOT/.tools/natscli-$VERSION"
DEST="$DEST_DIR/nats"

log() { echo "install-natscli: $*" >&2; }

if [ -n "${NATS_CLI_BIN:-}" ]; then
    if [ -x "$NATS_CLI_BIN" ] && [ -f "$NATS_CLI_BIN" ]; then
        log "using NATS_CLI_BIN=$NATS_CLI_BIN ($("$NATS_CLI_BIN" --version 2>&1 || true))"
        (cd "$(dirname "$NATS_CLI_BIN")" && echo "$(pwd)/$(basename "$NATS_CLI_BIN")")
        exit 0
    fi
    log "NATS_CLI_BIN=$NATS_CLI_BIN is not an executable file; installing v$VERSION instead"
fi

# `nats --version` prints e.g. "v0.5.0"
version_ok() { [ -x "$1" ] && [ "$("$1" --version 2>&1)" = "v$VERSION" ]; }

if version_ok "$DEST"; then
    log "nats CLI v$VERSION already installed"
    echo "$DEST"
    exit 0
fi

command -v go >/dev/null || { log "go not found"; exit 1; }
TMP="$(mktemp -d "${TMPDIR:-/tmp}/natscli-install.XXXXXX")"
trap 'rm -rf "$TMP"' EXIT
log "go install github.com/nats-io/natscli/nats@v$VERSION (a few minutes the first time)"
GOBIN="$TMP" go install "github.com/nats-io/natscli/nats@v$VERSION" >&2
if ! version_ok "$TMP/nats"; then
    log "installed binary reports '$("$TMP/nats" --version 2>&1 || true)', expected v$VERSION"
    exit 1
fi
mkdir -p "$DEST_DIR"
mv -f "$TMP/nats" "$DEST"
log "installed nats CLI v$VERSION"
echo "$DEST"
