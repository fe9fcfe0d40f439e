// nak() asks for redelivery; the message comes back marked redelivered.
import { connect } from "@nats-io/transport-node";
import { AckPolicy, jetstream, jetstreamManager } from "@nats-io/jetstream";

const nc = await connect({ servers: process.env.NATS_URL });
const jsm = await jetstreamManager(nc);
await jsm.streams.add({ name: "RETRY", subjects: ["retry"] });
await jsm.consumers.add("RETRY", { durable_name: "r", ack_policy: AckPolicy.Explicit, max_deliver: 3 });
const js = jetstream(nc);
await js.publish("retry", "flaky");
const c = await js.consumers.get("RETRY", "r");
for (let attempt = 1; attempt <= 3; attempt++) {
  const m = await c.next({ expires: 2000 });
  console.log("attempt", attempt, m.string(), "redelivered", m.redelivered, "count", m.info.deliveryCount, "seq", m.info.streamSequence, m.info.deliverySequence);
  if (attempt < 3) m.nak();
  else m.term();
}
const none = await c.next({ expires: 1000 });
console.log("after term:", none);
await nc.close();
