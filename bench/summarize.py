#!/usr/bin/env python3
"""Median table over benchmark result lines (shared bench spec format).

    bench/summarize.py [--chart FILE.png] RESULTS [RESULTS...]   (or lines on stdin)

One row per scenario / size / client with the median over all runs of the
rate (msgs_per_s, ops_per_s for kv-put/kv-get/kv-par, mb_per_s for
obj-put/obj-get), p50_us and p99_us where the scenario has latencies, the
errors summed over runs, and cpu_ns/msg: the median of the runs'
cpu_ns_per_msg (user+sys CPU of the client's whole process over the timed
region per message or operation; every harness prints it on the counted
scenarios). A lossy/incomplete run's CPU per message is per *received*
message and includes the work on the lost ones, so, like the rate, it is
not comparable: when any run of a client is lossy/incomplete the column
shows the median in parentheses, and no ratio uses it. The notes column has the medians of the
scenario's extra figures (kv-par: par and threads_peak; obj-put/obj-get:
js-consume: redelivered and ack_pending when not 0). "peak RSS MB" is the
median of rss_peak_kb, which every harness prints on every result line:
VmHWM of the process, which bench/run.sh starts afresh for each scenario
and size (Object Store lines written before rss_peak_kb existed: their
rss_peak_mb). For every client other than `libnatsio` the ratio columns
show libnatsio's median divided by that client's: rate ratio > 1 means
libnatsio is faster; rss and p50 ratios < 1 mean libnatsio uses less
memory / has lower latency.

The bindings' harnesses (`libnatsio-go`, `libnatsio-node`, and variants
named `libnatsio-<binding>:<variant>`) run the same
core through the Go and Node bindings; a second table, "binding
overhead", shows each binding's medians relative to `libnatsio` (the C
ABI): rate binding/C (<1: the binding is slower), p50 and p99 binding/C
(>1: the binding adds latency) and the CPU time per message both ways.

A third table, "bindings vs their ecosystem's client", compares each
binding with the official client of its language, same scenario and size:
`libnatsio-go` / `nats.go` and `libnatsio-node` / `nats.js` (rate: >1 the
binding is faster; peak RSS, p50/p99 and CPU per message: <1 the binding
is lower, i.e. better).

--chart FILE.png also draws, as one image, the rate and peak-RSS ratios of
each of ours against the client it would replace (libnatsio / nats.c,
libnatsio / async-nats, libnatsio-go / nats.go, libnatsio-node / nats.js)
per scenario and size; it needs matplotlib, which bench/install-plot.sh
installs (bench/run.sh runs this script with that python).

Then the issue's targets for the C ABI (issue 17): per pub and pubsub size,
libnatsio's cpu_ns/msg divided by nats.c's (target <= 0.7x), and per
js-consume size libnatsio's rate divided by the best of nats.c and
async-nats (target >= 1.2x), each marked met or MISSED (n/a when a side is
missing or has no complete run).

A fourth table, "Object Store", shows each client's obj-put/obj-get MB/s
and peak RSS (rss_peak_mb, VmHWM of the run's own process, and its growth
over rss_start_mb, the RSS when the clock started) with the ratio to the
best peer (the fastest of nats.c, async-nats, nats.go, nats.js in that
row) and, for libnatsio and its bindings, the issue's targets: MB/s >= the
best peer's, and peak RSS below 64 MiB for an object of 256 MiB or more
read or written in --obj-mode stream (no buffer of the object's size).
Runs made with --obj-mode stream (their lines say mode=stream, or the
results file's `# args:` line has `--obj-mode stream`) are kept apart as
scenarios `obj-put/stream` and `obj-get/stream`.

A lossy pubsub run (lost>0), an incomplete jspub run (unacked>0) or a short
js-consume run (received<n) has a rate that is not comparable with complete
runs: if any run of a client is lossy/incomplete, its rate shows n/a (and so
does the ratio). A `status=failed error=unsupported...` line (a client
without the API, e.g. nats.c has no Object Store) counts as unsupported.
"""

import math
import statistics
import sys
from collections import OrderedDict, defaultdict

OURS = "libnatsio"
# Reference harnesses of our own (not peers): rows where they only report
# status=unsupported are left out of the table.
AUXILIARY = {"natsio-rust-core"}
# Bindings over the same core (libnatsio-go, libnatsio-node and variants such
# as libnatsio-go:unlimited) are compared with OURS in the overhead table.
BINDING_PREFIX = OURS + "-"


def is_binding(client):
    return client.startswith(BINDING_PREFIX)
# Optional per-run figures shown (as medians) in the notes column
# (cpu_ns_per_msg has a column of its own).
# (The peak RSS, rss_peak_kb, has columns of its own.)
EXTRA_MEDIANS = [("rss_start_kb", "rss_start_kb"), ("rss_end_kb", "rss_end_kb"),
                 ("threads_peak", "threads_peak")]
SCEN_ORDER = ["pub", "pubsub", "req", "jspub", "jspub-sync", "kv-put", "kv-get", "kv-par",
              "js-consume", "obj-put", "obj-get", "obj-put/stream", "obj-get/stream", "svc"]
LATENCY_SCENARIOS = {"req", "jspub-sync", "kv-put", "kv-get", "svc"}
# Scenarios whose rate is MB/s (mb_per_s) rather than messages or operations.
MB_SCENARIOS = {"obj-put", "obj-get"}
# Mode suffix of the obj scenarios' --obj-mode stream runs.
STREAM_SUFFIX = "/stream"
# Issue 17's targets for the C ABI: CPU per message on pub and pubsub at
# most this fraction of nats.c's, and a js-consume rate at least this
# multiple of the best of CPU_RATE_PEERS'.
CPU_TARGET = 0.7
CPU_TARGET_SCENARIOS = ("pub", "pubsub")
CPU_TARGET_PEER = "nats.c"
CONSUME_TARGET = 1.2
CONSUME_TARGET_PEERS = ("nats.c", "async-nats")
# The peak-RSS target for a streamed get or put of >= 256 MiB.
RSS_TARGET_MB = 64 * 1048576 / 1e6
RSS_TARGET_MIN_SIZE = 256 * 1048576


def base_scenario(sc):
    """obj-put/stream -> obj-put"""
    return sc[:-len(STREAM_SUFFIX)] if sc.endswith(STREAM_SUFFIX) else sc


def is_peer(client):
    return client != OURS and not is_binding(client) and client not in AUXILIARY
# Each binding and the official client of its language (the ecosystem table).
ECOSYSTEM_PEERS = OrderedDict([(OURS + "-go", "nats.go"), (OURS + "-node", "nats.js")])


def rate_key(scenario, rec):
    if base_scenario(scenario) in MB_SCENARIOS:
        return "mb_per_s"
    return "ops_per_s" if "ops_per_s" in rec else "msgs_per_s"


def incomplete_word(scenario):
    return {"pubsub": "lossy", "js-consume": "short"}.get(scenario, "unacked")


def parse_line(line):
    line = line.strip()
    if not line or line.startswith("#") or "scenario=" not in line:
        return None
    rec = {}
    # error=... is last and may in principle hold spaces: keep the rest.
    head, sep, err = line.partition(" error=")
    for tok in head.split():
        k, eq, v = tok.partition("=")
        if eq:
            rec[k] = v
    if sep:
        rec["error"] = err
    if "scenario" not in rec or "client" not in rec:
        return None
    return rec


def num(rec, key):
    try:
        return float(rec[key])
    except (KeyError, ValueError):
        return None


def fmt_rate(x):
    if x is None:
        return "n/a"
    if x >= 100:
        return f"{x:,.0f}"
    return f"{x:,.1f}"


def fmt_us(x):
    return "-" if x is None else f"{x:,.1f}"


def fmt_ratio(x):
    return "n/a" if x is None or math.isnan(x) else f"x{x:.2f}"


def fmt_mb(x):
    return "-" if x is None else f"{x:,.1f}"


def fmt_cpu(x):
    """cpu_ns/msg: whole ns from 100 up, one decimal below"""
    if x is None:
        return "-"
    return f"{x:,.0f}" if x >= 100 else f"{x:.1f}"


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


class Cell:
    def __init__(self):
        self.runs = []  # good/complete-format records
        self.status = defaultdict(int)  # failed / timeout / unsupported
        self.errors = 0
        self.incomplete = 0  # lossy pubsub / unacked jspub runs
        self.lost = []
        self.extra = defaultdict(int)  # lib_log_errors, wedged

    def add(self, rec):
        st = rec.get("status")
        if st:
            if st == "failed" and rec.get("error", "").startswith("unsupported"):
                st = "unsupported"  # the client has no API for the scenario
            self.status[st] += 1
            return
        self.runs.append(rec)
        self.errors += int(num(rec, "errors") or 0)
        for k in ("lib_log_errors", "wedged"):
            if k in rec:
                self.extra[k] += int(num(rec, k) or 0)
        if rec.get("stats_ok") == "0":  # svc: the service's STATS did not count every request
            self.extra["stats_wrong"] += 1
        sc = rec["scenario"]
        if sc == "pubsub" and (num(rec, "lost") or 0) > 0:
            self.incomplete += 1
            self.lost.append(int(num(rec, "lost")))
        if sc == "jspub" and (num(rec, "unacked") or 0) > 0:
            self.incomplete += 1
            self.lost.append(int(num(rec, "unacked")))
        if sc == "js-consume":
            short = (num(rec, "n") or 0) - (num(rec, "received") or 0)
            if short > 0:
                self.incomplete += 1
                self.lost.append(int(short))

    def rate(self):
        if not self.runs or self.incomplete:
            return None
        key = rate_key(self.runs[0]["scenario"], self.runs[0])
        return median(num(r, key) for r in self.runs)

    def lat(self, key):
        if not self.runs:
            return None
        return median(num(r, key) for r in self.runs)

    def rss_mb(self):
        """Median peak RSS in MB (10^6 bytes): rss_peak_kb, which every
        harness prints on every result line (VmHWM of a process that ran
        this scenario and size alone); rss_peak_mb on the Object Store lines
        of files written before it."""
        def one(r):
            kb = num(r, "rss_peak_kb")
            return kb * 1024 / 1e6 if kb is not None else num(r, "rss_peak_mb")
        return median(one(r) for r in self.runs)

    def cpu(self):
        """Median cpu_ns_per_msg over the runs; None when a run was
        lossy/incomplete (not comparable, like the rate) or none has it."""
        if not self.runs or self.incomplete:
            return None
        return median(num(r, "cpu_ns_per_msg") for r in self.runs)

    def cpu_text(self):
        """The cpu_ns/msg cell: the median, in parentheses when a run was
        lossy/incomplete (not comparable), '-' when no run has it."""
        c = median(num(r, "cpu_ns_per_msg") for r in self.runs)
        if c is None:
            return "-"
        return f"({fmt_cpu(c)})" if self.incomplete else fmt_cpu(c)

    def notes(self, scen):
        out = []
        if self.incomplete:
            what = incomplete_word(scen)
            out.append(f"{what} {self.incomplete}/{len(self.runs)} (median {int(statistics.median(self.lost))})")
        for st, c in sorted(self.status.items()):
            out.append(f"{st} x{c}")
        for k, c in sorted(self.extra.items()):
            if c:
                out.append(f"{k}={c}")
        flush = {r.get("flush") for r in self.runs if r.get("flush")}
        if flush:
            out.append("flush=" + "/".join(sorted(flush)))
        mode = {r.get("mode") for r in self.runs if r.get("mode")}
        if mode:
            out.append("mode=" + "/".join(sorted(mode)))
        par = {r.get("par") for r in self.runs if r.get("par")}
        if par:
            out.append("par=" + "/".join(sorted(par, key=lambda p: (len(p), p))))
        redelivered = sum(int(num(r, "redelivered") or 0) for r in self.runs)
        if redelivered:
            out.append(f"redelivered={redelivered}")
        ack_pending = [int(num(r, "ack_pending")) for r in self.runs if num(r, "ack_pending")]
        if ack_pending:
            out.append(f"ack_pending max={max(ack_pending)}")
        for key, label in EXTRA_MEDIANS:
            m = median(num(r, key) for r in self.runs if key in r)
            if m is not None:
                out.append(f"{label}={m:,.0f}" if m >= 100 or m.is_integer() else f"{label}={m:.1f}")
        return ", ".join(out)


def main(argv):
    lines = []
    chart = None
    if len(argv) > 2 and argv[1] == "--chart":
        chart = argv[2]
        argv = argv[:1] + argv[3:]
    if len(argv) > 1:
        for p in argv[1:]:
            with open(p, encoding="utf-8", errors="replace") as f:
                lines.extend(f)
    else:
        lines = sys.stdin.readlines()

    cells = OrderedDict()  # (scenario, size) -> OrderedDict(client -> Cell)
    stream_file = False  # the current results file was run with --obj-mode stream
    for line in lines:
        if line.startswith("# bench/run.sh "):
            stream_file = False
        elif line.startswith("# args:"):
            stream_file = "--obj-mode stream" in line
        rec = parse_line(line)
        if rec is None:
            continue
        sc = rec["scenario"]
        if sc in MB_SCENARIOS and rec.get("mode", "stream" if stream_file else "memory") == "stream":
            sc += STREAM_SUFFIX
        key = (sc, rec.get("size", "-"))
        cells.setdefault(key, OrderedDict()).setdefault(rec["client"], Cell()).add(rec)
    for key in list(cells):
        for cl in list(cells[key]):
            cell = cells[key][cl]
            if (cl in AUXILIARY or is_binding(cl)) and not cell.runs and set(cell.status) <= {"unsupported"}:
                del cells[key][cl]
        if not cells[key]:
            del cells[key]

    if not cells:
        print("summarize.py: no result lines", file=sys.stderr)
        return 1

    def sort_key(k):
        sc, size = k
        idx = SCEN_ORDER.index(sc) if sc in SCEN_ORDER else len(SCEN_ORDER)
        try:
            sz = int(size)
        except ValueError:
            sz = -1
        return (idx, sc, sz)

    have_ours = any(OURS in c for c in cells.values())
    header = ["scenario", "size", "client", "runs", "rate/s (median)", "p50_us", "p99_us",
              "errors", "cpu_ns/msg", "peak RSS MB", f"{OURS}/client rate", f"{OURS}/client rss",
              f"{OURS}/client p50", "notes"]
    rows = []
    for key in sorted(cells, key=sort_key):
        sc, size = key
        clients = cells[key]
        ours = clients.get(OURS)
        our_rate = ours.rate() if ours else None
        our_p50 = ours.lat("p50_us") if ours and sc in LATENCY_SCENARIOS else None
        our_rss = ours.rss_mb() if ours else None
        order = ([OURS] if OURS in clients else []) + [c for c in clients if c != OURS]
        for cl in order:
            cell = clients[cl]
            rate = cell.rate()
            has_lat = sc in LATENCY_SCENARIOS
            p50 = cell.lat("p50_us") if has_lat else None
            p99 = cell.lat("p99_us") if has_lat else None
            rss = cell.rss_mb()
            r_rate = r_rss = r_p50 = ""
            if ours is not None and cl != OURS:
                r_rate = fmt_ratio(_ratio(our_rate, rate))
                r_rss = fmt_ratio(_ratio(our_rss, rss))
                if has_lat:
                    r_p50 = fmt_ratio(our_p50 / p50 if our_p50 and p50 else None)
            rows.append([sc, size, cl, str(len(cell.runs)),
                         fmt_rate(rate) if cell.runs else "-",
                         fmt_us(p50), fmt_us(p99), str(cell.errors) if cell.runs else "-",
                         cell.cpu_text(), fmt_mb(rss), r_rate, r_rss, r_p50, cell.notes(sc)])
        rows.append(None)  # group separator

    if not have_ours:  # no ratio columns without our own client
        header = header[:10] + header[13:]
        rows = [r[:10] + r[13:] if r else r for r in rows]
    widths = [len(h) for h in header]
    for r in rows:
        if r:
            widths = [max(w, len(c)) for w, c in zip(widths, r)]
    right = set(range(3, 13)) if have_ours else set(range(3, 10))

    def fmt_row(r):
        cells_ = []
        for i, (c, w) in enumerate(zip(r, widths)):
            if i == len(r) - 1:
                cells_.append(c)
            else:
                cells_.append(c.rjust(w) if i in right else c.ljust(w))
        return "  ".join(cells_).rstrip()

    print(fmt_row(header))
    print(fmt_row(["-" * w for w in widths]))
    for r in rows[:-1]:
        print(fmt_row(r) if r else "")
    print()
    print("rate = msgs_per_s (pub, pubsub, req, jspub, jspub-sync, js-consume), ops_per_s"
          " (kv-put, kv-get, kv-par) or MB/s = mb_per_s (obj-put, obj-get); medians over runs.")
    if have_ours:
        print(f"{OURS}/client: ratio of medians; rate >1 = {OURS} faster, rss and p50 <1 ="
              f" {OURS} uses less memory / has lower latency; n/a: lossy/incomplete or missing.")
    else:
        print(f"no {OURS} results: ratio columns omitted.")
    print("n/a rate: at least one lossy pubsub (lost>0), unacked jspub or short js-consume"
          " (received<n) run; not comparable.")
    print("peak RSS MB: rss_peak_kb (VmHWM of a process that ran only this scenario and size;"
          " kv-get's includes the kv-put run before it), median over runs, MB = 10^6 bytes.")
    print("cpu_ns/msg: user+sys CPU of the client's whole process over the timed region per"
          " message/operation, median over runs; (x): at least one lossy/incomplete run (CPU per"
          " received message, the lost ones' work included), not comparable.")
    print_binding_overhead(cells, sort_key)
    print_ecosystem(cells, sort_key)
    print_c_abi_targets(cells, sort_key)
    print_object_store(cells, sort_key)
    if chart:
        draw_chart(cells, sort_key, chart, [p for p in argv[1:]])
    return 0


def print_binding_overhead(cells, sort_key):
    """Each binding's medians relative to the C ABI's, scenario by scenario."""
    rows = []
    for key in sorted(cells, key=sort_key):
        sc, size = key
        clients = cells[key]
        ours = clients.get(OURS)
        if ours is None or not ours.runs:
            continue
        has_lat = sc in LATENCY_SCENARIOS
        our_rate = ours.rate()
        our_cpu = median(num(r, "cpu_ns_per_msg") for r in ours.runs)
        for b, cell in clients.items():
            if not is_binding(b) or not cell.runs:
                continue
            rate = cell.rate()
            cpu = median(num(r, "cpu_ns_per_msg") for r in cell.runs)
            p50 = p99 = "-"
            if has_lat:
                p50 = fmt_ratio(_ratio(cell.lat("p50_us"), ours.lat("p50_us")))
                p99 = fmt_ratio(_ratio(cell.lat("p99_us"), ours.lat("p99_us")))
            cpu_txt = "-"
            if cpu is not None and our_cpu is not None:
                cpu_txt = f"{cpu:,.0f} vs {our_cpu:,.0f}"
            note = ""
            if cell.incomplete:
                what = incomplete_word(sc)
                note = f"{what} {cell.incomplete}/{len(cell.runs)} (median {int(statistics.median(cell.lost))})"
            rows.append([sc, size, b, fmt_ratio(_ratio(rate, our_rate)), p50, p99, cpu_txt, note])
    if not rows:
        return
    header = ["scenario", "size", "binding", "rate binding/C", "p50 binding/C", "p99 binding/C",
              "cpu_ns/msg binding vs C", "notes"]
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    right = {3, 4, 5, 6}

    def fmt_row(r):
        out = [c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths))]
        return "  ".join(out).rstrip()

    print()
    print(f"Binding overhead (ratio of medians to {OURS}, the C ABI, same run):")
    print(fmt_row(header))
    print(fmt_row(["-" * w for w in widths]))
    for r in rows:
        print(fmt_row(r))
    print("rate <1: the binding is slower than the C ABI; p50/p99 >1: it adds latency;"
          " n/a: lossy run or missing.")


def print_ecosystem(cells, sort_key):
    """Each binding against the official client of its language
    (libnatsio-go / nats.go, libnatsio-node / nats.js), for every scenario
    and size both ran."""
    rows = []
    for key in sorted(cells, key=sort_key):
        sc, size = key
        clients = cells[key]
        has_lat = sc in LATENCY_SCENARIOS
        for b, cell in clients.items():
            peer_name = ECOSYSTEM_PEERS.get(b.split(":", 1)[0])
            peer = clients.get(peer_name) if peer_name else None
            if peer is None or not cell.runs or not peer.runs:
                continue
            p50 = p99 = "-"
            if has_lat:
                p50 = fmt_ratio(_ratio(cell.lat("p50_us"), peer.lat("p50_us")))
                p99 = fmt_ratio(_ratio(cell.lat("p99_us"), peer.lat("p99_us")))
            notes = []
            rss_mine, rss_theirs = cell.rss_mb(), peer.rss_mb()
            if rss_mine is not None and rss_theirs is not None:
                notes.append(f"peak RSS MB {fmt_mb(rss_mine)} vs {fmt_mb(rss_theirs)}")
            mine = median(num(r, "threads_peak") for r in cell.runs if "threads_peak" in r)
            theirs = median(num(r, "threads_peak") for r in peer.runs if "threads_peak" in r)
            if mine is not None and theirs is not None:
                notes.append(f"threads_peak {mine:,.0f} vs {theirs:,.0f}")
            for who, c in ((b, cell), (peer_name, peer)):
                if c.incomplete:
                    notes.append(f"{who} {incomplete_word(sc)} {c.incomplete}/{len(c.runs)}")
            unit = "MB/s" if base_scenario(sc) in MB_SCENARIOS else ("ops/s" if "ops_per_s" in cell.runs[0] else "msgs/s")
            cpu = "-"
            if cell.cpu() is not None or peer.cpu() is not None:
                cpu = fmt_ratio(_ratio(cell.cpu(), peer.cpu()))
            rows.append([sc, size, b, peer_name, unit, fmt_ratio(_ratio(cell.rate(), peer.rate())),
                         fmt_ratio(_ratio(rss_mine, rss_theirs)), p50, p99, cpu, ", ".join(notes)])
    if not rows:
        return
    header = ["scenario", "size", "binding", "peer", "rate unit", "rate b/peer (>1 better)",
              "rss b/peer (<1 better)", "p50 b/peer (<1 better)", "p99 b/peer (<1 better)", "cpu/msg b/peer (<1 better)", "notes"]
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    right = {5, 6, 7, 8, 9}

    def fmt_row(r):
        out = [c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths))]
        return "  ".join(out).rstrip()

    print()
    print("Bindings vs their ecosystem's client (ratio of medians binding/peer, same run):")
    print(fmt_row(header))
    print(fmt_row(["-" * w for w in widths]))
    for r in rows:
        print(fmt_row(r))
    print("rate (msgs/s, ops/s or MB/s): higher is better, so >1 = the binding is faster;"
          " peak RSS (rss_peak_kb), p50/p99 latency and cpu/msg (cpu_ns_per_msg): lower is"
          " better, so <1 = the binding is better (uses less CPU per message);"
          " n/a: lossy/incomplete run or missing.")


def print_c_abi_targets(cells, sort_key):
    """Issue 17's targets for the C ABI: CPU per message on pub and pubsub
    against nats.c's, and the js-consume rate against the best of nats.c and
    async-nats."""
    lines = []
    for key in sorted(cells, key=sort_key):
        sc, size = key
        clients = cells[key]
        ours = clients.get(OURS)
        if sc in CPU_TARGET_SCENARIOS:
            peer = clients.get(CPU_TARGET_PEER)
            if ours is None and peer is None:
                continue
            mine = ours.cpu() if ours else None
            theirs = peer.cpu() if peer else None
            r = _ratio(mine, theirs)
            if r is None:
                why = []
                for name, c, v in ((OURS, ours, mine), (CPU_TARGET_PEER, peer, theirs)):
                    if c is None or not c.runs:
                        why.append(f"no {name} run")
                    elif v is None:
                        why.append(f"{name}: lossy/incomplete run or no cpu_ns_per_msg")
                verdict = "n/a (" + ", ".join(why) + ")"
            else:
                verdict = "met" if r <= CPU_TARGET else "MISSED"
            detail = f" ({fmt_cpu(mine)} vs {fmt_cpu(theirs)} ns)" if r is not None else ""
            lines.append(f"{sc:<10}  {size:>5}  cpu/msg {OURS}/{CPU_TARGET_PEER} = {fmt_ratio(r)}{detail}"
                         f"  target <= {CPU_TARGET}x: {verdict}")
        elif sc == "js-consume":
            peers = [(clients[p].rate(), p) for p in CONSUME_TARGET_PEERS
                     if p in clients and clients[p].rate()]
            if ours is None and not peers:
                continue
            mine = ours.rate() if ours else None
            best, best_name = max(peers) if peers else (None, None)
            r = _ratio(mine, best)
            if r is None:
                why = []
                if ours is None or not ours.runs:
                    why.append(f"no {OURS} run")
                elif mine is None:
                    why.append(f"no comparable {OURS} rate: short run")
                if best is None:
                    why.append("no comparable rate of " + " or ".join(CONSUME_TARGET_PEERS))
                verdict = "n/a (" + ", ".join(why) + ")"
            else:
                verdict = "met" if r >= CONSUME_TARGET else "MISSED"
            detail = f" ({fmt_rate(mine)} vs {fmt_rate(best)} msgs/s)" if r is not None else ""
            lines.append(f"{sc:<10}  {size:>5}  rate {OURS}/best of {', '.join(CONSUME_TARGET_PEERS)}"
                         f"{' (' + best_name + ')' if best_name else ''} = {fmt_ratio(r)}{detail}"
                         f"  target >= {CONSUME_TARGET}x: {verdict}")
    if not lines:
        return
    print()
    print(f"Targets for the C ABI ({OURS}; ratios of medians, same run):")
    for line in lines:
        print(line)
    print(f"cpu/msg: medians of cpu_ns_per_msg, <1 = {OURS} uses less CPU per"
          f" message; rate: msgs_per_s, >1 = {OURS} is faster.")


def print_object_store(cells, sort_key):
    """obj-put / obj-get: MB/s and peak RSS of every client, the ratio to the
    best peer, and the issue's targets for libnatsio and its bindings."""
    rows = []
    for key in sorted(cells, key=sort_key):
        sc, size = key
        if base_scenario(sc) not in MB_SCENARIOS:
            continue
        clients = cells[key]
        peers = [(c.rate(), name) for name, c in clients.items() if is_peer(name) and c.rate()]
        best_rate, best_name = max(peers) if peers else (None, "-")
        order = sorted(clients, key=lambda n: (is_peer(n), n != OURS, n))
        for name in order:
            cell = clients[name]
            if not cell.runs:
                st = ", ".join(f"{k} x{v}" for k, v in sorted(cell.status.items()))
                rows.append([sc, size, name, "-", "-", "-", "-", "-", st])
                continue
            rate = cell.rate()
            peak = median(num(r, "rss_peak_mb") for r in cell.runs)
            start = median(num(r, "rss_start_mb") for r in cell.runs)
            growth = median(num(r, "rss_peak_mb") - num(r, "rss_start_mb") for r in cell.runs
                            if num(r, "rss_peak_mb") is not None and num(r, "rss_start_mb") is not None)
            notes = []
            if name == OURS or is_binding(name):
                if best_rate and rate:
                    notes.append(f"MB/s target {'met' if rate >= best_rate else 'MISSED'} (best peer {best_name})")
                try:
                    big = int(size) >= RSS_TARGET_MIN_SIZE
                except ValueError:
                    big = False
                if big and sc.endswith(STREAM_SUFFIX) and peak is not None:
                    notes.append(f"RSS target {'met' if peak < RSS_TARGET_MB else 'MISSED'}"
                                 f" ({peak:.1f} vs < {RSS_TARGET_MB:.1f} MB)")
            if cell.errors:
                notes.append(f"errors={cell.errors}")
            for st, c in sorted(cell.status.items()):
                notes.append(f"{st} x{c}")
            f1 = lambda x: "-" if x is None else f"{x:,.1f}"
            rows.append([sc, size, name, str(len(cell.runs)), fmt_rate(rate) if rate else "n/a",
                         fmt_ratio(_ratio(rate, best_rate)), f1(peak), f1(growth), "; ".join(notes)])
        rows.append(None)
    if not rows:
        return
    rows.pop()
    header = ["scenario", "size", "client", "runs", "MB/s (median)", "MB/s / best peer",
              "rss_peak_mb", "rss growth", "notes"]
    widths = [max(len(h), *(len(r[i]) for r in rows if r)) for i, h in enumerate(header)]
    right = {3, 4, 5, 6, 7}

    def fmt_row(r):
        out = [c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths))]
        return "  ".join(out).rstrip()

    print()
    print("Object Store (medians; ratio to the fastest peer of the same row group):")
    print(fmt_row(header))
    print(fmt_row(["-" * w for w in widths]))
    for r in rows:
        print(fmt_row(r) if r else "")
    print("rss_peak_mb: VmHWM of the run's own process (MB = 10^6 bytes; 64 MiB = 67.1 MB);"
          " rss growth: rss_peak_mb - rss_start_mb (the RSS when the clock started: memory mode's"
          " put has its whole object in it). Targets (libnatsio and bindings): MB/s >= best peer;"
          " peak RSS < 64 MiB for a >= 256 MiB object in stream mode.")


# The pairs the chart draws: each of ours against the client it would replace.
CHART_PAIRS = [(OURS, "nats.c"), (OURS, "async-nats")] + list(ECOSYSTEM_PEERS.items())
CHART_COLORS = ["#1f77b4", "#9ecae1", "#2ca02c", "#ff7f0e"]


def draw_chart(cells, sort_key, path, sources):
    """One PNG: per scenario and size, the rate ratio and the peak-RSS ratio
    of each pair of CHART_PAIRS (ours / theirs, medians), as horizontal bars
    on a log scale around 1. matplotlib comes from bench/install-plot.sh."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = []  # (label, {pair index: (rate ratio, rss ratio)})
    for key in sorted(cells, key=sort_key):
        clients = cells[key]
        got = {}
        for i, (mine, theirs) in enumerate(CHART_PAIRS):
            a, b = clients.get(mine), clients.get(theirs)
            if a is None or b is None or not a.runs or not b.runs:
                continue
            got[i] = (_ratio(a.rate(), b.rate()), _ratio(a.rss_mb(), b.rss_mb()))
        if got:
            size = key[1]
            if size.isdigit() and int(size) >= 1048576 and int(size) % 1048576 == 0:
                size = f"{int(size) // 1048576} MiB"
            rows.append((f"{key[0]} {size}", got))
    if not rows:
        print(f"summarize.py: nothing to chart for {path}", file=sys.stderr)
        return
    used = sorted({i for _, got in rows for i in got})
    bar_h = 0.8 / len(used)
    fig, axes = plt.subplots(1, 2, sharey=True, figsize=(12, 1.0 + 0.22 * len(rows) * len(used) + 0.6))
    titles = ("rate, ours / theirs (>1: ours faster)", "peak RSS, ours / theirs (<1: ours smaller)")
    for panel, (ax, title) in enumerate(zip(axes, titles)):
        values = []
        for slot, i in enumerate(used):
            ys, xs, missing = [], [], []
            for y, (_, got) in enumerate(rows):
                v = got.get(i, (None, None))[panel]
                yy = y + (slot - (len(used) - 1) / 2) * bar_h
                if v is None:
                    if i in got:
                        missing.append(yy)
                    continue
                ys.append(yy)
                xs.append(v)
                values.append(v)
            mine, theirs = CHART_PAIRS[i]
            bars = ax.barh(ys, [math.log2(x) for x in xs], height=bar_h, color=CHART_COLORS[i],
                           label=f"{mine} / {theirs}")
            ax.bar_label(bars, labels=[f"x{x:.2f}" for x in xs], fontsize=6, padding=2)
            for yy in missing:  # lossy or incomplete: no comparable figure
                ax.text(0, yy, " n/a", va="center", fontsize=7, color="gray")
        lim = max([1.0] + [abs(math.log2(v)) for v in values]) * 1.25
        ax.set_xlim(-lim, lim)
        fine = lim < 1.5  # within x0.35..x2.8: finer ticks
        candidates = (0.5, 0.67, 1, 1.5, 2) if fine else (1 / 16, 0.125, 0.25, 0.5, 1, 2, 4, 8, 16)
        ticks = [t for t in candidates if abs(math.log2(t)) <= lim]
        ax.set_xticks([math.log2(t) for t in ticks])
        ax.set_xticklabels([f"x{t:.2g}" for t in ticks])
        ax.axvline(0, color="black", linewidth=0.8)
        ax.set_title(title, fontsize=10)
        ax.grid(axis="x", linestyle=":", linewidth=0.5)
    axes[0].set_yticks(range(len(rows)))
    axes[0].set_yticklabels([label for label, _ in rows])
    axes[0].invert_yaxis()
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, 0.965), ncol=len(used),
               fontsize=8, frameon=False)
    names = ", ".join(p.rsplit("/", 1)[-1] for p in sources) or "stdin"
    fig.suptitle(f"libnatsio and its bindings against the official clients (medians; {names};"
                 " drawn by bench/summarize.py --chart)", fontsize=9, y=0.995)
    top = 1 - 0.4 / fig.get_figheight()
    fig.tight_layout(rect=(0, 0, 1, top))
    fig.savefig(path, dpi=110)
    plt.close(fig)
    print(f"chart: {path}")


def _ratio(a, b):
    return a / b if a and b else None


if __name__ == "__main__":
    sys.exit(main(sys.argv))
