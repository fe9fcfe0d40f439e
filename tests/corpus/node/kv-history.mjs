// The history of a key, and of a whole bucket.
import { connect } from "@nats-io/transport-node";
import { Kvm } from "@nats-io/kv";

const nc = await connect({ servers: process.env.NATS_URL });
const kv = await new Kvm(nc).create("hist", { history: 10 });
for (const v of ["one", "two", "three"]) await kv.put("counter", v);
await kv.put("other", "x");
await kv.delete("counter");
const h = await kv.history({ key: "counter" });
for await (const e of h) console.log("counter", e.revision, e.operation, JSON.stringify(e.string()));
const all = await kv.history();
let n = 0;
for await (const e of all) {
  n++;
  console.log("all", e.key, e.revision, e.operation);
}
console.log("entries", n);
const none = await kv.history({ key: "nothing" });
let m = 0;
for await (const _e of none) m++;
console.log("nothing has", m);
await nc.close();
