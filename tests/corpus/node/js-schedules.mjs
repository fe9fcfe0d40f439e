// Message schedules (nats.js's 09_schedules; server 2.12+, cron and
// @every 2.14+): the schedule headers publish() sends for each kind of
// specification, a schedule that copies its source's last message to its
// target, and its cancellation by another publish.
import { connect } from "@nats-io/transport-node";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";

const nc = await connect({ servers: process.env.NATS_URL });
const jsm = await jetstreamManager(nc);
await jsm.streams.add({
  name: "SCHED",
  subjects: ["sched.>"],
  allow_msg_schedules: true,
  allow_msg_ttl: true,
});
const js = jetstream(nc);

// What each specification is sent as.
const spy = nc.subscribe("sched.schedule.>");
const at = new Date(Date.now() + 3600_000);
const kinds = [
  ["at", { at }],
  ["date", at],
  ["cron", { cron: "0 0 5 * * *" }],
  ["predefined", { predefined: "@hourly" }],
  ["raw", "@every 2h"],
];
for (const [name, specification] of kinds) {
  await js.publish(`sched.schedule.${name}`, "", {
    schedule: { specification, target: `sched.target.${name}`, ttl: "5s", timezone: name === "cron" ? "America/Denver" : undefined },
  });
}
let n = 0;
for await (const m of spy) {
  const h = m.headers;
  const value = h.get("Nats-Schedule").replace(at.toISOString(), "<at>");
  console.log(m.subject, JSON.stringify(value), h.get("Nats-Schedule-Target"), h.get("Nats-Schedule-TTL"), JSON.stringify(h.get("Nats-Schedule-Time-Zone")));
  if (++n === kinds.length) break;
}

for (const every of ["500ms", "1x"]) {
  try {
    await js.publish("sched.schedule.bad", "", { schedule: { specification: { every }, target: "sched.target.bad" } });
  } catch (err) {
    console.log("every", every, "->", err.message);
  }
}

// A schedule every second copies the last value of its source.
await js.publish("sched.data.price", "42");
await js.publish("sched.schedule.price", "", {
  schedule: { specification: { every: "1s" }, target: "sched.target.price", source: "sched.data.price" },
});
// The server stores what a schedule fires in the stream (no core publish).
const targets = await js.consumers.get("SCHED", { filter_subjects: "sched.target.price" });
const m = await targets.next({ expires: 10_000 });
console.log("fired:", m.subject, m.string(), "by", m.headers.get("Nats-Scheduler"));

// Cancelled: the schedule's message is gone from the stream.
try {
  await js.publish("sched.schedule.price", "", { cancelSchedule: { scheduleSubject: "sched.schedule.price" } });
} catch (err) {
  console.log("cancel on its own subject ->", err.message);
}
await js.publish("sched.stop", "", { cancelSchedule: { scheduleSubject: "sched.schedule.price" } });
const left = await jsm.streams.getMessage("SCHED", { last_by_subj: "sched.schedule.price" });
console.log("schedule left after cancel:", left === null ? "none" : left.seq);
await nc.close();
