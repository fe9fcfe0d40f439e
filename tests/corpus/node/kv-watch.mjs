// Watching a bucket: initial values, then updates (isUpdate).
import { connect } from "@nats-io/transport-node";
import { Kvm } from "@nats-io/kv";

const nc = await connect({ servers: process.env.NATS_URL });
const kv = await new Kvm(nc).create("config");
await kv.put("app.mode", "dev");
await kv.put("app.level", "3");
await kv.put("db.url", "x");
const w = await kv.watch({ key: "app.>" });
const done = (async () => {
  for await (const e of w) {
    console.log(e.key, e.operation, e.string(), "update:", e.isUpdate);
    if (e.key === "app.stop") break;
  }
})();
await kv.put("db.url", "y");
await kv.put("app.mode", "prod");
await kv.delete("app.level");
await kv.put("app.stop", "now");
await done;

const updates = await kv.watch({ include: "updates" });
const seen = (async () => {
  for await (const e of updates) {
    console.log("updates only:", e.key, e.string(), e.isUpdate);
    break;
  }
})();
await kv.put("late.key", "fresh");
await seen;
await nc.close();
