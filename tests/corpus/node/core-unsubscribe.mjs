// unsubscribe(max) ends a subscription after max messages in total;
// messages received before an unsubscribe() are still read.
import { connect } from "@nats-io/transport-node";

const nc = await connect({ servers: process.env.NATS_URL });
const auto = nc.subscribe("counter");
auto.unsubscribe(2);
console.log("max:", auto.getMax());
for (let i = 1; i <= 5; i++) nc.publish("counter", String(i));
for await (const m of auto) console.log("auto got", m.string());
console.log("auto processed", auto.getProcessed());

const manual = nc.subscribe("later");
nc.publish("later", "one");
nc.publish("later", "two");
await nc.flush();
manual.unsubscribe();
nc.publish("later", "three");
for await (const m of manual) console.log("manual got", m.string());
console.log("manual closed", manual.isClosed());
await nc.close();
