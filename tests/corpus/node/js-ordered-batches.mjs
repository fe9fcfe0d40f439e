// An ordered consumer read in batches: each fetch goes on after the last.
import { connect } from "@nats-io/transport-node";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";

const nc = await connect({ servers: process.env.NATS_URL });
const jsm = await jetstreamManager(nc);
await jsm.streams.add({ name: "SEQ", subjects: ["seq.*"] });
const js = jetstream(nc);
for (let i = 0; i < 10; i++) await js.publish(`seq.${i}`, `${i}`);
const c = await js.consumers.get("SEQ");
for (let i = 0; i < 3; i++) {
  const messages = await c.fetch({ max_messages: 4, expires: 2000 });
  const got = [];
  for await (const m of messages) got.push(m.string());
  console.log(`batch ${i + 1}: ${got.join(",")} (${messages.getProcessed()} processed)`);
}
const again = await js.consumers.get("SEQ", { filter_subjects: "seq.7" });
const m = await again.next({ expires: 2000 });
console.log("seq.7:", m?.string(), m?.info.streamSequence);
const nothing = await again.next({ expires: 1000 });
console.log("after it:", nothing);
await nc.close();
