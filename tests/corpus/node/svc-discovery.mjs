// Discovering services with the service client.
import { connect } from "@nats-io/transport-node";
import { Svcm } from "@nats-io/services";

const nc = await connect({ servers: process.env.NATS_URL });
const svcm = new Svcm(nc);
const a = await svcm.add({ name: "echo", version: "0.1.0" });
a.addEndpoint("echo", (_err, m) => m.respond(m.data));
const b = await svcm.add({ name: "echo", version: "0.1.0" });
b.addEndpoint("echo", (_err, m) => m.respond(m.data));
const r = await nc.request("echo", "ping");
console.log("echo:", r.string());
const client = svcm.client();
const pings = [];
for await (const p of await client.ping("echo")) pings.push(`${p.name} ${p.version} ${p.type}`);
console.log("[unordered]");
console.log(pings.join("\n"));
console.log("[/unordered]");
const infos = [];
for await (const i of await client.info("echo", a.info().id)) infos.push(i.endpoints.map((e) => e.subject).join(","));
console.log("info of one:", infos.join(" | "));
await a.stop();
await b.stop();
await nc.close();
