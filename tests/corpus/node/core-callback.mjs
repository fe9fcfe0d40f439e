// A subscription with a callback, drained before the connection closes.
import { connect } from "@nats-io/transport-node";

const nc = await connect({ servers: process.env.NATS_URL });
const received = [];
const sub = nc.subscribe("updates.>", {
  callback: (err, msg) => {
    if (err) {
      console.log("error:", err.message);
      return;
    }
    received.push(`${msg.subject}=${msg.string()}`);
  },
});
for (let i = 0; i < 5; i++) nc.publish(`updates.${i % 2 ? "odd" : "even"}`, String(i));
await nc.flush();
await sub.drain();
console.log(received.join("\n"));
console.log("processed", sub.getProcessed(), "closed", sub.isClosed());
await nc.drain();
console.log("connection closed:", nc.isClosed());
