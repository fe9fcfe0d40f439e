// Connection status events: a forced reconnect, then the close.
import { connect } from "@nats-io/transport-node";

const nc = await connect({ servers: process.env.NATS_URL, reconnectTimeWait: 100 });
const server = nc.getServer();
const watched = new Set(["forceReconnect", "disconnect", "reconnect"]);
const events = (async () => {
  for await (const s of nc.status()) {
    if (!watched.has(s.type)) continue; // "update", "ping", ...
    console.log("status:", s.type, "server" in s ? s.server === server : "-");
    if (s.type === "reconnect") break;
  }
})();
await nc.reconnect();
await events;
const sub = nc.subscribe("after.reconnect", { max: 1 });
nc.publish("after.reconnect", "still works");
for await (const m of sub) console.log(m.string());
const last = (async () => {
  for await (const s of nc.status()) if (s.type === "close") console.log("status:", s.type);
  console.log("status iterator ended");
})();
await nc.close();
await last;
console.log("closed:", nc.isClosed());
