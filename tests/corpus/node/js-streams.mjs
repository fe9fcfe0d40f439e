// Stream administration with the JetStream manager.
import { connect } from "@nats-io/transport-node";
import { jetstreamManager, RetentionPolicy, StorageType, DiscardPolicy } from "@nats-io/jetstream";

const nc = await connect({ servers: process.env.NATS_URL });
const jsm = await jetstreamManager(nc);
let si = await jsm.streams.add({ name: "ORDERS", subjects: ["orders.>"], storage: StorageType.Memory });
console.log("added", si.config.name, si.config.subjects.join(","), si.config.storage, si.config.retention, si.config.discard);
await jsm.streams.add({ name: "AUDIT", subjects: ["audit.*"], retention: RetentionPolicy.Limits, discard: DiscardPolicy.New, max_msgs: 10 });
si = await jsm.streams.update("ORDERS", { max_msgs: 100, description: "orders" });
console.log("updated", si.config.max_msgs, si.config.description, si.config.subjects.join(","));
nc.publish("orders.new", "1");
nc.publish("orders.new", "2");
await nc.flush();
si = await jsm.streams.info("ORDERS");
console.log("messages", si.state.messages, "first", si.state.first_seq, "last", si.state.last_seq);
const names = [];
for await (const n of jsm.streams.names()) names.push(n);
console.log("names", names.sort().join(","));
const listed = [];
for await (const i of jsm.streams.list()) listed.push(`${i.config.name}:${i.state.messages}`);
console.log("list", listed.sort().join(","));
console.log("find", await jsm.streams.find("audit.x"));
console.log("deleted", await jsm.streams.delete("AUDIT"));
const after = [];
for await (const n of jsm.streams.names()) after.push(n);
console.log("names", after.join(","));
await nc.close();
