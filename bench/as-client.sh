#!/bin/bash
# Runs a harness under another client name, so that a variant of a client
# (an earlier build, other environment settings) gets rows of its own
# beside the client itself in one bench/run.sh run:
#
#   bench/as-client.sh NAME [VAR=VALUE ...] HARNESS [ARGS ...]
#
# sets the VAR=VALUE environment for HARNESS and rewrites the client= of
# every line it prints to NAME. With bench/run.sh (whose --harness command
# is split on spaces, and whose NAME must be the client= the harness
# prints):
#
#   bench/run.sh --contention 1 --scenarios req --sizes 16 \
#     --clients libnatsio-go,libnatsio-go:gomaxprocs3 \
#     --harness "libnatsio-go:gomaxprocs3=bench/as-client.sh libnatsio-go:gomaxprocs3 GOMAXPROCS=3 build/bench-go/natsio-go-bench"
#
# The harness's exit status is kept (a failed harness stays failed).
set -euo pipefail

[ $# -ge 2 ] || { echo "usage: $0 NAME [VAR=VALUE ...] HARNESS [ARGS ...]" >&2; exit 2; }
name="$1"
shift
case "$name" in *[!A-Za-z0-9:+._-]* | "") echo "$0: bad client name: $name" >&2; exit 2 ;; esac
while [ $# -gt 0 ]; do
    case "$1" in
        [A-Za-z_]*=*) export "${1?}"; shift ;;
        *) break ;;
    esac
done
[ $# -ge 1 ] || { echo "$0: no harness given" >&2; exit 2; }

# pipefail: the harness's failure is the script's.
"$@" | sed "s/\(^\| \)client=[^ ]*/\1client=$name/g"
