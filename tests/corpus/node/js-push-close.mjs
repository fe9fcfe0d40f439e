// Closing a push consume while messages wait to be read: close() stops the
// delivery, and the messages already received are still yielded (and
// acked), so the server has nothing to redeliver.
import { connect, createInbox } from "@nats-io/transport-node";
import { AckPolicy, jetstream, jetstreamManager } from "@nats-io/jetstream";

const total = 20;
const nc = await connect({ servers: process.env.NATS_URL });
const jsm = await jetstreamManager(nc);
await jsm.streams.add({ name: "TASKS", subjects: ["tasks.>"] });
await jsm.consumers.add("TASKS", {
  durable_name: "worker",
  ack_policy: AckPolicy.Explicit,
  ack_wait: 30_000_000_000,
  deliver_subject: createInbox(),
});
const js = jetstream(nc);
for (let i = 0; i < total; i++) await js.publish("tasks.new", `task ${i}`);

// Polls the consumer's info until `pred` holds (acks are asynchronous).
async function until(pred) {
  for (let i = 0; i < 1000; i++) {
    const ci = await jsm.consumers.info("TASKS", "worker");
    if (pred(ci)) return ci;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error("timed out");
}

const c = await js.consumers.getPushConsumer("TASKS", "worker");
const messages = await c.consume();
await until((ci) => ci.num_ack_pending === total);
let handled = 0;
let closing = null;
for await (const m of messages) {
  m.ack();
  handled++;
  if (closing === null) closing = messages.close();
}
await closing;
console.log("handled", handled, "of", total);
const ci = await until((ci) => ci.num_ack_pending === 0);
console.log("redelivered", ci.num_redelivered, "pending", ci.num_pending);
await nc.close();
