// Message headers: built with headers(), read with get/values/has/keys.
import { connect, headers } from "@nats-io/transport-node";

const nc = await connect({ servers: process.env.NATS_URL });
const sub = nc.subscribe("hdrs", { max: 2 });
const h = headers();
h.set("Id", "123");
h.append("Tag", "a");
h.append("Tag", "b");
h.set("Replaced", "old");
h.set("Replaced", "new");
nc.publish("hdrs", "with headers", { headers: h });
nc.publish("hdrs", "without");
for await (const m of sub) {
  if (!m.headers) {
    console.log(m.string(), "has no headers");
    continue;
  }
  console.log(m.string());
  console.log("keys:", m.headers.keys().join(","));
  console.log("Id:", m.headers.get("Id"), typeof m.headers.get("Id"));
  console.log("Tag:", m.headers.get("Tag"), m.headers.values("Tag").join("|"));
  console.log("Replaced:", m.headers.values("Replaced").join("|"));
  console.log("has Tag:", m.headers.has("Tag"), "has Nope:", m.headers.has("Nope"), "Nope:", JSON.stringify(m.headers.get("Nope")));
  console.log("status:", m.headers.code, JSON.stringify(m.headers.status), m.headers.hasError);
  for (const [k, v] of m.headers) console.log("entry", k, v.join(","));
}
await nc.close();
