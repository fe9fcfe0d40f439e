// Stream and consumer infos as a program prints them: JSON.stringify shows
// every field the server sent, in its order. Times, the server's id and
// the generated part of an ordered consumer's name change from run to run.
import { connect } from "@nats-io/transport-node";
import { AckPolicy, jetstream, jetstreamManager } from "@nats-io/jetstream";

function mask(key, value) {
  if (typeof value !== "string") return value;
  if (/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d/.test(value)) return "<time>";
  if (key === "leader") return "<server>";
  return value.replace(/^[0-9A-Za-z]{22}_(\d+)$/, "<prefix>_$1");
}
const show = (label, info) => console.log(label, JSON.stringify(info, mask));

const nc = await connect({ servers: process.env.NATS_URL });
const jsm = await jetstreamManager(nc);
show("added", await jsm.streams.add({ name: "ORDERS", subjects: ["orders.*"] }));
const js = jetstream(nc);
for (let i = 1; i <= 3; i++) await js.publish(`orders.${i}`, `order ${i}`);
show("stream", await jsm.streams.info("ORDERS"));
for (const si of await jsm.streams.list().next()) show("listed", si);

show("durable", await jsm.consumers.add("ORDERS", { durable_name: "worker", ack_policy: AckPolicy.Explicit }));
show("info", await jsm.consumers.info("ORDERS", "worker"));

const oc = await js.consumers.get("ORDERS");
show("ordered", await oc.info(true));
show("ordered now", await oc.info());
const filtered = await js.consumers.get("ORDERS", { filter_subjects: ["orders.2"], deliver_policy: "last" });
show("filtered", await filtered.info(true));

console.log("[unordered]");
for (const ci of await jsm.consumers.list("ORDERS").next()) show("consumer", ci);
console.log("[/unordered]");
await nc.close();
