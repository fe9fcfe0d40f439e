// A push consumer's status: missed heartbeats once its consumer is
// deleted under the reader.
import { connect, createInbox, nanos } from "@nats-io/transport-node";
import { AckPolicy, jetstream, jetstreamManager } from "@nats-io/jetstream";

const nc = await connect({ servers: process.env.NATS_URL });
const jsm = await jetstreamManager(nc);
await jsm.streams.add({ name: "PULSE", subjects: ["pulse.>"] });
await jsm.consumers.add("PULSE", {
  durable_name: "watcher",
  ack_policy: AckPolicy.Explicit,
  deliver_subject: createInbox(),
  idle_heartbeat: nanos(300),
});
const js = jetstream(nc);
await js.publish("pulse.a", "beat");

const c = await js.consumers.getPushConsumer("PULSE", "watcher");
let first;
const received = new Promise((resolve) => (first = resolve));
const messages = await c.consume({
  callback: (m) => {
    m.ack();
    first(m);
  },
});
const missed = (async () => {
  for await (const s of messages.status()) {
    if (s.type === "heartbeats_missed") return s;
  }
})();
const m = await received;
console.log("received", m.subject, m.string());
await jsm.consumers.delete("PULSE", "watcher");
const s = await missed;
console.log("status", s.type, "count", s.count);
messages.stop();
await nc.close();
