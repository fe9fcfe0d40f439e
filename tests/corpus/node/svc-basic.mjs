// A service with endpoints, called with requests; errors as headers.
import { connect } from "@nats-io/transport-node";
import { ServiceError, Svcm } from "@nats-io/services";

const nc = await connect({ servers: process.env.NATS_URL });
const svcm = new Svcm(nc);
const service = await svcm.add({ name: "calc", version: "1.0.0", description: "arithmetic" });
const math = service.addGroup("calc");
math.addEndpoint("add", (_err, m) => {
  const { a, b } = m.json();
  m.respond(JSON.stringify(a + b));
});
math.addEndpoint("div", {
  handler: (_err, m) => {
    const { a, b } = m.json();
    if (b === 0) m.respondError(400, "division by zero");
    else m.respond(JSON.stringify(a / b));
  },
  metadata: { unit: "number" },
});
const r = await nc.request("calc.add", JSON.stringify({ a: 2, b: 3 }));
console.log("2 + 3 =", r.json());
const q = await nc.request("calc.div", JSON.stringify({ a: 9, b: 3 }));
console.log("9 / 3 =", q.json());
const bad = await nc.request("calc.div", JSON.stringify({ a: 1, b: 0 }));
console.log("is error:", ServiceError.isServiceError(bad), bad.headers.get("Nats-Service-Error-Code"), bad.headers.get("Nats-Service-Error"));
const err = ServiceError.toServiceError(bad);
console.log(err.code, err.message);
const info = service.info();
console.log(info.name, info.version, info.description, info.endpoints.map((e) => `${e.name}@${e.subject}`).sort().join(" "));
const stats = await service.stats();
console.log(stats.endpoints.map((e) => `${e.name}:${e.num_requests}/${e.num_errors}`).sort().join(" "));
await service.stop();
console.log("stopped:", service.isStopped);
await nc.close();
