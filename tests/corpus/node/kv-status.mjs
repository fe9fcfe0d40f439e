// Bucket status, opening a bucket, listing and destroying buckets.
import { connect } from "@nats-io/transport-node";
import { jetstream } from "@nats-io/jetstream";
import { Kvm } from "@nats-io/kv";

const nc = await connect({ servers: process.env.NATS_URL });
const kvm = new Kvm(jetstream(nc));
const kv = await kvm.create("settings", { history: 3, description: "app settings" });
await kv.put("a", "1");
await kv.put("b", "2");
await kv.put("a", "3");
const s = await kv.status();
console.log(s.bucket, s.values, s.history, s.backingStore, s.storage, s.replicas, s.description);
const again = await kvm.open("settings");
console.log("opened:", (await again.get("a"))?.string());
const same = await kvm.create("settings", { history: 10 }); // exists: opened as it is
console.log("created again, history:", (await same.status()).history);
await kvm.create("other");
const buckets = [];
for await (const st of kvm.list()) buckets.push(st.bucket);
console.log("buckets:", buckets.sort().join(","));
console.log("destroyed:", await again.destroy());
const left = [];
for await (const st of kvm.list()) left.push(st.bucket);
console.log("buckets:", left.join(","));
await nc.close();
