'use strict';
// Consumer pause / resume interoperability with nats.js (@nats-io/jetstream)
// over the same nats-server: a consumer nats.js's JetStream manager paused
// shows paused here, and one this binding paused shows paused to nats.js,
// which also lists the consumers this binding made.
const { test, after } = require('node:test');
const assert = require('node:assert/strict');
const natsjs = require('@nats-io/transport-node');
const { jetstreamManager } = require('@nats-io/jetstream');
const { useJetStream } = require('./jetstream-env');

let server;
let js;
useJetStream('natsio-node-consumer-interop-', (env) => ({ server, js } = env));

let njs;
after(() => njs?.close());

test('nats.js pauses a consumer and this binding sees it paused, and the other way round', async () => {
  njs = await natsjs.connect({ servers: server.url });
  const jsm = await jetstreamManager(njs);
  await js.streams.add({ name: 'CPI', subjects: ['cpi.>'], storage: 'memory' });
  try {
    await js.consumers.add('CPI', { durable_name: 'theirs', ack_policy: 'explicit' });
    await js.consumers.add('CPI', { durable_name: 'ours', ack_policy: 'explicit' });
    const hour = new Date(Date.now() + 3600_000);

    // nats.js pauses; this binding reads the info and resumes.
    const theirPause = await jsm.consumers.pause('CPI', 'theirs', hour);
    assert.equal(theirPause.paused, true);
    const seen = await js.consumers.info('CPI', 'theirs');
    assert.equal(seen.paused, true);
    assert.ok(seen.pause_remaining > 59 * 60 * 1e9);
    assert.equal(Date.parse(seen.config.pause_until), Date.parse(theirPause.pause_until));
    assert.equal((await js.consumers.resume('CPI', 'theirs')).paused, false);
    assert.ok(!(await jsm.consumers.info('CPI', 'theirs')).paused);

    // This binding pauses; nats.js reads the info and lists it paused, then resumes.
    const ours = await js.consumers.pause('CPI', 'ours', hour);
    assert.equal(ours.paused, true);
    const theirView = await jsm.consumers.info('CPI', 'ours');
    assert.equal(theirView.paused, true);
    assert.ok(theirView.pause_remaining > 59 * 60 * 1e9);
    assert.equal(Date.parse(theirView.config.pause_until), Date.parse(ours.pause_until));
    const listed = {};
    for await (const ci of jsm.consumers.list('CPI')) listed[ci.name] = ci;
    assert.deepEqual(Object.keys(listed).sort(), ['ours', 'theirs']);
    assert.equal(listed.ours.paused, true);
    assert.ok(!listed.theirs.paused);
    const ourList = Object.fromEntries((await js.consumers.list('CPI')).map((ci) => [ci.name, ci]));
    assert.equal(ourList.ours.paused, true);
    assert.ok(!ourList.theirs.paused);
    assert.equal((await jsm.consumers.resume('CPI', 'ours')).paused, false);
    assert.ok(!(await js.consumers.info('CPI', 'ours')).paused);
  } finally {
    await js.streams.delete('CPI');
  }
});
