// A node --test reporter (scripts/test.sh adds it beside the TAP one): how
// many tests passed in each test file, as "<file> <count>" lines, so that
// the floors can be kept per file. Skipped and todo tests do not count.
import { basename } from 'node:path';

export default async function* nodeTestCounts(source) {
  const passed = new Map();
  for await (const event of source) {
    if (event.type !== 'test:pass' || event.data.skip || event.data.todo) continue;
    const file = basename(event.data.file ?? 'unknown');
    passed.set(file, (passed.get(file) ?? 0) + 1);
  }
  for (const [file, n] of [...passed].sort()) yield `${file} ${n}\n`;
}
