// The README's pull-consumer fragments: js is a JetStream context of a
// connected client; the stream ORDERS holds 15 orders (orders.1 ..
// orders.15) and the KV bucket `config` holds app.color, users.joe and
// other.key. The application's functions: handle(m) (or handle(subject,
// data, headers)) records an order, done() is true once every order but
// the one next() took was handled, apply(key, operation, value) records a
// watched entry. Afterwards every order must have been handled once and
// acked, and the watch must have seen exactly the keys it asked for.
import { connect } from 'natsio';
//@TOP@
setTimeout(() => { console.error('still running after 60 s'); process.exit(1); }, 60000).unref();
const nc = await connect({ servers: 'nats://127.0.0.1:4222' });
const js = nc.jetstream();
await js.streams.add({ name: 'ORDERS', subjects: ['orders.>'] });
for (let i = 1; i <= 15; i++) await js.publish(`orders.${i}`, `order ${i}`);
const kv = await js.kv.create({ bucket: 'config' });
await kv.put('app.color', 'blue');
await kv.put('users.joe', 'admin');
await kv.put('other.key', 'not watched');

const handled = [];
function handle(m) {
  handled.push(typeof m === 'string' ? m : m.subject);
}
const done = () => handled.length === 14;
const applied = [];
function apply(key, operation, value) {
  applied.push(`${key} ${operation} ${value}`);
}
//@BODY@

function check(ok, what) {
  if (!ok) throw new Error(what);
}
const all = [...handled, one.subject].sort();
const want = Array.from({ length: 15 }, (_, i) => `orders.${i + 1}`).sort();
check(JSON.stringify(all) === JSON.stringify(want), `orders handled: ${all}`);
const ci = await js.consumers.info('ORDERS', 'work');
check(ci.num_pending === 0 && ci.num_ack_pending === 0, `consumer: ${ci.num_pending} pending, ${ci.num_ack_pending} unacked`);
check(JSON.stringify(applied) === JSON.stringify(['app.color PUT blue', 'users.joe PUT admin']), `watched: ${applied}`);
await nc.close();
console.log(`15 orders handled and acked; watched ${applied.length} keys`);
