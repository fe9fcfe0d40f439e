// Publish and subscribe: an async iterator that ends after `max` messages.
import { connect } from "@nats-io/transport-node";

const nc = await connect({ servers: process.env.NATS_URL });
const sub = nc.subscribe("hello", { max: 3 });
const done = (async () => {
  for await (const m of sub) {
    console.log(`[${sub.getProcessed()}]: ${m.subject} ${m.string()}`);
  }
  console.log("subscription closed");
})();

nc.publish("hello", "world");
nc.publish("hello", "again");
nc.publish("hello", "and again");
nc.publish("hello", "not seen");
await done;
console.log("closed:", sub.isClosed());
await nc.close();
