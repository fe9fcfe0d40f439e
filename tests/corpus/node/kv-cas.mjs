// Optimistic concurrency on a key: update with the revision read.
import { connect } from "@nats-io/transport-node";
import { Kvm } from "@nats-io/kv";

const nc = await connect({ servers: process.env.NATS_URL });
const kv = await new Kvm(nc).create("counters", { history: 3 });
await kv.put("visits", JSON.stringify({ n: 0 }));
async function increment(by) {
  for (;;) {
    const e = await kv.get("visits");
    const next = { n: e.json().n + by };
    try {
      return await kv.update("visits", JSON.stringify(next), e.revision);
    } catch (err) {
      console.log("retrying after", err.name, err.code);
    }
  }
}
await increment(1);
const e = await kv.get("visits");
await kv.put("visits", JSON.stringify({ n: 10 })); // someone else writes
try {
  await kv.update("visits", JSON.stringify({ n: e.json().n + 1 }), e.revision);
} catch (err) {
  console.log("stale update:", err.name, err.code);
}
const rev = await increment(5);
const final = await kv.get("visits");
console.log("final", final.json().n, "revision", final.revision, rev === final.revision);
const entries = [];
for await (const h of await kv.history({ key: "visits" })) entries.push(`${h.revision}:${h.string()}`);
console.log(entries.join(" "));
await nc.close();
