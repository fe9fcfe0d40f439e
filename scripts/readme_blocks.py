#!/usr/bin/env python3
"""Every code block of the READMEs runs, so a tour that does not work fails CI.

Each fenced block in README.md and bindings/{cpp,go,node}/README.md is
preceded by a marker that says how it is run (an HTML comment: invisible
when rendered):

  <!-- readme-test: program NAME [harness=H] [files=a,b] [server=tls]
                    [expect=TEXT] [sub=FROM=>TO ...] -->
      The block is (part of) program NAME of its language (c, cpp, go, js).
      Blocks of one README with the same NAME are joined in order. With
      harness=H they are the body of tests/readme/H.<ext> (which sets up
      what they use: a client, a JetStream context, helper functions); the
      first block of a program names the harness. Without one, the blocks
      are the whole file. C/C++ #include and `using namespace` lines go to
      the top of the file. The program is built against the tree (include/,
      bindings/cpp/include, <BUILD_DIR>/pkgconfig, bindings/node) and run
      in a temporary directory against a fresh nats-server (JetStream on;
      server=tls: TLS with client certificates and operator-mode JWT auth,
      tests/fixtures); files= are created there first (fixtures the text
      reads: ca.pem, user.creds, report.pdf, ...). nats://127.0.0.1:4222
      becomes the server's URL; sub= adds replacements (@URL@, @HOSTPORT@
      and @FIXTURES@ in TO are expanded). It must exit 0 within 120 s and,
      with expect=, print TEXT.
  <!-- readme-test: shell [background=W1,W2] [sub=...] -->
      The block runs as one bash script (set -e) from the repository root,
      the server's URL and sub= substituted (e.g. a narrower test selection
      than a block's full suite, which scripts/test.sh runs in its own
      stage); lines containing one of the words W run in the background (a
      service, a subscriber) and are stopped at the end.
  <!-- readme-test: by SCRIPT ID -->
      SCRIPT runs the block itself (it reads it with `readme_blocks.py
      extract FILE ID`, so SCRIPT must name ID); scripts/test.sh runs SCRIPT.

  scripts/readme_blocks.py check          every block has a valid marker
  scripts/readme_blocks.py run [FILTER]   check, then run every program and
                                          shell block (FILTER: a substring of
                                          "FILE:LINE NAME" to run only some)
  scripts/readme_blocks.py extract FILE ID   print a `by` block's text
  scripts/readme_blocks.py commands FILE ID  the same without comments and
                                             blank lines (its commands)

Environment: NATS_SERVER_BIN (required for run), BUILD_DIR (default build),
NATSIO_LIB_DIR (default target/release), README_JOBS (programs built and
run at once, default 2). Prints "readme blocks passed: N"
last (scripts/test.sh counts N: one per program or shell block run).
"""

import concurrent.futures
import hashlib
import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
READMES = ["README.md", "bindings/cpp/README.md", "bindings/go/README.md", "bindings/node/README.md"]
MARKER = re.compile(r"^<!-- readme-test: (.*) -->$")
FENCE = re.compile(r"^```(\S*)\s*$")
EXT = {"c": "c", "cpp": "cpp", "go": "go", "js": "mjs"}
DEFAULT_URL = "nats://127.0.0.1:4222"
RUN_TIMEOUT = 120


class Fail(Exception):
    pass


class Block:
    def __init__(self, path, line, lang, text, marker):
        self.path, self.line, self.lang, self.text = path, line, lang, text
        words = shlex.split(marker)
        self.kind = words[0] if words else ""
        self.args = []
        self.attrs = {}
        self.subs = []
        for w in words[1:]:
            if w.startswith("sub="):
                frm, sep, to = w[4:].partition("=>")
                if not sep:
                    raise Fail(f"{self.where()}: sub= needs FROM=>TO: {w}")
                self.subs.append((frm, to))
            elif "=" in w:
                k, v = w.split("=", 1)
                self.attrs[k] = v
            else:
                self.args.append(w)

    def where(self):
        return f"{self.path}:{self.line}"


def parse(path, strict=True):
    """The blocks of one README; strict: each must have a marker (extract
    reads one block of a README whose other blocks may be unmarked)."""
    blocks = []
    lines = open(os.path.join(ROOT, path), encoding="utf-8").read().split("\n")
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        start, lang = i, m.group(1)
        j = i + 1
        while j < len(lines) and not lines[j].startswith("```"):
            j += 1
        if j == len(lines):
            raise Fail(f"{path}:{start + 1}: a code block that never ends")
        k = start - 1
        while k >= 0 and not lines[k].strip():
            k -= 1
        mm = MARKER.match(lines[k].strip()) if k >= 0 else None
        if not mm and strict:
            raise Fail(f"{path}:{start + 1}: a ```{lang} block without a <!-- readme-test: ... --> marker before it")
        blocks.append(Block(path, start + 1, lang, "\n".join(lines[start + 1:j]) + "\n", mm.group(1) if mm else ""))
        i = j + 1
    return blocks


def all_blocks(only=""):
    """The blocks of every README (only those of one when the filter starts
    with its path: a README being worked on is run alone)."""
    chosen = [p for p in READMES if only.startswith(p + ":") or only == p] or READMES
    blocks = []
    for path in chosen:
        blocks += parse(path)
    return blocks


def check(blocks, scripts=True):
    """Markers are well formed (with scripts, a `by` block's script names
    its id); returns the programs: {(path, name): [blocks]}."""
    programs = {}
    ids = set()
    for b in blocks:
        if b.kind == "program":
            if len(b.args) != 1 or b.lang not in EXT:
                raise Fail(f"{b.where()}: `program NAME` on a c, cpp, go or js block")
            programs.setdefault((b.path, b.args[0]), []).append(b)
        elif b.kind == "shell":
            if b.lang != "sh":
                raise Fail(f"{b.where()}: `shell` on a sh block")
        elif b.kind == "by":
            if len(b.args) != 2:
                raise Fail(f"{b.where()}: `by SCRIPT ID`")
            script, ident = b.args
            if (b.path, ident) in ids:
                raise Fail(f"{b.where()}: id {ident} used twice in {b.path}")
            ids.add((b.path, ident))
            spath = os.path.join(ROOT, script)
            if scripts and (not os.path.isfile(spath) or ident not in open(spath, encoding="utf-8").read()):
                raise Fail(f"{b.where()}: {script} does not run block {ident}")
        else:
            raise Fail(f"{b.where()}: unknown marker kind {b.kind!r} (program, shell, by)")
    for (path, name), bs in programs.items():
        if len({b.lang for b in bs}) != 1:
            raise Fail(f"{bs[0].where()}: program {name} mixes languages")
        for b in bs[1:]:
            if "harness" in b.attrs:
                raise Fail(f"{b.where()}: only the first block of program {name} names its harness")
    return programs


# --------------------------------------------------------------------------
# Servers

def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Server:
    def __init__(self, work, tls):
        self.port = free_port()
        self.dir = tempfile.mkdtemp(prefix="server.", dir=work)
        binary = os.environ.get("NATS_SERVER_BIN")
        if not binary:
            raise Fail("NATS_SERVER_BIN is not set")
        args = [binary, "-a", "127.0.0.1", "-p", str(self.port)]
        if tls:
            fx = os.path.join(ROOT, "tests/fixtures")
            shutil.copy(os.path.join(fx, "auth/operator.conf"), self.dir)
            conf = os.path.join(self.dir, "server.conf")
            with open(conf, "w") as f:
                f.write("include ./operator.conf\n"
                        "tls {\n"
                        f"  cert_file: \"{fx}/tls/server-cert.pem\"\n"
                        f"  key_file: \"{fx}/tls/server-key.pem\"\n"
                        f"  ca_file: \"{fx}/tls/ca.pem\"\n"
                        "  verify: true\n"
                        "}\n")
            args += ["-c", conf]
            self.url = f"tls://localhost:{self.port}"
        else:
            args += ["-js", "-sd", os.path.join(self.dir, "js")]
            self.url = f"nats://127.0.0.1:{self.port}"
        self.hostport = f"localhost:{self.port}"
        self.log = open(os.path.join(self.dir, "server.log"), "w")
        self.proc = subprocess.Popen(args, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.time() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                break
            except OSError:
                if self.proc.poll() is not None or time.time() > deadline:
                    raise Fail("nats-server did not start: " + open(self.log.name).read()[-2000:])
                time.sleep(0.05)

    def stop(self):
        self.proc.kill()
        self.proc.wait()
        self.log.close()


# --------------------------------------------------------------------------
# Programs

def substitute(text, subs, server):
    text = text.replace(DEFAULT_URL, server.url)
    for frm, to in subs:
        to = (to.replace("@URL@", server.url).replace("@HOSTPORT@", server.hostport)
              .replace("@FIXTURES@", os.path.join(ROOT, "tests/fixtures")))
        if frm not in text:
            raise Fail(f"sub= {frm!r} does not occur in the program")
        text = text.replace(frm, to)
    return text


def assemble(lang, blocks):
    body = "".join(b.text for b in blocks)
    harness = blocks[0].attrs.get("harness")
    if lang in ("c", "cpp"):
        top, rest = [], []
        for line in body.split("\n"):
            (top if re.match(r"^\s*(#include|using namespace)", line) else rest).append(line)
        top, body = "\n".join(top) + "\n", "\n".join(rest)
    else:
        top = ""
    if not harness:
        return top + body
    hpath = os.path.join(ROOT, "tests/readme", f"{harness}.{EXT[lang]}")
    if not os.path.isfile(hpath):
        raise Fail(f"{blocks[0].where()}: no harness tests/readme/{harness}.{EXT[lang]}")
    text = open(hpath, encoding="utf-8").read()
    comment = "//{}" if lang in ("go", "js") else "/*{}*/"
    slots = {comment.format(f"@{tag}@"): code for tag, code in (("TOP", top), ("BODY", body))}
    for slot, code in slots.items():
        if slot not in text:
            raise Fail(f"{hpath}: no {slot}")
        text = text.replace(slot, code)
    return text

def lib_dir():
    d = os.environ.get("NATSIO_LIB_DIR", os.path.join(ROOT, "target/release"))
    return d if os.path.isabs(d) else os.path.join(ROOT, d)


def build_dir():
    d = os.environ.get("BUILD_DIR", "build")
    return d if os.path.isabs(d) else os.path.join(ROOT, d)


def sh(args, cwd, env=None, timeout=600):
    p = subprocess.run(args, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, timeout=timeout)
    if p.returncode != 0:
        raise Fail(f"{' '.join(args)} exited {p.returncode}:\n{p.stdout[-6000:]}")
    return p.stdout


def go_env():
    env = dict(os.environ)
    pc = os.path.join(build_dir(), "pkgconfig")
    env["PKG_CONFIG_PATH"] = pc
    # Go's build cache does not key on pkg-config's output (see test.sh).
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", "natsio-static"], env=env,
                           stdout=subprocess.PIPE, text=True).stdout
    env["CGO_CPPFLAGS"] = "-DNATSIO_PC_" + hashlib.sha256(flags.encode()).hexdigest()[:16]
    env["GOFLAGS"] = "-mod=mod"
    env["GOPROXY"] = "off"
    return env


def build(lang, src, work):
    exe = os.path.join(work, "prog")
    inc = os.path.join(ROOT, "include")
    if lang == "c":
        sh(["cc", "-std=c11", "-Wall", "-Werror=implicit-function-declaration", "-I", inc, src,
            "-L", lib_dir(), "-lnatsio", f"-Wl,-rpath,{lib_dir()}", "-o", exe], work)
        return [exe]
    if lang == "cpp":
        sh(["c++", "-std=c++17", "-Wall", "-pthread", "-I", inc, "-I",
            os.path.join(ROOT, "bindings/cpp/include"), "-I", os.path.join(ROOT, "tests/readme"), src, "-L", lib_dir(), "-lnatsio",
            f"-Wl,-rpath,{lib_dir()}", "-o", exe], work)
        return [exe]
    if lang == "go":
        with open(os.path.join(work, "go.mod"), "w") as f:
            f.write("module readme\n\ngo 1.24\n\n"
                    "require github.com/libnatsio/natsio/bindings/go v0.0.0\n\n"
                    f"replace github.com/libnatsio/natsio/bindings/go => {ROOT}/bindings/go\n")
        sh(["go", "build", "-o", exe, "."], work, env=go_env())
        return [exe]
    if lang == "js":
        os.makedirs(os.path.join(work, "node_modules"), exist_ok=True)
        os.symlink(os.path.join(ROOT, "bindings/node"), os.path.join(work, "node_modules/natsio"))
        return ["node", src]
    raise Fail(f"no builder for {lang}")


def make_files(names, work):
    fx = os.path.join(ROOT, "tests/fixtures")
    known = {
        "ca.pem": "tls/ca.pem", "client-cert.pem": "tls/client-cert.pem",
        "client-key.pem": "tls/client-key.pem", "user.creds": "auth/user.creds",
    }
    for name in filter(None, names.split(",")):
        dest = os.path.join(work, name)
        if name in known:
            shutil.copy(os.path.join(fx, known[name]), dest)
        else:  # a document the program reads: 300 KiB of text, several chunks
            with open(dest, "w") as f:
                f.write(f"{name}: line of the test document\n" * 10000)


def run_program(lang, name, blocks, work):
    first = blocks[0]
    server = Server(work, first.attrs.get("server") == "tls")
    try:
        subs = [s for b in blocks for s in b.subs]
        src = os.path.join(work, ("main." if lang == "go" else "prog.") + EXT[lang])
        with open(src, "w", encoding="utf-8") as f:
            f.write(substitute(assemble(lang, blocks), subs, server))
        for b in blocks:
            make_files(b.attrs.get("files", ""), work)
        cmd = build(lang, src, work)
        env = dict(os.environ, NATS_URL=server.url)
        try:
            p = subprocess.run(cmd, cwd=work, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True, timeout=RUN_TIMEOUT)
        except subprocess.TimeoutExpired:
            raise Fail(f"still running after {RUN_TIMEOUT} s (source: {src})")
        if p.returncode != 0:
            raise Fail(f"exited {p.returncode} (source: {src}):\n{p.stdout[-4000:]}")
        expect = first.attrs.get("expect")
        if expect and expect not in p.stdout:
            raise Fail(f"output lacks {expect!r}:\n{p.stdout[-4000:]}")
        return len(p.stdout.splitlines())
    finally:
        server.stop()


def run_shell(block, work):
    """The block as one bash script (set -e; cd and export carry over), from
    the repository root; background lines are started in order and stopped
    at the end."""
    server = Server(work, False)
    background = [w for w in block.attrs.get("background", "").split(",") if w]
    script = ["set -euo pipefail"]
    started = 0
    for line in substitute(block.text, block.subs, server).split("\n"):
        if line.strip() and any(w in line for w in background):
            # { } on their own lines: a trailing comment cannot swallow the &.
            # Ready when it has printed its first line (the examples print
            # one once subscribed and flushed): waited for, not slept on.
            started += 1
            out = os.path.join(work, f"background-{started}.log")
            script += ["{ " + line, f"}} >{shlex.quote(out)} 2>&1 &",
                       f"until [ -s {shlex.quote(out)} ]; do",
                       f"  kill -0 $! 2>/dev/null || {{ echo 'exited before printing:'; cat {shlex.quote(out)}; exit 1; }}",
                       "  sleep 0.01",
                       "done"]
        else:
            script.append(line)
    script.append("kill $(jobs -p) 2>/dev/null || true")
    script += [f"cat {shlex.quote(os.path.join(work, f'background-{i}.log'))}" for i in range(1, started + 1)]
    path = os.path.join(work, "block.sh")
    with open(path, "w") as f:
        f.write("\n".join(script) + "\n")
    log = os.path.join(work, "block.log")
    try:
        env = dict(os.environ, NATS_URL=server.url)
        # Its own process group, output to a file: what a background line
        # started is killed with the group, and nothing holds a pipe open.
        with open(log, "w") as out:
            p = subprocess.Popen(["bash", path], cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT,
                                 start_new_session=True)
            try:
                rc = p.wait(timeout=900)
            except subprocess.TimeoutExpired:
                rc = None
            finally:
                try:
                    os.killpg(p.pid, 9)
                except ProcessLookupError:
                    pass
        if rc is None:
            raise Fail(f"{path}: still running after 900 s")
        if rc != 0:
            raise Fail(f"{path} exited {rc}:\n{open(log).read()[-4000:]}")
    finally:
        server.stop()


def run_job(labelled):
    """Runs one program or shell block; prints its line; (label, passed)."""
    label, job = labelled
    work = tempfile.mkdtemp(prefix="natsio-readme.")
    t0 = time.time()
    try:
        if job[0] == "program":
            what = f"{run_program(job[1], job[2], job[3], work)} lines of output"
        else:
            run_shell(job[1], work)
            what = "every line exited 0"
        print(f"  ok   {label} ({what}, {time.time() - t0:.0f} s)", flush=True)
        shutil.rmtree(work, ignore_errors=True)
        return label, True
    except (Fail, subprocess.TimeoutExpired) as e:
        print(f"  FAIL {label}: {e} (kept: {work})", flush=True)
        return label, False


def main(argv):
    if len(argv) < 2 or argv[1] not in ("check", "run", "extract", "commands"):
        print(__doc__, file=sys.stderr)
        return 2
    try:
        if argv[1] in ("extract", "commands"):
            path, ident = argv[2], argv[3]
            for b in parse(path, strict=False):
                if b.kind == "by" and b.args[1:] == [ident]:
                    if argv[1] == "extract":
                        sys.stdout.write(b.text)
                    else:
                        for line in b.text.split("\n"):
                            line = re.sub(r"\s*#.*$", "", line)
                            if line.strip():
                                print(line)
                    return 0
            raise Fail(f"{path} has no block marked `by ... {ident}`")
        only = argv[2] if len(argv) > 2 else ""
        blocks = all_blocks(only)
        programs = check(blocks, scripts=not only)
        if argv[1] == "check":
            print(f"readme blocks: {len(blocks)} blocks, every one marked")
            return 0
        jobs = [(bs[0].where() + " " + name, ("program", bs[0].lang, name, bs))
                for (path, name), bs in programs.items()]
        jobs += [(b.where() + " shell", ("shell", b)) for b in blocks if b.kind == "shell"]
        jobs = [(label, job) for label, job in jobs if only in label]
        # Programs run README_JOBS at a time (each has its own server and
        # directory; most of their time is the compiler), each line printed
        # as it ends; shell blocks after them, one at a time (they build in
        # the tree, and one runs npm ci in bindings/node, which the Node
        # programs load).
        programs = [(label, job) for label, job in jobs if job[0] == "program"]
        shells = [(label, job) for label, job in jobs if job[0] == "shell"]
        with concurrent.futures.ThreadPoolExecutor(int(os.environ.get("README_JOBS", "2"))) as pool:
            results = list(pool.map(run_job, programs))
        results += [run_job(j) for j in shells]
        failed = [label for label, ok in results if not ok]
        passed = len(results) - len(failed)
        by = sum(1 for b in blocks if b.kind == "by")
        print(f"({by} more blocks are run by the scripts their markers name)")
        if failed:
            print("readme blocks failed: " + ", ".join(failed))
            return 1
        print(f"readme blocks passed: {passed}")
        return 0
    except Fail as e:
        print(f"readme: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
