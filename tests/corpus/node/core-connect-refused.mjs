// A connection nobody accepts: connect() rejects with ConnectionError.
import { connect, errors } from "@nats-io/transport-node";

try {
  // port 1 on the loopback: nothing listens there
  await connect({ servers: "127.0.0.1:1", maxReconnectAttempts: 0, timeout: 2000 });
  console.log("connected?");
} catch (err) {
  console.log(err.name, err.message, err instanceof errors.ConnectionError);
}
const nc = await connect({ servers: process.env.NATS_URL, name: "second try" });
console.log("connected:", !nc.isClosed());
await nc.close();
