// next(): one message at a time; null once nothing arrives in time.
import { connect } from "@nats-io/transport-node";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";

const nc = await connect({ servers: process.env.NATS_URL });
const jsm = await jetstreamManager(nc);
await jsm.streams.add({ name: "ONE", subjects: ["one"] });
await jsm.consumers.add("ONE", { durable_name: "n", ack_policy: "explicit" });
const js = jetstream(nc);
await js.publish("one", "a");
await js.publish("one", "b");
const c = await js.consumers.get("ONE", "n");
for (;;) {
  const m = await c.next({ expires: 1000 });
  if (m === null) {
    console.log("no more messages");
    break;
  }
  console.log(m.seq, m.string(), m.info.deliverySequence, m.info.pending);
  await m.ackAck();
}
await nc.close();
