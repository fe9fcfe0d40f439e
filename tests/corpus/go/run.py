#!/usr/bin/env python3
"""Runs the Go corpus: each program here is written for nats.go; it is run
once as written (nats.go from the module proxy, the version in go.mod) and
once with only its import lines pointed at libnatsio's facade
(bindings/go/nats, .../nats/jetstream and .../nats/micro), each run against a fresh
nats-server. The two outputs must match line for line; the lines between
"--- unordered" and "--- end unordered" are sorted first (their order is
not defined). Exit status 0 when every program matched, and the last line
says how many did: "go corpus programs passed: N".

nats.go's run is the reference: when it exits non-zero it is run again (at
most REFERENCE_ATTEMPTS times in all, each retry logged), since its own
rare failures are not what the corpus tests (js_consume_drain: once in a
clean-clone run nats.go's push-consumer Drain handed 1 of 20 queued
messages to the handler and the program timed out waiting for their
acks; 0 of 6 runs after). libnatsio's run is never retried.

Usage: run.py [program ...]   (default: every directory with a main.go)
Environment: NATS_SERVER_BIN (else ../../../.tools/nats-server-*/nats-server);
the cgo settings of the Go binding (PKG_CONFIG_PATH, CGO_CPPFLAGS), as the
"go test" stage of scripts/test.sh sets them.
"""
import difflib
import glob
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
FACADE = "github.com/libnatsio/natsio/bindings/go"
IMPORTS = [
    ('"github.com/nats-io/nats.go/jetstream"', '"%s/nats/jetstream"' % FACADE),
    ('"github.com/nats-io/nats.go/micro"', '"%s/nats/micro"' % FACADE),
    ('"github.com/nats-io/nats.go"', '"%s/nats"' % FACADE),
]
RUN_TIMEOUT = 120
REFERENCE_ATTEMPTS = 3


def server_bin():
    found = os.environ.get("NATS_SERVER_BIN")
    if found:
        return found
    found = sorted(glob.glob(os.path.join(ROOT, ".tools", "nats-server-*", "nats-server")))
    if not found:
        sys.exit("run.py: no nats-server: set NATS_SERVER_BIN (scripts/install-nats-server.sh)")
    return found[-1]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """A fresh nats-server with JetStream in its own store directory."""

    def __init__(self, binary, tmp):
        self.store = tempfile.mkdtemp(dir=tmp, prefix="js-")
        # A port from bind(0) may be taken before the server binds it (by any
        # outgoing connection): a server that exits at once is started again
        # on another port.
        for _ in range(5):
            self.port = free_port()
            self.proc = subprocess.Popen(
                [binary, "-a", "127.0.0.1", "-p", str(self.port), "-js", "-sd", self.store],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            if self._await_ready():
                return
        raise RuntimeError("nats-server did not start")

    def _await_ready(self):
        deadline = time.monotonic() + 20
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return True
            except OSError:
                if self.proc.poll() is not None:
                    return False
                if time.monotonic() > deadline:
                    raise RuntimeError("nats-server did not start within 20 s")
                time.sleep(0.02)

    def url(self):
        return "nats://127.0.0.1:%d" % self.port

    def stop(self):
        self.proc.terminate()
        self.proc.wait()
        shutil.rmtree(self.store, ignore_errors=True)


def programs(names):
    found = sorted(d for d in os.listdir(HERE) if os.path.isfile(os.path.join(HERE, d, "main.go")))
    if not names:
        return found
    for n in names:
        if n not in found:
            sys.exit("run.py: no program %s" % n)
    return names


def rewrite_imports(src):
    for old, new in IMPORTS:
        src = src.replace(old, new)
    return src


def build(tmp, names):
    """Builds every program both ways; returns the two binary directories."""
    official = os.path.join(tmp, "official")
    subprocess.run(["go", "build", "-o", official + "/"] + ["./" + n for n in names],
                   cwd=HERE, check=True)
    src = os.path.join(tmp, "natsio-src")
    for n in names:
        os.makedirs(os.path.join(src, n))
        with open(os.path.join(HERE, n, "main.go")) as f:
            text = f.read()
        with open(os.path.join(src, n, "main.go"), "w") as f:
            f.write(rewrite_imports(text))
    with open(os.path.join(src, "go.mod"), "w") as f:
        f.write("module natsio-corpus\n\ngo 1.24\n\nrequire %s v0.0.0\n\nreplace %s => %s\n"
                % (FACADE, FACADE, os.path.join(ROOT, "bindings", "go")))
    natsio = os.path.join(tmp, "natsio")
    subprocess.run(["go", "build", "-o", natsio + "/"] + ["./" + n for n in names],
                   cwd=src, check=True)
    return official, natsio


def run(binary, server_binary, tmp):
    server = Server(server_binary, tmp)
    try:
        env = dict(os.environ, NATS_URL=server.url())
        try:
            p = subprocess.run([binary], env=env, capture_output=True, text=True, timeout=RUN_TIMEOUT)
        except subprocess.TimeoutExpired as e:
            out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
            return "timeout (%d s)" % RUN_TIMEOUT, out, ""
        return p.returncode, p.stdout, p.stderr
    finally:
        server.stop()


def normalize(out):
    """The output's lines, each unordered section sorted."""
    lines, section = [], None
    for line in out.splitlines():
        if line == "--- unordered":
            section = []
        elif line == "--- end unordered" and section is not None:
            lines.extend(sorted(section))
            section = None
        elif section is not None:
            section.append(line)
        else:
            lines.append(line)
    return lines + sorted(section or [])


def main():
    names = programs(sys.argv[1:])
    binary = server_bin()
    tmp = tempfile.mkdtemp(prefix="go-corpus-")
    passed, failed = 0, []
    try:
        official, natsio = build(tmp, names)
        for n in names:
            for attempt in range(1, REFERENCE_ATTEMPTS + 1):
                rc_a, out_a, err_a = run(os.path.join(official, n), binary, tmp)
                if rc_a == 0 or attempt == REFERENCE_ATTEMPTS:
                    break
                print("note %s: nats.go run %d of %d exited %s, run again: %s"
                      % (n, attempt, REFERENCE_ATTEMPTS, rc_a, err_a.strip()))
            rc_b, out_b, err_b = run(os.path.join(natsio, n), binary, tmp)
            a, b = normalize(out_a), normalize(out_b)
            problems = []
            if rc_a != 0:
                problems.append("nats.go run exited %s: %s" % (rc_a, err_a.strip()))
            if rc_b != 0:
                problems.append("libnatsio run exited %s: %s" % (rc_b, err_b.strip()))
            if not a:
                problems.append("nats.go run printed nothing")
            if a != b:
                problems.append("outputs differ (--- nats.go, +++ libnatsio):\n" + "\n".join(
                    difflib.unified_diff(a, b, "nats.go", "libnatsio", lineterm="")))
            if problems:
                failed.append(n)
                print("FAIL %s\n  %s" % (n, "\n  ".join(problems)))
            else:
                passed += 1
                print("ok   %s (%d lines)" % (n, len(a)))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if failed:
        print("go corpus programs failed: %s" % " ".join(failed))
    print("go corpus programs passed: %d" % passed)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
