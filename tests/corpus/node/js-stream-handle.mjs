// Stream handles: js.streams.get(), its consumers and messages.
import { connect } from "@nats-io/transport-node";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";

const nc = await connect({ servers: process.env.NATS_URL });
const jsm = await jetstreamManager(nc);
await jsm.streams.add({ name: "SH", subjects: ["sh.*"], description: "handle" });
await jsm.consumers.add("SH", { durable_name: "d", ack_policy: "explicit" });
const js = jetstream(nc);
for (let i = 1; i <= 3; i++) await js.publish(`sh.${i}`, `v${i}`);
const stream = await js.streams.get("SH");
const si = await stream.info();
console.log(stream.name, si.config.description, si.state.messages);
const named = await stream.getConsumer("d");
const ci = await named.info();
console.log("consumer", ci.name, ci.num_pending);
const m = await named.next({ expires: 2000 });
console.log("next", m.subject, m.string());
m.ack();
const ordered = await stream.getConsumer();
const all = await ordered.fetch({ max_messages: 3, expires: 2000 });
const seen = [];
for await (const x of all) seen.push(x.string());
console.log("ordered", seen.join(" "));
console.log("deleted message:", await stream.deleteMessage(2));
console.log("seq 2:", await stream.getMessage({ seq: 2 }));
console.log("seq 3:", (await stream.getMessage({ seq: 3 }))?.string());
await nc.close();
