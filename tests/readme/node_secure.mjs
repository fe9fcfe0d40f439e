// The README's secured-cluster fragment, run against the runner's TLS
// server (client certificates required, operator-mode JWT auth): it must
// connect, measure a round trip, and be back after forceReconnect().
import { connect } from 'natsio';
//@TOP@
setTimeout(() => { console.error('still running after 30 s'); process.exit(1); }, 30000).unref();
//@BODY@

// forceReconnect() returns at once; 'reconnect' comes on a later turn.
const url = await new Promise((resolve) => nc.once('reconnect', resolve));
if (typeof us !== 'number' || !(us > 0)) throw new Error(`rtt() gave ${us}`);
if (nc.status !== 'CONNECTED' || !url.startsWith('tls://')) throw new Error(`after reconnecting: ${nc.status} ${url}`);
await nc.flush();
const closed = new Promise((resolve) => nc.once('close', resolve));
await nc.close();
await closed;
console.log('connected over mutual TLS with a JWT, reconnected, closed');
