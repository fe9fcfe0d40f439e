// JetStream API errors: class names, API error codes and messages.
import { connect } from "@nats-io/transport-node";
import { JetStreamApiCodes, JetStreamApiError, jetstream, jetstreamManager } from "@nats-io/jetstream";

const nc = await connect({ servers: process.env.NATS_URL });
const jsm = await jetstreamManager(nc);
try {
  await jsm.streams.info("MISSING");
} catch (err) {
  console.log(err.name, err instanceof JetStreamApiError, err.code, err.status, err.message);
  console.log("is StreamNotFound:", err.code === JetStreamApiCodes.StreamNotFound);
}
await jsm.streams.add({ name: "E", subjects: ["e"] });
const js = jetstream(nc);
try {
  await js.consumers.get("E", "nope");
} catch (err) {
  console.log(err.name, err instanceof JetStreamApiError, err.code, err.message);
}
try {
  await jsm.streams.add({ name: "E2", subjects: ["e"] });
} catch (err) {
  console.log(err.name, err.code, err.status, err.message);
}
try {
  await jsm.consumers.info("E", "nope");
} catch (err) {
  console.log(err.name, err.apiError().err_code, err.apiError().code);
}
try {
  await js.publish("no.stream.here", "lost");
} catch (err) {
  console.log("publish without a stream:", err.name, err.message);
}
await nc.close();
