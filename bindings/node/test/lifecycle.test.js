'use strict';
const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { Worker } = require('node:worker_threads');
const nats = require('..');
const { startServer, runNodeFixture } = require('./server');

let server;
before(async () => {
  server = await startServer();
});
after(async () => {
  await server?.stop();
});

/** Runs the fixture; resolves {code, stdout, stderr, exitedOnItsOwn}. */
function runChild(mode, waitMs) {
  return runNodeFixture('exit-after-close.js', [server.url, mode], waitMs);
}

test('the process exits on its own after close', async () => {
  const r = await runChild('close', 5000);
  assert.equal(r.stderr, '');
  assert.match(r.stdout, /reply=ok\nclosed\n/);
  assert.equal(r.exitedOnItsOwn, true, 'child still running 5 s after close');
  assert.equal(r.code, 0);
});

test('the process exits on its own after drain', async () => {
  const r = await runChild('drain', 5000);
  assert.match(r.stdout, /drained/);
  assert.equal(r.exitedOnItsOwn, true);
  assert.equal(r.code, 0);
});

test('an open connection keeps the process alive, like an open socket', async () => {
  const r = await runChild('open', 1500);
  assert.match(r.stdout, /left open/);
  assert.equal(r.exitedOnItsOwn, false);
});

test('worker threads connect and request; terminate() cleans up an open connection', async () => {
  const nc = await nats.connect({ servers: server.url });
  nc.subscribe('main.svc', { callback: (_e, m) => m.respond(`echo ${m.string()}`) });
  await nc.flush();
  const runWorker = (n, leaveOpen) =>
    new Promise((resolve, reject) => {
      const w = new Worker(path.join(__dirname, 'fixtures', 'worker.js'), {
        workerData: { url: server.url, n, leaveOpen },
      });
      let result;
      w.on('message', (m) => {
        result = m;
        if (leaveOpen) w.terminate();
      });
      w.on('error', reject);
      w.on('exit', (code) => resolve({ code, result }));
    });
  const results = await Promise.all([runWorker(1, false), runWorker(2, false)]);
  for (const [i, r] of results.entries()) {
    assert.equal(r.code, 0, 'worker exited on its own after close');
    assert.deepEqual(r.result, { reply: `echo from worker ${i + 1}` });
  }
  const terminated = await runWorker(3, true);
  assert.deepEqual(terminated.result, { reply: 'echo from worker 3' });
  // The main thread's connection is unaffected.
  assert.equal((await nc.request('main.svc', 'main', { timeout: 2000 })).string(), 'echo main');
  await nc.close();
});

test('no leak over 100k messages (heap and pending state stay flat)', async () => {
  assert.equal(typeof global.gc, 'function', 'run with --expose-gc');
  const nc = await nats.connect({ servers: server.url });
  const TOTAL = 100_000;
  const payload = Buffer.alloc(64, 'x');
  let received = 0;
  let done;
  const all = new Promise((r) => (done = r));
  const cbSub = nc.subscribe('leak.cb', {
    callback: (_e, m) => {
      if (m.data.length === 64 && ++received === TOTAL) done();
    },
  });
  const itSub = nc.subscribe('leak.it');
  await nc.flush();

  const measure = () => {
    global.gc();
    global.gc();
    const { heapUsed, arrayBuffers } = process.memoryUsage();
    return { heapUsed, arrayBuffers };
  };
  const publishBatch = async (subject, n) => {
    for (let i = 0; i < n; i++) {
      nc.publish(subject, payload);
      if (i % 1000 === 999) await nc.flush();
    }
    await nc.flush();
  };

  await publishBatch('leak.cb', 10_000); // warm up
  while (received < 10_000) await new Promise((r) => setTimeout(r, 5));
  const baseline = measure();
  await publishBatch('leak.cb', TOTAL - 10_000);
  await all;

  // Iterator mode and requests too.
  const iterated = (async () => {
    let n = 0;
    for await (const _m of itSub) if (++n === 20_000) break;
    return n;
  })();
  await publishBatch('leak.it', 20_000);
  assert.equal(await iterated, 20_000);
  const svc = nc.subscribe('leak.svc', { callback: (_e, m) => m.respond(m.data) });
  await nc.flush();
  for (let i = 0; i < 2000; i++) await nc.request('leak.svc', payload, { timeout: 5000 });
  svc.unsubscribe();

  const end = measure();
  const grown = end.heapUsed - baseline.heapUsed;
  const buffersGrown = end.arrayBuffers - baseline.arrayBuffers;
  if (process.env.NATSIO_NODE_DEBUG) console.log({ grown, buffersGrown });
  assert.equal(received, TOTAL);
  assert.equal(cbSub.stats().dropped, 0);
  assert.equal(cbSub.stats().pendingMsgs, 0);
  // Generous bounds: retaining the messages would cost tens of MB of heap
  // (objects) and ~7.5 MB of payload buffers.
  assert.ok(grown < 8 * 1024 * 1024, `heap grew by ${grown} bytes`);
  assert.ok(buffersGrown < 2 * 1024 * 1024, `payload buffers grew by ${buffersGrown} bytes`);
  await nc.close();
});

test('examples/pubsub.js runs to completion and exits on its own', async () => {
  const r = await new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(__dirname, '..', 'examples', 'pubsub.js'), server.url]);
    let stdout = '';
    child.stdout.on('data', (d) => (stdout += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 10000);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout });
    });
  });
  assert.equal(r.signal, null, 'example did not exit on its own');
  assert.equal(r.code, 0);
  assert.match(r.stdout, /\[greet\.bob\] hello bob/);
  assert.match(r.stdout, /as expected: NoRespondersError NO_RESPONDERS/);
  assert.match(r.stdout, /requestMany reply: \d{4}-/);
});
