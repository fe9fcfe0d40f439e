// Watching an object store, with and without the existing objects.
import { connect } from "@nats-io/transport-node";
import { Objm } from "@nats-io/obj";

const nc = await connect({ servers: process.env.NATS_URL });
const os = await new Objm(nc).create("watched");
const enc = new TextEncoder();
await os.putBlob({ name: "existing" }, enc.encode("1"));
const updates = await os.watch();
const all = await os.watch({ includeHistory: true });
await os.putBlob({ name: "new" }, enc.encode("22"));
await os.delete("existing");
for await (const i of updates) {
  console.log("updates:", i.name, i.size, i.deleted ?? false, i.isUpdate);
  if (i.name === "existing") break;
}
for await (const i of all) {
  console.log("history:", i.name, i.size, i.deleted ?? false, i.isUpdate);
  if (i.name === "existing" && i.deleted) break;
}
await nc.close();
