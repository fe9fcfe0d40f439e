// fetch(): a bounded batch, then an empty batch when the request expires.
import { connect } from "@nats-io/transport-node";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";

const nc = await connect({ servers: process.env.NATS_URL });
const jsm = await jetstreamManager(nc);
await jsm.streams.add({ name: "BATCH", subjects: ["batch.>"] });
await jsm.consumers.add("BATCH", { durable_name: "b", ack_policy: "explicit" });
const js = jetstream(nc);
for (let i = 1; i <= 5; i++) await js.publish(`batch.${i}`, `payload ${i}`);
const c = await js.consumers.get("BATCH", "b");
for (let round = 1; round <= 3; round++) {
  const iter = await c.fetch({ max_messages: 2, expires: 1000 });
  const got = [];
  for await (const m of iter) {
    got.push(`${m.subject}/${m.string()}`);
    m.ack();
  }
  console.log(`round ${round}:`, got.join(", "));
}
const last = await c.fetch({ max_messages: 10, expires: 1000 });
let n = 0;
for await (const m of last) {
  n++;
  m.ack();
}
console.log("last batch:", n);
const empty = await c.fetch({ max_messages: 10, expires: 1000 });
let e = 0;
for await (const _m of empty) e++;
console.log("empty batch:", e);
await nc.close();
