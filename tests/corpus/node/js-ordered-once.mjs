// An ordered consumer is consumed once, or read by one fetch at a time,
// never both (nats.js's rules; 06_heartbeats meets the first when it
// consumes again after stopping).
import { connect } from "@nats-io/transport-node";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";

const nc = await connect({ servers: process.env.NATS_URL });
const jsm = await jetstreamManager(nc);
await jsm.streams.add({ name: "ONCE", subjects: ["once.>"] });
const js = jetstream(nc);
for (let i = 0; i < 4; i++) await js.publish(`once.${i}`, `m${i}`);

const report = async (what, fn) => {
  try {
    await fn();
    console.log(what, "ok");
  } catch (err) {
    console.log(what, "->", err.name, err.message);
  }
};

const consumed = await js.consumers.get("ONCE");
const messages = await consumed.consume({ max_messages: 2 });
for await (const m of messages) {
  console.log("consumed", m.subject);
  if (m.info.pending === 0) break;
}
await report("consume again", () => consumed.consume());
await report("fetch after consume", () => consumed.fetch({ max_messages: 1, expires: 1000 }));

const fetched = await js.consumers.get("ONCE");
const first = await fetched.fetch({ max_messages: 2, expires: 1000 });
await report("fetch while fetching", () => fetched.fetch({ max_messages: 1, expires: 1000 }));
for await (const m of first) console.log("fetched", m.subject);
const second = await fetched.fetch({ max_messages: 2, expires: 1000 });
for await (const m of second) console.log("fetched", m.subject);
await report("consume after fetch", () => fetched.consume());
await nc.close();
