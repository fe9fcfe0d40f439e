// Headers through a stream: published with js.publish, read from a consumer.
import { connect, headers } from "@nats-io/transport-node";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";

const nc = await connect({ servers: process.env.NATS_URL });
const jsm = await jetstreamManager(nc);
await jsm.streams.add({ name: "H", subjects: ["h.>"] });
await jsm.consumers.add("H", { durable_name: "reader", ack_policy: "explicit" });
const js = jetstream(nc);
const h = headers();
h.set("Trace-Id", "abc-123");
h.append("Tag", "x");
h.append("Tag", "y");
await js.publish("h.one", "with headers", { headers: h, msgID: "m1" });
await js.publish("h.two", "plain");
const c = await js.consumers.get("H", "reader");
const batch = await c.fetch({ max_messages: 2, expires: 2000 });
for await (const m of batch) {
  console.log(m.subject, m.string(), m.info.stream, m.info.consumer);
  if (m.headers) {
    console.log("  Trace-Id:", m.headers.get("Trace-Id"), "Tag:", m.headers.values("Tag").join(","), "Nats-Msg-Id:", m.headers.get("Nats-Msg-Id"));
  } else {
    console.log("  no headers");
  }
  m.ack();
}
const sm = await jsm.streams.getMessage("H", { seq: 1 });
console.log("stored header:", sm.header.get("Trace-Id"), sm.header.get("Nats-Msg-Id"));
await nc.close();
