// An ordered consumer reads a stream in order without a durable consumer.
import { connect } from "@nats-io/transport-node";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";

const nc = await connect({ servers: process.env.NATS_URL });
const jsm = await jetstreamManager(nc);
await jsm.streams.add({ name: "LOG", subjects: ["log.>"] });
const js = jetstream(nc);
for (let i = 1; i <= 6; i++) await js.publish(`log.${i % 3}`, `entry ${i}`);
const oc = await js.consumers.get("LOG");
const messages = await oc.consume();
for await (const m of messages) {
  console.log(m.info.streamSequence, m.info.deliverySequence, m.subject, m.string());
  if (m.info.pending === 0) break;
}
const filtered = await js.consumers.get("LOG", { filter_subjects: ["log.1"] });
const batch = await filtered.fetch({ max_messages: 2, expires: 2000 });
for await (const m of batch) console.log("filtered", m.subject, m.string());
const next = await js.consumers.get("LOG", { deliver_policy: "last" });
const last = await next.next({ expires: 2000 });
console.log("last:", last?.string());
await nc.close();
