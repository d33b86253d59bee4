// nucleo-emulator driven by Google's official client, @google/genai (2.32.0, its newest release
// that runs on Node 20; pinned in scripts/npm-sdk): generateContent and generateContentStream
// parsed into the SDK's typed results, a function call round whose thought signature goes back
// where it came (gemini.26, gemini.32) and is refused without it, thinking levels from the model's
// record (gemini.29, gemini.31), implicit caching (gemini.33), role alternation (gemini.23) and the
// faults, each error surfacing as the SDK's ApiError with the status of the envelope (gemini.30).
//
// Environment (set by tests/emulator/CMakeLists.txt):
//   NUCLEO_EMULATOR     the nucleo-emulator binary
//   NUCLEO_SDK_MODULES  the node_modules folder holding the clients
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { useEmulator } from './start_emulator.mjs';

const emulatorBinary = process.env.NUCLEO_EMULATOR;
const modules = process.env.NUCLEO_SDK_MODULES;
assert.ok(emulatorBinary, 'NUCLEO_EMULATOR must name the nucleo-emulator binary');
assert.ok(modules, 'NUCLEO_SDK_MODULES must name the node_modules folder of the SDKs');
assert.ok(existsSync(join(modules, '@google', 'genai')),
  `@google/genai is not installed in ${modules}: run scripts/fetch-sdk-clients`);
const { GoogleGenAI, ApiError } = createRequire(join(modules, 'noop.js'))('@google/genai');

const emulator = useEmulator(emulatorBinary);

// The shipped catalog's record (config/models.yaml): levels low, medium and high.
const model = 'gemini-3.1-pro-preview';
const client = (headers = {}) => new GoogleGenAI({ apiKey: 'emu-key', httpOptions: { baseUrl: emulator.baseUrl, headers } });
const weather = [{ functionDeclarations: [{
  name: 'get_weather', description: 'The weather of a city.',
  parametersJsonSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
}] }];
const question = { role: 'user', parts: [{ text: 'What is the weather in Paris' }] };

describe('@google/genai', () => {
  test('a plain answer: text, STOP, usage and the signature on its last part', async () => {
    const r = await client().models.generateContent({ model, contents: 'Where is my parcel' });
    assert.equal(r.text, "This is the emulator's answer to: Where is my parcel");
    assert.equal(r.candidates[0].finishReason, 'STOP');
    assert.ok(r.usageMetadata.promptTokenCount > 0);
    assert.equal(r.usageMetadata.totalTokenCount,
      r.usageMetadata.promptTokenCount + r.usageMetadata.candidatesTokenCount);
    assert.equal(r.modelVersion, model);
    const parts = r.candidates[0].content.parts;
    assert.match(parts[parts.length - 1].thoughtSignature, /^[A-Za-z0-9+/=]+$/);
  });

  test('a function call round: the signature goes back on its part; without it the API text refuses', async () => {
    const first = await client().models.generateContent({ model, contents: [question], config: { tools: weather } });
    assert.equal(first.functionCalls.length, 1);
    assert.equal(first.functionCalls[0].name, 'get_weather');
    assert.deepEqual(first.functionCalls[0].args, { city: 'Paris' });
    const called = first.candidates[0].content;
    assert.ok(called.parts[0].thoughtSignature, 'the first function call carries a signature');
    const result = { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { output: 'Sunny, 21 C' } } }] };
    const second = await client().models.generateContent({
      model, contents: [question, called, result], config: { tools: weather } });
    assert.equal(second.text, 'The tool get_weather returned: Sunny, 21 C');
    assert.equal(second.candidates[0].finishReason, 'STOP');
    const unsigned = { role: 'model', parts: called.parts.map(({ thoughtSignature, ...rest }) => rest) };
    await assert.rejects(client().models.generateContent({
      model, contents: [question, unsigned, result], config: { tools: weather } }), (e) => {
      assert.ok(e instanceof ApiError);
      assert.equal(e.status, 400);
      assert.match(e.message, /Function call is missing a thought_signature in functionCall parts/);
      assert.match(e.message, /default_api:get_weather/);
      return true;
    });
    // A call another provider made carries the documented stand-in (gemini.6) and is answered.
    const foreign = { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: { city: 'Paris' } },
      thoughtSignature: 'skip_thought_signature_validator' }] };
    const third = await client().models.generateContent({
      model, contents: [question, foreign, result], config: { tools: weather } });
    assert.equal(third.text, 'The tool get_weather returned: Sunny, 21 C');
  });

  test('streaming: the chunks assemble the same answer, the last with finishReason, usage and signature', async () => {
    const whole = await client().models.generateContent({ model, contents: 'Tell me about streaming answers please' });
    let text = '';
    let last;
    for await (const chunk of await client().models.generateContentStream({ model, contents: 'Tell me about streaming answers please' })) {
      text += chunk.text ?? '';
      last = chunk;
    }
    assert.equal(text, whole.text);
    assert.equal(last.candidates[0].finishReason, 'STOP');
    assert.deepEqual(last.usageMetadata, whole.usageMetadata);
    assert.ok(last.candidates[0].content.parts.at(-1).thoughtSignature);
    // A streamed function call is one chunk with its signature.
    const calls = [];
    for await (const chunk of await client().models.generateContentStream({ model, contents: [question], config: { tools: weather } }))
      calls.push(...(chunk.functionCalls ?? []));
    assert.deepEqual(calls.map((c) => c.name), ['get_weather']);
  });

  test('thinking: a level of the record is answered with thoughts; one it lacks is refused', async () => {
    const r = await client().models.generateContent({
      model, contents: 'Think about parcels', config: { thinkingConfig: { thinkingLevel: 'HIGH', includeThoughts: true } } });
    assert.equal(r.usageMetadata.thoughtsTokenCount, 64);
    assert.equal(r.candidates[0].content.parts[0].thought, true);
    assert.equal(r.text, "This is the emulator's answer to: Think about parcels");
    await assert.rejects(client().models.generateContent({
      model, contents: 'Think about parcels', config: { thinkingConfig: { thinkingLevel: 'MINIMAL' } } }), (e) => {
      assert.equal(e.status, 400);
      assert.match(e.message, /Thinking level MINIMAL is not supported/);
      return true;
    });
  });

  test('implicit caching: the second call of a long prompt reads cachedContentTokenCount', async () => {
    const systemInstruction = Array.from({ length: 160 },
      (_, i) => `Policy ${i}: answer the customer politely and cite the order number when known.`).join('\n');
    const ask = () => client().models.generateContent({ model, contents: 'Where is order 7', config: { systemInstruction } });
    const first = await ask();
    const second = await ask();
    assert.equal(first.usageMetadata.cachedContentTokenCount, undefined);
    assert.ok(second.usageMetadata.cachedContentTokenCount > 1024, JSON.stringify(second.usageMetadata));
    assert.ok(second.usageMetadata.cachedContentTokenCount <= second.usageMetadata.promptTokenCount);
  });

  test('roles that do not alternate are refused with the API text', async () => {
    await assert.rejects(client().models.generateContent({ model, contents: [
      { role: 'user', parts: [{ text: 'a' }] }, { role: 'user', parts: [{ text: 'b' }] }] }), (e) => {
      assert.equal(e.status, 400);
      assert.match(e.message, /alternate between user and model/);
      return true;
    });
  });

  test('faults and credentials surface as ApiError with the envelope status', async () => {
    for (const [fault, status] of [['429', 429], ['500', 500], ['overloaded', 503]]) {
      await assert.rejects(client({ 'x-emulator-fault': fault }).models.generateContent({ model, contents: 'x' }),
        (e) => { assert.equal(e.status, status, fault); return true; });
    }
    // No key at all: the envelope {"error": {"code", "message", "status"}} with 403.
    const raw = await fetch(`${emulator.baseUrl}/v1beta/models/${model}:generateContent`, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'x' }] }] }) });
    assert.equal(raw.status, 403);
    const body = await raw.json();
    assert.equal(body.error.code, 403);
    assert.equal(body.error.status, 'PERMISSION_DENIED');
  });
});
