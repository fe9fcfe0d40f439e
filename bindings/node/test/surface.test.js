'use strict';
// The nats.js facades' surface against nats.js 3.x's (the @nats-io packages
// pinned in package.json): (a) each facade module's exported names against
// its package's, from CommonJS and ES modules; (b) the members programs use
// on the objects they get (NatsConnection, Msg, Subscription, JetStream
// client and manager, Consumer, JsMsg, Kvm/KV, Objm/ObjectStore,
// Svcm/Service...): the members the packages' .d.ts declare (read through
// TypeScript's checker, inherited ones included), each looked up on a live
// object of ours built against a real nats-server. nats.js's own live
// objects are checked to have every declared member, so that the list read
// from the .d.ts is the one programs meet.
//
// The names that do not resolve are listed, each with its reason, in
// test/fixtures/nats-js-surface-gaps.txt: the test fails on a missing name
// that is not listed (a gap nobody chose) and on a listed name that
// resolves (the list is out of date), so the list is always the exact
// answer to "what of nats.js can a program not use here".
const { test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const ts = require('typescript');
const { useJetStream } = require('./jetstream-env');

const GAPS_FILE = path.join(__dirname, 'fixtures', 'nats-js-surface-gaps.txt');

/** The facades (natsio/<subpath>) and the packages they stand in for. */
const MODULES = {
  'transport-node': '@nats-io/transport-node',
  'nats-core': '@nats-io/nats-core',
  jetstream: '@nats-io/jetstream',
  kv: '@nats-io/kv',
  obj: '@nats-io/obj',
  services: '@nats-io/services',
};

/** The declared types whose members are checked: [package key, type name,
 * the live object's name in liveObjects()]. */
const TYPES = [
  ['nats-core', 'NatsConnection', 'nc'],
  ['nats-core', 'Msg', 'msg'],
  ['nats-core', 'MsgHdrs', 'headers'],
  ['nats-core', 'Subscription', 'sub'],
  ['nats-core', 'QueuedIterator', 'watch'],
  ['jetstream', 'JetStreamClient', 'js'],
  ['jetstream', 'JetStreamManager', 'jsm'],
  ['jetstream', 'StreamAPI', 'jsm.streams'],
  ['jetstream', 'ConsumerAPI', 'jsm.consumers'],
  ['jetstream', 'DirectStreamAPI', 'jsm.direct'],
  ['jetstream', 'Lister', 'lister'],
  ['jetstream', 'StoredMsg', 'storedMsg'],
  ['jetstream', 'Batch', 'batch'],
  ['jetstream', 'Consumers', 'js.consumers'],
  ['jetstream', 'Stream', 'stream'],
  ['jetstream', 'Consumer', 'consumer'],
  ['jetstream', 'PushConsumer', 'pushConsumer'],
  ['jetstream', 'ConsumerMessages', 'messages'],
  ['jetstream', 'JsMsg', 'jsMsg'],
  ['kv', 'Kvm', 'kvm'],
  ['kv', 'KV', 'kv'],
  ['kv', 'KvEntry', 'entry'],
  ['kv', 'KvWatchEntry', 'watchEntry'],
  ['kv', 'KvStatus', 'kvStatus'],
  ['obj', 'Objm', 'objm'],
  ['obj', 'ObjectStore', 'objectStore'],
  ['obj', 'ObjectResult', 'objectResult'],
  ['obj', 'ObjectInfo', 'objectInfo'],
  ['obj', 'ObjectStoreStatus', 'objectStoreStatus'],
  ['services', 'Svcm', 'svcm'],
  ['services', 'Service', 'service'],
  ['services', 'ServiceGroup', 'serviceGroup'],
  ['services', 'ServiceMsg', 'serviceMsg'],
  ['services', 'ServiceClient', 'serviceClient'],
];

/** A name a program can use: not private by convention or by language. */
const isPublic = (name) => !name.startsWith('_') && !name.startsWith('#');

/** The public members of each TYPES entry as the packages' .d.ts declare
 * them (inherited ones included; private and protected class members not),
 * keyed "<package key>.<type>": [{name, optional}]. */
function declaredMembers() {
  const keys = [...new Set(TYPES.map(([mod]) => mod))];
  const roots = keys.map((k) => require.resolve(`${MODULES[k]}/internal`).replace(/\.js$/, '.d.ts'));
  const program = ts.createProgram(roots, { noEmit: true, skipLibCheck: true, types: [] });
  const checker = program.getTypeChecker();
  const hidden = ts.ModifierFlags.Private | ts.ModifierFlags.Protected;
  const out = new Map();
  for (const [mod, name] of TYPES) {
    const moduleSymbol = checker.getSymbolAtLocation(program.getSourceFile(roots[keys.indexOf(mod)]));
    let sym = checker.getExportsOfModule(moduleSymbol).find((s) => s.name === name);
    assert.ok(sym, `${MODULES[mod]} declares ${name}`);
    if (sym.flags & ts.SymbolFlags.Alias) sym = checker.getAliasedSymbol(sym);
    const members = checker
      .getPropertiesOfType(checker.getDeclaredTypeOfSymbol(sym))
      .filter((p) => !(p.declarations ?? []).some((d) => ts.getCombinedModifierFlags(d) & hidden))
      .filter((p) => isPublic(p.name))
      .map((p) => ({ name: p.name, optional: (p.flags & ts.SymbolFlags.Optional) !== 0 }));
    assert.ok(members.length > 0, `${name} has members`);
    out.set(`${mod}.${name}`, members);
  }
  return out;
}

/** Live objects of `scope`'s client ('@nats-io' or 'natsio'), one of each
 * TYPES entry, on the server at `url`; names carry `tag` so that both
 * clients share the server. close() ends them. */
async function liveObjects(scope, url, tag) {
  const { connect, headers } = require(`${scope}/transport-node`);
  const { jetstream, jetstreamManager } = require(`${scope}/jetstream`);
  const { Kvm } = require(`${scope}/kv`);
  const { Objm } = require(`${scope}/obj`);
  const { Svcm } = require(`${scope}/services`);
  const o = {};
  o.nc = await connect({ servers: url });
  const nc = o.nc;
  try {
    o.sub = nc.subscribe(`surface.${tag}.msg`, { max: 1 });
    const h = headers();
    h.set('X', 'y');
    nc.publish(`surface.${tag}.msg`, 'm', { headers: h, reply: `surface.${tag}.reply` });
    for await (const m of o.sub) o.msg = m;
    o.headers = o.msg.headers;

    o.js = jetstream(nc);
    o.jsm = await jetstreamManager(nc);
    o['jsm.streams'] = o.jsm.streams;
    o['jsm.consumers'] = o.jsm.consumers;
    o['js.consumers'] = o.js.consumers;
    const stream = `SURFACE_${tag}`;
    await o.jsm.streams.add({ name: stream, subjects: [`surface.${tag}.js`], allow_atomic: true, allow_direct: true });
    o['jsm.direct'] = o.jsm.direct;
    o.lister = o.jsm.streams.list();
    await o.jsm.consumers.add(stream, { durable_name: 'c', ack_policy: 'explicit' });
    await o.jsm.consumers.add(stream, { durable_name: 'p', ack_policy: 'explicit', deliver_subject: `surface.${tag}.push` });
    o.pushConsumer = await o.js.consumers.getPushConsumer(stream, 'p');
    await o.js.publish(`surface.${tag}.js`, 'one');
    await o.js.publish(`surface.${tag}.js`, 'two');
    o.stream = await o.jsm.streams.get(stream);
    o.storedMsg = await o.jsm.streams.getMessage(stream, { seq: 1 });
    o.batch = await o.js.startBatch(`surface.${tag}.js`, 'b1');
    await o.batch.commit(`surface.${tag}.js`, 'b2');
    o.consumer = await o.js.consumers.get(stream, 'c');
    o.jsMsg = await o.consumer.next();
    o.messages = await o.consumer.consume({ max_messages: 1 });
    for await (const m of o.messages) {
      m.ack();
      break;
    }

    o.kvm = new Kvm(nc);
    o.kv = await o.kvm.create(`surface_${tag}`);
    await o.kv.put('k', 'v');
    o.entry = await o.kv.get('k');
    o.kvStatus = await o.kv.status();
    o.watch = await o.kv.watch();
    for await (const e of o.watch) {
      o.watchEntry = e;
      break;
    }

    o.objm = new Objm(nc);
    o.objectStore = await o.objm.create(`surface_${tag}`);
    await o.objectStore.putBlob({ name: 'o' }, new Uint8Array([1, 2, 3]));
    o.objectInfo = await o.objectStore.info('o');
    o.objectStoreStatus = await o.objectStore.status();
    o.objectResult = await o.objectStore.get('o');
    for await (const _ of o.objectResult.data);

    o.svcm = new Svcm(nc);
    o.service = await o.svcm.add({ name: `surface_${tag}`, version: '1.0.0' });
    const serviceMsg = new Promise((resolve) => {
      o.service.addEndpoint(`surface_${tag}_ep`, {
        handler: (_err, m) => {
          m.respond('ok');
          resolve(m);
        },
      });
    });
    await nc.request(`surface_${tag}_ep`, 'x');
    o.serviceMsg = await serviceMsg;
    o.serviceClient = o.svcm.client();
    o.serviceGroup = o.service.addGroup('g');
  } catch (e) {
    await nc.close();
    throw e;
  }
  o.close = async () => {
    await o.service?.stop();
    await nc.close();
  };
  return o;
}

/** The gaps file: key -> reason. Each line "key  # reason"; a line without
 * a reason is an error (every gap is chosen). */
function readGaps() {
  const listed = new Map();
  for (const [i, raw] of fs.readFileSync(GAPS_FILE, 'utf8').split('\n').entries()) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const m = /^(\S+)\s+#\s*(\S.*)$/.exec(line);
    assert.ok(m, `${path.basename(GAPS_FILE)}:${i + 1}: "key  # reason" expected, got: ${line}`);
    assert.ok(!listed.has(m[1]), `${m[1]} is listed twice`);
    listed.set(m[1], m[2]);
  }
  return listed;
}

/** Fails on missing names that are not listed and on listed names of this
 * kind ("module.export" has one dot, "module.Type.member" two) that
 * resolve. */
function compareWithGaps(t, missing, checked, dots) {
  const listed = [...readGaps().keys()].filter((k) => k.split('.').length === dots + 1);
  t.diagnostic(`nats.js names checked: ${checked}, resolved by the facades: ${checked - missing.length}, listed as gaps: ${listed.length}`);
  const unlisted = missing.filter((k) => !listed.includes(k)).sort();
  const stale = listed.filter((k) => !missing.includes(k)).sort();
  const problems = [];
  if (unlisted.length > 0) {
    problems.push(`${unlisted.length} nats.js names do not resolve in the facades and are not in ${path.basename(GAPS_FILE)} (add them, or a reason they may stay missing):\n${unlisted.join('\n')}`);
  }
  if (stale.length > 0) {
    problems.push(`${stale.length} names in ${path.basename(GAPS_FILE)} resolve now; remove them:\n${stale.join('\n')}`);
  }
  assert.equal(problems.join('\n'), '', `${checked} names checked`);
}

// A JetStream server for this file (both clients connect to it).
let server;
useJetStream('natsio-surface-', (env) => {
  server = env.server;
});

test("each facade module exports nats.js's names (from CommonJS and ES modules), except the listed gaps", async (t) => {
  const missing = [];
  let checked = 0;
  for (const [sub, pkg] of Object.entries(MODULES)) {
    const cjs = require(`natsio/${sub}`);
    const esm = await import(`natsio/${sub}`);
    for (const name of Object.keys(require(pkg)).filter(isPublic)) {
      checked++;
      if (!(name in cjs) || !(name in esm)) missing.push(`${sub}.${name}`);
    }
  }
  compareWithGaps(t, missing, checked, 1);
});

test("the objects a program gets have nats.js's members (as its .d.ts declare and its live objects have), except the listed gaps", async (t) => {
  const declared = declaredMembers();
  const theirs = await liveObjects('@nats-io', server.url, 'theirs');
  const ours = await liveObjects('natsio', server.url, 'ours');
  try {
    const missing = [];
    let checked = 0;
    for (const [mod, type, live] of TYPES) {
      // An optional member counts where nats.js's object has it.
      const declaredHere = declared.get(`${mod}.${type}`);
      const notOnTheirs = declaredHere.filter((m) => !m.optional && !(m.name in theirs[live])).map((m) => m.name);
      assert.deepEqual(notOnTheirs, [], `nats.js's ${type} has every member its .d.ts declares`);
      const members = declaredHere.filter((m) => !m.optional || m.name in theirs[live]).map((m) => m.name);
      for (const m of members) {
        checked++;
        if (!(m in ours[live])) missing.push(`${mod}.${type}.${m}`);
      }
    }
    compareWithGaps(t, missing, checked, 2);
  } finally {
    await theirs.close();
    await ours.close();
  }
});
