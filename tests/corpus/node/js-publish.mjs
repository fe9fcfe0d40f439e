// JetStream publish: acks, deduplication by message id, expectations.
import { connect } from "@nats-io/transport-node";
import { jetstream, jetstreamManager, JetStreamApiError } from "@nats-io/jetstream";

const nc = await connect({ servers: process.env.NATS_URL });
const jsm = await jetstreamManager(nc);
await jsm.streams.add({ name: "EVENTS", subjects: ["events.>"] });
const js = jetstream(nc);
let pa = await js.publish("events.a", "first");
console.log(JSON.stringify(pa));
pa = await js.publish("events.b", JSON.stringify({ n: 2 }), { msgID: "id-2" });
console.log(pa.stream, pa.seq, pa.duplicate);
pa = await js.publish("events.b", "again", { msgID: "id-2" });
console.log("duplicate:", pa.seq, pa.duplicate);
pa = await js.publish("events.c", "expected", { expect: { lastSequence: 2, streamName: "EVENTS" } });
console.log("with expectations:", pa.seq);
try {
  await js.publish("events.c", "wrong", { expect: { lastSequence: 1 } });
} catch (err) {
  console.log(err.name, err instanceof JetStreamApiError, err.code, err.status, err.message);
}
try {
  await js.publish("events.d", "wrong", { expect: { lastSubjectSequence: 7 } });
} catch (err) {
  console.log(err.name, err.code, err.message);
}
const si = await jsm.streams.info("EVENTS");
console.log("stored", si.state.messages);
await nc.close();
