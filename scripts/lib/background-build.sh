# Shared by scripts/test.sh and scripts/sanitize.sh (sourced, not run):
# builds that go on in the background at the lowest priority while the
# suites mostly wait on their servers.
#
#   background_build_start LOG STATUS CMD...
#       runs CMD at nice 19 in a process group of its own (in this
#       session: setsid would give it its own autogroup, which the
#       scheduler weighs like the whole run, whatever its nice value),
#       output to LOG, its exit status written to STATUS when it ends;
#       sets BACKGROUND_PGID
#   background_build_finish PGID STATUS
#       called when the run needs the result: waits for the build at
#       normal priority and returns its status (non-zero when it failed or
#       was stopped; the caller builds again in the foreground either way,
#       which then finds nothing or only the rest to do)
#
# Why the priority is raised at the end: beside other busy work (a loaded
# CI host, a CPU hog) a nice-19 job gets under 1% of a core and a run that
# waits for it stalls. Lowering a nice value needs CAP_SYS_NICE; without
# it the build is stopped instead, and the caller's foreground build does
# the rest at the run's own priority.

background_build_start() {
    local log="$1" status="$2"
    shift 2
    rm -f "$status"
    (exec nice -n 19 python3 -c 'import os, sys; os.setpgid(0, 0); os.execvp(sys.argv[1], sys.argv[1:])' \
        bash -c 'log=$1 status=$2; shift 2; "$@" >"$log" 2>&1; echo $? >"$status"' \
        background-build "$log" "$status" "$@") &
    BACKGROUND_PGID=$!
}

# background_build_tree PGID: the processes below the group's members.
background_build_tree() {
    ps -eo pid=,ppid=,pgid= | awk -v g="$1" '
        { parent[$1] = $2; group[$1] = $3 }
        END {
            for (p in parent) {
                for (q = parent[p]; q > 1; q = parent[q]) {
                    if (group[q] == g) { print p; break }
                    if (!(q in parent)) break
                }
            }
        }'
}

background_build_finish() {
    local pgid="$1" status="$2" start=$SECONDS
    if [ ! -s "$status" ] && kill -0 -- "-$pgid" 2>/dev/null; then
        if renice -n 0 -g "$pgid" >/dev/null 2>&1; then
            # And every process below the group: ninja starts each
            # compiler in a process group of its own, which renice -g
            # misses. (One that ends meanwhile makes renice fail: ignored.)
            local pid
            for pid in $(background_build_tree "$pgid"); do
                renice -n 0 -p "$pid" >/dev/null 2>&1 || true
            done
            echo "  (the background build is still running: raised to normal priority)"
        else
            echo "  (the background build is still running and may not be reniced: stopped; the foreground build does the rest)"
            local below
            below="$(background_build_tree "$pgid")"
            kill -- "-$pgid" 2>/dev/null || true
            # shellcheck disable=SC2086 # one pid per word
            [ -z "$below" ] || kill $below 2>/dev/null || true
        fi
        while [ ! -s "$status" ] && kill -0 -- "-$pgid" 2>/dev/null; do sleep 1; done
        echo "  (waited $((SECONDS - start)) s for it)"
    fi
    [ -s "$status" ] && [ "$(cat "$status")" = 0 ]
}
