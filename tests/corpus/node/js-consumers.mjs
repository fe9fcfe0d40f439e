// Consumer administration: add, info, list, update, pause, resume, delete.
import { connect } from "@nats-io/transport-node";
import { AckPolicy, DeliverPolicy, jetstreamManager } from "@nats-io/jetstream";

const nc = await connect({ servers: process.env.NATS_URL });
const jsm = await jetstreamManager(nc);
await jsm.streams.add({ name: "C", subjects: ["c.>"] });
await jsm.consumers.add("C", { durable_name: "one", ack_policy: AckPolicy.Explicit, deliver_policy: DeliverPolicy.All });
await jsm.consumers.add("C", { durable_name: "two", ack_policy: AckPolicy.None, filter_subject: "c.two" });
let ci = await jsm.consumers.info("C", "two");
console.log(ci.name, ci.config.ack_policy, ci.config.filter_subject, ci.config.deliver_policy);
ci = await jsm.consumers.update("C", "one", { description: "the first", max_ack_pending: 10 });
console.log(ci.name, ci.config.description, ci.config.max_ack_pending, ci.config.ack_policy);
const names = [];
for await (const c of jsm.consumers.list("C")) names.push(c.name);
console.log("consumers:", names.sort().join(","));
const until = new Date(Date.now() + 60000);
const paused = await jsm.consumers.pause("C", "one", until);
console.log("paused:", paused.paused, new Date(paused.pause_until).getTime() === until.getTime());
const resumed = await jsm.consumers.resume("C", "one");
console.log("resumed, paused:", resumed.paused);
console.log("deleted:", await jsm.consumers.delete("C", "two"));
const left = [];
for await (const c of jsm.consumers.list("C")) left.push(c.name);
console.log("consumers:", left.join(","));
await nc.close();
