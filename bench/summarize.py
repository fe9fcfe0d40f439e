#!/usr/bin/env python3
"""Median table over benchmark result lines (shared bench spec format).

    bench/summarize.py RESULTS [RESULTS...]      (or lines on stdin)

One row per scenario / size / client with the median over all runs of the
rate (msgs_per_s or ops_per_s), p50_us and p99_us where the scenario has
latencies, and the errors summed over runs. For every client other than
`libnatsio` the ratio column shows libnatsio's median divided by that
client's: rate ratio > 1 means libnatsio is faster; p50 ratio < 1 means
libnatsio has lower latency.

The bindings' harnesses (`libnatsio-go`, `libnatsio-node`, and variants
named `libnatsio-<binding>:<variant>`) run the same
core through the Go and Node bindings; a second table, "binding
overhead", shows each binding's medians relative to `libnatsio` (the C
ABI): rate binding/C (<1: the binding is slower), p50 and p99 binding/C
(>1: the binding adds latency) and the CPU time per message both ways.

A lossy pubsub run (lost>0) or an incomplete jspub run (unacked>0) has a
rate that is not comparable with complete runs: if any run of a client is
lossy/incomplete, its rate shows n/a (and so does the ratio).
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
# Optional per-run figures shown (as medians) in the notes column.
EXTRA_MEDIANS = [("cpu_ns_per_msg", "cpu_ns/msg"), ("rss_kb", "peak_rss_kb"),
                 ("rss_start_kb", "rss_start_kb"), ("rss_end_kb", "rss_end_kb")]
SCEN_ORDER = ["pub", "pubsub", "req", "jspub", "jspub-sync", "kv-put", "kv-get"]
LATENCY_SCENARIOS = {"req", "jspub-sync", "kv-put", "kv-get"}


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
            self.status[st] += 1
            return
        self.runs.append(rec)
        self.errors += int(num(rec, "errors") or 0)
        for k in ("lib_log_errors", "wedged"):
            if k in rec:
                self.extra[k] += int(num(rec, k) or 0)
        sc = rec["scenario"]
        if sc == "pubsub" and (num(rec, "lost") or 0) > 0:
            self.incomplete += 1
            self.lost.append(int(num(rec, "lost")))
        if sc == "jspub" and (num(rec, "unacked") or 0) > 0:
            self.incomplete += 1
            self.lost.append(int(num(rec, "unacked")))

    def rate(self):
        if not self.runs or self.incomplete:
            return None
        key = "ops_per_s" if "ops_per_s" in self.runs[0] else "msgs_per_s"
        return median(num(r, key) for r in self.runs)

    def lat(self, key):
        if not self.runs:
            return None
        return median(num(r, key) for r in self.runs)

    def notes(self, scen):
        out = []
        if self.incomplete:
            what = "lossy" if scen == "pubsub" else "unacked"
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
        for key, label in EXTRA_MEDIANS:
            m = median(num(r, key) for r in self.runs if key in r)
            if m is not None:
                out.append(f"{label}={m:,.0f}" if m >= 100 else f"{label}={m:.1f}")
        return ", ".join(out)


def main(argv):
    lines = []
    if len(argv) > 1:
        for p in argv[1:]:
            with open(p, encoding="utf-8", errors="replace") as f:
                lines.extend(f)
    else:
        lines = sys.stdin.readlines()

    cells = OrderedDict()  # (scenario, size) -> OrderedDict(client -> Cell)
    for line in lines:
        rec = parse_line(line)
        if rec is None:
            continue
        key = (rec["scenario"], rec.get("size", "-"))
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
              "errors", f"{OURS}/client rate", f"{OURS}/client p50", "notes"]
    rows = []
    for key in sorted(cells, key=sort_key):
        sc, size = key
        clients = cells[key]
        ours = clients.get(OURS)
        our_rate = ours.rate() if ours else None
        our_p50 = ours.lat("p50_us") if ours and sc in LATENCY_SCENARIOS else None
        order = ([OURS] if OURS in clients else []) + [c for c in clients if c != OURS]
        for cl in order:
            cell = clients[cl]
            rate = cell.rate()
            has_lat = sc in LATENCY_SCENARIOS
            p50 = cell.lat("p50_us") if has_lat else None
            p99 = cell.lat("p99_us") if has_lat else None
            r_rate = r_p50 = ""
            if ours is not None and cl != OURS:
                r_rate = fmt_ratio(our_rate / rate if our_rate and rate else None)
                if has_lat:
                    r_p50 = fmt_ratio(our_p50 / p50 if our_p50 and p50 else None)
            rows.append([sc, size, cl, str(len(cell.runs)),
                         fmt_rate(rate) if cell.runs else "-",
                         fmt_us(p50), fmt_us(p99), str(cell.errors) if cell.runs else "-",
                         r_rate, r_p50, cell.notes(sc)])
        rows.append(None)  # group separator

    if not have_ours:  # no ratio columns without our own client
        header = header[:8] + header[10:]
        rows = [r[:8] + r[10:] if r else r for r in rows]
    widths = [len(h) for h in header]
    for r in rows:
        if r:
            widths = [max(w, len(c)) for w, c in zip(widths, r)]
    right = {3, 4, 5, 6, 7, 8, 9} if have_ours else {3, 4, 5, 6, 7}

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
    print("rate = msgs_per_s (pub, pubsub, req, jspub, jspub-sync) or ops_per_s (kv-put, kv-get);"
          " medians over runs.")
    if have_ours:
        print(f"{OURS}/client: ratio of medians; rate >1 = {OURS} faster, p50 <1 = {OURS} lower"
              " latency; n/a: lossy/incomplete or missing.")
    else:
        print(f"no {OURS} results: ratio columns omitted.")
    print("n/a rate: at least one lossy pubsub (lost>0) or unacked jspub run; not comparable.")
    print_binding_overhead(cells, sort_key)
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
                what = "lossy" if sc == "pubsub" else "unacked"
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


def _ratio(a, b):
    return a / b if a and b else None


if __name__ == "__main__":
    sys.exit(main(sys.argv))
