// Key-Value basics: put, get, update, delete; null for a missing key.
import { connect } from "@nats-io/transport-node";
import { Kvm } from "@nats-io/kv";

const nc = await connect({ servers: process.env.NATS_URL });
const kvm = new Kvm(nc);
const kv = await kvm.create("profiles", { history: 5 });
let rev = await kv.put("ann.color", "blue");
console.log("put rev", rev);
let e = await kv.get("ann.color");
console.log(e.bucket, e.key, e.string(), e.revision, e.operation, e.length);
rev = await kv.update("ann.color", "green", rev);
console.log("update rev", rev);
try {
  await kv.update("ann.color", "red", 1);
} catch (err) {
  console.log("update with a stale revision:", err.name, err.code);
}
console.log("missing:", await kv.get("bob.color"));
rev = await kv.create("bob.color", "red");
console.log("create rev", rev);
try {
  await kv.create("bob.color", "pink");
} catch (err) {
  console.log("create again:", err.name, err.code, err.message);
}
await kv.delete("bob.color");
e = await kv.get("bob.color");
console.log("after delete:", e?.operation, e?.length, e?.revision);
rev = await kv.create("bob.color", "pink");
console.log("created again rev", rev);
e = await kv.get("ann.color", { revision: 1 });
console.log("revision 1:", e?.string());
await kv.purge("ann.color");
e = await kv.get("ann.color");
console.log("after purge:", e?.operation);
await nc.close();
