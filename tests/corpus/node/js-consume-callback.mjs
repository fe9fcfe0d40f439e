// consume() with a callback instead of an iterator.
import { connect, deferred } from "@nats-io/transport-node";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";

const nc = await connect({ servers: process.env.NATS_URL });
const jsm = await jetstreamManager(nc);
await jsm.streams.add({ name: "CB", subjects: ["cb"] });
await jsm.consumers.add("CB", { durable_name: "cb", ack_policy: "explicit" });
const js = jetstream(nc);
for (let i = 0; i < 4; i++) await js.publish("cb", `m${i}`);
const c = await js.consumers.get("CB", "cb");
const done = deferred();
const seen = [];
const iter = await c.consume({
  callback: (m) => {
    seen.push(`${m.info.streamSequence}:${m.string()}`);
    m.ack();
    if (seen.length === 4) done.resolve();
  },
});
await done;
await iter.close();
console.log(seen.join(" "));
await nc.close();
