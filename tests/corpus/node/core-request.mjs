// Request/reply with a service answering on a subscription.
import { connect } from "@nats-io/transport-node";

const nc = await connect({ servers: process.env.NATS_URL });
const sub = nc.subscribe("time");
(async () => {
  for await (const m of sub) {
    const name = m.string();
    if (!m.respond(`hello ${name}`)) console.log("no reply subject");
  }
  console.log("service stopped");
})();

for (const name of ["ann", "bob", "cid"]) {
  const r = await nc.request("time", name, { timeout: 1000 });
  console.log(r.subject.startsWith("_INBOX.") ? "inbox reply:" : r.subject, r.string());
}
await sub.drain();
await nc.close();
