// Every body nucleo-gemini renders from the kit's encode corpus (saved by `nucleo plugin check
// --save-requests`, tests/sdk_types' sdk_types.kit_corpus.gemini.render) is answered by
// nucleo-emulator: the family's rule book (gemini.20-gemini.27) accepts what the plugin writes,
// signatures and merged roles included (gemini.2, gemini.6). Posted to a model outside the catalog,
// so the corpus's own thinking levels are not held to one model's record.
//
// Environment: NUCLEO_EMULATOR (the binary), NUCLEO_GEMINI_BODIES (the folder of saved bodies).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';

const emulatorBinary = process.env.NUCLEO_EMULATOR;
const bodies = process.env.NUCLEO_GEMINI_BODIES;
assert.ok(emulatorBinary, 'NUCLEO_EMULATOR must name the nucleo-emulator binary');
assert.ok(bodies, 'NUCLEO_GEMINI_BODIES must name the folder of the saved bodies');

let emulator;
let baseUrl;
before(async () => {
  emulator = spawn(emulatorBinary, ['--port', '0', '--exit-with-parent'], { stdio: ['ignore', 'pipe', 'inherit'] });
  baseUrl = await new Promise((resolve, reject) => {
    let out = '';
    emulator.stdout.on('data', (d) => {
      out += d;
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) resolve(m[1]);
    });
    emulator.on('exit', (code) => reject(new Error(`nucleo-emulator exited with ${code}: ${out}`)));
  });
});
after(() => emulator?.kill('SIGTERM'));

test('every corpus body the plugin renders is answered with 200', async () => {
  const files = readdirSync(bodies).filter((n) => n.endsWith('.json')).sort();
  assert.ok(files.length >= 20, `only ${files.length} bodies in ${bodies}`);
  const refused = [];
  for (const name of files) {
    const r = await fetch(`${baseUrl}/v1beta/models/gemini-corpus-check:generateContent`, {
      method: 'POST', headers: { 'content-type': 'application/json', 'x-goog-api-key': 'emu-key' },
      body: readFileSync(join(bodies, name)) });
    const text = await r.text();
    if (r.status !== 200) refused.push(`${name}: ${r.status} ${text}`);
    else assert.ok(JSON.parse(text).candidates[0].content.parts.length >= 1, name);
  }
  assert.deepEqual(refused, []);
});
