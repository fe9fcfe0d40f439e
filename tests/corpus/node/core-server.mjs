// What a connection tells of its server: the caller's options as connect()
// leaves them, getServer() as host:port, info, the features of the
// server's version; payloads are Buffers that print as their text.
import { connect } from "@nats-io/transport-node";

const port = new URL(process.env.NATS_URL).port;
const masked = (s) => String(s).replaceAll(port, "<port>");

const byName = { servers: `localhost:${port}` };
const nc = await connect(byName);
console.log("options after connect:", masked(JSON.stringify(byName)));
console.log("connected to", masked(nc.getServer()));
const byPort = { port: Number(port) };
const other = await connect(byPort);
console.log("options after connect:", masked(JSON.stringify(byPort)));
console.log("connected to", masked(other.getServer()));
await other.close();

console.log("info:", typeof nc.info.server_id, nc.info.port === Number(port), nc.info.headers, nc.info.jetstream);
const f = nc.features;
console.log("kv:", f.supports("js_kv"), JSON.stringify(f.get("js_priority_groups")), JSON.stringify(f.get("no_such_feature")));
console.log("requires 2.10.0:", f.require("2.10.0"), "requires 99.0.0:", f.require("99.0.0"));
console.log("version:", nc.getServerVersion().major >= 2);

const sub = nc.subscribe("greet", { max: 2 });
nc.publish("greet", "hello");
nc.publish("greet");
for await (const m of sub) {
  console.log(`data: "${m.data}" "${m.data.toString()}" ${m.data.length} ${m.string()}`);
}

try {
  await connect({ servers: "localhost", port: 1 });
} catch (err) {
  console.log(err.name, err.message);
}
await nc.close();
console.log("info after close:", nc.info);
