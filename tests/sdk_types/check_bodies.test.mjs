// check_bodies.mjs judged on its fixtures (node's built-in test runner): the good bodies of each
// provider pass the official SDK's request type, and each bad one fails with a message naming the
// field and its JSON path (an unknown field, a value of the wrong type, a missing field, a Bedrock
// model id in the body).
//
// Environment: NUCLEO_SDK_MODULES, the node_modules folder scripts/fetch-sdk-clients installs
// (.cache/sdk/npm/node_modules), holding the SDKs and typescript.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const script = join(here, 'check_bodies.mjs');
const fixtures = join(here, 'fixtures');
const modules = process.env.NUCLEO_SDK_MODULES;
assert.ok(modules, 'NUCLEO_SDK_MODULES must name the node_modules folder of the SDKs');
assert.ok(existsSync(join(modules, 'typescript')),
  `typescript is not installed in ${modules}: run scripts/fetch-sdk-clients`);

function check(provider, files) {
  return new Promise((resolve) => {
    execFile(process.execPath, [script, '--provider', provider, '--verbose', ...files],
      { env: { ...process.env, NUCLEO_SDK_MODULES: modules } },
      (error, stdout, stderr) => resolve({ status: error ? error.code : 0, out: stdout + stderr }));
  });
}

const fixtureFiles = (provider, prefix) => readdirSync(join(fixtures, provider))
  .filter((n) => n.startsWith(prefix) && n.endsWith('.json')).sort().map((n) => join(fixtures, provider, n));

// Each bad fixture and what its report must say: the JSON path, then the words naming the fault.
const expectedFaults = {
  anthropic: {
    'bad_unknown_field.json': ['$.messages[0].content[0].cache_controls', "'cache_controls' does not exist in type 'TextBlockParam'"],
    'bad_wrong_type.json': ['$.max_tokens', "Type 'string' is not assignable to type 'number'"],
    'bad_missing_field.json': ['$', 'messages'],
  },
  openai: {
    'bad_unknown_field.json': ['$.messages[0].content[0].cache_control', "'cache_control' does not exist in type 'ChatCompletionContentPartText'"],
    'bad_wrong_type.json': ['$.max_completion_tokens', "Type 'string' is not assignable to type 'number'"],
  },
  bedrock: {
    'bad_unknown_field.json': ['$.inferenceConfig.topK', "'topK' does not exist in type 'InferenceConfiguration'"],
    'bad_wrong_type.json': ['$.messages[0].content[0].image.source.bytes', "Type 'number' is not assignable to type 'Uint8Array"],
    'bad_model_id_in_body.json': ['$.modelId', 'carries no modelId'],
  },
  'openai-responses': {
    'bad_unknown_field.json': ['$.input[0].content[0].cache_control', "'cache_control' does not exist in type"],
    'bad_wrong_type.json': ['$.max_output_tokens', "Type 'string' is not assignable to type 'number'"],
    'bad_output_text_in_user_message.json': ['$.input[0].content[0].type', "'\"output_text\"' is not assignable"],
  },
  gemini: {
    'bad_unknown_field.json': ['$.contents[0].parts[0].cache_control', "'cache_control' does not exist in type 'Part'"],
    'bad_wrong_type.json': ['$.generationConfig.maxOutputTokens', "Type 'string' is not assignable to type 'number'"],
    'bad_thinking_level.json': ['$.generationConfig.thinkingConfig.thinkingLevel', "Property 'high' does not exist on type 'typeof ThinkingLevel'"],
  },
};

// Besides its good_ and bad_ fixtures, a provider's folder may hold other fixtures (checked by the
// folder's run, asserted on by a test of their own).
const otherFaults = {
  anthropic: {
    // One object, two faults: TypeScript reports one of them; the check reports both.
    'two_faults.json': [['$.max_tokens', "Type 'string' is not assignable to type 'number'"],
      ['$.cache_ttl', "'cache_ttl' does not exist in type 'MessageCreateParams'"]],
  },
};

/// The report's blocks by file name: "FAIL file" and its "  at PATH: message" lines.
function failures(out) {
  const blocks = new Map();
  for (const b of out.split(/^(?=FAIL |ok )/m)) {
    const m = /^FAIL (.*)$/m.exec(b.split('\n')[0]);
    if (m) blocks.set(m[1].split('/').pop(), b);
  }
  return blocks;
}

function assertFault(blocks, out, name, path, words) {
  const block = blocks.get(name);
  assert.ok(block, `no FAIL for ${name}:\n${out}`);
  assert.ok(block.includes(`  at ${path}: `), `${name}: no problem at ${path}:\n${block}`);
  assert.ok(block.includes(words), `${name}: the report does not say "${words}":\n${block}`);
}

for (const provider of ['anthropic', 'openai', 'bedrock', 'gemini', 'openai-responses']) {
  describe(provider, () => {
    test('the good bodies pass, all in one run', async () => {
      const good = fixtureFiles(provider, 'good_');
      assert.ok(good.length >= 1);
      const r = await check(provider, good);
      assert.equal(r.status, 0, r.out);
      assert.match(r.out, new RegExp(`^${good.length} passed, 0 failed$`, 'm'), r.out);
    });

    test('the whole folder in one run: each bad body fails, its report naming the field and its JSON path', async () => {
      const good = fixtureFiles(provider, 'good_');
      const bad = fixtureFiles(provider, 'bad_');
      const others = Object.keys(otherFaults[provider] ?? {});
      assert.deepEqual(bad.map((f) => f.split('/').pop()), Object.keys(expectedFaults[provider]).sort());
      const r = await check(provider, [join(fixtures, provider)]);
      assert.equal(r.status, 1, r.out);
      assert.match(r.out, new RegExp(`^${good.length} passed, ${bad.length + others.length} failed$`, 'm'), r.out);
      const blocks = failures(r.out);
      for (const f of good) assert.ok(r.out.includes(`ok   ${f}`), `${f} did not pass:\n${r.out}`);
      for (const [name, [path, words]] of Object.entries(expectedFaults[provider])) {
        assertFault(blocks, r.out, name, path, words);
      }
      for (const [name, faults] of Object.entries(otherFaults[provider] ?? {})) {
        for (const [path, words] of faults) assertFault(blocks, r.out, name, path, words);
      }
    });
  });
}

test('a file that is not JSON fails; no files is a usage error', async () => {
  const r = await check('openai', [script]);
  assert.equal(r.status, 1, r.out);
  assert.match(r.out, /not JSON/);
  assert.match(r.out, /^0 passed, 1 failed$/m);
  const none = await check('openai', []);
  assert.equal(none.status, 1, none.out);
  assert.match(none.out, /usage:/);
});
