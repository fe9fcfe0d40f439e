// Queue groups: each message goes to one member of the group.
import { connect } from "@nats-io/transport-node";

const nc = await connect({ servers: process.env.NATS_URL });
const counts = { a: 0, b: 0 };
const workers = ["a", "b"].map((w) =>
  nc.subscribe("jobs", {
    queue: "workers",
    callback: (_err, m) => {
      counts[w]++;
      m.respond(`done by a worker: ${m.string()}`);
    },
  })
);
const monitor = nc.subscribe("jobs", { max: 10 });
const replies = [];
for (let i = 0; i < 10; i++) {
  const r = await nc.request("jobs", `job ${i}`, { timeout: 2000 });
  replies.push(r.string());
}
let seen = 0;
for await (const _m of monitor) seen++;
console.log(replies.join("\n"));
console.log("handled in total:", counts.a + counts.b);
console.log("monitor saw:", seen);
for (const w of workers) w.unsubscribe();
await nc.close();
