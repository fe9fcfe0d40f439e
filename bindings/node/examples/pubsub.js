'use strict';
// A short tour: publish/subscribe, a request/reply service, and requestMany.
//   node examples/pubsub.js [nats://127.0.0.1:4222]
const nats = require('..');

async function main() {
  const nc = await nats.connect({ servers: process.argv[2] || 'nats://127.0.0.1:4222', name: 'pubsub-example' });
  nc.on('error', (err) => console.error('async error:', err.code, err.message));

  // Callback subscription: a service answering requests.
  nc.subscribe('time', { callback: (_err, msg) => msg.respond(new Date().toISOString()) });

  // Iterator subscription: read greetings until three arrived.
  const greetings = nc.subscribe('greet.*');
  const reader = (async () => {
    let n = 0;
    for await (const m of greetings) {
      console.log(`[${m.subject}] ${m.string()}`, m.headers ? Object.fromEntries(m.headers) : '');
      if (++n === 3) break; // breaking out unsubscribes
    }
  })();
  await nc.flush();

  nc.publish('greet.joe', 'hello joe');
  nc.publish('greet.sue', Buffer.from('hello sue'));
  nc.publish('greet.bob', 'hello bob', { headers: { Lang: 'en' } });
  await reader;

  const reply = await nc.request('time', '', { timeout: 1000 });
  console.log('the time is', reply.string());

  try {
    await nc.request('nobody.here', 'anyone?', { timeout: 1000 });
  } catch (err) {
    console.log('as expected:', err.name, err.code);
  }

  for await (const m of nc.requestMany('time', '', { maxMessages: 1, timeout: 1000 })) {
    console.log('requestMany reply:', m.string());
  }

  console.log('stats:', nc.stats());
  await nc.drain(); // lets the service finish, then closes; the process exits on its own
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
