// Wildcard subscriptions: * matches a token, > the rest.
import { connect } from "@nats-io/transport-node";

const nc = await connect({ servers: process.env.NATS_URL });
const one = nc.subscribe("orders.*", { max: 2 });
const all = nc.subscribe("orders.>", { max: 3 });
nc.publish("orders.new", "1");
nc.publish("orders.eu.new", "2");
nc.publish("orders.paid", "3");
for await (const m of one) console.log("orders.*", m.subject, m.string());
for await (const m of all) console.log("orders.>", m.subject, m.string());
await nc.close();
