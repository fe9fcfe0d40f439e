'use strict';
// Pending-limit policies under real overload, with exact outcomes as in
// tests/c/test_policies.c: a publisher client floods a subscription of
// another client that is not read until the flood has been received.
//
// A Node iterator has two buffers: the library's queue (the pending limit
// and policy) and the window of messages handed to JS but not yet read
// (as many as the limit, see Subscription in index.js). The window is
// filled first with LIMIT warm-up messages that nobody reads; from then on
// only the library's queue takes messages (JS takes more only once it
// reads), so which flood messages it keeps is exact.
//
// "Received" without sleeping: the publisher flushes (the server has routed
// the flood to the subscriber's connection), then the subscriber flushes
// (its PONG is queued behind the flood). Under BLOCK that second flush
// cannot complete until the consumer reads: that is the BLOCK test.
const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const nats = require('..');
const { startServer } = require('./server');
const { sleep, eventually } = require('./wait');

const LIMIT = 20;
const FLOOD = 2000;

let server;
let pub;
before(async () => {
  server = await startServer();
  pub = await nats.connect({ servers: server.url });
});
after(async () => {
  await pub?.close();
  await server?.stop();
});

/** `promise`, or a failure after 10 s. */
async function within(promise, what) {
  let timer;
  const late = new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`timed out: ${what}`)), 10000)));
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

const range = (from, to) => Array.from({ length: to - from }, (_, i) => String(from + i));
const warmups = range(0, LIMIT).map((i) => `w${i}`);

/** A subscriber client (its slow-consumer reports collected), and its
 * subscription with the window already full (see the top of the file). */
async function setUp(subject, policy) {
  const nc = await nats.connect({ servers: server.url, flushTimeout: 60000 });
  try {
    const reports = [];
    nc.on('error', (e) => reports.push(e));
    const sub = nc.subscribe(subject, { pendingMsgsLimit: LIMIT, pendingBytesLimit: -1, policy });
    await nc.flush();
    // LIMIT fit in the queue and move on into the window.
    for (const w of warmups) pub.publish(subject, w);
    await pub.flush();
    await eventually(
      () => {
        const st = sub.stats();
        return st.delivered === LIMIT && st.pendingMsgs === 0;
      },
      10000,
      'the window to fill',
      () => JSON.stringify(sub.stats()),
    );
    assert.equal(sub.stats().dropped, 0);
    return { nc, sub, reports };
  } catch (e) {
    await nc.close(); // an open connection would keep the test process alive
    throw e;
  }
}

async function flood(subject) {
  for (let i = 0; i < FLOOD; i++) pub.publish(subject, String(i));
  await pub.flush();
}

/** Reads until nothing comes for 200 ms. */
async function readAll(sub) {
  const got = [];
  for (;;) {
    let timer;
    const quiet = new Promise((r) => (timer = setTimeout(() => r(null), 200)));
    const r = await Promise.race([sub.next(), quiet]);
    clearTimeout(timer);
    if (r === null) return got;
    assert.equal(r.done, false, 'the subscription ended');
    got.push(r.value.string());
  }
}

async function slowConsumerReported(reports, sub) {
  await eventually(() => reports.length > 0, 10000, 'a slow-consumer report');
  for (const e of reports) {
    assert.ok(e instanceof nats.SlowConsumerError, String(e));
    assert.equal(e.subject, sub.subject);
    assert.equal(e.sid, sub.sid);
  }
}

// DROP_NEW and DROP_OLD differ only in which LIMIT of the FLOOD messages
// they keep (after the warm-ups): both hold exactly LIMIT, count the rest
// as dropped and report the slow consumer.
async function expectKeeps(subject, policy, kept) {
  const { nc, sub, reports } = await setUp(subject, policy);
  try {
    await flood(subject);
    await nc.flush();
    const st = sub.stats();
    assert.equal(st.pendingMsgs, LIMIT);
    assert.equal(st.dropped, FLOOD - LIMIT);
    assert.deepEqual(await readAll(sub), [...warmups, ...kept]);
    assert.equal(sub.stats().dropped, FLOOD - LIMIT);
    assert.equal(nc.stats().inMsgs, LIMIT + FLOOD);
    await slowConsumerReported(reports, sub);
  } finally {
    await nc.close();
  }
}

test('DROP_NEW keeps the first messages over the limit and drops the rest', () =>
  expectKeeps('pol.new', 'dropNew', range(0, LIMIT)));

test('DROP_OLD keeps the newest messages and drops the older ones', () =>
  expectKeeps('pol.old', 'dropOld', range(FLOOD - LIMIT, FLOOD)));

test('BLOCK holds the reader at the limit until the consumer reads, and loses nothing', async () => {
  const { nc, sub, reports } = await setUp('pol.block', 'block');
  try {
    await flood('pol.block');
    await eventually(() => sub.stats().pendingMsgs >= LIMIT, 10000, 'a full queue');
    // The reader is paused: the PONG behind the flood is not read while
    // nobody consumes (an unlimited queue would take it at once).
    let flushed = false;
    const flush = nc.flush().then(() => (flushed = true));
    await sleep(500);
    assert.equal(flushed, false, 'the subscriber flushed while its queue was full');
    // The message that found the queue full is kept: one over at most.
    let st = sub.stats();
    assert.ok(st.pendingMsgs <= LIMIT + 1, JSON.stringify(st));
    assert.equal(st.dropped, 0);

    // Everything arrives in order, and the queue never grows past the limit.
    const expected = [...warmups, ...range(0, FLOOD)];
    let mostPending = 0;
    for (let i = 0; i < expected.length; i++) {
      const r = await sub.next();
      assert.equal(r.value?.string(), expected[i]);
      mostPending = Math.max(mostPending, sub.stats().pendingMsgs);
    }
    assert.ok(mostPending <= LIMIT + 1, `pending reached ${mostPending}`);
    await within(flush, 'the flush after catching up'); // the connection reads again
    assert.deepEqual(await readAll(sub), []);
    st = sub.stats();
    assert.equal(st.dropped, 0);
    assert.equal(st.delivered, expected.length);
    assert.deepEqual(reports, []);
  } finally {
    await nc.close();
  }
});

test('ERROR fails the subscription at the first message over the limit', async () => {
  const { nc, sub, reports } = await setUp('pol.err', 'error');
  try {
    await flood('pol.err');
    await nc.flush();
    // It closes with the failure though the iterator reads nothing (its
    // window is full), and the backlog is discarded, the window's too: the
    // failure is all the iterator yields.
    assert.ok((await within(sub.closed, 'the subscription to close')) instanceof nats.SlowConsumerError);
    assert.equal(sub.isClosed, true);
    await assert.rejects(sub.next(), nats.SlowConsumerError);
    assert.equal(sub.stats().pendingMsgs, 0);
    await slowConsumerReported(reports, sub);
    // The connection itself goes on.
    await nc.flush();
  } finally {
    await nc.close();
  }
});

// A callback subscription has one buffer, the library's queue: the JS
// thread takes its messages from there itself. So while JS is busy, the
// subscription holds its limit's worth of messages plus the one that woke
// JS up, and drops the rest (DROP_NEW: it keeps the oldest).
test('a callback subscription holds its pending limit and no more while the JS thread is busy', async () => {
  const nc = await nats.connect({ servers: server.url });
  try {
    const got = [];
    const sub = nc.subscribe('pol.cb', {
      pendingMsgsLimit: LIMIT,
      pendingBytesLimit: -1,
      callback: (err, m) => {
        if (!err) got.push(m.string());
      },
    });
    await nc.flush();
    for (let i = 0; i < FLOOD; i++) pub.publish('pol.cb', String(i));
    // Keep this thread busy (no callback can run) until the library has
    // seen the whole flood: every message kept or dropped.
    const pause = new Int32Array(new SharedArrayBuffer(4));
    const deadline = Date.now() + 10000;
    let st = sub.stats();
    while (st.delivered + st.pendingMsgs + st.dropped < FLOOD && Date.now() < deadline) {
      Atomics.wait(pause, 0, 0, 10);
      st = sub.stats();
    }
    assert.equal(st.dropped, FLOOD - LIMIT - 1, JSON.stringify(st));
    await eventually(() => got.length === LIMIT + 1, 10000, 'the kept messages', () => String(got.length));
    await sleep(100); // an absence: nothing more within 100 ms
    assert.deepEqual(got, range(0, LIMIT + 1));
    assert.equal(sub.stats().dropped, FLOOD - LIMIT - 1);
  } finally {
    await nc.close();
  }
});
