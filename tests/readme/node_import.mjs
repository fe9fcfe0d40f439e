// The README's lines that load natsio, as CommonJS (`require`, which a
// CommonJS module has and this ES module makes with createRequire) or as an
// ES module (the import, at the top level of this module). Either way
// connect and TimeoutError must be those of the one instance underneath,
// and work: a request nobody answers rejects with a TimeoutError.
import { createRequire } from 'node:module';
import * as natsio from 'natsio';
const require = createRequire(import.meta.url);
//@TOP@
//@BODY@

if (connect !== natsio.connect || TimeoutError !== natsio.TimeoutError ||
    natsio.default.connect !== connect || require('natsio').TimeoutError !== TimeoutError) {
  throw new Error('require and import gave different instances of natsio');
}
const nc = await connect({ servers: 'nats://127.0.0.1:4222' });
nc.subscribe('silent');                 // subscribed, never replies
await nc.flush();
let timedOut = false;
try {
  await nc.request('silent', 'anyone?', { timeout: 200 });
} catch (err) {
  if (!(err instanceof TimeoutError) || !(err instanceof natsio.NatsError)) throw err;
  timedOut = true;
}
if (!timedOut) throw new Error('a request nobody answers resolved');
await nc.close();
console.log('connect and TimeoutError: one instance, and they work');
