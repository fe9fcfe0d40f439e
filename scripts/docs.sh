#!/usr/bin/env bash
# The C API reference: doxygen over include/natsio.h (docs/Doxyfile), into
# OUT_DIR/html (default: build/docs). Every doxygen warning fails the run,
# so a function, type or field without documentation cannot land.
#
#   scripts/docs.sh [OUT_DIR]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
OUT_DIR="${1:-build/docs}"
mkdir -p "$OUT_DIR"
OUT_DIR="$(cd "$OUT_DIR" && pwd)"
command -v doxygen >/dev/null || { echo "docs: doxygen not found (Debian: apt-get install doxygen)" >&2; exit 1; }
warnings="$OUT_DIR/warnings.log"
{
    cat docs/Doxyfile
    echo "OUTPUT_DIRECTORY = $OUT_DIR"
    echo "WARN_LOGFILE = $warnings"
} | doxygen - >/dev/null
if [ -s "$warnings" ]; then
    echo "docs: doxygen warned ($(wc -l <"$warnings") lines); each is an error:" >&2
    cat "$warnings" >&2
    exit 1
fi
echo "C API reference: $OUT_DIR/html/index.html"
