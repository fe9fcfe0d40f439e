// A push consumer's status notifications: idle heartbeats naming the last
// sequences, flow control, missed heartbeats counted interval by interval
// once the consumer is deleted; a second consume() is refused.
import { connect, createInbox, nanos } from "@nats-io/transport-node";
import { AckPolicy, jetstream, jetstreamManager } from "@nats-io/jetstream";

const nc = await connect({ servers: process.env.NATS_URL });
const jsm = await jetstreamManager(nc);
await jsm.streams.add({ name: "STATUS", subjects: ["status.>"] });
await jsm.consumers.add("STATUS", {
  durable_name: "watcher",
  ack_policy: AckPolicy.Explicit,
  deliver_subject: createInbox(),
  idle_heartbeat: nanos(250),
  flow_control: true,
});
const js = jetstream(nc);
for (let i = 0; i < 3; i++) await js.publish("status.a", `m${i}`);

const c = await js.consumers.getPushConsumer("STATUS", "watcher");
let n = 0;
let all;
const received = new Promise((resolve) => (all = resolve));
const messages = await c.consume({
  callback: (m) => {
    m.ack();
    if (++n === 3) all();
  },
});
try {
  await c.consume();
} catch (err) {
  console.log("second consume:", err.name, err.message);
}
const seen = { heartbeat: null, missed: [] };
const watching = (async () => {
  for await (const s of messages.status()) {
    if (s.type === "heartbeat" && s.lastStreamSequence === 3 && !seen.heartbeat) {
      seen.heartbeat = s;
      console.log("heartbeat: last stream", s.lastStreamSequence, "last consumer", s.lastConsumerSequence);
    }
    if (s.type === "heartbeats_missed") {
      seen.missed.push(s.count);
      if (seen.missed.length === 2) return;
    }
  }
})();
await received;
console.log("received", n);
// Wait for a heartbeat after the last message, then delete the consumer.
while (!seen.heartbeat) await new Promise((r) => setTimeout(r, 50));
await jsm.consumers.delete("STATUS", "watcher");
await watching;
console.log("heartbeats missed:", seen.missed.join(", "));
messages.stop();
await nc.close();
