// A subscription timeout: the iterator throws if nothing arrives in time.
import { connect, errors } from "@nats-io/transport-node";

const nc = await connect({ servers: process.env.NATS_URL });
const sub = nc.subscribe("quiet", { timeout: 300 });
try {
  for await (const m of sub) console.log("unexpected", m.string());
  console.log("ended without error");
} catch (err) {
  console.log("timed out:", err instanceof errors.TimeoutError, err.message);
}
const busy = nc.subscribe("busy", { timeout: 2000, max: 1 });
nc.publish("busy", "made it");
for await (const m of busy) console.log("busy:", m.string());
await nc.close();
