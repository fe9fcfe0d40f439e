#!/usr/bin/env bash
# Installs the chart's plotting library (matplotlib from PyPI, pinned) into a
# virtual environment of its own under .tools/, once, and prints the path of
# that environment's python: bench/run.sh runs bench/summarize.py with it to
# draw the ratio chart.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
MATPLOTLIB_VERSION="3.10.8"
venv="$root/.tools/bench-plot-matplotlib-$MATPLOTLIB_VERSION"
py="$venv/bin/python"
if ! "$py" -c 'import matplotlib' 2>/dev/null; then
    rm -rf "$venv"
    python3 -m venv "$venv" >&2
    "$py" -m pip install --disable-pip-version-check -q "matplotlib==$MATPLOTLIB_VERSION" >&2
fi
echo "$py"
