'use strict';
// Services (ADR-32) in nats.js's @nats-io/services shape, against a real
// nats-server and the official nats.js service framework on the same
// server: each side discovers and reads the other's services.
const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const natsjs = require('@nats-io/transport-node');
const njsServices = require('@nats-io/services');
const {
  connect,
  Svcm,
  ServiceError,
  ServiceErrorHeader,
  ServiceErrorCodeHeader,
  ServiceVerb,
  ServiceConfigError,
  NoRespondersError,
  SlowConsumerError,
} = require('..');
const { startServer } = require('./server');
const { eventually } = require('./wait');

let server;
let nc; // libnatsio
let njs; // nats.js

before(async () => {
  server = await startServer();
  nc = await connect({ servers: server.url });
  njs = await natsjs.connect({ servers: server.url });
});

after(async () => {
  await njs?.close();
  await nc?.close();
  await server?.stop();
});

/** Every answer of a nats.js discovery iterator (none: nats.js rejects
 * with its no-responders error). */
async function all(iter) {
  const out = [];
  try {
    for await (const x of await iter) out.push(x);
  } catch (e) {
    if (!/no responders/.test(e.message)) throw e;
  }
  return out;
}

function njsClient() {
  return new njsServices.Svcm(njs).client({ strategy: 'stall', maxWait: 2000 });
}

test('a libnatsio service is discovered and read by nats.js (PING, INFO, STATS: every field as given)', async () => {
  const config = {
    name: 'node-disco',
    version: '1.2.3-beta.1+build.5',
    description: 'discovered by nats.js',
    metadata: { team: 'edge', region: 'eu' },
    statsHandler: async (endpoint) => ({ seen: endpoint.name }),
  };
  const svc = await new Svcm(nc).add(config);
  try {
    const math = svc.addGroup('math');
    math.addEndpoint('add', {
      handler: (err, msg) => {
        const [a, b] = msg.json();
        msg.respond(JSON.stringify(a + b));
      },
      metadata: { unit: 'sum' },
    });
    svc.addEndpoint('echo', { subject: 'disco.echo', queue: 'echoers', handler: (err, msg) => msg.respond(msg.data) });
    await nc.flush(); // the subscriptions are in place for the other connection

    for (let i = 0; i < 3; i++) {
      const r = await njs.request('math.add', JSON.stringify([i, 2]));
      assert.equal(r.json(), i + 2);
    }
    assert.equal((await njs.request('disco.echo', 'x')).string(), 'x');

    const client = njsClient();
    const pings = await all(client.ping('node-disco'));
    assert.deepEqual(pings, [
      {
        type: njsServices.ServiceResponseType.PING,
        name: 'node-disco',
        id: svc.id,
        version: config.version,
        metadata: config.metadata,
      },
    ]);

    const [info] = await all(client.info('node-disco', svc.id));
    assert.deepEqual(info, {
      type: 'io.nats.micro.v1.info_response',
      name: 'node-disco',
      id: svc.id,
      version: config.version,
      description: config.description,
      metadata: config.metadata,
      endpoints: [
        { name: 'add', subject: 'math.add', queue_group: 'q', metadata: { unit: 'sum' } },
        { name: 'echo', subject: 'disco.echo', queue_group: 'echoers', metadata: null },
      ],
    });
    assert.deepEqual(svc.info(), info);

    const [stats] = await all(client.stats('node-disco'));
    assert.equal(stats.type, 'io.nats.micro.v1.stats_response');
    assert.equal(stats.id, svc.id);
    assert.equal(stats.name, 'node-disco');
    assert.equal(stats.version, config.version);
    assert.deepEqual(stats.metadata, config.metadata);
    assert.ok(!Number.isNaN(Date.parse(stats.started)), stats.started);
    const [add, echo] = stats.endpoints;
    assert.deepEqual(
      { ...add, processing_time: 0, average_processing_time: 0 },
      {
        name: 'add',
        subject: 'math.add',
        queue_group: 'q',
        num_requests: 3,
        num_errors: 0,
        last_error: '',
        processing_time: 0,
        average_processing_time: 0,
        data: { seen: 'add' },
      },
    );
    assert.ok(add.processing_time > 0);
    assert.equal(add.average_processing_time, Math.floor(add.processing_time / 3));
    assert.equal(echo.num_requests, 1);
    assert.deepEqual(echo.data, { seen: 'echo' });

    // The service's own view: the same counters, data from the handler too.
    const own = await svc.stats();
    assert.equal(own.endpoints[0].num_requests, 3);
    assert.deepEqual(own.endpoints[1].data, { seen: 'echo' });
    assert.deepEqual(svc.ping(), pings[0]);
  } finally {
    await svc.stop();
  }
});

test("libnatsio's client pings, infos and stats a nats.js service", async () => {
  const njsSvc = await new njsServices.Svcm(njs).add({
    name: 'njs-side',
    version: '2.0.0',
    description: 'a nats.js service',
    metadata: { lang: 'js' },
  });
  try {
    njsSvc.addGroup('njs').addEndpoint('hello', {
      handler: (err, msg) => msg.respond('hi'),
      metadata: { kind: 'greeting' },
    });
    await njs.flush();
    assert.equal((await nc.request('njs.hello', 'x')).string(), 'hi');

    const client = new Svcm(nc).client({ maxWait: 2000, stall: 300 });
    const pings = [];
    for await (const p of await client.ping('njs-side')) pings.push(p);
    assert.deepEqual(pings, [
      { type: 'io.nats.micro.v1.ping_response', name: 'njs-side', id: njsSvc.id, version: '2.0.0', metadata: { lang: 'js' } },
    ]);

    const infos = [];
    for await (const i of await client.info('njs-side', njsSvc.id)) infos.push(i);
    assert.equal(infos.length, 1);
    assert.equal(infos[0].description, 'a nats.js service');
    assert.deepEqual(infos[0].metadata, { lang: 'js' });
    assert.deepEqual(infos[0].endpoints, [
      { name: 'hello', subject: 'njs.hello', queue_group: 'q', metadata: { kind: 'greeting' } },
    ]);

    const stats = [];
    for await (const s of await client.stats('njs-side')) stats.push(s);
    assert.equal(stats.length, 1);
    assert.equal(stats[0].id, njsSvc.id);
    assert.equal(stats[0].endpoints[0].name, 'hello');
    assert.equal(stats[0].endpoints[0].num_requests, 1);

    // Every service: the nats.js one among them.
    const everyone = [];
    for await (const p of await client.ping()) everyone.push(p.id);
    assert.ok(everyone.includes(njsSvc.id));
  } finally {
    await njsSvc.stop();
  }
});

test('1,000 requests over two instances in one queue group: each answered once, stats add up to 1,000', async () => {
  const svcm = new Svcm(nc);
  const handled = [0, 0];
  const instances = [];
  for (let i = 0; i < 2; i++) {
    const svc = await svcm.add({ name: 'node-queue', version: '1.0.0' });
    svc.addEndpoint('work', (err, msg) => {
      handled[i]++;
      msg.respond(msg.data);
    });
    instances.push(svc);
  }
  await nc.flush();
  try {
    const N = 1000;
    const answers = new Map();
    for (let start = 0; start < N; start += 100) {
      const batch = [];
      for (let k = start; k < start + 100; k++) {
        batch.push(
          njs.request('work', String(k), { timeout: 5000 }).then((r) => answers.set(k, (answers.get(k) ?? 0) + Number(r.string() === String(k)))),
        );
      }
      await Promise.all(batch);
    }
    assert.equal(answers.size, N);
    assert.ok([...answers.values()].every((n) => n === 1));
    assert.equal(handled[0] + handled[1], N);

    const stats = await all(njsClient().stats('node-queue'));
    assert.equal(stats.length, 2);
    const perInstance = stats.map((s) => s.endpoints[0].num_requests);
    assert.equal(perInstance[0] + perInstance[1], N);
    assert.deepEqual(perInstance.sort(), [...handled].sort());
    assert.ok(stats.every((s) => s.endpoints[0].queue_group === 'q'));
  } finally {
    await Promise.all(instances.map((s) => s.stop()));
  }
});

test('respondError reaches a nats.js requester with both headers; a throwing or rejecting handler answers 500, is reported, and the next request is served', async () => {
  const reported = [];
  const svc = await new Svcm(nc).add({
    name: 'node-errors',
    version: '1.0.0',
    errorHandler: (err) => reported.push(err),
  });
  try {
    svc.addEndpoint('teapot', (err, msg) => msg.respondError(418, "I'm a teapot", 'body'));
    let calls = 0;
    svc.addEndpoint('throws', (err, msg) => {
      if (calls++ === 0) throw new Error('sync boom');
      msg.respond('fine');
    });
    let asyncCalls = 0;
    svc.addEndpoint('rejects', async (err, msg) => {
      await new Promise((resolve) => setImmediate(resolve));
      if (asyncCalls++ === 0) throw new Error('async boom');
      msg.respond('fine too');
    });
    svc.addEndpoint('coded', () => {
      throw new ServiceError(404, 'no such thing');
    });
    await nc.flush();

    const teapot = await njs.request('teapot', '');
    assert.equal(teapot.headers.get(njsServices.ServiceErrorHeader), "I'm a teapot");
    assert.equal(teapot.headers.get(njsServices.ServiceErrorCodeHeader), '418');
    assert.equal(teapot.string(), 'body');
    const asError = njsServices.ServiceError.toServiceError(teapot);
    assert.equal(asError.code, 418);

    for (const [subject, text, next] of [
      ['throws', 'sync boom', 'fine'],
      ['rejects', 'async boom', 'fine too'],
    ]) {
      const failed = await njs.request(subject, '');
      assert.equal(failed.headers.get(ServiceErrorCodeHeader), '500');
      assert.equal(failed.headers.get(ServiceErrorHeader), text);
      assert.equal((await njs.request(subject, '')).string(), next);
    }
    const coded = await nc.request('coded', '');
    assert.equal(ServiceError.toServiceError(coded).code, 404);
    assert.equal(ServiceError.toServiceError(coded).message, 'no such thing');

    await eventually(() => reported.length === 2, 5000, 'both handler failures reported');
    assert.deepEqual(
      reported.map((e) => [e instanceof ServiceError, e.code, e.message, e.endpoint, e.subject]),
      [
        [true, 500, 'sync boom', 'throws', 'throws'],
        [true, 500, 'async boom', 'rejects', 'rejects'],
      ],
    );
    const { endpoints } = await svc.stats();
    const byName = Object.fromEntries(endpoints.map((e) => [e.name, e]));
    assert.deepEqual([byName.teapot.num_errors, byName.teapot.last_error], [1, "418:I'm a teapot"]);
    assert.deepEqual([byName.throws.num_requests, byName.throws.num_errors, byName.throws.last_error], [2, 1, '500:sync boom']);
    assert.deepEqual([byName.rejects.num_requests, byName.rejects.num_errors], [2, 1]);
  } finally {
    await svc.stop();
  }
});

test('groups nest their prefixes; queue groups are inherited, overridden or disabled; metadata is reported', async () => {
  const svcm = new Svcm(nc);
  const a = await svcm.add({ name: 'node-groups', version: '1.0.0', queue: 'svcq' });
  const b = await svcm.add({ name: 'node-groups', version: '1.0.0', queue: 'svcq' });
  try {
    const counts = { a: 0, b: 0 };
    for (const [svc, who] of [
      [a, 'a'],
      [b, 'b'],
    ]) {
      const outer = svc.addGroup('outer');
      const inner = outer.addGroup('inner', 'innerq');
      inner.addEndpoint('deep', { handler: (e, m) => m.respond(who), metadata: { depth: '2' } });
      outer.addEndpoint('mine', { handler: (e, m) => m.respond(who), queue: 'own' });
      // No queue group: every instance gets every request.
      svc.addGroup('all', '').addEndpoint('fanout', (e, m) => {
        counts[who]++;
        m.respond(who);
      });
    }
    await nc.flush();
    const info = a.info();
    assert.deepEqual(info.endpoints, [
      { name: 'deep', subject: 'outer.inner.deep', queue_group: 'innerq', metadata: { depth: '2' } },
      { name: 'mine', subject: 'outer.mine', queue_group: 'own', metadata: null },
      { name: 'fanout', subject: 'all.fanout', queue_group: '', metadata: null },
    ]);
    assert.ok(['a', 'b'].includes((await njs.request('outer.inner.deep', '')).string()));

    const replies = [];
    for await (const m of nc.requestMany('all.fanout', '', { maxMessages: 2, timeout: 5000 })) replies.push(m.string());
    assert.deepEqual(replies.sort(), ['a', 'b']);
    assert.deepEqual(counts, { a: 1, b: 1 });
  } finally {
    await Promise.all([a.stop(), b.stop()]);
  }
});

test('an endpoint without a handler is an async iterator of requests', async () => {
  const svc = await new Svcm(nc).add({ name: 'node-iter', version: '0.1.0' });
  try {
    const ep = svc.addEndpoint('upper');
    await nc.flush();
    const served = (async () => {
      let n = 0;
      for await (const m of ep) {
        m.respond(m.string().toUpperCase());
        if (++n === 3) break;
      }
      return n;
    })();
    for (const word of ['a', 'bc', 'def']) assert.equal((await njs.request('upper', word)).string(), word.toUpperCase());
    assert.equal(await served, 3);
    assert.equal(ep.isClosed, true);
    await nc.flush(); // the unsubscribe reached the server before the other connection asks
    // Breaking out stopped the endpoint alone; it stays in INFO.
    await assert.rejects(njs.request('upper', 'x', { timeout: 2000 }), (e) => /503|no responders/i.test(String(e.message ?? e.code)));
    assert.deepEqual(svc.info().endpoints.map((e) => e.name), ['upper']);
    assert.equal(svc.isStopped, false);
  } finally {
    await svc.stop();
  }
});

test('stop lets requests in flight finish; new requests then find no responders', async () => {
  const svc = await new Svcm(nc).add({ name: 'node-stop', version: '1.0.0' });
  let release;
  const gate = new Promise((resolve) => {
    release = resolve;
  });
  let started;
  const inHandler = new Promise((resolve) => {
    started = resolve;
  });
  svc.addEndpoint('slow', async (err, msg) => {
    started();
    await gate;
    msg.respond('done');
  });
  const inFlight = nc.request('slow', '', { timeout: 5000 });
  await inHandler;
  const stopping = svc.stop();
  release();
  assert.equal((await inFlight).string(), 'done');
  assert.equal(await stopping, null);
  assert.equal(svc.isStopped, true);
  assert.equal(await svc.stopped, null);
  await assert.rejects(nc.request('slow', '', { timeout: 2000 }), NoRespondersError);
  assert.deepEqual(await all(njsClient().ping('node-stop')), []);

  // stop(err): stopped resolves with it.
  const other = await new Svcm(nc).add({ name: 'node-stop', version: '1.0.0' });
  const why = new Error('maintenance');
  assert.equal(await other.stop(why), why);
  assert.equal(await other.stopped, why);
});

test('reset zeroes the counters and restarts the clock', async () => {
  const svc = await new Svcm(nc).add({ name: 'node-reset', version: '1.0.0' });
  try {
    svc.addEndpoint('e', (err, msg) => msg.respondError(400, 'bad'));
    await nc.request('e', '');
    const before = await svc.stats();
    assert.deepEqual([before.endpoints[0].num_requests, before.endpoints[0].num_errors], [1, 1]);
    // `started` changes once the clock has moved past it.
    await eventually(() => Date.now() > Date.parse(before.started) + 1, 1000, 'the clock moved');
    svc.reset();
    const [after] = await all(njsClient().stats('node-reset'));
    assert.deepEqual(
      [after.endpoints[0].num_requests, after.endpoints[0].num_errors, after.endpoints[0].last_error, after.endpoints[0].processing_time],
      [0, 0, '', 0],
    );
    assert.ok(Date.parse(after.started) >= Date.parse(before.started));
    assert.notEqual(after.started, before.started);
  } finally {
    await svc.stop();
  }
});

test('bad names, versions, subjects and queue groups are refused before anything is sent', async () => {
  const svcm = new Svcm(nc);
  for (const config of [
    { name: '', version: '1.0.0' },
    { name: 'has space', version: '1.0.0' },
    { name: 'dot.ted', version: '1.0.0' },
    { name: 'ok', version: '1.0' },
    { name: 'ok', version: 'v1.0.0' },
    { name: 'ok', version: '' },
    { name: 'ok', version: '1.0.0', queue: 'bad queue' },
  ]) {
    await assert.rejects(svcm.add(config), ServiceConfigError, JSON.stringify(config));
  }
  assert.deepEqual(await all(njsClient().ping('ok')), []);

  const svc = await svcm.add({ name: 'node-bad-endpoints', version: '1.0.0' });
  try {
    assert.throws(() => svc.addEndpoint('bad name', () => {}), ServiceConfigError);
    assert.throws(() => svc.addEndpoint('x', { subject: 'a.>.b', handler: () => {} }), ServiceConfigError);
    assert.throws(() => svc.addGroup('g>'), ServiceConfigError);
    assert.deepEqual(svc.info().endpoints, []);
  } finally {
    await svc.stop();
  }
});

/** Resolves with `ep`'s library counters (iteratorStats) once `ok` holds for them. */
async function countsReach(ep, ok, what) {
  let st;
  await eventually(() => ok((st = ep.iteratorStats())), 10000, what, () => JSON.stringify(st));
  return st;
}

test('pendingMsgsLimit bounds the requests an endpoint holds unread: the rest are dropped, counted in STATS and told to the errorHandler; the kept ones are read in order', async () => {
  // The service's own connection: its 'error' event gets the slow consumer.
  const client = await connect({ servers: server.url });
  const slow = [];
  client.on('error', (e) => slow.push(e));
  const reported = [];
  const svc = await new Svcm(client).add({ name: 'node-limits', version: '1.0.0', errorHandler: (e) => reported.push(e) });
  try {
    const ep = svc.addEndpoint('held', { subject: 'limits.held', pendingMsgsLimit: 2, pendingBytesLimit: -1 });
    await client.flush();
    // An iterator holds as many as the limit, taken from the library but
    // not read (as a subscription's): two warm-ups fill it, unread.
    for (const w of ['w0', 'w1']) nc.publish('limits.held', w, { reply: 'limits.reply' });
    await countsReach(ep, (s) => s.delivered === 2 && s.pendingMsgs === 0, 'the iterator to hold the warm-ups');
    // From now on only the library's queue takes requests: 2 kept, 3 dropped.
    for (let i = 0; i < 5; i++) nc.publish('limits.held', `r${i}`, { reply: 'limits.reply' });
    await countsReach(ep, (s) => s.dropped === 3 && s.pendingMsgs === 2, '3 requests dropped and 2 queued');

    await eventually(() => reported.length > 0, 10000, 'the errorHandler told of the slow consumer');
    const told = reported[0];
    assert.ok(told instanceof ServiceError, String(told));
    assert.deepEqual([told.code, told.endpoint, told.subject], [0, 'held', 'limits.held']);
    assert.match(told.message, /^slow consumer/i);
    await eventually(() => slow.length > 0, 10000, "the connection's 'error' event");
    assert.ok(slow[0] instanceof SlowConsumerError, String(slow[0]));
    assert.equal(slow[0].subject, 'limits.held');

    const stats = ep.stats();
    assert.ok(stats.num_errors >= 1, JSON.stringify(stats));
    assert.match(stats.last_error, /^slow consumer/);
    // nats.js reads the same STATS.
    const [seen] = await all(njsClient().stats('node-limits'));
    assert.ok(seen.endpoints[0].num_errors >= 1 && seen.endpoints[0].last_error.startsWith('slow consumer'), JSON.stringify(seen));

    const got = [];
    for (let i = 0; i < 4; i++) {
      const { value, done } = await ep.next();
      assert.equal(done, false);
      got.push(value.string());
    }
    assert.deepEqual(got, ['w0', 'w1', 'r0', 'r1']);
    assert.deepEqual(ep.iteratorStats(), { ...ep.iteratorStats(), delivered: 4, dropped: 3, pendingMsgs: 0 });
  } finally {
    await svc.stop();
    await client.close();
  }
});

test('pending limits: 0, a fraction, NaN, an infinity or a string are refused; a service or a group takes none', async () => {
  const svcm = new Svcm(nc);
  await assert.rejects(svcm.add({ name: 'node-limits-svc', version: '1.0.0', pendingMsgsLimit: 2 }), ServiceConfigError);
  await assert.rejects(svcm.add({ name: 'node-limits-svc', version: '1.0.0', pendingBytesLimit: -1 }), ServiceConfigError);
  const svc = await svcm.add({ name: 'node-limits-bad', version: '1.0.0' });
  try {
    for (const [limit, refused] of [
      [0, ServiceConfigError],
      [1.5, ServiceConfigError],
      [NaN, ServiceConfigError], // JSON would send null: no limit
      [Infinity, ServiceConfigError],
      ['2', TypeError],
    ]) {
      for (const name of ['pendingMsgsLimit', 'pendingBytesLimit']) {
        assert.throws(() => svc.addEndpoint('e', { [name]: limit }), refused, `${name} ${String(limit)}`);
        assert.throws(() => svc.addGroup('g').addEndpoint('e', { [name]: limit }), refused, `${name} ${String(limit)} in a group`);
      }
    }
    // A group has a name and a queue group only (nats.js's addGroup).
    assert.throws(() => svc.addGroup('g', { pendingMsgsLimit: 2 }), ServiceConfigError);
    assert.deepEqual(svc.info().endpoints, []);
    // Negative: no limit.
    svc.addEndpoint('unlimited', { pendingMsgsLimit: -1, pendingBytesLimit: -5, handler: (err, msg) => msg.respond('ok') });
    assert.equal((await nc.request('unlimited', '')).string(), 'ok');
  } finally {
    await svc.stop();
  }
});

test('a statsHandler that never answers leaves its data out after the bounded wait; the event loop keeps running meanwhile', async () => {
  const svc = await new Svcm(nc).add({
    name: 'node-stalled-stats',
    version: '1.0.0',
    statsHandler: (endpoint) => (endpoint.name === 'stuck' ? new Promise(() => {}) : { ok: true }),
  });
  try {
    svc.addEndpoint('stuck', (err, msg) => msg.respond(''));
    svc.addEndpoint('fine', (err, msg) => msg.respond(''));
    await nc.flush();
    let ticks = 0;
    const ticker = setInterval(() => ticks++, 10);
    const asked = Date.now();
    const [stats] = await all(new njsServices.Svcm(njs).client({ strategy: 'stall', maxWait: 5000 }).stats('node-stalled-stats'));
    clearInterval(ticker);
    assert.ok(stats, 'a STATS answer');
    const byName = Object.fromEntries(stats.endpoints.map((e) => [e.name, e]));
    assert.equal('data' in byName.stuck, false);
    assert.deepEqual(byName.fine.data, { ok: true });
    // The answer waited for the bound on the library's thread, not on this one.
    assert.ok(Date.now() - asked >= 900, `answered after ${Date.now() - asked} ms`);
    assert.ok(ticks >= 20, `the event loop ran ${ticks} timer ticks meanwhile`);
  } finally {
    await svc.stop();
  }
});

test('ServiceVerb and the error headers are those of nats.js', () => {
  assert.deepEqual({ ...ServiceVerb }, { ...njsServices.ServiceVerb });
  assert.equal(ServiceErrorHeader, njsServices.ServiceErrorHeader);
  assert.equal(ServiceErrorCodeHeader, njsServices.ServiceErrorCodeHeader);
});
