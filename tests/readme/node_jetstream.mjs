// The README's JetStream and Key-Value fragment: nc is a connected client
// (the server runs JetStream). Afterwards the stream, the acks and the
// bucket must hold what the comments say, and the closed context and
// bucket handle must reject later calls.
import { connect, IllegalStateError } from 'natsio';
//@TOP@
setTimeout(() => { console.error('still running after 60 s'); process.exit(1); }, 60000).unref();
const nc = await connect({ servers: 'nats://127.0.0.1:4222' });
//@BODY@

function check(ok, what) {
  if (!ok) throw new Error(what);
}
check(ack.stream === 'ORDERS' && ack.seq === 1 && ack.duplicate === false, `ack ${JSON.stringify(ack)}`);
const settled = await Promise.all(acks);
check(settled.length === 1000 && settled.at(-1).seq === 1001, `last async ack ${JSON.stringify(settled.at(-1))}`);
check(m.subject === 'orders.1' && m.seq === 1 && m.string() === 'payload' && m.headers.first('X-Trace') === 't1',
      `getMessage gave ${m.subject} ${m.seq}`);
check(e.key === 'app.color' && e.string() === 'blue' && e.operation === 'PUT', `kv.get gave ${e.key} ${e.string()}`);
check(kv.isClosed && js.isClosed, 'kv and js are not closed');
for (const late of [() => kv.get('app.color'), () => js.streams.info('ORDERS')]) {
  await late().then(() => check(false, 'a call after close() resolved'),
                    (err) => check(err instanceof IllegalStateError, `after close(): ${err}`));
}
const js2 = nc.jetstream();
const kv2 = await js2.kv.bind('config');
check((await kv2.get('app.color')).string() === 'red', 'kv.update did not store red');
check((await kv2.history('app.color')).length === 2, 'two revisions expected');
check((await js2.streams.info('ORDERS')).config.max_msgs === 1000000, 'the stream update did not apply');
await nc.close();
console.log('JetStream and KV fragment: acks, stream, bucket as described');
