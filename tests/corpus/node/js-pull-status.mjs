// A pull consumer's status notifications: each pull request ("next", with
// its options), a fetch that ends with messages undelivered ("discard",
// then the server's 408 as "debug"), and a fetch over the consumer's
// max_batch ("exceeded_limits", then the fetch fails).
import { connect } from "@nats-io/transport-node";
import { AckPolicy, jetstream, jetstreamManager } from "@nats-io/jetstream";

const nc = await connect({ servers: process.env.NATS_URL });
const jsm = await jetstreamManager(nc);
await jsm.streams.add({ name: "PULLSTATUS", subjects: ["pullstatus.>"] });
await jsm.consumers.add("PULLSTATUS", { durable_name: "c", ack_policy: AckPolicy.Explicit, max_batch: 5 });
const js = jetstream(nc);
const c = await js.consumers.get("PULLSTATUS", "c");

/** The notifications of `messages` (heartbeats aside), once it ended:
 * printed after its messages, each in the order told. */
function watch(label, messages) {
  return (async () => {
    const seen = [];
    for await (const s of messages.status()) {
      if (s.type !== "heartbeat") seen.push(`${label}: ${JSON.stringify(s)}`);
    }
    return seen;
  })();
}

// Nothing in the stream: the fetch expires with its message undelivered.
const empty = await c.fetch({ max_messages: 1, expires: 1000 });
const emptyStatus = watch("empty", empty);
for await (const m of empty) console.log("unexpected", m.subject);
console.log((await emptyStatus).join("\n"));

// Two of three: the two, then the request ends with one left.
await js.publish("pullstatus.a", "one");
await js.publish("pullstatus.b", "two");
const some = await c.fetch({ max_messages: 3, expires: 2000 });
const someStatus = watch("some", some);
for await (const m of some) {
  console.log("fetched", m.subject, m.string());
  m.ack();
}
console.log((await someStatus).join("\n"));

// More than max_batch: refused.
const over = await c.fetch({ max_messages: 10, expires: 1000 });
const overStatus = watch("over", over);
try {
  for await (const m of over) console.log("unexpected", m.subject);
  console.log("over: ended");
} catch {
  console.log("over: failed");
}
console.log((await overStatus).join("\n"));
await nc.close();
