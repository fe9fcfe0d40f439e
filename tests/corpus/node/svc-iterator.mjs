// A service endpoint read as an iterator instead of a handler.
import { connect } from "@nats-io/transport-node";
import { Svcm } from "@nats-io/services";

const nc = await connect({ servers: process.env.NATS_URL });
const service = await new Svcm(nc).add({ name: "upper", version: "1.0.0", metadata: { team: "text" } });
const endpoint = service.addEndpoint("upper");
(async () => {
  for await (const m of endpoint) m.respond(m.string().toUpperCase());
})();
for (const w of ["hello", "world"]) {
  const r = await nc.request("upper", w);
  console.log(w, "->", r.string());
}
const info = service.info();
console.log(info.name, JSON.stringify(info.metadata), info.endpoints.map((e) => `${e.name} ${e.subject} ${e.queue_group}`).join(";"));
await service.stop();
try {
  await nc.request("upper", "after stop");
} catch (err) {
  console.log("after stop:", err.name, err.isNoResponders());
}
await nc.close();
