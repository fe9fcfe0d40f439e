'use strict';
// The WebSocket transport from Node: a ws:// URL is all it takes (issue 42).
const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const nats = require('..');
const { startConfiguredServer, freePort } = require('./server');

let server;
let wsUrl;
before(async () => {
  const wsPort = await freePort();
  server = await startConfiguredServer(`websocket {\n listen: "127.0.0.1:${wsPort}"\n no_tls: true\n}\n`);
  wsUrl = `ws://127.0.0.1:${wsPort}`;
});
after(async () => {
  await server?.stop();
});

test('a ws:// client exchanges messages and requests with a nats:// client', async () => {
  const ws = await nats.connect({ servers: wsUrl });
  const tcp = await nats.connect({ servers: server.url });
  try {
    assert.equal(ws.connectedUrl, wsUrl);
    const sub = ws.subscribe('node.ws');
    await ws.flush();
    const big = Buffer.alloc(300000, 7);
    tcp.publish('node.ws', 'small');
    tcp.publish('node.ws', big);
    const got = [];
    for await (const m of sub) {
      got.push(Buffer.from(m.data));
      if (got.length === 2) break;
    }
    assert.equal(got[0].toString(), 'small');
    assert.ok(got[1].equals(big));

    tcp.subscribe('node.echo', { callback: (_err, m) => m.respond(m.data) });
    await tcp.flush();
    const reply = await ws.request('node.echo', 'over ws', { timeout: 5000 });
    assert.equal(reply.string(), 'over ws');
  } finally {
    await ws.close();
    await tcp.close();
  }
});

test('a ws:// URL on a NATS port fails with WebsocketError', async () => {
  await assert.rejects(
    nats.connect({ servers: `ws://127.0.0.1:${server.port}`, reconnect: false }),
    (e) => e instanceof nats.WebsocketError && e instanceof nats.ProtocolError,
  );
});
