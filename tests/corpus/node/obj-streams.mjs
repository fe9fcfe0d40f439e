// Object Store with web streams: put from a ReadableStream, read it back.
import { connect } from "@nats-io/transport-node";
import { Objm } from "@nats-io/obj";

const nc = await connect({ servers: process.env.NATS_URL });
const os = await new Objm(nc).create("streams", { description: "streamed objects" });
const enc = new TextEncoder();
const parts = ["first line\n", "second line\n", "third line\n"];
const rs = new ReadableStream({
  start(controller) {
    for (const p of parts) controller.enqueue(enc.encode(p));
    controller.close();
  },
});
const info = await os.put({ name: "lines.txt", description: "three lines", metadata: { kind: "text" } }, rs);
console.log(info.name, info.size, info.chunks, info.description, JSON.stringify(info.metadata), info.digest);
const r = await os.get("lines.txt");
const dec = new TextDecoder();
let text = "";
for await (const chunk of r.data) text += dec.decode(chunk, { stream: true });
console.log(JSON.stringify(text), await r.error);
await os.update("lines.txt", { description: "updated" });
console.log("description:", (await os.info("lines.txt")).description);
const st = await os.status();
console.log(st.bucket, st.description, st.sealed, st.size > 0);
const sealed = await os.seal();
console.log("sealed:", sealed.sealed);
await nc.close();
