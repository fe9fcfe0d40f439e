#!/usr/bin/env node
// Benchmark harness of the natsio Node binding (bindings/node): the CLI,
// scenarios, clock boundaries and output lines of the shared bench spec,
// with client=libnatsio-node. Next to the C-ABI harness (client=libnatsio)
// its rows measure what the Node binding adds: N-API calls, the hand-over
// of batches from the library's threads to the JS thread, Msg objects,
// promises settled from completion tokens.
//
//   pub     publish N times (a synchronous loop), then flush() (PING/PONG:
//           flush=pingpong)
//   pubsub  callback subscription counting messages. The publisher yields
//           to the event loop every --yield-every publishes (default 1000,
//           printed as yield_every=): the subscriber's callbacks run on the
//           same JS thread, so a loop that never yields would only let the
//           core queue the whole run (and drop past its pending limit).
//   req     responder: callback subscription answering with msg.respond()
//           on its own connection; requester: await request(), one at a time
//   svc     service `bench` (new Svcm(nc).add, nats.js's shape) with endpoint
//           `echo` on bench.svc.echo answering msg.respond(msg.data) from its
//           handler; requester as for req; then $SRV.STATS.bench requested
//           and its num_requests checked against warmup + K (stats_ok=1)
//   jspub   nc.jetstream() with publishAsyncMaxPending = --window (and
//           timeout / publishAsyncStallWait = --idle-timeout, as the C
//           harness): a ring of at most --window publishAsync() promises;
//           when it is full the oldest is awaited. The clock stops at the
//           last ack (at the last ack seen when some failed)
//   jspub-sync  await js.publish() per message
//   kv      bucket BENCHKV (history 1, file storage; the core always sets
//           allow_direct): await kv.put() of k0..k(K-1), then await kv.get()
//           of the same keys with the value length checked
//   kv-par  bucket BENCHKV as for kv, k0..k(K-1) put untimed; then K
//           kv.get() with --par promises in flight (P async loops, as the
//           nats.js harness); threads_peak: /proc/self/status sampled every
//           2 ms on the JS thread (a sampling thread would add to it)
//   js-consume  stream BENCH filled untimed with --js-n messages, durable
//           pull consumer BENCHC (explicit ack); js.consume() read with
//           for-await, msg.ack() per message; the clock stops at the N-th
//           message; then (untimed) consumer info until num_ack_pending 0
//   obj-put, obj-get  bucket BENCHOBJ (file storage) deleted and created
//           per run; store.putBytes() from one buffer / store.getBytes()
//           (size and SHA-256 digest verified by the library); --obj-mode
//           stream: store.put() from a generator of 128 KiB pieces of a
//           repeated 1 MiB pattern / store.get() with its stream read by
//           for-await, bytes counted (no buffer of the object's size). Each
//           measured run is a fresh process (this script re-run with
//           --obj-child), so rss_peak_mb (VmHWM) is that run's alone
//
// Stream BENCH and bucket BENCHKV are deleted and created before the clock,
// as in bench/natsio/natsio_bench.c (run_jspub, run_jspub_sync, run_kv).
// Extra fields as in the C harness: on every line with a message/operation
// count (pub, pubsub, req, jspub, jspub-sync, kv-put, kv-get, kv-par,
// js-consume) cpu_ns_per_msg (user+sys of the whole process, every thread,
// from process.cpuUsage(), over exactly the timed region, divided by the
// line's messages/operations), on every result line rss_peak_kb (VmHWM of
// /proc/self/status, the same figure as process.resourceUsage().maxRSS)
// and, on pubsub, rss_start_kb and rss_end_kb.
//
// --pubsub-limits unlimited subscribes without pending limits and reports as
// client=libnatsio-node:unlimited.
//
// Needs the addon: cd bindings/node && npm ci && npm run build (bench/run.sh
// does it).
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const natsio = require(path.join(__dirname, '..', '..', 'bindings', 'node'));

// client= value; 'libnatsio-node:unlimited' with --pubsub-limits unlimited,
// so such rows never mix with default ones.
let CLIENT = 'libnatsio-node';

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
  // pubsub subscription without pending limits (not the default): no drops,
  // so the rate is that of the delivery path however slow
  unlimited: false,
  objMode: 'memory', // obj-put/obj-get data path: memory (the spec's) or stream
  objChild: '', // internal: one obj-put/obj-get run in this process
};

// ---------------------------------------------------------------------------
// measurement helpers

const nowS = () => Number(process.hrtime.bigint()) / 1e9;

/** user+sys CPU of the whole process (every thread), in ns */
function cpuNs() {
  const u = process.cpuUsage();
  return (u.user + u.system) * 1e3;
}


/** nearest rank: sorted[ceil(p/100*K)-1] */
function percentile(sorted, p) {
  if (sorted.length === 0) return 0;
  const i = Math.ceil((p / 100) * sorted.length) - 1;
  return sorted[Math.max(0, Math.min(i, sorted.length - 1))];
}

const noSpaces = (s) => String(s).replace(/[ \t\r\n]/g, '_');
const f1 = (x) => x.toFixed(1);
/** cpu_ns_per_msg: the CPU between c0 and c1 (read where the clock starts
 * and stops) divided by the line's count (0 divides by 1) */
const cpuPerMsg = (c0, c1, count) => f1((c1 - c0) / Math.max(count, 1));

/** Prints a result line ended by rss_peak_kb: VmHWM of /proc/self/status,
 * the process's peak resident set so far (run.sh runs one process per
 * scenario and size, so it is that run's peak). */
function emitResult(line) {
  console.log(`${line} rss_peak_kb=${procStatus('VmHWM')}`);
}

function emitStatus(scenario, size, status, err) {
  let line = `scenario=${scenario} client=${CLIENT} size=${size} n=- status=${status}`;
  if (err) line += ` error=${noSpaces(err.message ?? err)}`;
  console.log(line);
}

function emitFailure(scenario, size, what, err) {
  const status = err && err.code === 'TIMEOUT' ? 'timeout' : 'failed';
  emitStatus(scenario, size, status, new Error(`${what}: ${err && err.message}`));
}

/** Asynchronous errors of one scenario run (slow consumer, server -ERR,
 * lost connection), not counted while we close. */
class ErrorCounter {
  constructor() {
    this.count = 0;
    this.closing = false;
  }
  attach(nc) {
    nc.on('error', () => {
      if (!this.closing) this.count++;
    });
    return nc;
  }
  async closeAll(...conns) {
    this.closing = true;
    await Promise.all(conns.filter(Boolean).map((nc) => nc.close()));
  }
}

async function connect(errs, name) {
  return errs.attach(await natsio.connect({ servers: opt.url, name }));
}

/** A PING/PONG round trip, bounded by the idle timeout. */
function flush(nc) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new natsio.TimeoutError('flush: idle timeout')), opt.idleTimeout * 1000);
  });
  return Promise.race([nc.flush(), timeout]).finally(() => clearTimeout(timer));
}

const yieldToEventLoop = () => new Promise((resolve) => setImmediate(resolve));

/** One latency line (req, jspub-sync, kv-put, kv-get): n = operations
 * attempted, rate over them; mean and nearest-rank percentiles over the
 * successful ones (lat, in microseconds, unsorted); cpu = the process CPU
 * (ns) over the timed region. */
function emitLatency(scenario, rateKey, size, n, secs, lat, errors, cpu, extra = '') {
  const mean = lat.length ? lat.reduce((s, x) => s + x, 0) / lat.length : 0;
  const sorted = Float64Array.from(lat).sort();
  emitResult(
    `scenario=${scenario} client=${CLIENT} size=${size} n=${n} secs=${secs.toFixed(6)} ${rateKey}=${f1(n / secs)} ` +
      `mean_us=${f1(mean)} p50_us=${f1(percentile(sorted, 50))} p99_us=${f1(percentile(sorted, 99))} ` +
      `errors=${errors} cpu_ns_per_msg=${cpuPerMsg(0, cpu, n)}${extra}`,
  );
}

// ---------------------------------------------------------------------------
// pub

async function runPub(size) {
  const errs = new ErrorCounter();
  let nc;
  try {
    nc = await connect(errs, 'natsio-node-bench-pub');
  } catch (err) {
    emitFailure('pub', size, 'connect', err);
    return;
  }
  try {
    const data = Buffer.alloc(size, 'x');
    let failed = 0;
    const c0 = cpuNs();
    const t0 = nowS();
    for (let i = 0; i < opt.n; i++) {
      try {
        nc.publish('bench.pub', data);
      } catch {
        failed++;
      }
      if ((i & 4095) === 4095 && nowS() - t0 > opt.maxSecs) {
        emitStatus('pub', size, 'timeout', 'max-secs');
        return;
      }
    }
    try {
      await flush(nc);
    } catch (err) {
      emitFailure('pub', size, 'flush', err);
      return;
    }
    const secs = nowS() - t0;
    const c1 = cpuNs();
    const n = opt.n;
    emitResult(
      `scenario=pub client=${CLIENT} size=${size} n=${n} secs=${secs.toFixed(6)} msgs_per_s=${f1(n / secs)} ` +
        `mb_per_s=${((n * size) / 1e6 / secs).toFixed(3)} errors=${failed + errs.count} flush=pingpong ` +
        `cpu_ns_per_msg=${cpuPerMsg(c0, c1, n)}`,
    );
  } finally {
    await errs.closeAll(nc);
  }
}

// ---------------------------------------------------------------------------
// pubsub

async function runPubSub(size) {
  const errs = new ErrorCounter();
  let snc, pnc, sub;
  try {
    snc = await connect(errs, 'natsio-node-bench-sub');
    pnc = await connect(errs, 'natsio-node-bench-pub');
  } catch (err) {
    emitFailure('pubsub', size, 'connect', err);
    await errs.closeAll(snc, pnc);
    return;
  }
  try {
    const data = Buffer.alloc(size, 'x');
    const target = opt.n;
    let received = 0;
    let badSize = 0;
    let tDone = 0;
    let cDone = 0; // process CPU at tDone
    let onDone;
    const done = new Promise((resolve) => (onDone = resolve));
    try {
      sub = snc.subscribe('bench.ps', {
        ...(opt.unlimited ? { pendingMsgsLimit: -1, pendingBytesLimit: -1 } : {}),
        callback: (err, m) => {
          if (err) return; // the subscription ended; counted by 'error' if async
          if (m.data.length !== size) badSize++;
          if (++received === target) {
            tDone = nowS();
            cDone = cpuNs();
            onDone();
          }
        },
      });
      await flush(snc); // barrier: the SUB is registered once the PONG is back
    } catch (err) {
      emitFailure('pubsub', size, 'subscribe', err);
      return;
    }

    let failed = 0;
    const rssStart = procStatus('VmRSS');
    const c0 = cpuNs();
    const t0 = nowS();
    for (let i = 0; i < opt.n; i++) {
      try {
        pnc.publish('bench.ps', data);
      } catch {
        failed++;
      }
      if (i % opt.yieldEvery === opt.yieldEvery - 1) {
        await yieldToEventLoop();
        if (nowS() - t0 > opt.maxSecs) break;
      }
    }
    // make sure everything buffered goes out; the clock stops on receipt
    try {
      await flush(pnc);
    } catch {
      failed++;
    }

    // wait for the last message, or give up when progress stops
    let lastSeen = -1;
    let lastProgress = nowS();
    let timer;
    const complete = await Promise.race([
      done.then(() => true),
      new Promise((resolve) => {
        timer = setInterval(() => {
          const t = nowS();
          if (received !== lastSeen) {
            lastSeen = received;
            lastProgress = t;
          }
          if (t - lastProgress > opt.idleTimeout || t - t0 > opt.maxSecs) resolve(false);
        }, 10);
      }),
    ]);
    clearInterval(timer);
    const c1 = complete ? cDone : cpuNs();
    const rssEnd = procStatus('VmRSS');

    const got = Math.min(received, target);
    const secs = Math.max((complete ? tDone : lastProgress) - t0, 1e-9);
    let dropped = 0;
    try {
      dropped = sub.stats().dropped;
    } catch {
      // stats of an ended subscription: leave 0
    }
    emitResult(
      `scenario=pubsub client=${CLIENT} size=${size} n=${target} received=${got} lost=${target - got} ` +
        `secs=${secs.toFixed(6)} msgs_per_s=${f1(got / secs)} mb_per_s=${((got * size) / 1e6 / secs).toFixed(3)} ` +
        `errors=${failed + errs.count + badSize} mode=callback dropped=${dropped} ` +
        `cpu_ns_per_msg=${cpuPerMsg(c0, c1, got)} ` +
        `rss_start_kb=${rssStart} rss_end_kb=${rssEnd} yield_every=${opt.yieldEvery}`,
    );
  } finally {
    errs.closing = true;
    if (sub && !sub.isClosed) sub.unsubscribe();
    await errs.closeAll(pnc, snc);
  }
}

// ---------------------------------------------------------------------------
// req and svc

/**
 * The timed part of req and svc: --warmup untimed requests to `subject`
 * (then `afterWarmup`), then K sequential ones, each timed and its reply's
 * length checked. Null when --max-secs passed (the status line emitted).
 */
async function timedRequests(qnc, scenario, subject, size, data, afterWarmup) {
  // each request is bounded by the idle timeout, as in the C harness
  const reqOpts = { timeout: Math.round(opt.idleTimeout * 1000) };
  for (let i = 0; i < opt.warmup; i++) {
    try {
      await qnc.request(subject, data, reqOpts);
    } catch {
      // warmup failures are not counted
    }
  }
  afterWarmup();
  const lat = [];
  let failed = 0;
  const c0 = cpuNs();
  const t0 = nowS();
  for (let i = 0; i < opt.k; i++) {
    const a = nowS();
    let m = null;
    try {
      m = await qnc.request(subject, data, reqOpts);
    } catch {
      failed++;
    }
    const b = nowS();
    if (m) {
      if (m.data.length !== size) failed++;
      else lat.push((b - a) * 1e6);
    }
    if (b - t0 > opt.maxSecs) {
      emitStatus(scenario, size, 'timeout', 'max-secs');
      return null;
    }
  }
  return { secs: nowS() - t0, cpu: cpuNs() - c0, lat, failed, reqOpts };
}


async function runReq(size) {
  const errs = new ErrorCounter();
  let rnc, qnc, sub;
  try {
    rnc = await connect(errs, 'natsio-node-bench-responder');
    qnc = await connect(errs, 'natsio-node-bench-requester');
  } catch (err) {
    emitFailure('req', size, 'connect', err);
    await errs.closeAll(rnc, qnc);
    return;
  }
  try {
    const data = Buffer.alloc(size, 'x');
    let respondFailed = 0;
    try {
      sub = rnc.subscribe('bench.req', {
        callback: (err, m) => {
          if (err) return;
          try {
            m.respond(m.data);
          } catch {
            respondFailed++;
          }
        },
      });
      await flush(rnc);
    } catch (err) {
      emitFailure('req', size, 'subscribe', err);
      return;
    }
    const r = await timedRequests(qnc, 'req', 'bench.req', size, data, () => {
      errs.count = 0;
      respondFailed = 0;
    });
    if (!r) return;
    emitLatency('req', 'msgs_per_s', size, opt.k, r.secs, r.lat, r.failed + errs.count + respondFailed, r.cpu);
  } finally {
    errs.closing = true;
    if (sub && !sub.isClosed) sub.unsubscribe();
    await errs.closeAll(qnc, rnc);
  }
}

// ---------------------------------------------------------------------------
// svc

async function runSvc(size) {
  const errs = new ErrorCounter();
  let snc, qnc, svc;
  try {
    snc = await connect(errs, 'natsio-node-bench-service');
    qnc = await connect(errs, 'natsio-node-bench-requester');
  } catch (err) {
    emitFailure('svc', size, 'connect', err);
    await errs.closeAll(snc, qnc);
    return;
  }
  try {
    const data = Buffer.alloc(size, 'x');
    let respondFailed = 0;
    try {
      svc = await new natsio.Svcm(snc).add({ name: 'bench', version: '1.0.0' });
      svc.addEndpoint('echo', {
        subject: 'bench.svc.echo',
        handler: (err, m) => {
          try {
            m.respond(m.data);
          } catch {
            respondFailed++;
          }
        },
      });
      await flush(snc);
    } catch (err) {
      emitFailure('svc', size, 'service', err);
      return;
    }
    const r = await timedRequests(qnc, 'svc', 'bench.svc.echo', size, data, () => {
      errs.count = 0;
      respondFailed = 0;
    });
    if (!r) return;
    let statsOk = 0;
    try {
      const stats = (await qnc.request('$SRV.STATS.bench', null, r.reqOpts)).json();
      const echo = (stats.endpoints || []).find((e) => e.name === 'echo');
      statsOk = echo && echo.num_requests === opt.warmup + opt.k ? 1 : 0;
    } catch {
      statsOk = 0;
    }
    emitLatency('svc', 'msgs_per_s', size, opt.k, r.secs, r.lat, r.failed + errs.count + respondFailed, r.cpu,
      ` stats_ok=${statsOk}`);
  } finally {
    errs.closing = true;
    if (svc) await svc.stop().catch(() => {});
    await errs.closeAll(qnc, snc);
  }
}

// ---------------------------------------------------------------------------
// JetStream: jspub, jspub-sync, kv

/** A connection and its JetStream context with the C harness's options. */
async function openJs(errs) {
  const nc = await connect(errs, 'natsio-node-bench-js');
  const idleMs = Math.round(opt.idleTimeout * 1000);
  try {
    const js = nc.jetstream({
      timeout: idleMs,
      publishAsyncMaxPending: opt.window,
      // a publish that cannot get a window slot waits up to the idle timeout
      publishAsyncStallWait: idleMs,
    });
    return { nc, js };
  } catch (err) {
    await errs.closeAll(nc);
    throw err;
  }
}

async function freshBenchStream(js) {
  try {
    await js.streams.delete('BENCH');
  } catch (err) {
    if (err.code !== 'STREAM_NOT_FOUND') throw err;
  }
  await js.streams.add({
    name: 'BENCH',
    subjects: ['bench.js.>'],
    storage: 'file',
    num_replicas: 1,
    retention: 'limits',
  });
}

const settledOk = () => null;
const settledErr = (err) => err;

async function runJsPub(size) {
  const errs = new ErrorCounter();
  let nc, js;
  try {
    ({ nc, js } = await openJs(errs));
    await freshBenchStream(js);
  } catch (err) {
    emitFailure('jspub', size, 'stream', err);
    if (js) js.close();
    await errs.closeAll(nc);
    return;
  }
  try {
    errs.count = 0;
    const data = Buffer.alloc(size, 'x');
    const window = opt.window;
    const N = opt.jsN;
    // Ring of the unacked publishes, oldest at head. Each promise is
    // settled-wrapped at once (null = acked, else the error) so a rejection
    // waiting in the ring is never an unhandled one.
    const ring = new Array(window);
    let head = 0;
    let inflight = 0;
    let acked = 0;
    let errors = 0;
    let stalled = false;
    let tLast = 0;
    const retire = async () => {
      const p = ring[head];
      ring[head] = undefined;
      head = (head + 1) % window;
      inflight--;
      const err = await p;
      if (err === null) {
        acked++;
        tLast = nowS();
      } else {
        errors++;
        if (err && err.code === 'TOO_MANY_STALLED') stalled = true;
      }
    };

    const c0 = cpuNs();
    const t0 = nowS();
    tLast = t0;
    for (let i = 0; i < N && !stalled; i++) {
      if (inflight === window) await retire();
      ring[(head + inflight) % window] = js.publishAsync('bench.js.a', data).then(settledOk, settledErr);
      inflight++;
      if ((i & 1023) === 1023 && nowS() - t0 > opt.maxSecs) break;
    }
    while (inflight > 0) await retire();
    const t1 = acked < N ? tLast : nowS();
    const c1 = cpuNs();
    const secs = Math.max(t1 - t0, 1e-9);
    errors += errs.count;
    emitResult(
      `scenario=jspub client=${CLIENT} size=${size} n=${N} acked=${acked} unacked=${N - acked} ` +
        `secs=${secs.toFixed(6)} msgs_per_s=${f1(acked / secs)} mb_per_s=${((acked * size) / 1e6 / secs).toFixed(3)} ` +
        `window=${window} errors=${errors} cpu_ns_per_msg=${cpuPerMsg(c0, c1, acked)}`,
    );
  } finally {
    errs.closing = true;
    js.close();
    await errs.closeAll(nc);
  }
}

async function runJsPubSync(size) {
  const errs = new ErrorCounter();
  let nc, js;
  try {
    ({ nc, js } = await openJs(errs));
    await freshBenchStream(js);
  } catch (err) {
    emitFailure('jspub-sync', size, 'stream', err);
    if (js) js.close();
    await errs.closeAll(nc);
    return;
  }
  try {
    const data = Buffer.alloc(size, 'x');
    for (let i = 0; i < opt.warmup; i++) {
      try {
        await js.publish('bench.js.a', data);
      } catch {
        // warmup failures are not counted
      }
    }
    errs.count = 0;

    const lat = [];
    let failed = 0;
    const c0 = cpuNs();
    const t0 = nowS();
    for (let i = 0; i < opt.k; i++) {
      const a = nowS();
      let ok = true;
      try {
        await js.publish('bench.js.a', data);
      } catch {
        ok = false;
      }
      const b = nowS();
      if (ok) lat.push((b - a) * 1e6);
      else failed++;
      if (b - t0 > opt.maxSecs) {
        emitStatus('jspub-sync', size, 'timeout', 'max-secs');
        return;
      }
    }
    const secs = nowS() - t0;
    const c1 = cpuNs();
    emitLatency('jspub-sync', 'msgs_per_s', size, opt.k, secs, lat, failed + errs.count, c1 - c0);
  } finally {
    errs.closing = true;
    js.close();
    await errs.closeAll(nc);
  }
}

async function runKv(size) {
  const errs = new ErrorCounter();
  let nc, js, kv;
  try {
    ({ nc, js } = await openJs(errs));
    try {
      await js.kv.delete('BENCHKV');
    } catch (err) {
      if (err.code !== 'BUCKET_NOT_FOUND') throw err;
    }
    // allow_direct: the core always sets it
    kv = await js.kv.create({ bucket: 'BENCHKV', history: 1, storage: 'file' });
  } catch (err) {
    emitFailure('kv-put', size, 'bucket', err);
    emitFailure('kv-get', size, 'bucket', err);
    if (js) js.close();
    await errs.closeAll(nc);
    return;
  }
  try {
    const data = Buffer.alloc(size, 'x');
    for (let i = 0; i < opt.warmup; i++) {
      try {
        await kv.put(`warm${i}`, data);
        await kv.get(`warm${i}`);
      } catch {
        // warmup failures are not counted
      }
    }

    const K = opt.kvK;
    for (const scenario of ['kv-put', 'kv-get']) {
      const put = scenario === 'kv-put';
      errs.count = 0;
      const lat = [];
      let failed = 0;
      let timedOut = false;
      const c0 = cpuNs();
      const t0 = nowS();
      for (let i = 0; i < K; i++) {
        const key = `k${i}`;
        const a = nowS();
        let ok = true;
        try {
          if (put) await kv.put(key, data);
          else ok = (await kv.get(key)).value.length === size;
        } catch {
          ok = false;
        }
        const b = nowS();
        if (ok) lat.push((b - a) * 1e6);
        else failed++;
        if (b - t0 > opt.maxSecs) {
          timedOut = true;
          break;
        }
      }
      const secs = nowS() - t0;
      const c1 = cpuNs();
      if (timedOut) emitStatus(scenario, size, 'timeout', 'max-secs');
      else emitLatency(scenario, 'ops_per_s', size, K, secs, lat, failed + errs.count, c1 - c0);
    }
  } finally {
    errs.closing = true;
    kv.close();
    js.close();
    await errs.closeAll(nc);
  }
}

// ---------------------------------------------------------------------------
// kv-par

/** A numeric field of /proc/self/status ("Threads"; "VmHWM", "VmRSS" in kB), or -1. */
function procStatus(field) {
  try {
    const m = fs.readFileSync('/proc/self/status', 'latin1').match(new RegExp(`^${field}:\\s+(\\d+)`, 'm'));
    return m ? Number(m[1]) : -1;
  } catch {
    return -1;
  }
}

/** A fresh BENCHKV bucket, as for kv. */
async function freshKv(js) {
  try {
    await js.kv.delete('BENCHKV');
  } catch (err) {
    if (err.code !== 'BUCKET_NOT_FOUND') throw err;
  }
  return js.kv.create({ bucket: 'BENCHKV', history: 1, storage: 'file' });
}

/** Runs `n` jobs with at most `par` in flight (par async loops). */
async function runParallel(n, par, job) {
  let next = 0;
  const loop = async () => {
    while (next < n) await job(next++);
  };
  await Promise.all(Array.from({ length: Math.min(par, n) }, loop));
}

async function runKvPar(size) {
  const errs = new ErrorCounter();
  let nc, js, kv;
  try {
    ({ nc, js } = await openJs(errs));
    kv = await freshKv(js);
  } catch (err) {
    emitFailure('kv-par', size, 'bucket', err);
    if (js) js.close();
    await errs.closeAll(nc);
    return;
  }
  try {
    const data = Buffer.alloc(size, 'x');
    const K = opt.kvK;
    const keys = Array.from({ length: K }, (_, i) => `k${i}`);
    await runParallel(K, opt.par, (i) => kv.put(keys[i], data)); // untimed
    errs.count = 0;

    let peak = procStatus('Threads');
    const sample = () => {
      const t = procStatus('Threads');
      if (t > peak) peak = t;
    };
    const timer = setInterval(sample, 2);
    let failed = 0;
    let timedOut = false;
    const c0 = cpuNs();
    const t0 = nowS();
    await runParallel(K, opt.par, async (i) => {
      if (timedOut || nowS() - t0 > opt.maxSecs) {
        timedOut = true;
        return;
      }
      try {
        if ((await kv.get(keys[i])).value.length !== size) failed++;
      } catch {
        failed++;
      }
    });
    const secs = nowS() - t0;
    const c1 = cpuNs();
    clearInterval(timer);
    sample();
    if (timedOut) {
      emitStatus('kv-par', size, 'timeout', 'max-secs');
      return;
    }
    emitResult(
      `scenario=kv-par client=${CLIENT} size=${size} n=${K} par=${opt.par} secs=${secs.toFixed(6)} ` +
        `ops_per_s=${f1(K / secs)} threads_peak=${peak} errors=${failed + errs.count} ` +
        `cpu_ns_per_msg=${cpuPerMsg(c0, c1, K)}`,
    );
  } finally {
    errs.closing = true;
    kv.close();
    js.close();
    await errs.closeAll(nc);
  }
}

// ---------------------------------------------------------------------------
// js-consume

async function runJsConsume(size) {
  const errs = new ErrorCounter();
  let nc, js;
  try {
    ({ nc, js } = await openJs(errs));
    await freshBenchStream(js);
  } catch (err) {
    emitFailure('js-consume', size, 'stream', err);
    if (js) js.close();
    await errs.closeAll(nc);
    return;
  }
  let msgs;
  try {
    const data = Buffer.alloc(size, 'x');
    const N = opt.jsN;
    // Fill untimed, at most --window unacked.
    let fillFailed = 0;
    await runParallel(N, opt.window, (i) => js.publishAsync('bench.js.a', data).catch(() => fillFailed++));
    if (fillFailed) throw new Error(`fill: ${fillFailed} of ${N} publishes failed`);
    await js.consumers.add('BENCH', { durable_name: 'BENCHC', ack_policy: 'explicit' });
    errs.count = 0;

    let received = 0;
    let redelivered = 0;
    let badSize = 0;
    let tLast = 0;
    let cLast = 0; // process CPU at the N-th message
    const c0 = cpuNs();
    const t0 = nowS();
    msgs = await js.consume('BENCH', 'BENCHC');
    const reader = (async () => {
      for await (const m of msgs) {
        if (m.data.length !== size) badSize++;
        if (m.redelivered) redelivered++;
        m.ack();
        tLast = nowS();
        if (++received === N) {
          cLast = cpuNs();
          break;
        }
      }
    })();
    // Wait for the N-th message, or give up when progress stops.
    let lastSeen = -1;
    let lastProgress = nowS();
    let timer;
    const complete = await Promise.race([
      reader.then(() => received >= N),
      new Promise((resolve) => {
        timer = setInterval(() => {
          const t = nowS();
          if (received !== lastSeen) {
            lastSeen = received;
            lastProgress = t;
          }
          if (t - lastProgress > opt.idleTimeout || t - t0 > opt.maxSecs) resolve(false);
        }, 10);
      }),
    ]);
    clearInterval(timer);
    const got = Math.min(received, N);
    const secs = Math.max((complete ? tLast : lastProgress) - t0, 1e-9);
    const c1 = complete ? cLast : cpuNs();
    msgs.stop();
    // untimed: wait until the server has every ack
    let ackPending = -1;
    const deadline = nowS() + opt.idleTimeout;
    for (;;) {
      try {
        ackPending = (await js.consumers.info('BENCH', 'BENCHC')).num_ack_pending;
      } catch {
        // keep the last value
      }
      if (ackPending === 0 || nowS() > deadline) break;
      await new Promise((r) => setTimeout(r, 5));
    }
    emitResult(
      `scenario=js-consume client=${CLIENT} size=${size} n=${N} received=${got} secs=${secs.toFixed(6)} ` +
        `msgs_per_s=${f1(got / secs)} mb_per_s=${((got * size) / 1e6 / secs).toFixed(3)} ` +
        `redelivered=${redelivered} ack_pending=${ackPending} errors=${badSize + errs.count} ` +
        `cpu_ns_per_msg=${cpuPerMsg(c0, c1, got)}`,
    );
  } catch (err) {
    emitFailure('js-consume', size, 'run', err);
  } finally {
    errs.closing = true;
    msgs?.stop();
    js.close();
    await errs.closeAll(nc);
  }
}

// ---------------------------------------------------------------------------
// obj-put / obj-get

// The spec's object bytes: xorshift32 (x ^= x<<13; x ^= x>>>17; x ^= x<<5)
// from seed 0x2545F491, each state written as 4 little-endian bytes,
// truncated to n. Every harness generates the same bytes this way.
function objData(n) {
  const buf = Buffer.alloc(Math.ceil(n / 4) * 4);
  let x = 0x2545f491;
  for (let i = 0; i < buf.length; i += 4) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    buf.writeUInt32LE(x >>> 0, i);
  }
  return buf.subarray(0, n);
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
// in pieces of at most STREAM_PIECE (views of the pattern).
function* patternPieces(pat, off, left) {
  while (left > 0) {
    const at = off % pat.length;
    const n = Math.min(left, STREAM_PIECE, pat.length - at);
    yield pat.subarray(at, at + n);
    off += n;
    left -= n;
  }
}

function withDeadline(promise, secs) {
  let timer;
  const t = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new natsio.TimeoutError('max-secs')), secs * 1000);
  });
  return Promise.race([promise, t]).finally(() => clearTimeout(timer));
}

// Stores the run's objects; returns { digest of the last, errors }.
async function putObjects(store, r, data) {
  let digest = '';
  let errors = 0;
  for (let i = 0; i < r.count; i++) {
    try {
      const info = opt.objMode === 'stream'
        ? await store.put(objName(r, i), patternPieces(data, i * r.size, r.size))
        : await store.putBytes(objName(r, i), data.subarray(i * r.size, (i + 1) * r.size));
      digest = info.digest;
    } catch (_) {
      errors++;
    }
  }
  return { digest, errors };
}

// Reads the run's objects back; returns the errors.
async function getObjects(store, r) {
  let errors = 0;
  for (let i = 0; i < r.count; i++) {
    try {
      let got = 0;
      if (opt.objMode === 'stream') {
        const { stream } = await store.get(objName(r, i));
        for await (const piece of stream) got += piece.length;
      } else {
        got = (await store.getBytes(objName(r, i))).length;
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
    const errs = new ErrorCounter();
    let nc, js;
    try {
      ({ nc, js } = await openJs(errs));
      try {
        await js.objectStores.deleteObjectStore('BENCHOBJ');
      } catch (err) {
        if (err.code !== 'BUCKET_NOT_FOUND') throw err;
      }
      const store = await js.objectStores.createObjectStore({ bucket: 'BENCHOBJ', storage: 'file' });
      if (scenario === 'obj-get') {
        const st = await withDeadline(putObjects(store, r, objSource(r)), opt.maxSecs);
        if (st.errors) throw new Error(`${st.errors} puts failed`);
        if (r.name === 'big') {
          console.log(`# note client=${CLIENT} obj: object big digest=${st.digest} mode=${opt.objMode} (${OBJ_NOTE})`);
        }
      }
    } catch (err) {
      emitFailure(scenario, r.size, 'prepare', err);
      continue;
    } finally {
      js?.close();
      await errs.closeAll(nc);
    }
    const args = [__filename, '--url', opt.url, '--obj-mb', String(opt.objMb), '--obj-small', String(opt.objSmall),
      '--obj-mode', opt.objMode, '--idle-timeout', String(opt.idleTimeout), '--max-secs', String(opt.maxSecs),
      '--obj-child', `${scenario}:${r.name}`];
    const res = spawnSync(process.execPath, args, { encoding: 'utf8', maxBuffer: 1 << 24 });
    process.stdout.write(res.stdout || '');
    if (!(res.stdout || '').includes(`scenario=${scenario} `)) {
      const why = res.error ? res.error.message : `exit ${res.status}${res.signal ? ' ' + res.signal : ''}`;
      emitStatus(scenario, r.size, 'failed', new Error(`child: ${why}: ${(res.stderr || '').trim().slice(0, 200)}`));
    }
  }
}

// One measured run in a fresh process: "obj-put:big" etc.
async function objChild(spec) {
  const [scenario, which] = spec.split(':');
  const r = objRuns().find((x) => x.name === which);
  if (!r || (scenario !== 'obj-put' && scenario !== 'obj-get')) fail(`bad --obj-child: ${spec}`);
  const data = scenario === 'obj-put' ? objSource(r) : null;
  const errs = new ErrorCounter();
  let nc, js;
  try {
    ({ nc, js } = await openJs(errs));
    const store = await js.objectStores.objectStore('BENCHOBJ');
    let errors = 0;
    let digest = '';
    const rssStart = procStatus('VmRSS');
    const cpu0 = cpuNs();
    const t0 = nowS();
    if (scenario === 'obj-put') {
      const st = await withDeadline(putObjects(store, r, data), opt.maxSecs);
      errors = st.errors;
      digest = st.digest;
    } else {
      errors = await withDeadline(getObjects(store, r), opt.maxSecs);
    }
    const secs = nowS() - t0;
    const cpu = cpuNs() - cpu0;
    const hwm = procStatus('VmHWM');
    if (scenario === 'obj-put' && r.name === 'big') {
      console.log(`# note client=${CLIENT} obj: object big digest=${digest} mode=${opt.objMode} (${OBJ_NOTE})`);
    }
    emitResult(
      `scenario=${scenario} client=${CLIENT} size=${r.size} n=${r.count} secs=${secs.toFixed(6)} ` +
        `mb_per_s=${((r.size * r.count) / 1e6 / secs).toFixed(3)} rss_peak_mb=${f1((hwm * 1024) / 1e6)} ` +
        `rss_start_mb=${f1((rssStart * 1024) / 1e6)} mode=${opt.objMode} cpu_s=${(cpu / 1e9).toFixed(3)} ` +
        `errors=${errors + errs.count}`,
    );
  } catch (err) {
    emitFailure(scenario, r.size, 'run', err);
  } finally {
    js?.close();
    await errs.closeAll(nc);
  }
}

// ---------------------------------------------------------------------------
// main

const USAGE = `usage: natsio-node-bench.js [--url URL]
                           [--scenarios pub,pubsub,req,jspub,jspub-sync,kv,kv-par,js-consume,obj-put,obj-get,svc]
                           [--sizes 16,1024] [--n N] [--js-n N] [--k K] [--kv-k K]
                           [--window W] [--par P] [--obj-mb MiB] [--obj-small N]
                           [--warmup W] [--idle-timeout S] [--max-secs S]
                           [--yield-every M (pubsub publisher, default 1000)]
                           [--pubsub-limits default|unlimited]
                           [--obj-mode memory|stream]`;

function fail(msg) {
  process.stderr.write(`natsio-node-bench: ${msg}\n`);
  process.exit(2);
}

function parseArgs(args) {
  const count = (name, v) => {
    if (!/^\d+$/.test(v)) fail(`bad value for ${name}: ${v}`);
    return Number(v);
  };
  const seconds = (name, v) => {
    const x = Number(v);
    if (!(x > 0)) fail(`bad value for ${name}: ${v}`);
    return x;
  };
  for (let i = 0; i < args.length; i++) {
    let name = args[i];
    if (name === '-h' || name === '--help') {
      console.log(USAGE);
      process.exit(0);
    }
    if (!name.startsWith('--')) fail(`unexpected argument: ${name}\n${USAGE}`);
    let v;
    const eq = name.indexOf('=');
    if (eq >= 0) {
      v = name.slice(eq + 1);
      name = name.slice(0, eq);
    } else {
      if (i + 1 >= args.length) fail(`missing value for ${name}`);
      v = args[++i];
    }
    switch (name) {
      case '--url': opt.url = v; break;
      case '--scenarios': opt.scenarios = v; break;
      case '--sizes': opt.sizes = v; break;
      case '--n': opt.n = count(name, v); break;
      case '--js-n': opt.jsN = count(name, v); break;
      case '--k': opt.k = count(name, v); break;
      case '--kv-k': opt.kvK = count(name, v); break;
      case '--window': opt.window = count(name, v); break;
      case '--par': opt.par = Math.max(1, count(name, v)); break;
      case '--obj-mb': opt.objMb = count(name, v); break;
      case '--obj-small': opt.objSmall = count(name, v); break;
      case '--warmup': opt.warmup = count(name, v); break;
      case '--idle-timeout': opt.idleTimeout = seconds(name, v); break;
      case '--max-secs': opt.maxSecs = seconds(name, v); break;
      case '--yield-every': opt.yieldEvery = Math.max(1, count(name, v)); break;
      case '--obj-mode':
        if (v !== 'memory' && v !== 'stream') fail(`bad value for ${name}: ${v}`);
        opt.objMode = v;
        break;
      case '--obj-child': opt.objChild = v; break;
      case '--pubsub-limits':
        if (v !== 'default' && v !== 'unlimited') fail(`bad value for ${name}: ${v}`);
        opt.unlimited = v === 'unlimited';
        break;
      default: fail(`unknown option: ${name}\n${USAGE}`);
    }
  }
}

async function main() {
  parseArgs(process.argv.slice(2));
  if (opt.objChild) {
    await objChild(opt.objChild);
    process.exit(0); // stdout is synchronous for files and pipes on Linux
  }
  if (opt.unlimited) CLIENT += ':unlimited';
  const sizes = opt.sizes.split(',').map((s) => {
    if (!/^\s*\d+\s*$/.test(s)) fail(`bad value for --sizes: ${s}`);
    return Number(s);
  });
  console.log(`# client=${CLIENT} version=${natsio.version} node=${process.version} url=${opt.url}`);
  for (const scenario of opt.scenarios.split(',').filter((s) => s !== '')) {
    if (scenario === 'obj-put' || scenario === 'obj-get') {
      // sizes fixed by the spec: --obj-mb MiB, then --obj-small x 1 KiB
      await runObj(scenario);
      continue;
    }
    for (const size of sizes) {
      switch (scenario) {
        case 'pub': await runPub(size); break;
        case 'pubsub': await runPubSub(size); break;
        case 'req': await runReq(size); break;
        case 'jspub': await runJsPub(size); break;
        case 'jspub-sync': await runJsPubSync(size); break;
        case 'kv': await runKv(size); break;
        case 'kv-par': await runKvPar(size); break;
        case 'js-consume': await runJsConsume(size); break;
        case 'svc': await runSvc(size); break;
        default:
          emitStatus(scenario, size, 'unsupported');
      }
    }
  }
}

main().catch((err) => {
  process.stderr.write(`natsio-node-bench: ${err && err.stack ? err.stack : err}\n`);
  process.exit(1);
});
