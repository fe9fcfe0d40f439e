// Object Store: putBlob, getBlob, info, get with a web stream.
import { connect } from "@nats-io/transport-node";
import { Objm } from "@nats-io/obj";

const nc = await connect({ servers: process.env.NATS_URL });
const os = await new Objm(nc).create("files");
const data = new TextEncoder().encode("x".repeat(300000));
let info = await os.putBlob({ name: "big.txt", description: "a big file", options: { max_chunk_size: 128 * 1024 } }, data);
console.log(info.name, info.size, info.chunks, info.description, info.bucket, info.deleted, info.digest);
const blob = await os.getBlob("big.txt");
console.log("blob", blob.length, blob[0], blob[blob.length - 1]);
const r = await os.get("big.txt");
let total = 0;
const reader = r.data.getReader();
for (;;) {
  const { done, value } = await reader.read();
  if (done) break;
  total += value.length;
}
console.log("streamed", total, "error", await r.error, "info", r.info.name, r.info.size);
info = await os.info("big.txt");
console.log("info", info.name, info.size, info.isLink());
console.log("missing info:", await os.info("nope"), "get:", await os.get("nope"), "blob:", await os.getBlob("nope"));
const small = await os.putBlob({ name: "small" }, new TextEncoder().encode("hello"));
console.log("small", small.size, small.chunks, new TextDecoder().decode(await os.getBlob("small")));
await nc.close();
