// Listing keys, with and without a filter; deleted keys are left out.
import { connect } from "@nats-io/transport-node";
import { Kvm } from "@nats-io/kv";

const nc = await connect({ servers: process.env.NATS_URL });
const kv = await new Kvm(nc).create("inventory");
for (const k of ["fruit.apple", "fruit.pear", "veg.kale", "veg.leek"]) await kv.put(k, "1");
await kv.delete("veg.leek");
const keys = [];
for await (const k of await kv.keys()) keys.push(k);
console.log("keys:", keys.sort().join(" "));
const fruit = [];
for await (const k of await kv.keys("fruit.*")) fruit.push(k);
console.log("fruit:", fruit.sort().join(" "));
const empty = await new Kvm(nc).create("empty");
let n = 0;
for await (const _k of await empty.keys()) n++;
console.log("empty bucket keys:", n);
await nc.close();
