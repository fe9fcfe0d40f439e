// An empty queue name is no queue group (as nats.js's CLI examples pass it).
import { connect } from "@nats-io/transport-node";

const nc = await connect({ servers: process.env.NATS_URL });
const queue = process.env.QUEUE ?? "";
const s1 = nc.subscribe("greet", { queue, max: 1 });
const s2 = nc.subscribe("greet", { queue, max: 1 });
nc.publish("greet", "hi");
for (const s of [s1, s2]) {
  for await (const m of s) console.log(s.getSubject(), m.string());
}
await nc.close();
