// Reading, purging and deleting stored messages.
import { connect } from "@nats-io/transport-node";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";

const nc = await connect({ servers: process.env.NATS_URL });
const jsm = await jetstreamManager(nc);
await jsm.streams.add({ name: "STORE", subjects: ["store.>"] });
const js = jetstream(nc);
for (const [s, v] of [["store.a", "1"], ["store.b", "2"], ["store.a", "3"], ["store.c", "4"]]) await js.publish(s, v);
let sm = await jsm.streams.getMessage("STORE", { seq: 2 });
console.log("seq 2:", sm.subject, sm.seq, sm.string());
sm = await jsm.streams.getMessage("STORE", { last_by_subj: "store.a" });
console.log("last store.a:", sm.seq, sm.string());
console.log("missing:", await jsm.streams.getMessage("STORE", { seq: 99 }));
console.log("deleted:", await jsm.streams.deleteMessage("STORE", 1));
console.log("gone:", await jsm.streams.getMessage("STORE", { seq: 1 }));
let pr = await jsm.streams.purge("STORE", { filter: "store.a" });
console.log("purge store.a:", pr.success, pr.purged);
let si = await jsm.streams.info("STORE");
console.log("left:", si.state.messages);
pr = await jsm.streams.purge("STORE");
console.log("purge all:", pr.success, pr.purged);
si = await jsm.streams.info("STORE");
console.log("left:", si.state.messages, "first", si.state.first_seq);
const stream = await js.streams.get("STORE");
await js.publish("store.z", "5");
const got = await stream.getMessage({ last_by_subj: "store.z" });
console.log("via stream:", stream.name, got.seq, got.string());
await nc.close();
