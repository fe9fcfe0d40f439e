// JSON payloads, encoded by hand as nats.js 3.x does (no codecs).
import { connect } from "@nats-io/transport-node";

const nc = await connect({ servers: process.env.NATS_URL });
nc.subscribe("math.add", {
  callback: (_err, m) => {
    const { a, b } = m.json();
    m.respond(JSON.stringify({ sum: a + b }));
  },
});
for (const [a, b] of [[1, 2], [40, 2], [-5, 5]]) {
  const r = await nc.request("math.add", JSON.stringify({ a, b }));
  console.log(`${a} + ${b} =`, r.json().sum);
}
await nc.drain();
