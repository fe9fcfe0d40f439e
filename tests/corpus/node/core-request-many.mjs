// requestMany: replies from several responders, up to maxMessages.
import { connect } from "@nats-io/transport-node";

const nc = await connect({ servers: process.env.NATS_URL });
for (const id of ["x", "y", "z"]) {
  nc.subscribe("census", { callback: (_err, m) => m.respond(`member ${id}`) });
}
await nc.flush();
const replies = await nc.requestMany("census", "", { strategy: "count", maxMessages: 3, maxWait: 5000 });
console.log("[unordered]");
for await (const r of replies) console.log(r.string());
console.log("[/unordered]");
const timed = await nc.requestMany("census", "", { maxWait: 500 });
let n = 0;
for await (const _r of timed) n++;
console.log("within the timer:", n);
await nc.close();
