// What a request fails with: no responders, and a timeout.
import { connect, errors } from "@nats-io/transport-node";

const nc = await connect({ servers: process.env.NATS_URL });
try {
  await nc.request("nobody.home", "ping", { timeout: 1000 });
} catch (err) {
  console.log(err.name, err.message);
  console.log("RequestError:", err instanceof errors.RequestError, "noResponders:", err.isNoResponders());
  console.log("cause:", err.cause?.name, err.cause instanceof errors.NoRespondersError, err.cause?.message);
}

nc.subscribe("slow", { callback: () => {} }); // never answers
await nc.flush();
try {
  await nc.request("slow", "ping", { timeout: 250 });
} catch (err) {
  console.log(err.name, err.message, err instanceof errors.TimeoutError);
}
await nc.close();
try {
  await nc.flush();
} catch (err) {
  console.log("after close:", err.name, err.message, err instanceof errors.ClosedConnectionError);
}
console.log("isClosed:", nc.isClosed());
