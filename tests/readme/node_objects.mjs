// The README's Object Store fragment: js is a JetStream context of a
// connected client, fs and pipeline are Node's; report.pdf and big.iso are
// files in the working directory. Afterwards the copies must equal the
// files, the bucket must list and watch what the fragment left, and the
// sealed bucket must refuse changes.
import fs from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { connect, BucketSealedError } from 'natsio';
//@TOP@
setTimeout(() => { console.error('still running after 60 s'); process.exit(1); }, 60000).unref();
const nc = await connect({ servers: 'nats://127.0.0.1:4222' });
const js = nc.jetstream();
//@BODY@

function check(ok, what) {
  if (!ok) throw new Error(what);
}
const report = fs.readFileSync('report.pdf');
check(info.size === report.length && info.digest.startsWith('SHA-256=') && info.chunks > 1, `put: size ${info.size} of ${report.length}, digest ${info.digest}, ${info.chunks} chunks`);
check(got.name === 'report.pdf' && fs.readFileSync('report-copy.pdf').equals(report), 'report-copy.pdf differs');
check(bytes.equals(report), 'getBytes differs');
check((await os.getBytes('big.iso')).equals(fs.readFileSync('big.iso')), 'big.iso differs');
const listed = (await os.list()).map((i) => i.name).sort();
check(JSON.stringify(listed) === JSON.stringify(['big.iso', 'latest.pdf']), `list: ${listed}`);
const watched = [];
const watching = (async () => { for await (const i of w) watched.push(i.name); })();
check(await w.initialized, 'the watch ended before its initial infos');
w.stop();
await watching;
check(JSON.stringify(watched.sort()) === JSON.stringify(['big.iso', 'latest.pdf']), `watched: ${watched}`);
await os.putString('late.txt', 'too late').then(() => check(false, 'a put into a sealed bucket worked'),
                                              (err) => check(err instanceof BucketSealedError, `sealed: ${err}`));
await nc.close();
console.log('Object Store fragment: copies equal, list, watch and seal as described');
