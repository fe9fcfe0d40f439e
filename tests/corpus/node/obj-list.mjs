// Listing and deleting objects; a deleted object's info stays.
import { connect } from "@nats-io/transport-node";
import { Objm } from "@nats-io/obj";

const nc = await connect({ servers: process.env.NATS_URL });
const os = await new Objm(nc).create("docs");
const enc = new TextEncoder();
for (const n of ["a.txt", "b.txt", "c.txt"]) await os.putBlob({ name: n }, enc.encode(`content of ${n}`));
let list = await os.list();
console.log("objects:", list.map((i) => `${i.name}:${i.size}`).sort().join(" "));
const pr = await os.delete("b.txt");
console.log("delete:", pr.success, pr.purged);
const gone = await os.info("b.txt");
console.log("deleted info:", gone.name, gone.deleted, gone.size);
console.log("get deleted:", await os.get("b.txt"));
list = await os.list();
console.log("objects:", list.map((i) => i.name).sort().join(" "));
const again = await new Objm(nc).create("docs", { description: "other" }); // exists: opened
console.log("opened again:", (await again.list()).length);
const st = await os.status();
console.log("status:", st.bucket, st.sealed, st.backingStore, st.storage);
await nc.close();
