// Every body a full-dialect plugin renders from the kit's encode corpus (saved by `nucleo plugin
// check --save-requests`, tests/sdk_types' sdk_types.kit_corpus.<dialect>.render) is answered by
// nucleo-emulator: the family's rule book accepts what the plugin writes. gemini: gemini.20-gemini.27
// (signatures and merged roles included, gemini.2, gemini.6), posted to a model outside the catalog
// so the corpus's own thinking levels are not held to one model's record. openai-responses:
// responses.20-responses.29 (calls and outputs paired, reasoning items, responses.4, responses.5),
// posted to the model each body names.
//
// Environment: NUCLEO_EMULATOR (the binary), NUCLEO_CORPUS_BODIES (the folder of saved bodies),
// NUCLEO_CORPUS_DIALECT (gemini or openai-responses).
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { useEmulator } from './start_emulator.mjs';

const emulatorBinary = process.env.NUCLEO_EMULATOR;
const bodies = process.env.NUCLEO_CORPUS_BODIES;
const dialect = process.env.NUCLEO_CORPUS_DIALECT;
assert.ok(emulatorBinary, 'NUCLEO_EMULATOR must name the nucleo-emulator binary');
assert.ok(bodies, 'NUCLEO_CORPUS_BODIES must name the folder of the saved bodies');

// Where each dialect's bodies go, and what an answer holds.
const dialects = {
  gemini: {
    url: (base) => `${base}/v1beta/models/gemini-corpus-check:generateContent`,
    headers: { 'x-goog-api-key': 'emu-key' },
    answered: (a) => a.candidates[0].content.parts.length >= 1,
  },
  'openai-responses': {
    url: (base) => `${base}/v1/responses`,
    headers: { authorization: 'Bearer sk-emu' },
    answered: (a) => a.object === 'response' && a.output.length >= 1,
  },
};
const target = dialects[dialect];
assert.ok(target, `NUCLEO_CORPUS_DIALECT must be one of ${Object.keys(dialects).join(', ')}`);

const emulator = useEmulator(emulatorBinary);

test(`every corpus body the ${dialect} plugin renders is answered with 200`, async () => {
  const files = readdirSync(bodies).filter((n) => n.endsWith('.json')).sort();
  assert.ok(files.length >= 20, `only ${files.length} bodies in ${bodies}`);
  const refused = [];
  for (const name of files) {
    const r = await fetch(target.url(emulator.baseUrl), {
      method: 'POST', headers: { 'content-type': 'application/json', ...target.headers },
      body: readFileSync(join(bodies, name)) });
    const text = await r.text();
    if (r.status !== 200) refused.push(`${name}: ${r.status} ${text}`);
    else if (!r.headers.get('content-type').includes('event-stream')) assert.ok(target.answered(JSON.parse(text)), name);
  }
  assert.deepEqual(refused, []);
});
