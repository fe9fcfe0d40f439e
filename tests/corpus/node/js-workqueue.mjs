// A work-queue stream: acknowledged messages leave the stream.
import { connect } from "@nats-io/transport-node";
import { AckPolicy, RetentionPolicy, jetstream, jetstreamManager } from "@nats-io/jetstream";

const nc = await connect({ servers: process.env.NATS_URL });
const jsm = await jetstreamManager(nc);
await jsm.streams.add({ name: "WQ", subjects: ["wq.>"], retention: RetentionPolicy.Workqueue });
await jsm.consumers.add("WQ", { durable_name: "workers", ack_policy: AckPolicy.Explicit });
const js = jetstream(nc);
for (let i = 1; i <= 4; i++) await js.publish("wq.job", `job ${i}`);
let si = await jsm.streams.info("WQ");
console.log("queued", si.state.messages);
const c = await js.consumers.get("WQ", "workers");
const batch = await c.fetch({ max_messages: 3, expires: 2000 });
for await (const m of batch) {
  console.log("working on", m.string());
  await m.ackAck();
}
si = await jsm.streams.info("WQ");
console.log("left", si.state.messages);
try {
  await jsm.consumers.add("WQ", { durable_name: "second", ack_policy: AckPolicy.Explicit });
} catch (err) {
  console.log("second consumer:", err.name, err.code);
}
await nc.close();
