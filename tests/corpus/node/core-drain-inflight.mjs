// Draining a subscription: messages already sent are still handled.
import { connect } from "@nats-io/transport-node";

const nc = await connect({ servers: process.env.NATS_URL });
const sub = nc.subscribe("work");
const handled = [];
const loop = (async () => {
  for await (const m of sub) handled.push(m.string());
  console.log("loop ended, closed:", sub.isClosed());
})();
for (let i = 0; i < 100; i++) nc.publish("work", `item-${i}`);
await nc.flush();
await sub.drain();
await loop;
console.log("handled", handled.length, "first", handled[0], "last", handled[handled.length - 1]);
console.log("processed", sub.getProcessed());
const err = await sub.closed;
console.log("closed with:", err === undefined ? "nothing" : err);
await nc.drain();
console.log("connection closed:", nc.isClosed());
