// nucleo-emulator's /v1/responses driven by OpenAI's official client, `openai` (pinned in
// scripts/npm-sdk): responses.create parsed into the SDK's typed Response, streamed as its typed
// events, a function call round with the reasoning item sent back encrypted (responses.32) and
// refused on another model family, the rule book's texts (responses.23, responses.30), caching at
// explicit breakpoints for the records that take them (responses.31) and the faults, each error
// surfacing as the SDK's APIError with the envelope's status.
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
assert.ok(existsSync(join(modules, 'openai')), `openai is not installed in ${modules}: run scripts/fetch-sdk-clients`);
const OpenAI = createRequire(join(modules, 'noop.js'))('openai');

const emulator = useEmulator(emulatorBinary);

// The shipped catalog's GPT-6 Sol record for this dialect: efforts none..max, explicit breakpoints.
const model = 'gpt-6-sol';
const client = (headers = {}) => new OpenAI({ apiKey: 'sk-emu', baseURL: `${emulator.baseUrl}/v1`, maxRetries: 0, defaultHeaders: headers });
const weather = [{
  type: 'function', name: 'get_weather', description: 'The weather of a city.', strict: true,
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
}];
const question = { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'What is the weather in Paris' }] };

describe('openai responses', () => {
  test('a plain answer: output_text, completed, usage with its details', async () => {
    const r = await client().responses.create({ model, instructions: 'Be brief.', input: 'Where is my parcel', store: false });
    assert.equal(r.object, 'response');
    assert.equal(r.status, 'completed');
    assert.equal(r.output_text, "This is the emulator's answer to: Where is my parcel");
    assert.equal(r.model, model);
    assert.ok(r.usage.input_tokens > 0);
    assert.equal(r.usage.total_tokens, r.usage.input_tokens + r.usage.output_tokens);
    assert.equal(typeof r.usage.input_tokens_details.cached_tokens, 'number');
    assert.equal(r.usage.output_tokens_details.reasoning_tokens, 0);
  });

  test('a function call round with reasoning: the item goes back encrypted, to the same family only', async () => {
    const ask = { model, input: [question], tools: weather, reasoning: { effort: 'low', summary: 'auto' },
      include: ['reasoning.encrypted_content'], store: false, max_output_tokens: 1000 };
    const first = await client().responses.create(ask);
    const [reasoning, call] = first.output;
    assert.equal(reasoning.type, 'reasoning');
    assert.equal(reasoning.summary[0].type, 'summary_text');
    assert.ok(reasoning.encrypted_content);
    assert.equal(first.usage.output_tokens_details.reasoning_tokens, 16);
    assert.equal(call.type, 'function_call');
    assert.equal(call.name, 'get_weather');
    assert.deepEqual(JSON.parse(call.arguments), { city: 'Paris' });
    const output = { type: 'function_call_output', call_id: call.call_id, output: 'Sunny, 21 C' };
    const second = await client().responses.create({ ...ask, input: [question, reasoning, call, output] });
    assert.equal(second.output_text, 'The tool get_weather returned: Sunny, 21 C');
    // Another family cannot verify the item.
    await assert.rejects(client().responses.create({ ...ask, model: 'gpt-6-luna', input: [question, reasoning, call, output] }),
      (e) => {
        assert.ok(e instanceof OpenAI.APIError);
        assert.equal(e.status, 400);
        assert.match(e.message, /could not be verified/);
        return true;
      });
    // Unstored without its encrypted content: the item cannot be found (responses.25).
    const { encrypted_content: _dropped, ...bare } = reasoning;
    await assert.rejects(client().responses.create({ ...ask, input: [question, bare, call, output] }),
      (e) => { assert.equal(e.status, 400); assert.match(e.message, /Items are not persisted/); return true; });
  });

  test('an output without its call is refused with the API text', async () => {
    await assert.rejects(client().responses.create({ model, input: [question,
      { type: 'function_call_output', call_id: 'call_none', output: 'x' }] }), (e) => {
      assert.equal(e.status, 400);
      assert.equal(e.error.message, 'No tool call found for function call output with call_id call_none.');
      assert.equal(e.error.type, 'invalid_request_error');
      return true;
    });
  });

  test('streaming: the typed events assemble the non-streamed answer', async () => {
    const params = { model, input: 'Tell me about streaming answers please', reasoning: { effort: 'low', summary: 'auto' } };
    const whole = await client().responses.create(params);
    const types = [];
    let text = '';
    let summary = '';
    let completed;
    for await (const event of await client().responses.create({ ...params, stream: true })) {
      types.push(event.type);
      if (event.type === 'response.output_text.delta') text += event.delta;
      if (event.type === 'response.reasoning_summary_text.delta') summary += event.delta;
      if (event.type === 'response.completed') completed = event.response;
    }
    assert.equal(types[0], 'response.created');
    assert.equal(types.at(-1), 'response.completed');
    assert.equal(text, whole.output_text);
    assert.ok(summary.length > 0);
    assert.deepEqual(completed.usage, whole.usage);
    // The SDK's stream helper assembles the same final response.
    const final = await client().responses.stream(params).finalResponse();
    assert.equal(final.output_text, whole.output_text);
    // A streamed function call: its arguments arrive as deltas.
    let args = '';
    for await (const event of await client().responses.create({ model, input: [question], tools: weather, stream: true }))
      if (event.type === 'response.function_call_arguments.delta') args += event.delta;
    assert.deepEqual(JSON.parse(args), { city: 'Paris' });
  });

  test('the output limit: incomplete with max_output_tokens', async () => {
    const r = await client().responses.create({ model, input: 'Write a long essay about parcels and their journeys', max_output_tokens: 16 });
    assert.equal(r.status, 'incomplete');
    assert.equal(r.incomplete_details.reason, 'max_output_tokens');
  });

  test('the record\'s efforts: one it lacks is refused', async () => {
    await assert.rejects(client().responses.create({ model: 'gpt-5.6-sol', input: 'x', reasoning: { effort: 'max' } }),
      (e) => { assert.equal(e.status, 400); assert.match(e.message, /reasoning.effort/); return true; });
  });

  test('explicit breakpoints: the second call reads the prefix its mark wrote', async () => {
    const policy = Array.from({ length: 160 },
      (_, i) => `Policy ${i}: answer the customer politely and cite the order number when known.`).join('\n');
    const input = [
      { type: 'message', role: 'developer', content: [{ type: 'input_text', text: policy, prompt_cache_breakpoint: { mode: 'explicit' } }] },
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Where is order 7' }] },
    ];
    const ask = () => client().responses.create({ model, input, prompt_cache_key: 'conv-1', prompt_cache_options: { mode: 'explicit' } });
    const first = await ask();
    const second = await ask();
    assert.ok(first.usage.input_tokens_details.cache_write_tokens > 1024, JSON.stringify(first.usage));
    assert.equal(first.usage.input_tokens_details.cached_tokens, 0);
    assert.equal(second.usage.input_tokens_details.cached_tokens, first.usage.input_tokens_details.cache_write_tokens);
    // A mark on assistant output has no such field: refused naming it.
    await assert.rejects(client().responses.create({ model, input: [
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'a' }] },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'b', annotations: [], prompt_cache_breakpoint: { mode: 'explicit' } }] },
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'c' }] }] }), (e) => {
      assert.equal(e.status, 400);
      assert.match(e.message, /Unknown parameter: 'input\[1\]\.content\[0\]\.prompt_cache_breakpoint'/);
      return true;
    });
  });

  test('faults and credentials surface as APIError with the envelope status', async () => {
    for (const [fault, status] of [['429', 429], ['500', 500], ['overloaded', 503]]) {
      await assert.rejects(client({ 'x-emulator-fault': fault }).responses.create({ model, input: 'x' }),
        (e) => { assert.equal(e.status, status, fault); return true; });
    }
    const raw = await fetch(`${emulator.baseUrl}/v1/responses`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model, input: 'x' }) });
    assert.equal(raw.status, 401);
    const body = await raw.json();
    assert.equal(body.error.type, 'invalid_request_error');
  });
});
