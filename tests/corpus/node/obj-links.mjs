// Links to objects: isLink(), and reading through a link.
import { connect } from "@nats-io/transport-node";
import { Objm } from "@nats-io/obj";

const nc = await connect({ servers: process.env.NATS_URL });
const os = await new Objm(nc).create("linked");
const target = await os.putBlob({ name: "target" }, new TextEncoder().encode("the data"));
const link = await os.link("alias", target);
console.log(link.name, link.isLink(), link.options.link.bucket, link.options.link.name);
const info = await os.info("alias");
console.log("info:", info.name, info.isLink(), (await os.info("target")).isLink());
console.log("through the link:", new TextDecoder().decode(await os.getBlob("alias")));
await nc.close();
