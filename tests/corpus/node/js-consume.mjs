// A durable pull consumer read with consume(), acking each message.
import { connect } from "@nats-io/transport-node";
import { AckPolicy, jetstream, jetstreamManager } from "@nats-io/jetstream";

const nc = await connect({ servers: process.env.NATS_URL });
const jsm = await jetstreamManager(nc);
await jsm.streams.add({ name: "TASKS", subjects: ["tasks.*"] });
const ci = await jsm.consumers.add("TASKS", { durable_name: "worker", ack_policy: AckPolicy.Explicit });
console.log("consumer", ci.name, ci.config.ack_policy, ci.num_pending);
const js = jetstream(nc);
for (let i = 1; i <= 5; i++) await js.publish(`tasks.${i % 2 ? "odd" : "even"}`, `task ${i}`);

const c = await js.consumers.get("TASKS", "worker");
const messages = await c.consume({ max_messages: 2 });
for await (const m of messages) {
  console.log(m.seq, m.subject, m.string(), "pending", m.info.pending, "redelivered", m.redelivered);
  m.ack();
  if (m.info.pending === 0) break;
}
console.log("processed", messages.getProcessed());
const info = await c.info();
console.log("delivered", info.delivered.consumer_seq, "ack floor", info.ack_floor.stream_seq >= 0, "pending", info.num_pending);
await nc.close();
