#!/usr/bin/env node
// natsjs-bench: peer benchmark harness over nats.js v3 (@nats-io/transport-node
// with @nats-io/jetstream, @nats-io/kv, @nats-io/obj and @nats-io/services):
// the CLI, scenarios, clock boundaries and output lines of the shared bench
// spec, with client=nats.js. Its rows are the reference for the Node binding's
// (client=libnatsio-node).
//
//   pub         nc.publish() N times (a synchronous loop), then await
//               nc.flush() (PING/PONG: flush=pingpong)
//   pubsub      callback subscription counting messages, publisher on a
//               second connection. The publisher yields to the event loop
//               every --yield-every publishes (default 1000, printed as
//               yield_every=), as the libnatsio-node harness does: the
//               callbacks run on the same JS thread.
//   req         responder: callback subscription answering with
//               msg.respond() on its own connection; requester: await
//               nc.request(), one at a time
//   svc         @nats-io/services: service `bench` (new Svcm(nc).add) with
//               endpoint `echo` on bench.svc.echo answering msg.respond(
//               msg.data); requester as for req; then $SRV.STATS.bench
//               requested, num_requests checked against warmup + K (stats_ok)
//   jspub       nats.js has no publishAsync: a ring of at most --window
//               js.publish() promises, the oldest awaited when it is full
//               (a `# note` line says so); the clock stops at the last ack
//   jspub-sync  await js.publish() per message
//   kv          Kvm.create (history 1, file storage; allow_direct is the
//               library's default, printed in a note line): await kv.put()
//               of k0..k(K-1), then await kv.get() of them
//   kv-par      K kv.get() with --par promises in flight (P async loops)
//   js-consume  consumer.consume({callback}) on a durable pull consumer
//               (continuous pull), msg.ack() per message
//   obj-put     os.putBlob(); obj-get: os.getBlob() (the library checks the
//               SHA-256 digest at the end of the read). Each measured run is
//               a fresh process (this script re-run with --obj-child), so
//               rss_peak_mb (VmHWM) is that of the one run. --obj-mode
//               stream: os.put() from a ReadableStream that repeats a 1 MiB
//               pattern in 128 KiB pieces, os.get() read piece by piece and
//               counted (no buffer of the object's size).
//
// Every line with a message/operation count (pub, pubsub, req, jspub,
// jspub-sync, kv-put, kv-get, kv-par, js-consume) has cpu_ns_per_msg:
// user+sys CPU of the whole process (process.cpuUsage(), every thread) over
// exactly the timed region, divided by the line's messages/operations.
//
// The JetStream context's timeout is the idle timeout (the library's default
// is the connection timeout). Default connection options otherwise.
//
// Setup: npm ci in this directory (bench/run.sh does it).
'use strict';

const fs = require('node:fs');
const { spawnSync } = require('node:child_process');
const { performance } = require('node:perf_hooks');
const { connect } = require('@nats-io/transport-node');
const { jetstream, jetstreamManager, AckPolicy, RetentionPolicy, StorageType } = require('@nats-io/jetstream');
const { Kvm } = require('@nats-io/kv');
const { Objm } = require('@nats-io/obj');
const { Svcm } = require('@nats-io/services');

const CLIENT = 'nats.js';

const opt = {
  url: 'nats://127.0.0.1:4222',
  scenarios: 'pub,pubsub,req,jspub,jspub-sync,kv,kv-par,js-consume,obj-put,obj-get,svc',
  sizes: '16,1024',
  n: 1000000,
  jsN: 200000,
  k: 10000,
  kvK: 10000,
  window: 4096,
  par: 256,
  objMb: 64,
  objSmall: 1000,
  warmup: 100,
  idleTimeout: 5, // seconds
  maxSecs: 120, // seconds
  yieldEvery: 1000,
  objMode: 'memory', // obj-put/obj-get data path: memory (the spec's) or stream
  objChild: '', // internal: one obj-put/obj-get run in this process
};

const USAGE = `usage: natsjs-bench.js [--url URL]
        [--scenarios pub,pubsub,req,jspub,jspub-sync,kv,kv-par,js-consume,obj-put,obj-get,svc]
        [--sizes 16,1024] [--n N] [--js-n N] [--k K] [--kv-k K] [--window W]
        [--par P] [--obj-mb MiB] [--obj-small N] [--warmup W]
        [--idle-timeout S] [--max-secs S]
        [--yield-every M (pubsub publisher, default 1000)]
        [--obj-mode memory|stream]`;

function fail(msg) {
  process.stderr.write(`natsjs-bench: ${msg}\n`);
  process.exit(2);
}

// ---------------------------------------------------------------------------
// output helpers

const out = (line) => process.stdout.write(line + '\n');
// A result line ends with rss_peak_kb: VmHWM of /proc/self/status, the
// process's peak resident set so far (run.sh runs one process per scenario
// and size, so it is that run's peak).
const outResult = (line) => out(`${line} rss_peak_kb=${procStatus('VmHWM')}`);
const sanitize = (s) => String(s).replace(/[\s]+/g, '_');

function status(scenario, size, st, err) {
  out(`scenario=${scenario} client=${CLIENT} size=${size} n=- status=${st}` +
      (err !== undefined && err !== null ? ` error=${sanitize(err)}` : ''));
}

function failed(scenario, size, what, err) {
  const msg = err && err.message ? err.message : String(err);
  const st = /timeout|timed out/i.test(msg) ? 'timeout' : 'failed';
  status(scenario, size, st, `${what}: ${msg}`);
}

const now = () => performance.now() / 1000; // seconds, monotonic
const f1 = (x) => x.toFixed(1);
const f3 = (x) => x.toFixed(3);
const f6 = (x) => x.toFixed(6);
const mbps = (count, size, secs) => (count * size) / 1e6 / secs;
// user+sys CPU of the whole process (every thread), in ns
const cpuNs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) * 1e3;
};
// cpu_ns_per_msg: the CPU between c0 and c1 (read where the clock starts and
// stops) divided by the line's count (0 divides by 1)
const cpuPerMsg = (c0, c1, count) => f1((c1 - c0) / Math.max(count, 1));

// mean and nearest-rank percentiles: sorted[ceil(p/100*K)-1]
function latStats(us) {
  if (us.length === 0) return { mean: 0, p50: 0, p99: 0 };
  const a = Float64Array.from(us).sort();
  let sum = 0;
  for (const x of a) sum += x;
  const rank = (p) => a[Math.min(a.length - 1, Math.max(0, Math.ceil((p / 100) * a.length) - 1))];
  return { mean: sum / a.length, p50: rank(50), p99: rank(99) };
}

// A numeric field of /proc/self/status ("Threads", "VmHWM" in kB), or -1.
function procStatus(field) {
  try {
    const m = fs.readFileSync('/proc/self/status', 'latin1').match(new RegExp(`^${field}:\\s+(\\d+)`, 'm'));
    return m ? Number(m[1]) : -1;
  } catch (_) {
    return -1;
  }
}

const payload = (size) => new Uint8Array(size).fill(0x78); // 'x'
const idleMs = () => Math.round(opt.idleTimeout * 1000);
const yieldToEventLoop = () => new Promise((resolve) => setImmediate(resolve));
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// ---------------------------------------------------------------------------
// connections and asynchronous errors

// Counts the asynchronous client errors (server -ERR, slow consumer,
// unexpected disconnect, stale connection) of one scenario run.
class Counters {
  constructor() {
    this.errs = 0;
    this.closing = false;
    this.conns = [];
  }

  async connect() {
    const nc = await connect({ servers: opt.url });
    this.conns.push(nc);
    (async () => {
      for await (const s of nc.status()) {
        if (['disconnect', 'error', 'slowConsumer', 'staleConnection'].includes(s.type) && !this.closing) {
          this.errs++;
        }
      }
    })().catch(() => {});
    return nc;
  }

  async close() {
    this.closing = true;
    await Promise.all(this.conns.map((nc) => nc.close().catch(() => {})));
    this.conns = [];
  }
}

// Runs body(counters) with fresh connections closed at the end; a thrown
// error becomes a failed line for each of `scenarios`.
async function withConns(scenarios, size, body) {
  const c = new Counters();
  try {
    await body(c);
  } catch (e) {
    for (const s of scenarios) failed(s, size, 'run', e);
  } finally {
    await c.close();
  }
}

function newJS(nc) {
  return jetstream(nc, { timeout: idleMs() });
}

// Waits until isDone() or until count() has not moved for the idle timeout
// or the run is past max-secs. Returns [done, time of last progress].
async function waitCount(t0, isDone, count) {
  let last = -1;
  let lastProgress = now();
  for (;;) {
    if (isDone()) return [true, 0];
    await sleep(10);
    if (isDone()) return [true, 0];
    const t = now();
    const r = count();
    if (r !== last) {
      last = r;
      lastProgress = t;
    }
    if (t - lastProgress > opt.idleTimeout || t - t0 > opt.maxSecs) return [false, lastProgress];
  }
}

// ---------------------------------------------------------------------------
// pub

async function runPub(size) {
  await withConns(['pub'], size, async (c) => {
    const nc = await c.connect();
    const data = payload(size);
    let errors = 0;
    const c0 = cpuNs();
    const t0 = now();
    for (let i = 0; i < opt.n; i++) {
      try {
        nc.publish('bench.pub', data);
      } catch (_) {
        errors++;
      }
      if ((i & 4095) === 4095 && now() - t0 > opt.maxSecs) {
        status('pub', size, 'timeout', 'max-secs');
        return;
      }
    }
    await nc.flush();
    const secs = now() - t0;
    const c1 = cpuNs();
    errors += c.errs;
    outResult(`scenario=pub client=${CLIENT} size=${size} n=${opt.n} secs=${f6(secs)} msgs_per_s=${f1(opt.n / secs)} ` +
        `mb_per_s=${f3(mbps(opt.n, size, secs))} errors=${errors} flush=pingpong ` +
        `cpu_ns_per_msg=${cpuPerMsg(c0, c1, opt.n)}`);
  });
}

// ---------------------------------------------------------------------------
// pubsub

async function runPubSub(size) {
  await withConns(['pubsub'], size, async (c) => {
    const snc = await c.connect();
    const pnc = await c.connect();
    const n = opt.n;
    let received = 0;
    let badsize = 0;
    let tDone = 0;
    let cDone = 0; // process CPU at tDone
    snc.subscribe('bench.ps', {
      callback: (err, m) => {
        if (err) return;
        if (m.data.length !== size) badsize++;
        if (++received === n) {
          tDone = now();
          cDone = cpuNs();
        }
      },
    });
    await snc.flush(); // barrier: the SUB is registered

    const data = payload(size);
    let errors = 0;
    const c0 = cpuNs();
    const t0 = now();
    for (let i = 0; i < n; i++) {
      try {
        pnc.publish('bench.ps', data);
      } catch (_) {
        errors++;
      }
      if (i % opt.yieldEvery === opt.yieldEvery - 1) {
        await yieldToEventLoop();
        if (now() - t0 > opt.maxSecs) break;
      }
    }
    try {
      await pnc.flush();
    } catch (_) {
      errors++;
    }
    let tEnd = t0;
    let c1 = c0;
    let done = n === 0;
    if (!done) {
      let last;
      [done, last] = await waitCount(t0, () => received >= n, () => received);
      tEnd = done ? tDone : last;
      c1 = done ? cDone : cpuNs();
    }
    const got = done ? n : Math.min(received, n);
    const secs = Math.max(tEnd - t0, 1e-9);
    errors += c.errs + badsize;
    outResult(`scenario=pubsub client=${CLIENT} size=${size} n=${n} received=${got} lost=${n - got} secs=${f6(secs)} ` +
        `msgs_per_s=${f1(got / secs)} mb_per_s=${f3(mbps(got, size, secs))} errors=${errors} ` +
        `yield_every=${opt.yieldEvery} cpu_ns_per_msg=${cpuPerMsg(c0, c1, got)}`);
  });
}

// ---------------------------------------------------------------------------
// req and svc

/**
 * The timed part of req and svc: --warmup untimed requests to `subject`
 * (the connections' error count reset after them), then K sequential ones,
 * each timed and its reply's length checked. Null when --max-secs passed
 * (the status line printed).
 */
async function timedRequests(c, qnc, scenario, subject, size) {
  const data = payload(size);
  const ropts = { timeout: idleMs() };
  for (let i = 0; i < opt.warmup; i++) {
    await qnc.request(subject, data, ropts).catch(() => {});
  }
  c.errs = 0;
  const lat = [];
  let errors = 0;
  const c0 = cpuNs();
  const t0 = now();
  for (let i = 0; i < opt.k; i++) {
    const a = now();
    let m = null;
    try {
      m = await qnc.request(subject, data, ropts);
    } catch (_) {
      errors++;
    }
    const b = now();
    if (m) {
      if (m.data.length !== size) errors++;
      lat.push((b - a) * 1e6);
    }
    if (b - t0 > opt.maxSecs) {
      status(scenario, size, 'timeout', 'max-secs');
      return null;
    }
  }
  return { secs: now() - t0, c0, c1: cpuNs(), lat, errors: errors + c.errs, ropts };
}

/** The result line of req and svc (`extra`: more fields at its end). */
function requestLine(scenario, size, r, extra = '') {
  const l = latStats(r.lat);
  outResult(`scenario=${scenario} client=${CLIENT} size=${size} n=${opt.k} secs=${f6(r.secs)} ` +
      `msgs_per_s=${f1(opt.k / r.secs)} mean_us=${f1(l.mean)} p50_us=${f1(l.p50)} p99_us=${f1(l.p99)} ` +
      `errors=${r.errors} cpu_ns_per_msg=${cpuPerMsg(r.c0, r.c1, opt.k)}${extra}`);
}

async function runReq(size) {
  await withConns(['req'], size, async (c) => {
    const rnc = await c.connect();
    const qnc = await c.connect();
    rnc.subscribe('bench.req', {
      callback: (err, m) => {
        if (!err) m.respond(m.data);
      },
    });
    await rnc.flush();
    const r = await timedRequests(c, qnc, 'req', 'bench.req', size);
    if (r) requestLine('req', size, r);
  });
}

async function runSvc(size) {
  await withConns(['svc'], size, async (c) => {
    const snc = await c.connect();
    const qnc = await c.connect();
    const svc = await new Svcm(snc).add({ name: 'bench', version: '1.0.0' });
    try {
      svc.addEndpoint('echo', {
        subject: 'bench.svc.echo',
        handler: (err, m) => {
          if (!err) m.respond(m.data);
        },
      });
      await snc.flush();
      const r = await timedRequests(c, qnc, 'svc', 'bench.svc.echo', size);
      if (!r) return;
      let statsOk = 0;
      try {
        const stats = (await qnc.request('$SRV.STATS.bench', '', r.ropts)).json();
        const echo = (stats.endpoints || []).find((e) => e.name === 'echo');
        statsOk = echo && echo.num_requests === opt.warmup + opt.k ? 1 : 0;
      } catch (_) {
        statsOk = 0;
      }
      requestLine('svc', size, r, ` stats_ok=${statsOk}`);
    } finally {
      await svc.stop().catch(() => {});
    }
  });
}

// ---------------------------------------------------------------------------
// JetStream

async function deleteStream(jsm, name) {
  try {
    await jsm.streams.delete(name);
  } catch (e) {
    if (!/not found/i.test(e.message)) throw e;
  }
}

async function freshBenchStream(js) {
  const jsm = await js.jetstreamManager();
  await deleteStream(jsm, 'BENCH');
  await jsm.streams.add({
    name: 'BENCH',
    subjects: ['bench.js.>'],
    storage: StorageType.File,
    num_replicas: 1,
    retention: RetentionPolicy.Limits,
  });
  return jsm;
}

let jspubNotePrinted = false;

// Publishes n messages with at most --window unacked: a ring of js.publish()
// promises (each with its handlers attached at once), the oldest awaited
// when it is full. Returns { acked, errors, tLast }.
async function publishWindowed(js, n, data, t0) {
  const st = { acked: 0, errors: 0, tLast: t0 };
  const ring = new Array(opt.window);
  let head = 0;
  let pending = 0;
  const onAck = () => {
    st.acked++;
    st.tLast = now();
  };
  const onErr = () => {
    st.errors++;
  };
  let over = false;
  for (let i = 0; i < n; i++) {
    if (pending === ring.length) {
      await ring[head];
      ring[head] = undefined;
      head = (head + 1) % ring.length;
      pending--;
    }
    ring[(head + pending) % ring.length] = js.publish('bench.js.a', data).then(onAck, onErr);
    pending++;
    if ((i & 1023) === 1023 && now() - t0 > opt.maxSecs) {
      over = true;
      break;
    }
  }
  while (pending > 0 && !over && now() - t0 <= opt.maxSecs) {
    await ring[head];
    head = (head + 1) % ring.length;
    pending--;
  }
  return st;
}

async function runJSPub(size) {
  if (!jspubNotePrinted) {
    jspubNotePrinted = true;
    out(`# note client=${CLIENT} jspub: nats.js has no publishAsync; the window is a ring of ` +
        `js.publish() promises (at most --window unacked), the oldest awaited when full`);
  }
  await withConns(['jspub'], size, async (c) => {
    const nc = await c.connect();
    const js = newJS(nc);
    await freshBenchStream(js);
    c.errs = 0;
    const n = opt.jsN;
    const c0 = cpuNs();
    const t0 = now();
    const st = await publishWindowed(js, n, payload(size), t0);
    const c1 = cpuNs(); // the clock stops at the last ack (st.tLast), when publishWindowed returns
    const secs = Math.max(st.tLast - t0, 1e-9);
    const errors = st.errors + c.errs;
    outResult(`scenario=jspub client=${CLIENT} size=${size} n=${n} acked=${st.acked} unacked=${n - st.acked} ` +
        `secs=${f6(secs)} msgs_per_s=${f1(st.acked / secs)} mb_per_s=${f3(mbps(st.acked, size, secs))} ` +
        `window=${opt.window} errors=${errors} cpu_ns_per_msg=${cpuPerMsg(c0, c1, st.acked)}`);
  });
}

async function runJSPubSync(size) {
  await withConns(['jspub-sync'], size, async (c) => {
    const nc = await c.connect();
    const js = newJS(nc);
    await freshBenchStream(js);
    const data = payload(size);
    for (let i = 0; i < opt.warmup; i++) {
      await js.publish('bench.js.a', data).catch(() => {});
    }
    c.errs = 0;
    const lat = [];
    let errors = 0;
    const c0 = cpuNs();
    const t0 = now();
    for (let i = 0; i < opt.k; i++) {
      const a = now();
      let ok = true;
      try {
        await js.publish('bench.js.a', data);
      } catch (_) {
        ok = false;
        errors++;
      }
      const b = now();
      if (ok) lat.push((b - a) * 1e6);
      if (b - t0 > opt.maxSecs) {
        status('jspub-sync', size, 'timeout', 'max-secs');
        return;
      }
    }
    const secs = now() - t0;
    const c1 = cpuNs();
    errors += c.errs;
    const l = latStats(lat);
    outResult(`scenario=jspub-sync client=${CLIENT} size=${size} n=${opt.k} secs=${f6(secs)} ` +
        `msgs_per_s=${f1(opt.k / secs)} mean_us=${f1(l.mean)} p50_us=${f1(l.p50)} p99_us=${f1(l.p99)} ` +
        `errors=${errors} cpu_ns_per_msg=${cpuPerMsg(c0, c1, opt.k)}`);
  });
}

// ---------------------------------------------------------------------------
// kv

let kvNotePrinted = false;

// Bucket BENCHKV deleted and created (history 1, file storage; allow_direct
// left to the library, which turns it on where the server supports it).
async function freshKV(js) {
  const jsm = await js.jetstreamManager();
  await deleteStream(jsm, 'KV_BENCHKV');
  const kv = await new Kvm(js).create('BENCHKV', { history: 1, storage: StorageType.File });
  if (!kvNotePrinted) {
    kvNotePrinted = true;
    let direct = 'unknown';
    try {
      direct = String((await jsm.streams.info('KV_BENCHKV')).config.allow_direct === true);
    } catch (_) { /* unknown */ }
    out(`# note client=${CLIENT} kv: KV_BENCHKV allow_direct=${direct}`);
  }
  return kv;
}

// A kv-put / kv-get line; cpu = the process CPU (ns) over the timed region.
function kvLine(scenario, size, k, secs, lat, errors, cpu) {
  const l = latStats(lat);
  outResult(`scenario=${scenario} client=${CLIENT} size=${size} n=${k} secs=${f6(secs)} ops_per_s=${f1(k / secs)} ` +
      `mean_us=${f1(l.mean)} p50_us=${f1(l.p50)} p99_us=${f1(l.p99)} errors=${errors} ` +
      `cpu_ns_per_msg=${cpuPerMsg(0, cpu, k)}`);
}

async function runKV(size) {
  await withConns(['kv-put', 'kv-get'], size, async (c) => {
    const nc = await c.connect();
    const kv = await freshKV(newJS(nc));
    const data = payload(size);
    for (let i = 0; i < opt.warmup; i++) {
      await kv.put(`warm${i}`, data).catch(() => {});
      await kv.get(`warm${i}`).catch(() => {});
    }
    const k = opt.kvK;
    for (const scenario of ['kv-put', 'kv-get']) {
      c.errs = 0;
      const lat = [];
      let errors = 0;
      let timedOut = false;
      const c0 = cpuNs();
      const t0 = now();
      for (let i = 0; i < k; i++) {
        const key = `k${i}`;
        const a = now();
        let ok = true;
        try {
          if (scenario === 'kv-put') {
            await kv.put(key, data);
          } else {
            const e = await kv.get(key);
            if (!e || e.value.length !== size) errors++;
          }
        } catch (_) {
          ok = false;
          errors++;
        }
        const b = now();
        if (ok) lat.push((b - a) * 1e6);
        if (b - t0 > opt.maxSecs) {
          timedOut = true;
          break;
        }
      }
      const secs = now() - t0;
      const c1 = cpuNs();
      if (timedOut) status(scenario, size, 'timeout', 'max-secs');
      else kvLine(scenario, size, k, secs, lat, errors + c.errs, c1 - c0);
    }
  });
}

// ---------------------------------------------------------------------------
// kv-par

async function runKVPar(size) {
  await withConns(['kv-par'], size, async (c) => {
    const nc = await c.connect();
    const kv = await freshKV(newJS(nc));
    const data = payload(size);
    const k = opt.kvK;
    const keys = [];
    for (let i = 0; i < k; i++) {
      keys.push(`k${i}`);
      await kv.put(keys[i], data);
    }
    c.errs = 0;

    // threads_peak: /proc/self/status read every 2 ms (on the JS thread:
    // a sampling thread would itself add to the count)
    let peak = procStatus('Threads');
    const sample = () => {
      const t = procStatus('Threads');
      if (t > peak) peak = t;
    };
    const timer = setInterval(sample, 2);

    let next = 0;
    let errors = 0;
    let timedOut = false;
    const c0 = cpuNs();
    const t0 = now();
    const worker = async () => {
      while (next < k) {
        const i = next++;
        if (now() - t0 > opt.maxSecs) {
          timedOut = true;
          return;
        }
        try {
          const e = await kv.get(keys[i]);
          if (!e || e.value.length !== size) errors++;
        } catch (_) {
          errors++;
        }
      }
    };
    const workers = [];
    for (let w = 0; w < Math.min(opt.par, k); w++) workers.push(worker());
    await Promise.all(workers);
    const secs = now() - t0;
    const c1 = cpuNs();
    clearInterval(timer);
    sample();
    if (timedOut) {
      status('kv-par', size, 'timeout', 'max-secs');
      return;
    }
    outResult(`scenario=kv-par client=${CLIENT} size=${size} n=${k} par=${opt.par} secs=${f6(secs)} ` +
        `ops_per_s=${f1(k / secs)} threads_peak=${peak} errors=${errors + c.errs} ` +
        `cpu_ns_per_msg=${cpuPerMsg(c0, c1, k)}`);
  });
}

// ---------------------------------------------------------------------------
// js-consume

// Consumer notifications that are errors (the others are informational).
const CONSUME_ERRORS = new Set(['heartbeats_missed', 'consumer_not_found', 'stream_not_found',
  'consumer_deleted', 'no_responders']);

async function runJSConsume(size) {
  await withConns(['js-consume'], size, async (c) => {
    const nc = await c.connect();
    const js = newJS(nc);
    const jsm = await freshBenchStream(js);
    const n = opt.jsN;
    const data = payload(size);
    const fill = await publishWindowed(js, n, data, now()); // untimed
    if (fill.acked !== n) throw new Error(`fill: ${fill.acked} of ${n} acked`);
    await jsm.consumers.add('BENCH', { durable_name: 'BENCHC', ack_policy: AckPolicy.Explicit });
    const consumer = await js.consumers.get('BENCH', 'BENCHC');
    c.errs = 0;

    let received = 0;
    let redelivered = 0;
    let badsize = 0;
    let consumeErrors = 0;
    let measuring = true;
    let tDone = 0;
    let cDone = 0; // process CPU at tDone
    const c0 = cpuNs();
    const t0 = now();
    const iter = await consumer.consume({
      callback: (m) => {
        if (m.data.length !== size) badsize++;
        if (m.redelivered) redelivered++;
        m.ack();
        if (++received === n) {
          tDone = now();
          cDone = cpuNs();
        }
      },
    });
    (async () => {
      for await (const s of iter.status()) {
        if (measuring && CONSUME_ERRORS.has(s.type)) consumeErrors++;
      }
    })().catch(() => {});

    let tEnd = t0;
    let c1 = c0;
    let done = n === 0;
    if (!done) {
      let last;
      [done, last] = await waitCount(t0, () => received >= n, () => received);
      tEnd = done ? tDone : last;
      c1 = done ? cDone : cpuNs();
    }
    const got = done ? n : Math.min(received, n);
    const secs = Math.max(tEnd - t0, 1e-9);

    // untimed: wait until the server has every ack
    let ackPending = -1;
    const deadline = now() + opt.idleTimeout;
    for (;;) {
      try {
        ackPending = (await consumer.info()).num_ack_pending;
      } catch (_) { /* keep the last value */ }
      if (ackPending === 0 || now() > deadline) break;
      await sleep(5);
    }
    measuring = false;
    await iter.close().catch(() => {});
    const errors = badsize + consumeErrors + c.errs;
    outResult(`scenario=js-consume client=${CLIENT} size=${size} n=${n} received=${got} secs=${f6(secs)} ` +
        `msgs_per_s=${f1(got / secs)} mb_per_s=${f3(mbps(got, size, secs))} redelivered=${redelivered} ` +
        `ack_pending=${ackPending} errors=${errors} cpu_ns_per_msg=${cpuPerMsg(c0, c1, got)}`);
  });
}

// ---------------------------------------------------------------------------
// obj-put / obj-get

// The spec's object bytes: xorshift32 (x ^= x<<13; x ^= x>>>17; x ^= x<<5)
// from seed 0x2545F491, each state written as 4 little-endian bytes,
// truncated to n. Every harness generates the same bytes this way.
function objData(n) {
  const words = new Uint32Array(Math.ceil(n / 4));
  let x = 0x2545f491;
  for (let i = 0; i < words.length; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    words[i] = x >>> 0;
  }
  const b = new Uint8Array(words.buffer, 0, n);
  if (new Uint8Array(new Uint32Array([1]).buffer)[0] !== 1) { // big-endian host
    const dv = new DataView(words.buffer);
    for (let i = 0; i < words.length; i++) dv.setUint32(i * 4, words[i], true);
  }
  return b;
}

const OBJ_NOTE = 'data: xorshift32 seed 0x2545F491';

// --obj-mode stream: the objects are the first MiB of objData repeated
// (object i of a run starts at offset i*size of that endless stream), so no
// buffer of the object's size is ever held; every harness does the same.
const OBJ_PATTERN = 1048576;
const STREAM_PIECE = 128 * 1024;

// The two runs: one --obj-mb MiB object, then --obj-small objects of 1 KiB.
const objRuns = () => [
  { name: 'big', size: opt.objMb * 1048576, count: 1 },
  { name: 'small', size: 1024, count: opt.objSmall },
];
const objName = (r, i) => (r.name === 'big' ? 'big' : `small-${i}`);

// What a run's puts read: all the objects' bytes (memory mode) or the
// pattern the stream mode repeats.
function objSource(r) {
  const total = r.size * r.count;
  return opt.objMode === 'stream' ? objData(Math.min(Math.max(total, 4), OBJ_PATTERN)) : objData(total);
}

// The stream mode's source: `left` bytes of the repeated pattern from `off`,
// in pieces of at most STREAM_PIECE (views of the pattern, pulled on demand).
function patternStream(pat, off, left) {
  return new ReadableStream({
    pull(controller) {
      if (left === 0) {
        controller.close();
        return;
      }
      const at = off % pat.length;
      const n = Math.min(left, STREAM_PIECE, pat.length - at);
      controller.enqueue(pat.subarray(at, at + n));
      off += n;
      left -= n;
    },
  });
}

function withDeadline(promise, secs) {
  let timer;
  const t = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error('timeout: max-secs')), secs * 1000);
  });
  return Promise.race([promise, t]).finally(() => clearTimeout(timer));
}

// Stores the run's objects (memory mode: os.putBlob of a slice of data;
// stream mode: os.put from a patternStream over data); returns { digest of
// the last, errors }.
async function putObjects(os, r, data) {
  let digest = '';
  let errors = 0;
  for (let i = 0; i < r.count; i++) {
    try {
      const info = opt.objMode === 'stream'
        ? await os.put({ name: objName(r, i) }, patternStream(data, i * r.size, r.size))
        : await os.putBlob({ name: objName(r, i) }, data.subarray(i * r.size, (i + 1) * r.size));
      digest = info.digest;
    } catch (_) {
      errors++;
    }
  }
  return { digest, errors };
}

// Reads the run's objects back (memory mode: os.getBlob; stream mode:
// os.get, its data stream read piece by piece and counted); the library
// checks the digest at the end of each read. Returns the errors.
async function getObjects(os, r) {
  let errors = 0;
  for (let i = 0; i < r.count; i++) {
    try {
      let got = 0;
      if (opt.objMode === 'stream') {
        const res = await os.get(objName(r, i));
        if (!res) throw new Error('not found');
        const reader = res.data.getReader();
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          got += value.length;
        }
        const err = await res.error;
        if (err) throw err;
      } else {
        const b = await os.getBlob(objName(r, i));
        got = b ? b.length : -1;
      }
      if (got !== r.size) errors++;
    } catch (_) {
      errors++;
    }
  }
  return errors;
}

// Bucket BENCHOBJ deleted and created for each run; for obj-get the objects
// are stored here (untimed). The measured part runs in a child process.
async function runObj(scenario) {
  for (const r of objRuns()) {
    let ok = true;
    await withConns([scenario], r.size, async (c) => {
      try {
        const nc = await c.connect();
        const js = newJS(nc);
        const jsm = await js.jetstreamManager();
        await deleteStream(jsm, 'OBJ_BENCHOBJ');
        const os = await new Objm(js).create('BENCHOBJ', { storage: StorageType.File });
        if (scenario === 'obj-get') {
          const st = await withDeadline(putObjects(os, r, objSource(r)), opt.maxSecs);
          if (st.errors) throw new Error(`${st.errors} puts failed`);
          if (r.name === 'big') out(`# note client=${CLIENT} obj: object big digest=${st.digest} mode=${opt.objMode} (${OBJ_NOTE})`);
        }
      } catch (e) {
        ok = false;
        failed(scenario, r.size, 'prepare', e);
      }
    });
    if (!ok) continue;
    const args = [__filename, '--url', opt.url, '--obj-mb', String(opt.objMb), '--obj-small', String(opt.objSmall),
      '--obj-mode', opt.objMode, '--idle-timeout', String(opt.idleTimeout), '--max-secs', String(opt.maxSecs),
      '--obj-child', `${scenario}:${r.name}`];
    const res = spawnSync(process.execPath, args, { encoding: 'utf8', maxBuffer: 1 << 24 });
    process.stdout.write(res.stdout || '');
    if (!(res.stdout || '').includes(`scenario=${scenario} `)) {
      const why = res.error ? res.error.message : `exit ${res.status}${res.signal ? ' ' + res.signal : ''}`;
      failed(scenario, r.size, 'child', `${why}: ${(res.stderr || '').trim().slice(0, 200)}`);
    }
  }
}

// One measured run in a fresh process: "obj-put:big" etc.
async function objChild(spec) {
  const [scenario, which] = spec.split(':');
  const r = objRuns().find((x) => x.name === which);
  if (!r || (scenario !== 'obj-put' && scenario !== 'obj-get')) fail(`bad --obj-child: ${spec}`);
  const data = scenario === 'obj-put' ? objSource(r) : null;
  await withConns([scenario], r.size, async (c) => {
    const nc = await c.connect();
    const js = newJS(nc);
    const os = await new Objm(js).open('BENCHOBJ');
    let errors = 0;
    let digest = '';
    const rssStart = procStatus('VmRSS');
    const t0 = now();
    if (scenario === 'obj-put') {
      const st = await withDeadline(putObjects(os, r, data), opt.maxSecs);
      errors = st.errors;
      digest = st.digest;
    } else {
      errors = await withDeadline(getObjects(os, r), opt.maxSecs);
    }
    const secs = now() - t0;
    const hwm = procStatus('VmHWM');
    if (scenario === 'obj-put' && r.name === 'big') {
      out(`# note client=${CLIENT} obj: object big digest=${digest} mode=${opt.objMode} (${OBJ_NOTE})`);
    }
    outResult(`scenario=${scenario} client=${CLIENT} size=${r.size} n=${r.count} secs=${f6(secs)} ` +
        `mb_per_s=${f3(mbps(r.size * r.count, 1, secs))} rss_peak_mb=${f1((hwm * 1024) / 1e6)} ` +
        `rss_start_mb=${f1((rssStart * 1024) / 1e6)} mode=${opt.objMode} errors=${errors + c.errs}`);
  });
}

// ---------------------------------------------------------------------------
// main

function parseArgs(argv) {
  const count = (name, v) => {
    if (!/^\d+$/.test(v)) fail(`bad value for ${name}: ${v}`);
    return Number(v);
  };
  const seconds = (name, v) => {
    const x = Number(v);
    if (!(x > 0)) fail(`bad value for ${name}: ${v}`);
    return x;
  };
  for (let i = 0; i < argv.length; i++) {
    let name = argv[i];
    if (name === '-h' || name === '--help') {
      out(USAGE);
      process.exit(0);
    }
    if (!name.startsWith('--')) fail(`unexpected argument: ${name}\n${USAGE}`);
    let v;
    const eq = name.indexOf('=');
    if (eq >= 0) {
      v = name.slice(eq + 1);
      name = name.slice(0, eq);
    } else {
      if (i + 1 >= argv.length) fail(`missing value for ${name}`);
      v = argv[++i];
    }
    switch (name) {
      case '--url': opt.url = v; break;
      case '--scenarios': opt.scenarios = v; break;
      case '--sizes': opt.sizes = v; break;
      case '--n': opt.n = count(name, v); break;
      case '--js-n': opt.jsN = count(name, v); break;
      case '--k': opt.k = count(name, v); break;
      case '--kv-k': opt.kvK = count(name, v); break;
      case '--window': opt.window = Math.max(1, count(name, v)); break;
      case '--par': opt.par = Math.max(1, count(name, v)); break;
      case '--obj-mb': opt.objMb = count(name, v); break;
      case '--obj-small': opt.objSmall = count(name, v); break;
      case '--warmup': opt.warmup = count(name, v); break;
      case '--idle-timeout': opt.idleTimeout = seconds(name, v); break;
      case '--max-secs': opt.maxSecs = seconds(name, v); break;
      case '--yield-every': opt.yieldEvery = Math.max(1, count(name, v)); break;
      case '--obj-child': opt.objChild = v; break;
      case '--obj-mode':
        if (v !== 'memory' && v !== 'stream') fail(`bad value for ${name}: ${v}`);
        opt.objMode = v;
        break;
      default: fail(`unknown option: ${name}\n${USAGE}`);
    }
  }
}

async function main() {
  parseArgs(process.argv.slice(2));
  if (opt.objChild) {
    await objChild(opt.objChild);
    return;
  }
  const sizes = opt.sizes.split(',').filter((s) => s.trim() !== '').map((s) => {
    if (!/^\d+$/.test(s.trim())) fail(`bad value for --sizes: ${s}`);
    return Number(s);
  });
  const version = require('@nats-io/transport-node/package.json').version;
  out(`# client=${CLIENT} version=${version} url=${opt.url}`);
  const runners = {
    pub: runPub,
    pubsub: runPubSub,
    req: runReq,
    jspub: runJSPub,
    'jspub-sync': runJSPubSync,
    kv: runKV,
    'kv-par': runKVPar,
    'js-consume': runJSConsume,
    svc: runSvc,
  };
  for (const scenario of opt.scenarios.split(',').filter((s) => s !== '')) {
    if (scenario === 'obj-put' || scenario === 'obj-get') {
      // sizes fixed by the spec: --obj-mb MiB, then --obj-small x 1 KiB
      await runObj(scenario);
      continue;
    }
    for (const size of sizes) {
      const run = runners[scenario];
      if (run) await run(size);
      else status(scenario, size, 'unsupported');
    }
  }
}

main().then(
  () => process.exit(0),
  (e) => {
    process.stderr.write(`natsjs-bench: ${e && e.stack ? e.stack : e}\n`);
    process.exit(1);
  },
);
