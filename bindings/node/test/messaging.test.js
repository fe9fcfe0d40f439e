'use strict';
const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const nats = require('..');
const { startServer, allThreadsStopped } = require('./server');
const { sleep, eventually } = require('./wait');
const { spawn } = require('node:child_process');

let server;
let nc;
before(async () => {
  server = await startServer();
  nc = await nats.connect({ servers: server.url, name: 'node-messaging' });
});
after(async () => {
  await nc?.close();
  await server?.stop();
});

test('connect exposes status, maxPayload, info and connectedUrl', () => {
  assert.equal(nc.status, 'CONNECTED');
  assert.equal(nc.isClosed, false);
  assert.equal(nc.maxPayload, nc.info.max_payload);
  assert.ok(nc.maxPayload > 0);
  assert.equal(typeof nc.info.server_id, 'string');
  assert.match(nc.connectedUrl, new RegExp(`:${server.port}$`));
  assert.match(nc.newInbox(), /^_INBOX\./);
  assert.match(nats.version, /^\d+\.\d+\.\d+/);
});

test('publish accepts string, Buffer, Uint8Array and nothing; subscriber sees bytes', async () => {
  const sub = nc.subscribe('data.kinds');
  nc.publish('data.kinds', 'text');
  nc.publish('data.kinds', Buffer.from([1, 2, 3]));
  nc.publish('data.kinds', new Uint8Array([0, 255, 0]).subarray(1, 2));
  nc.publish('data.kinds');
  const got = [];
  for await (const m of sub) {
    assert.ok(m.data instanceof Uint8Array);
    got.push([...m.data]);
    if (got.length === 4) break;
  }
  assert.deepEqual(got, [[...Buffer.from('text')], [1, 2, 3], [255], []]);
});

test('callback subscription receives in order with subject, reply and headers', async () => {
  const got = [];
  let done;
  const finished = new Promise((r) => (done = r));
  nc.subscribe('cb.*', {
    callback: (err, m) => {
      assert.equal(err, null);
      got.push(m);
      if (got.length === 3) done();
    },
  });
  await nc.flush();
  const headers = new Map([['X-Trace', ['a', 'b']], ['Solo', 'one']]);
  nc.publish('cb.one', '1', { reply: 'reply.here', headers });
  nc.publish('cb.two', '2');
  nc.publish('cb.three', '3', { headers: { K: 'v' } });
  await finished;
  assert.deepEqual(got.map((m) => m.string()), ['1', '2', '3']);
  assert.deepEqual(got.map((m) => m.subject), ['cb.one', 'cb.two', 'cb.three']);
  assert.equal(got[0].reply, 'reply.here');
  assert.equal(got[1].reply, undefined);
  assert.deepEqual(got[0].headers.get('X-Trace'), ['a', 'b']);
  assert.equal(got[0].headers.first('Solo'), 'one');
  assert.equal(got[1].headers, undefined);
  assert.deepEqual([...got[2].headers], [['K', ['v']]]);
});

test('callback delivery in batches: order, per-message fields, no callback after unsubscribe', async () => {
  const total = 3000;
  const stopAt = 1500;
  const seen = [];
  let afterUnsubscribe = 0;
  let done;
  const finished = new Promise((r) => (done = r));
  const sub = nc.subscribe('batch.*', {
    callback: (err, m) => {
      if (err) return;
      if (sub.isClosed) afterUnsubscribe++;
      seen.push(m);
      if (seen.length === stopAt) {
        sub.unsubscribe();
        done();
      }
    },
  });
  await nc.flush();
  // Published back to back, so the subscription receives them in batches.
  for (let i = 0; i < total; i++) {
    const opts = i % 7 === 0 ? { reply: `r.${i}`, headers: { N: String(i) } } : {};
    nc.publish(`batch.${i % 3}`, `payload-${i}`, opts);
  }
  await finished;
  await nc.flush();
  await sleep(50); // an absence: nothing more within 50 ms
  assert.equal(seen.length, stopAt);
  assert.equal(afterUnsubscribe, 0);
  seen.forEach((m, i) => {
    assert.equal(m.subject, `batch.${i % 3}`);
    assert.equal(m.string(), `payload-${i}`);
    assert.equal(m.data.length, `payload-${i}`.length);
    assert.equal(m.reply, i % 7 === 0 ? `r.${i}` : undefined);
    assert.equal(m.headers?.first('N'), i % 7 === 0 ? String(i) : undefined);
  });
});

// Publishes 300,000 numbered 16-byte messages on `subject` from one
// connection while `startReading(snc, count)` reads them on another, the
// JS thread shared by both, as in the pubsub benchmark: at default limits
// nothing may be dropped, and the order holds. The publisher never gets
// more than PUBLISH_AHEAD messages ahead of the reader (a quarter of the
// 65,536-message pending limit), so what is checked is that reading on the
// shared thread goes on while it publishes, not a rate: how fast an
// unpaced publisher may go is bench/'s pubsub scenario (an unpaced run here
// lost messages on a busy machine). startReading subscribes,
// calls count(m) per message (true at the last) and returns { sub,
// finished }, finished settling once the last message was read. (Through a
// dispatcher thread between the library and JS, the library's queue grew
// while that thread waited for CPU, and one run in three to eight lost
// messages to the pending limit.)
const PUBLISH_AHEAD = 16384;
async function keepsUp(subject, startReading) {
  const total = 300000;
  const pnc = await nats.connect({ servers: server.url });
  const snc = await nats.connect({ servers: server.url });
  try {
    let received = 0;
    let outOfOrder = 0;
    const count = (m) => {
      if (m.data.readUInt32LE(0) !== received) outOfOrder++;
      return ++received === total;
    };
    const { sub, finished } = startReading(snc, count);
    await snc.flush();
    const data = Buffer.alloc(16);
    for (let i = 0; i < total; i++) {
      data.writeUInt32LE(i, 0);
      pnc.publish(subject, data);
      if (i % 1000 === 999) {
        await new Promise((r) => setImmediate(r));
        const sent = i + 1;
        if (sent - received >= PUBLISH_AHEAD) {
          await eventually(() => sent - received < PUBLISH_AHEAD / 2, 20000, `the reader past ${sent - PUBLISH_AHEAD / 2}`,
            () => `received ${received}: ${JSON.stringify(sub.stats())}`);
        }
      }
    }
    await pnc.flush();
    const ended = await Promise.race([finished.then(() => true), sleep(20000).then(() => false)]);
    const st = sub.stats();
    assert.ok(ended, `received ${received} of ${total}: ${JSON.stringify(st)}`);
    assert.equal(st.dropped, 0);
    assert.equal(outOfOrder, 0);
  } finally {
    await pnc.close();
    await snc.close();
  }
}

test('a callback subscriber keeps up with a publisher on the same thread at default limits', () =>
  keepsUp('keepup', (snc, count) => {
    let done;
    const finished = new Promise((r) => (done = r));
    const sub = snc.subscribe('keepup', {
      callback: (err, m) => {
        if (!err && count(m)) done();
      },
    });
    return { sub, finished };
  }));

// The same with a `for await` loop: it reads on the JS thread too.
test('an iterating subscriber keeps up with a publisher on the same thread at default limits', () =>
  keepsUp('keepup.iter', (snc, count) => {
    const sub = snc.subscribe('keepup.iter');
    const finished = (async () => {
      for await (const m of sub) {
        if (count(m)) break;
      }
    })();
    return { sub, finished };
  }));

// Publishes into a stopped server, past a 64 KiB write buffer (and the
// few MiB the kernel's socket buffers take): 32 MiB in 1 KiB messages,
// each numbered. A watcher on another connection checks what arrives once
// the server resumes. `publishAll` returns how many were accepted and the
// error that stopped it, if any.
async function publishIntoStoppedServer(pubOpts, check) {
  const own = await startServer();
  const watcher = await nats.connect({ servers: own.url });
  const pnc = await nats.connect({ servers: own.url, maxPendingSize: 64 * 1024, flushTimeout: 300, ...pubOpts });
  let stopped = false;
  try {
    const got = [];
    watcher.subscribe('full', { callback: (err, m) => err || got.push(m.data.readUInt32LE(0)) });
    await watcher.flush();
    await pnc.flush();
    process.kill(own.pid, 'SIGSTOP');
    stopped = true;
    await eventually(() => allThreadsStopped(own.pid), 3000, 'the server to stop');
    const total = 32768;
    const data = Buffer.alloc(1024, 'x');
    const publishAll = () => {
      for (let i = 0; i < total; i++) {
        data.writeUInt32LE(i, 0);
        try {
          pnc.publish('full', data);
        } catch (err) {
          return { accepted: i, err };
        }
      }
      return { accepted: total, err: null };
    };
    const resume = () => {
      process.kill(own.pid, 'SIGCONT');
      stopped = false;
    };
    await check({ total, publishAll, resume, data, pnc, got, pid: own.pid });
  } finally {
    if (stopped) process.kill(own.pid, 'SIGCONT');
    await pnc.close();
    await watcher.close();
    await own.stop();
  }
}

// Arrival of messages 0..n-1, in order, at the watcher. It fails only when
// arrivals stop for 20 s: how long 32 MiB take depends on the machine's load.
async function arrivedInOrder(got, n) {
  for (;;) {
    const before = got.length;
    if (before >= n) break;
    await eventually(() => got.length !== before, 20000, `${n} messages`, () => `got ${got.length}`);
  }
  assert.equal(got.length, n);
  got.forEach((v, i) => assert.equal(v, i, `message ${i} of ${n}`));
}

// The JS thread also runs this thread's subscriptions: a publish that
// waited for room would stop them, and they could overflow meanwhile.
test('writeRoomPause: 0: publish never blocks: past maxPendingSize into a stopped server it queues at once; all arrives once it resumes', () =>
  publishIntoStoppedServer({ writeRoomPause: 0 }, async ({ total, publishAll, resume, got }) => {
    const { accepted, err } = publishAll();
    resume();
    assert.equal(err, null, `publish ${accepted} of ${total}: ${err}`);
    await arrivedInOrder(got, total);
  }));

// The default: a publish past the bound pauses for room (500 ms at most).
// A stopped server writes nothing during the pause, so the next publishes
// queue at once: one pause in all, not one per message (32768 of them,
// hours; the bound below is a minute so that load cannot reach it).
test('by default a publish past maxPendingSize into a stopped server pauses once, then the rest queue at once; all arrives once it resumes', () =>
  publishIntoStoppedServer({}, async ({ total, publishAll, resume, got }) => {
    const t0 = Date.now();
    const { accepted, err } = publishAll();
    const elapsed = Date.now() - t0;
    resume();
    assert.equal(err, null, `publish ${accepted} of ${total}: ${err}`);
    assert.ok(elapsed >= 450, `the publishes took ${elapsed} ms: none paused for the 500 ms writeRoomPause`);
    assert.ok(elapsed < 60_000, `the publishes took ${elapsed} ms: the pause ran out again and again`);
    await arrivedInOrder(got, total);
  }));

// A server that starts reading again within the pause: the publisher waits
// for it and is then paced by the connection (nothing runs out, nothing is
// refused or lost); with writeRoomPause: 0 the same loop returns at once.
// The pause is ten minutes, so that it cannot run out however loaded the
// machine: how long the loop takes is then no concern of the test.
test('writeRoomPause: a publish past maxPendingSize waits for a server that resumes within the pause; all arrives', () =>
  publishIntoStoppedServer({ writeRoomPause: 600_000 }, async ({ total, publishAll, resume, got, pid }) => {
    // Resumed by another process: this thread is in publish meanwhile. The
    // clock starts before the resumer, whose 0.3 s begin later still.
    const t0 = Date.now();
    const resumer = spawn('sh', ['-c', `sleep 0.3; kill -CONT ${pid}`], { stdio: 'ignore' });
    const { accepted, err } = publishAll();
    const elapsed = Date.now() - t0;
    resume();
    await new Promise((r) => (resumer.exitCode !== null ? r() : resumer.on('exit', r)));
    assert.equal(err, null, `publish ${accepted} of ${total}: ${err}`);
    assert.ok(elapsed >= 300, `the publishes took ${elapsed} ms: they did not wait for the stopped server`);
    await arrivedInOrder(got, total);
  }));


test('waitForWriteRoom: publish past maxPendingSize blocks up to flushTimeout, then TimeoutError; the refused one is not sent', () =>
  publishIntoStoppedServer({ waitForWriteRoom: true }, async ({ total, publishAll, resume, data, pnc, got }) => {
    const t0 = Date.now();
    const { accepted, err } = publishAll();
    const elapsed = Date.now() - t0;
    resume();
    assert.ok(err instanceof nats.TimeoutError, `publish ${accepted} of ${total}: ${err}`);
    assert.ok(elapsed >= 250, `the publishes took ${elapsed} ms, the refused one should have waited 300 ms`);
    // The next publish follows the last accepted one.
    data.writeUInt32LE(accepted, 0);
    pnc.publish('full', data);
    await arrivedInOrder(got, accepted + 1);
  }));

test('request/respond round trip with headers; msg.json()', async () => {
  const svc = nc.subscribe('svc.echo', {
    callback: (_err, m) => m.respond(JSON.stringify({ echo: m.string(), h: m.headers?.first('H') }), {
      headers: { Served: 'yes' },
    }),
  });
  await nc.flush();
  const reply = await nc.request('svc.echo', 'ping', { timeout: 2000, headers: { H: 'hv' } });
  assert.deepEqual(reply.json(), { echo: 'ping', h: 'hv' });
  assert.equal(reply.headers.first('Served'), 'yes');
  svc.unsubscribe();
});

test('setWaitSpin: the event loop spins while a request waits, yet timers and callbacks run; bad values throw', async () => {
  assert.throws(() => nats.setWaitSpin(-1), TypeError);
  assert.throws(() => nats.setWaitSpin(NaN), TypeError);
  assert.throws(() => nats.setWaitSpin('200'), TypeError);
  // A responder answering from a timer of this very thread: a spin that
  // held the event loop would starve the timer until the request timed out.
  const svc = nc.subscribe('spin.later', {
    callback: (_err, m) => setTimeout(() => m.respond(`late ${m.string()}`), 30),
  });
  await nc.flush();
  try {
    for (const us of [0, 200, 10_000_000]) {
      nats.setWaitSpin(us);
      const t0 = Date.now();
      const reply = await nc.request('spin.later', String(us), { timeout: 3000 });
      assert.equal(reply.string(), `late ${us}`);
      // Not a speed check: a starved timer would have taken the whole timeout.
      assert.ok(Date.now() - t0 < 2500, `spin ${us}: the reply took ${Date.now() - t0} ms`);
      // A request nobody answers ends at its timeout, spin or not.
      const silent = nc.subscribe(`spin.silent.${us}`);
      await nc.flush();
      const t1 = Date.now();
      await assert.rejects(nc.request(`spin.silent.${us}`, 'x', { timeout: 150 }), nats.TimeoutError);
      assert.ok(Date.now() - t1 < 2500, `spin ${us}: the timeout came after ${Date.now() - t1} ms`);
      silent.unsubscribe();
    }
  } finally {
    nats.setWaitSpin(200);
    svc.unsubscribe();
  }
});

test('queue group members share the messages', async () => {
  const counts = [0, 0];
  const subs = [0, 1].map((i) => nc.subscribe('q.work', { queue: 'workers', callback: () => counts[i]++ }));
  assert.equal(subs[0].queue, 'workers');
  await nc.flush();
  for (let i = 0; i < 200; i++) nc.publish('q.work', String(i));
  await nc.flush();
  while (counts[0] + counts[1] < 200) await sleep(10);
  assert.equal(counts[0] + counts[1], 200);
  subs.forEach((s) => s.unsubscribe());
});

test('breaking out of for-await unsubscribes at the server', async () => {
  const sub = nc.subscribe('iter.svc');
  await nc.flush();
  const pending = nc.request('iter.svc', 'q', { timeout: 2000 });
  for await (const m of sub) {
    m.respond('answer');
    break;
  }
  assert.equal((await pending).string(), 'answer');
  assert.equal(sub.isClosed, true);
  await nc.flush();
  // Nobody listens any more: the server says so at once.
  await assert.rejects(nc.request('iter.svc', 'q', { timeout: 2000 }), { code: 'NO_RESPONDERS' });
  // The iterator stays finished.
  assert.deepEqual(await sub.next(), { value: undefined, done: true });
});

test('unsubscribe ends a waiting iterator; a second unsubscribe does nothing (the core stop is idempotent)', async () => {
  const sub = nc.subscribe('unsub.wait');
  const next = sub.next();
  sub.unsubscribe();
  assert.deepEqual(await next, { value: undefined, done: true });
  assert.equal(sub.isClosed, true);
  assert.doesNotThrow(() => sub.unsubscribe());
  assert.deepEqual(await sub.next(), { value: undefined, done: true });
  assert.equal(await sub.closed, undefined);
  // The iteration ended cleanly: unsubscribeAfter on it reports the closed subscription.
  assert.throws(() => sub.unsubscribeAfter(1), (e) => e instanceof nats.SubscriptionClosedError);
});

test('unsubscribeAfter(n) delivers n messages then ends the iterator', async () => {
  const sub = nc.subscribe('after.n');
  sub.unsubscribeAfter(3);
  for (let i = 0; i < 10; i++) nc.publish('after.n', String(i));
  const got = [];
  for await (const m of sub) got.push(m.string());
  assert.deepEqual(got, ['0', '1', '2']);
});

test('subscription drain delivers the backlog then closes', async () => {
  let seen = 0;
  const sub = nc.subscribe('drain.sub', { callback: () => seen++ });
  await nc.flush();
  for (let i = 0; i < 100; i++) nc.publish('drain.sub', 'x');
  await nc.flush();
  await sub.drain();
  assert.equal(seen, 100);
  assert.equal(sub.isClosed, true);
  const stats = sub.stats();
  assert.equal(stats.delivered, 100);
  assert.equal(stats.dropped, 0);
});

test('subscription drain(timeout) rejects with TimeoutError while the backlog is unread; the drain goes on', async () => {
  const sub = nc.subscribe('drain.bound');
  await nc.flush();
  for (let i = 0; i < 1000; i++) nc.publish('drain.bound', `m${i}`);
  await nc.flush();
  const t0 = Date.now();
  await assert.rejects(sub.drain(100), nats.TimeoutError);
  assert.ok(Date.now() - t0 < 2000);
  let n = 0;
  for await (const m of sub) assert.equal(m.string(), `m${n++}`);
  assert.equal(n, 1000);
  assert.equal(sub.isClosed, true);
});

test('BLOCK policy: a slow iterator loses nothing and nothing deadlocks', async () => {
  const c = await nats.connect({ servers: server.url });
  const sub = c.subscribe('block.policy', { pendingMsgsLimit: 8, policy: 'block' });
  await c.flush();
  for (let i = 0; i < 2000; i++) nc.publish('block.policy', String(i));
  await nc.flush();
  let expected = 0;
  for await (const m of sub) {
    assert.equal(m.string(), String(expected));
    if (++expected % 500 === 0) await sleep(5); // a slow consumer
    if (expected === 2000) break;
  }
  assert.equal(expected, 2000);
  assert.equal(sub.stats().dropped, 0);
  await c.close();
});

test('next(timeout) rejects with TimeoutError after the timeout; the subscription stays usable', async () => {
  const sub = nc.subscribe('next.timeout');
  await nc.flush();
  const t0 = Date.now();
  await assert.rejects(sub.next(100), (e) => e instanceof nats.TimeoutError && e.code === 'TIMEOUT');
  const elapsed = Date.now() - t0;
  assert.ok(elapsed >= 90 && elapsed < 1000, `rejected after ${elapsed} ms`);
  assert.equal(sub.isClosed, false);
  // The timed-out call took nothing: the next message goes to the next call.
  nc.publish('next.timeout', 'one');
  nc.publish('next.timeout', 'two');
  const first = await sub.next(2000);
  assert.equal(first.value.string(), 'one');
  const second = await sub.next();
  assert.equal(second.value.string(), 'two');
  // A message already queued is given at once, whatever the timeout.
  nc.publish('next.timeout', 'three');
  await nc.flush();
  await eventually(() => {
    const st = sub.stats();
    return st.delivered + st.pendingMsgs === 3;
  }, 10000, 'the third message received', () => JSON.stringify(sub.stats()));
  assert.equal((await sub.next(0)).value.string(), 'three');
  await assert.rejects(sub.next(-1), TypeError);
  sub.unsubscribe();
  assert.deepEqual(await sub.next(50), { value: undefined, done: true });
});

test('a throwing subscription callback: the error event carries it, delivery goes on', async () => {
  const errors = [];
  const onError = (e) => errors.push(e);
  nc.on('error', onError);
  const got = [];
  const sub = nc.subscribe('cb.throws', {
    callback: (err, m) => {
      got.push(m.string());
      if (m.string() !== 'last') throw new TypeError(`bad ${m.string()}`);
    },
  });
  await nc.flush();
  for (const text of ['a', 'b', 'last']) nc.publish('cb.throws', text);
  await nc.flush();
  const deadline = Date.now() + 3000;
  while (got.length < 3 && Date.now() < deadline) await sleep(5);
  nc.off('error', onError);
  sub.unsubscribe();
  assert.deepEqual(got, ['a', 'b', 'last']);
  assert.equal(errors.length, 2);
  for (const [i, e] of errors.entries()) {
    assert.ok(e instanceof nats.CallbackError && !(e instanceof nats.NatsError));
    assert.ok(e.cause instanceof TypeError);
    assert.equal(e.cause.message, `bad ${['a', 'b'][i]}`);
    assert.equal(e.subject, 'cb.throws');
    assert.equal(typeof e.sid, 'number');
  }
});

test('without an error listener a throwing callback is logged at error level, never thrown', async () => {
  const logged = [];
  const nc2 = await nats.connect({ servers: server.url, logger: (level, line) => logged.push([level, line]) });
  try {
    const got = [];
    nc2.subscribe('cb.unheard', {
      callback: (err, m) => {
        got.push(m.string());
        if (got.length === 1) throw new Error('nobody listens');
      },
    });
    await nc2.flush();
    nc2.publish('cb.unheard', 'one');
    nc2.publish('cb.unheard', 'two');
    const deadline = Date.now() + 3000;
    while (got.length < 2 && Date.now() < deadline) await sleep(5);
    assert.deepEqual(got, ['one', 'two']);
    assert.equal(logged.length, 1, JSON.stringify(logged));
    assert.equal(logged[0][0], 'error');
    assert.match(logged[0][1], /subscription callback on "cb\.unheard" threw: nobody listens/);
  } finally {
    await nc2.close();
  }
});

test('an event listener that throws goes to the error event; the other listeners still run', async () => {
  const nc2 = await nats.connect({ servers: server.url });
  const errors = [];
  nc2.on('error', (e) => errors.push(e));
  let second = 0;
  nc2.on('close', () => {
    throw new Error('close listener failed');
  });
  nc2.on('close', () => second++);
  await nc2.close();
  assert.equal(second, 1);
  assert.equal(errors.length, 1);
  assert.ok(errors[0] instanceof nats.CallbackError);
  assert.equal(errors[0].event, 'close');
  assert.equal(errors[0].subject, undefined);
  assert.equal(errors[0].cause.message, 'close listener failed');
});

test('requestMany yields every reply, bounded by maxMessages', async () => {
  const responders = [1, 2, 3].map((i) =>
    nc.subscribe('many.svc', { callback: (_e, m) => m.respond(`r${i}`) }),
  );
  await nc.flush();
  const got = [];
  for await (const m of nc.requestMany('many.svc', 'q', { maxMessages: 3, timeout: 2000 })) got.push(m.string());
  assert.deepEqual(got.sort(), ['r1', 'r2', 'r3']);

  // Stall: ends once replies pause after the first, long before the timeout.
  const stalled = [];
  const started = Date.now();
  for await (const m of nc.requestMany('many.svc', 'q', { stall: 300, timeout: 20000 })) stalled.push(m.string());
  assert.ok(stalled.length >= 1 && stalled.length <= 3, String(stalled));
  assert.ok(Date.now() - started < 10000, 'ended by the stall, not the overall timeout');

  // Breaking out early is fine.
  for await (const m of nc.requestMany('many.svc', 'q', { timeout: 2000 })) {
    assert.match(m.string(), /^r\d$/);
    break;
  }
  responders.forEach((s) => s.unsubscribe());
});

test('stats count traffic', async () => {
  const c = await nats.connect({ servers: server.url }); // no traffic of other tests
  const before = c.stats();
  const sub = c.subscribe('stats.x');
  c.publish('stats.x', '12345');
  for await (const _m of sub) break;
  const after = c.stats();
  await c.close();
  assert.equal(after.outMsgs - before.outMsgs, 1);
  assert.equal(after.outBytes - before.outBytes, 5);
  assert.equal(after.inMsgs - before.inMsgs, 1);
  assert.equal(after.inBytes - before.inBytes, 5);
});

test('noEcho connections do not receive their own messages', async () => {
  const quiet = await nats.connect({ servers: [server.url], noEcho: true });
  const sub = quiet.subscribe('echo.test');
  quiet.publish('echo.test', 'self');
  await quiet.flush();
  nc.publish('echo.test', 'other');
  const m = await sub.next();
  assert.equal(m.value.string(), 'other');
  await quiet.close();
});

test('inboxPrefix shapes request inboxes', async () => {
  const c = await nats.connect({ servers: server.url, inboxPrefix: 'MYBOX' });
  assert.match(c.newInbox(), /^MYBOX\./);
  const svc = nc.subscribe('prefix.svc', { callback: (_e, m) => m.respond(m.reply) });
  await nc.flush();
  const r = await c.request('prefix.svc', '', { timeout: 2000 });
  assert.match(r.string(), /^MYBOX\./);
  svc.unsubscribe();
  await c.close();
});

test('connection drain flushes, delivers the backlog and closes', async () => {
  const c = await nats.connect({ servers: server.url, drainTimeout: 5000 });
  let seen = 0;
  c.subscribe('conn.drain', { callback: () => seen++ });
  await c.flush();
  for (let i = 0; i < 50; i++) nc.publish('conn.drain', 'x');
  await nc.flush();
  const closed = new Promise((r) => c.once('close', r));
  await c.drain();
  await closed;
  assert.equal(seen, 50);
  assert.equal(c.status, 'CLOSED');
});

test('close ends iterators with CONNECTION_CLOSED and rejects later calls with it', async () => {
  const c = await nats.connect({ servers: server.url });
  const sub = c.subscribe('close.it');
  // As C, C++ and Go (the conformance line iterator_closed); once thrown, done.
  const next = assert.rejects(sub.next(), nats.ConnectionClosedError);
  let callbacks = 0;
  c.subscribe('close.cb', { callback: () => callbacks++ });
  await c.close();
  await next;
  assert.deepEqual(await sub.next(), { value: undefined, done: true });
  assert.equal(c.isClosed, true);
  assert.throws(() => c.publish('x', 'y'), { code: 'CONNECTION_CLOSED', status: 201 });
  await assert.rejects(c.request('x', 'y'), nats.ConnectionClosedError);
  await assert.rejects(c.flush(), { code: 'CONNECTION_CLOSED' });
  nc.publish('close.cb', 'late');
  await nc.flush();
  await sleep(50); // an absence: no callback within 50 ms
  assert.equal(callbacks, 0);
  await c.close(); // idempotent
});

test('a message carries the sid of the subscription it was delivered on', async () => {
  const a = nc.subscribe('sid.a');
  const b = nc.subscribe('sid.>', { callback: () => {} });
  const replies = nc.subscribe('sid.echo', { callback: (err, m) => m.respond('pong') });
  await nc.flush();
  assert.notEqual(a.sid, b.sid);
  nc.publish('sid.a', 'x');
  const it = a[Symbol.asyncIterator]();
  const { value } = await it.next();
  assert.equal(typeof value.sid, 'number');
  assert.equal(value.sid, a.sid);
  // A request's reply comes through the connection's reply subscription:
  // a sid of its own, not one of ours.
  const reply = await nc.request('sid.echo', 'ping');
  assert.equal(reply.string(), 'pong');
  assert.ok(reply.sid > 0);
  assert.ok(![a.sid, b.sid, replies.sid].includes(reply.sid), String(reply.sid));
  a.unsubscribe();
  b.unsubscribe();
  replies.unsubscribe();
});

test('a corrupt header block is delivered with headersMalformed and its good lines (raw HPUB)', async () => {
  const sub = nc.subscribe('hdr.>');
  await nc.flush();
  const blocks = { bad: 'NATS/1.0\r\nGood: yes\r\nno colon here\r\n\r\n', good: 'NATS/1.0\r\nGood: yes\r\n\r\n' };
  let frames = 'CONNECT {"verbose":false,"headers":true}\r\n';
  for (const [tail, block] of Object.entries(blocks)) {
    frames += `HPUB hdr.${tail} ${block.length} ${block.length + 4}\r\n${block}data\r\n`;
  }
  // The server answers the PING after it has handled the frames before it.
  await new Promise((resolve, reject) => {
    const raw = require('node:net').connect(server.port, '127.0.0.1', () => raw.write(`${frames}PING\r\n`));
    let seen = '';
    raw.on('data', (d) => {
      seen += d;
      if (seen.includes('PONG\r\n')) raw.end(resolve);
    });
    raw.on('error', reject);
  });
  const got = [];
  for await (const m of sub) {
    got.push(m);
    if (got.length === 2) break;
  }
  const [bad, good] = got;
  assert.equal(bad.subject, 'hdr.bad');
  assert.equal(bad.headersMalformed, true);
  assert.deepEqual(bad.headers.get('Good'), ['yes']);
  assert.equal(bad.string(), 'data');
  assert.equal(good.subject, 'hdr.good');
  assert.equal(good.headersMalformed, false);
});
