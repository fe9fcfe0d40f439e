// Connection lifecycle: closed() resolves after close; info and stats.
import { connect, Empty, nuid, createInbox } from "@nats-io/transport-node";

const nc = await connect({ servers: process.env.NATS_URL, name: "corpus" });
const closed = nc.closed().then((err) => console.log("closed with", err ? err.message : "no error"));
console.log("server reachable:", nc.getServer().length > 0);
console.log("jetstream:", nc.info?.jetstream, "headers:", nc.info?.headers);
console.log("nuid length:", nuid.next().length, "inbox:", createInbox().startsWith("_INBOX."));
const sub = nc.subscribe("empty", { max: 1 });
nc.publish("empty", Empty);
for await (const m of sub) console.log("empty payload length:", m.data.length, m.data instanceof Uint8Array);
await nc.flush();
const s = nc.stats();
console.log("stats:", s.inMsgs, s.outMsgs, s.inBytes, s.outBytes);
console.log("rtt is a number:", typeof (await nc.rtt()) === "number");
console.log("draining:", nc.isDraining(), "closed:", nc.isClosed());
await nc.close();
await closed;
console.log("closed:", nc.isClosed());
