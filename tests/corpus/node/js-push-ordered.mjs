// An ordered push consumer: every message of a filtered subject, in order,
// without creating a consumer by hand.
import { connect } from "@nats-io/transport-node";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";

const nc = await connect({ servers: process.env.NATS_URL });
const jsm = await jetstreamManager(nc);
await jsm.streams.add({ name: "METRICS", subjects: ["metrics.>"] });
const js = jetstream(nc);
for (let i = 1; i <= 6; i++) await js.publish(`metrics.${i % 2 ? "cpu" : "mem"}`, `${i * 10}`);

const c = await js.consumers.getPushConsumer("METRICS", { filter_subjects: "metrics.cpu" });
console.log("push", c.isPushConsumer());
const messages = await c.consume();
for await (const m of messages) {
  console.log(m.seq, m.subject, m.string(), "pending", m.info.pending);
  if (m.info.pending === 0) break;
}
await nc.close();
