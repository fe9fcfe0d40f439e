#!/usr/bin/env bash
# The API reference, C and C++: doxygen (docs/Doxyfile) over the C ABI,
# include/natsio.h, and the header-only C++ binding,
# bindings/cpp/include/natsio/*.hpp, into OUT_DIR/html (default:
# build/docs). Every doxygen warning fails the run, so a function, type,
# field, class or method without documentation cannot land.
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
echo "C and C++ API reference: $OUT_DIR/html/index.html"
