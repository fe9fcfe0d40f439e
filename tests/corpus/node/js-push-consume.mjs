// A durable push consumer: the server delivers to a deliver subject, and
// consume() reads it, first as an iterator, then with a callback.
import { connect, createInbox } from "@nats-io/transport-node";
import { AckPolicy, jetstream, jetstreamManager } from "@nats-io/jetstream";

const nc = await connect({ servers: process.env.NATS_URL });
const jsm = await jetstreamManager(nc);
await jsm.streams.add({ name: "EVENTS", subjects: ["events.>"] });
await jsm.consumers.add("EVENTS", {
  durable_name: "audit",
  ack_policy: AckPolicy.Explicit,
  deliver_subject: createInbox(),
});
const js = jetstream(nc);
for (let i = 1; i <= 4; i++) await js.publish(`events.${i % 2 ? "login" : "logout"}`, `event ${i}`);

const c = await js.consumers.getPushConsumer("EVENTS", "audit");
console.log("push", c.isPushConsumer(), "pull", c.isPullConsumer());
const messages = await c.consume();
for await (const m of messages) {
  console.log(m.seq, m.subject, m.string(), "pending", m.info.pending, "redelivered", m.redelivered);
  m.ack();
  if (m.info.pending === 0) break;
}
await messages.closed();

// Again, with a callback: only what is published now.
let n = 0;
let done;
const finished = new Promise((resolve) => (done = resolve));
const cb = await c.consume({
  callback: (m) => {
    console.log("callback", m.subject, m.string());
    m.ack();
    if (++n === 2) done();
  },
});
await js.publish("events.login", "event 5");
await js.publish("events.logout", "event 6");
await finished;
cb.stop();
await cb.closed();

try {
  await jsm.consumers.add("EVENTS", { durable_name: "puller", ack_policy: AckPolicy.Explicit });
  await js.consumers.getPushConsumer("EVENTS", "puller");
} catch (err) {
  console.log("pull consumer:", err.message);
}
const info = await c.info();
console.log("delivered", info.delivered.stream_seq, "ack pending", info.num_ack_pending >= 0);
await nc.close();
