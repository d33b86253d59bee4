// nucleo-emulator driven by the providers' official clients: @anthropic-ai/sdk, openai and
// @aws-sdk/client-bedrock-runtime, installed pinned by scripts/fetch-sdk-clients. Each SDK parses
// every answer into its typed result (or typed error), which is what is asserted on: a plain
// answer, a tool round, streaming through the SDK's own stream helper (the Bedrock client has none:
// its decoded event stream is assembled here), prompt caching over three calls (with OpenAI's
// explicit breakpoints and Bedrock's cacheDetails, caching.120-caching.125), stop sequences,
// request ids, credentials and each fault the emulator injects; the Bedrock client is pointed at
// the emulator over HTTP/1.1 the way the AWS SDK documents (requestHandler: new NodeHttpHandler(),
// see the Bedrock tests), its default being HTTP/2. The per-model rules the emulator reads from
// the model catalog (wire.176-wire.189: the shipped config/models.yaml, and a catalog file of
// retired models for a second emulator) reach each SDK as its own typed error with the provider's
// text. The non-streamed answers, the streamed events and the error answers are also checked
// against the providers' published schemas (validate_response.py).
//
// Environment (set by tests/emulator/CMakeLists.txt):
//   NUCLEO_EMULATOR     the nucleo-emulator binary
//   NUCLEO_SDK_MODULES  the node_modules folder holding the three clients
//   NUCLEO_SPECS        optional: the folder of the published schemas (response validation)
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Readable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const emulatorBinary = process.env.NUCLEO_EMULATOR;
const modules = process.env.NUCLEO_SDK_MODULES;
assert.ok(emulatorBinary, 'NUCLEO_EMULATOR must name the nucleo-emulator binary');
assert.ok(modules, 'NUCLEO_SDK_MODULES must name the node_modules folder of the SDKs');
assert.ok(existsSync(join(modules, '@anthropic-ai', 'sdk')),
  `the SDK clients are not installed in ${modules}: run scripts/fetch-sdk-clients`);
const requireSdk = createRequire(join(modules, 'noop.js'));
const Anthropic = requireSdk('@anthropic-ai/sdk');
const OpenAI = requireSdk('openai');
const bedrock = requireSdk('@aws-sdk/client-bedrock-runtime');
const { NodeHttpHandler } = requireSdk('@smithy/node-http-handler');

const here = dirname(fileURLToPath(import.meta.url));
const bodiesDir = mkdtempSync(join(tmpdir(), 'nucleo-sdk-bodies-'));
const recorded = {
  anthropic: [], openai: [], bedrock: [], 'anthropic-error': [], 'openai-error': [], 'bedrock-error': [],
  'anthropic-stream': [], 'openai-stream': [],
};

/// Keeps a copy of every JSON answer, success or error, for the schema check. A Bedrock error is
/// kept with the shape its x-amzn-ErrorType header names.
function record(provider, status, contentType, text, errorType) {
  if (String(contentType).includes('text/event-stream')) {
    recordEvents(provider, text);
    return;
  }
  if (!String(contentType).includes('application/json')) return;
  const kind = status === 200 ? provider : `${provider}-error`;
  const file = join(bodiesDir, `${kind}-${recorded[kind].length}.json`);
  writeFileSync(file, errorType === undefined ? text : JSON.stringify({ shape: errorType, body: JSON.parse(text) }));
  recorded[kind].push(file);
}

/// Keeps each streamed event's data (not Anthropic's ping, not OpenAI's closing [DONE]).
function recordEvents(provider, text) {
  const kind = `${provider}-stream`;
  for (const event of text.split('\n\n')) {
    const lines = event.split('\n');
    if (lines.includes('event: ping')) continue;
    const data = lines.filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)).join('\n');
    if (data === '' || data === '[DONE]') continue;
    const file = join(bodiesDir, `${kind}-${recorded[kind].length}.json`);
    writeFileSync(file, data);
    recorded[kind].push(file);
  }
}

function recordingFetch(provider) {
  return async (url, init) => {
    const response = await fetch(url, init);
    record(provider, response.status, response.headers.get('content-type'),
      await response.clone().text());
    return response;
  };
}

/// Bedrock's client speaks through a smithy request handler: this one reads each JSON answer,
/// keeps a copy and hands the client an identical body. It wraps a NodeHttpHandler, HTTP/1.1,
/// which the emulator speaks: since @aws-sdk/client-bedrock-runtime 3.798.0 the client's own
/// default is NodeHttp2Handler, HTTP/2, which it cannot (see the client's tests below).
class RecordingHandler {
  constructor() { this.inner = new NodeHttpHandler(); this.metadata = { handlerProtocol: 'http/1.1' }; }
  async handle(request, options) {
    const out = await this.inner.handle(request, options);
    const type = out.response.headers['content-type'] ?? '';
    if (type.includes('application/json')) {
      const chunks = [];
      for await (const c of out.response.body) chunks.push(c);
      const buffer = Buffer.concat(chunks);
      const status = out.response.statusCode;
      record('bedrock', status, type, buffer.toString('utf8'),
        status === 200 ? undefined : out.response.headers['x-amzn-errortype']);
      out.response.body = Readable.from([buffer]);
    }
    return out;
  }
  updateHttpClientConfig(key, value) { this.inner.updateHttpClientConfig(key, value); }
  httpHandlerConfigs() { return this.inner.httpHandlerConfigs(); }
  destroy() { this.inner.destroy(); }
}

let emulator;
let baseUrl;
// A second emulator reading retiredCatalog (below): the shipped config/models.yaml retires no
// OpenAI or Bedrock model, so their not-found answers (wire.185) are seen through this one, and
// carries no `mid_conversation:` field yet, so the model that takes mid-conversation system
// messages and tool changes is this catalog's too.
let retiredEmulator;
let retiredUrl;

/// Starts nucleo-emulator with `args` on a free loopback port; resolves with the process and its
/// base URL.
function startEmulator(args = []) {
  const child = spawn(emulatorBinary, ['--port', '0', '--exit-with-parent', ...args],
    { stdio: ['ignore', 'pipe', 'inherit'] });
  // The emulator prints "listening on http://127.0.0.1:PORT" once it accepts connections.
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) resolve({ child, url: m[1] });
    });
    child.on('exit', (code) => reject(new Error(`nucleo-emulator exited with ${code}: ${out}`)));
  });
}

// Retired models of the families the shipped catalog retires none of (ids the providers have
// retired: OpenAI's GPT-4.5 preview, Bedrock's Claude 2.1), and a made-up Anthropic model that
// takes mid-conversation system messages and tool changes.
const retiredCatalog = `models:
  - id: claude-emu-mid
    provider: anthropic
    wire_model: claude-emu-mid
    mid_conversation: [system_messages, tool_changes]
  - id: gpt-4-5-preview
    provider: openai
    wire_model: gpt-4.5-preview
    status: retired
  - id: bedrock-claude-2-1
    provider: bedrock
    wire_model: anthropic.claude-v2:1
    status: retired
`;

before(async () => {
  const catalogFile = join(bodiesDir, 'retired-catalog.yaml');
  writeFileSync(catalogFile, retiredCatalog);
  // Without --catalog the emulator reads the source tree's config/models.yaml (wire.186).
  [{ child: emulator, url: baseUrl }, { child: retiredEmulator, url: retiredUrl }] = await Promise.all([
    startEmulator(), startEmulator(['--catalog', catalogFile])]);
});

after(() => {
  emulator?.kill('SIGTERM');
  retiredEmulator?.kill('SIGTERM');
  rmSync(bodiesDir, { recursive: true, force: true });
});

// A system text long enough to be cached (over the emulator's 1,024-token minimum).
const longSystem = Array.from({ length: 160 },
  (_, i) => `Policy ${i}: answer the customer politely and cite the order number when known.`).join('\n');
// Each turn adds well over OpenAI's 128-token caching step.
const longQuestion = (n) => `Question ${n}: ` + 'please check the status of my order again. '.repeat(20);

const weatherSchema = {
  type: 'object', properties: { city: { type: 'string' } }, required: ['city'],
};

/// Runs validate_response.py without blocking the event loop (a blocked loop would leave the
/// clients' idle keep-alive connections half-closed and the next request would fail on one).
function validateFiles(specs, kind, files) {
  return new Promise((resolve) => {
    execFile('python3', [join(here, 'validate_response.py'), specs, kind, ...files],
      (error, stdout, stderr) => resolve({ status: error ? (error.code ?? 1) : 0, out: stdout + stderr }));
  });
}

function schemaCheck(provider) {
  const specs = process.env.NUCLEO_SPECS;
  if (!specs) return;
  test(`${provider}: every JSON answer matches the published response schema`, async () => {
    assert.ok(recorded[provider].length >= 5, `${recorded[provider].length} answers recorded`);
    const r = await validateFiles(specs, provider, recorded[provider]);
    assert.equal(r.status, 0, r.out);
  });
  if (recorded[`${provider}-stream`] !== undefined) {
    test(`${provider}: every streamed event matches the published event schema`, async () => {
      const events = recorded[`${provider}-stream`];
      assert.ok(events.length >= 10, `${events.length} events recorded`);
      const r = await validateFiles(specs, `${provider}-stream`, events);
      assert.equal(r.status, 0, r.out);
    });
  }
  test(`${provider}: every error answer matches the published error shape`, async () => {
    const errors = recorded[`${provider}-error`];
    assert.ok(errors.length >= 4, `${errors.length} error answers recorded`);
    const r = await validateFiles(specs, `${provider}-error`, errors);
    assert.equal(r.status, 0, r.out);
  });
}

describe('@anthropic-ai/sdk', () => {
  const client = (extra = {}) => new Anthropic({
    apiKey: 'sk-ant-emulator', baseURL: baseUrl, maxRetries: 0,
    fetch: recordingFetch('anthropic'), ...extra,
  });
  const model = 'claude-sonnet-4-5';

  test('a plain answer, with the request id of the request-id header', async () => {
    const msg = await client().messages.create({
      model, max_tokens: 256, messages: [{ role: 'user', content: 'Where is my parcel' }],
    });
    assert.equal(msg.type, 'message');
    assert.equal(msg.role, 'assistant');
    assert.equal(msg.stop_reason, 'end_turn');
    assert.equal(msg.stop_sequence, null);
    assert.deepEqual(msg.content, [{
      type: 'text', text: "This is the emulator's answer to: Where is my parcel", citations: null,
    }]);
    assert.equal(msg.usage.cache_read_input_tokens, 0);
    assert.deepEqual(msg.usage.cache_creation,
      { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 });
    assert.match(msg._request_id, /^req_emu_[0-9a-f]{16}$/);
  });

  test('an x-api-key credential is accepted as well as the Bearer the SDK sends', async () => {
    const msg = await client({ apiKey: null, defaultHeaders: { 'x-api-key': 'sk-ant-emulator' } })
      .messages.create({ model, max_tokens: 64, messages: [{ role: 'user', content: 'Hi' }] });
    assert.equal(msg.stop_reason, 'end_turn');
  });

  test('a tool round: call, result, final answer', async () => {
    const tools = [{ name: 'get_weather', description: 'Weather of a city', input_schema: weatherSchema }];
    const question = { role: 'user', content: 'What is the weather in Paris' };
    const first = await client().messages.create({ model, max_tokens: 256, tools, messages: [question] });
    assert.equal(first.stop_reason, 'tool_use');
    const use = first.content.find((b) => b.type === 'tool_use');
    assert.equal(use.name, 'get_weather');
    assert.deepEqual(use.input, { city: 'Paris' });
    assert.match(use.id, /^toolu_emu_/);
    const second = await client().messages.create({
      model, max_tokens: 256, tools, messages: [question, { role: 'assistant', content: first.content },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: 'Sunny, 21 C' }] }],
    });
    assert.equal(second.stop_reason, 'end_turn');
    assert.equal(second.content[0].text, 'The tool get_weather returned: Sunny, 21 C');
  });

  test('streaming: the stream helper assembles the same message, usage cumulative', async () => {
    const request = { model, max_tokens: 256, messages: [{ role: 'user', content: 'Stream me an answer' }] };
    const plain = await client().messages.create(request);
    const stream = client().messages.stream(request);
    const deltas = [];
    let started;
    stream.on('streamEvent', (e) => {
      if (e.type === 'message_start') started = e.message.usage;
      if (e.type === 'message_delta') deltas.push(e);
    });
    const final = await stream.finalMessage();
    assert.deepEqual(final.content.map((b) => b.text), plain.content.map((b) => b.text));
    assert.equal(final.stop_reason, 'end_turn');
    assert.equal(deltas.length, 1);
    // message_delta repeats the input counts of message_start and carries the final output count.
    assert.equal(deltas[0].usage.input_tokens, started.input_tokens);
    assert.equal(deltas[0].usage.cache_read_input_tokens, started.cache_read_input_tokens);
    assert.equal(deltas[0].usage.cache_creation_input_tokens, started.cache_creation_input_tokens);
    assert.equal(deltas[0].usage.output_tokens, plain.usage.output_tokens);
    assert.equal(final.usage.output_tokens, plain.usage.output_tokens);
  });

  test('prompt caching over three calls, the creation split by TTL', async () => {
    const system = [{ type: 'text', text: longSystem, cache_control: { type: 'ephemeral', ttl: '1h' } }];
    const turns = [];
    const usages = [];
    for (let n = 1; n <= 3; ++n) {
      turns.push({ role: 'user', content: [{ type: 'text', text: longQuestion(n), cache_control: { type: 'ephemeral' } }] });
      const msg = await client().messages.create({ model: 'claude-cache-test', max_tokens: 128, system, messages: turns });
      usages.push(msg.usage);
      turns[turns.length - 1] = { role: 'user', content: longQuestion(n) };
      turns.push({ role: 'assistant', content: msg.content });
    }
    const [u1, u2, u3] = usages;
    assert.equal(u1.cache_read_input_tokens, 0);
    assert.ok(u1.cache_creation.ephemeral_1h_input_tokens >= 1024, JSON.stringify(u1));
    assert.ok(u1.cache_creation.ephemeral_5m_input_tokens > 0, JSON.stringify(u1));
    assert.equal(u1.cache_creation.ephemeral_1h_input_tokens + u1.cache_creation.ephemeral_5m_input_tokens,
      u1.cache_creation_input_tokens);
    // Each call reads the prefix the call before it wrote, and writes only what is new.
    assert.equal(u2.cache_read_input_tokens, u1.cache_creation_input_tokens);
    assert.equal(u2.cache_creation.ephemeral_1h_input_tokens, 0);
    assert.equal(u2.cache_creation.ephemeral_5m_input_tokens, u2.cache_creation_input_tokens);
    assert.equal(u3.cache_read_input_tokens, u2.cache_read_input_tokens + u2.cache_creation_input_tokens);
    assert.ok(u3.cache_read_input_tokens > u2.cache_read_input_tokens);
  });

  test('stop_sequences end the text with stop_reason stop_sequence, streamed or not', async () => {
    const request = { model, max_tokens: 256, stop_sequences: ['never', 'answer'],
      messages: [{ role: 'user', content: 'Stop early please' }] };
    const msg = await client().messages.create(request);
    assert.equal(msg.stop_reason, 'stop_sequence');
    assert.equal(msg.stop_sequence, 'answer');
    assert.equal(msg.content[0].text, "This is the emulator's ");
    const final = await client().messages.stream(request).finalMessage();
    assert.equal(final.stop_reason, 'stop_sequence');
    assert.equal(final.stop_sequence, 'answer');
    assert.equal(final.content[0].text, "This is the emulator's ");
  });

  const faulty = (fault) => client().messages.create(
    { model, max_tokens: 64, messages: [{ role: 'user', content: 'Hi' }] },
    { headers: { 'x-emulator-fault': fault } });

  test('429 surfaces as RateLimitError with retry-after', async () => {
    await assert.rejects(faulty('429'), (e) => {
      assert.ok(e instanceof Anthropic.RateLimitError, e.constructor.name);
      assert.equal(e.status, 429);
      assert.equal(e.headers.get('retry-after'), '1');
      assert.equal(e.error.error.type, 'rate_limit_error');
      assert.match(e.requestID, /^req_emu_/);
      return true;
    });
  });

  test('500 surfaces as InternalServerError, 529 as an overloaded APIError', async () => {
    await assert.rejects(faulty('500'), (e) => {
      assert.ok(e instanceof Anthropic.InternalServerError, e.constructor.name);
      assert.equal(e.status, 500);
      assert.equal(e.error.error.type, 'api_error');
      return true;
    });
    await assert.rejects(faulty('529'), (e) => {
      assert.ok(e instanceof Anthropic.APIError, e.constructor.name);
      assert.equal(e.status, 529);
      assert.equal(e.error.error.type, 'overloaded_error');
      return true;
    });
  });

  test('an orphan tool_result surfaces as BadRequestError with the API text', async () => {
    const request = client().messages.create({ model, max_tokens: 64, messages: [
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_nowhere', content: 'x' }] }] });
    await assert.rejects(request, (e) => {
      assert.ok(e instanceof Anthropic.BadRequestError, e.constructor.name);
      assert.equal(e.status, 400);
      assert.equal(e.error.error.type, 'invalid_request_error');
      assert.match(e.error.error.message, /unexpected `tool_use_id` found in `tool_result` blocks: toolu_nowhere/);
      return true;
    });
  });

  test('no credential surfaces as AuthenticationError', async () => {
    const request = client({ apiKey: null, authToken: null, defaultHeaders: { Authorization: null } })
      .messages.create({ model, max_tokens: 64, messages: [{ role: 'user', content: 'Hi' }] });
    await assert.rejects(request, (e) => {
      assert.ok(e instanceof Anthropic.AuthenticationError, e.constructor.name);
      assert.equal(e.status, 401);
      return true;
    });
  });

  // ---- the per-model rules of the model catalog (wire.176-wire.187, docs/emulator.md "Model
  // catalog"): the emulator reads the shipped config/models.yaml, and the SDK sees each refusal
  // as its own typed error carrying the provider's text.

  test('a retired model surfaces as NotFoundError naming the model, on count_tokens too', async () => {
    const retired = 'claude-sonnet-4-5-20250929';
    const notFound = (e) => {
      assert.ok(e instanceof Anthropic.NotFoundError, e.constructor.name);
      assert.equal(e.status, 404);
      assert.equal(e.error.type, 'error');
      assert.equal(e.error.error.type, 'not_found_error');
      assert.equal(e.error.error.message, `model: ${retired}`);
      assert.match(e.message, /^404 .*model: claude-sonnet-4-5-20250929/);
      assert.match(e.requestID, /^req_emu_/);
      return true;
    };
    await assert.rejects(client().messages.create({
      model: retired, max_tokens: 64, messages: [{ role: 'user', content: 'Hi' }] }), notFound);
    await assert.rejects(client().messages.countTokens({
      model: retired, messages: [{ role: 'user', content: 'Hi' }] }), notFound);
  });

  const adaptiveUse = ' Use "thinking.type.adaptive" and "output_config.effort" to control thinking behavior.';
  const ask = (m, extra, messages = [{ role: 'user', content: 'What is the answer?' }]) =>
    client().messages.create({ model: m, max_tokens: 4096, messages, ...extra });
  const badRequest = (text) => (e) => {
    assert.ok(e instanceof Anthropic.BadRequestError, e.constructor.name);
    assert.equal(e.status, 400);
    assert.equal(e.error.error.type, 'invalid_request_error');
    assert.equal(e.error.error.message, text);
    assert.ok(e.message.startsWith(`400 ${text}`), e.message);
    return true;
  };

  test('thinking.type enabled on an adaptive model surfaces as BadRequestError', async () => {
    await assert.rejects(ask('claude-sonnet-5-5', { thinking: { type: 'enabled', budget_tokens: 2048 } }),
      badRequest(`"thinking.type.enabled" is not supported for this model.${adaptiveUse}`));
    // Opus 5.5 always thinks: disabled is refused as well.
    await assert.rejects(ask('claude-opus-5-5', { thinking: { type: 'disabled' } }),
      badRequest(`"thinking.type.disabled" is not supported for this model.${adaptiveUse}`));
    // Haiku 4.5 thinks only with a budget: adaptive is refused.
    await assert.rejects(ask('claude-haiku-4-5-20251001', { thinking: { type: 'adaptive' } }),
      badRequest('adaptive thinking is not supported on this model'));
  });

  // What claude-sonnet-5-5's record refuses (thinking.display, thinking.efforts and refuses:
  // [sampling, prefill, forced_tool_use]); a model the catalog does not name takes each body.
  const prefill = [{ role: 'user', content: 'What is the answer?' }, { role: 'assistant', content: 'The answer is' }];
  const lookup = [{ name: 'lookup', description: 'Looks up', input_schema: { type: 'object' } }];
  const sonnetRefusals = [
    ['an effort outside the record', { thinking: { type: 'adaptive' }, output_config: { effort: 'extreme' } },
      "output_config.effort: Input should be 'low', 'medium', 'high', 'xhigh' or 'max'"],
    ['a thinking.display outside the record', { thinking: { type: 'adaptive', display: 'updates' } },
      "thinking.adaptive.display: Input should be 'summarized' or 'omitted'"],
    ['temperature', { temperature: 0.2 }, '`temperature` is deprecated for this model.'],
    ['top_p', { top_p: 0.9 }, '`top_p` is deprecated for this model.'],
    ['top_k', { top_k: 40 }, '`top_k` is deprecated for this model.'],
    ['an assistant prefill', { messages: prefill },
      'This model does not support assistant message prefill. The conversation must end with a user message.'],
    ['forced tool use', { tools: lookup, tool_choice: { type: 'any' } },
      'tool_choice: type "tool" and "any" are not supported for this model.'],
  ];
  for (const [what, extra, text] of sonnetRefusals) {
    test(`${what} on claude-sonnet-5-5 surfaces as BadRequestError with the API text`, async () => {
      await assert.rejects(ask('claude-sonnet-5-5', extra), badRequest(text));
      const other = await ask(model, extra);
      assert.equal(other.type, 'message', what);
    });
  }

  test('a current request: adaptive thinking at effort medium is answered, its usage typed', async () => {
    const request = {
      model: 'claude-sonnet-5-5', max_tokens: 4096, thinking: { type: 'adaptive' },
      output_config: { effort: 'medium' }, messages: [{ role: 'user', content: 'Why is the sky blue?' }],
    };
    const msg = await client().messages.create(request);
    assert.equal(msg.model, 'claude-sonnet-5-5');
    assert.equal(msg.stop_reason, 'end_turn');
    assert.equal(msg.content.at(-1).text, "This is the emulator's answer to: Why is the sky blue?");
    assert.ok(Number.isInteger(msg.usage.input_tokens) && msg.usage.input_tokens > 0, JSON.stringify(msg.usage));
    assert.ok(Number.isInteger(msg.usage.output_tokens) && msg.usage.output_tokens > 0, JSON.stringify(msg.usage));
    // The field is always present: null when the answer has no thinking block (the emulator's
    // adaptive thinking writes none), else the thinking tokens.
    assert.ok('output_tokens_details' in msg.usage, JSON.stringify(msg.usage));
    const thinking = msg.content.filter((b) => b.type === 'thinking');
    if (thinking.length === 0) {
      assert.equal(msg.usage.output_tokens_details, null);
    } else {
      assert.ok(msg.usage.output_tokens_details.thinking_tokens <= msg.usage.output_tokens);
    }
    const final = await client().messages.stream(request).finalMessage();
    assert.equal(final.usage.output_tokens, msg.usage.output_tokens);
  });

  test('a thinking block: its tokens are in usage.output_tokens_details, streamed or not', async () => {
    const request = {
      model: 'claude-haiku-4-5-20251001', max_tokens: 4096, thinking: { type: 'enabled', budget_tokens: 2048 },
      messages: [{ role: 'user', content: 'Why is the sky blue?' }],
    };
    const msg = await client().messages.create(request);
    assert.equal(msg.content[0].type, 'thinking');
    assert.match(msg.content[0].signature, /^emu-sig-/);
    const thinkingTokens = msg.usage.output_tokens_details.thinking_tokens;
    assert.equal(thinkingTokens, Math.ceil(Buffer.byteLength(msg.content[0].thinking) / 4));
    assert.ok(thinkingTokens > 0 && thinkingTokens < msg.usage.output_tokens, JSON.stringify(msg.usage));
    const final = await client().messages.stream(request).finalMessage();
    assert.equal(final.content[0].thinking, msg.content[0].thinking);
    assert.deepEqual(final.usage.output_tokens_details, { thinking_tokens: thinkingTokens });
    assert.equal(final.usage.output_tokens, msg.usage.output_tokens);
  });

  // wire.193, wire.194: claude-sonnet-5-5's record says thinking.bound_to_prefix.
  const bindingBeta = 'thinking-binding-controls-2026-08-01';
  const boundHistory = async () => {
    const first = [{ role: 'user', content: 'Why is the sky blue?' }];
    const msg = await client().messages.create({ model: 'claude-sonnet-5-5', max_tokens: 4096,
      system: 'You are terse.', thinking: { type: 'adaptive' }, messages: first });
    assert.equal(msg.content[0].type, 'thinking');
    return [...first, { role: 'assistant', content: msg.content }, { role: 'user', content: 'And at sunset?' }];
  };

  test('a thinking block sent back after a changed system surfaces as BadRequestError', async () => {
    const messages = await boundHistory();
    const same = await client().messages.create({ model: 'claude-sonnet-5-5', max_tokens: 4096,
      system: 'You are terse.', thinking: { type: 'adaptive' }, messages });
    assert.equal(same.stop_reason, 'end_turn');
    await assert.rejects(client().messages.create({ model: 'claude-sonnet-5-5', max_tokens: 4096,
      system: 'You are verbose.', thinking: { type: 'adaptive' }, messages }), (e) => {
      assert.ok(e instanceof Anthropic.BadRequestError, e.constructor.name);
      assert.equal(e.status, 400);
      assert.equal(e.error.error.type, 'invalid_request_error');
      assert.ok(e.error.error.message.startsWith(
        'messages.1.content.0: The block is bound to a different conversation'), e.error.error.message);
      return true;
    });
  });

  test('drop_block through the beta messages API answers the changed-prefix request', async () => {
    const messages = await boundHistory();
    const request = { model: 'claude-sonnet-5-5', max_tokens: 4096, system: 'You are verbose.',
      thinking: { type: 'adaptive', block_binding: { prefix_mismatch_behavior: 'drop_block' } }, messages };
    const msg = await client().beta.messages.create({ ...request, betas: [bindingBeta] });
    assert.equal(msg.type, 'message');
    assert.equal(msg.stop_reason, 'end_turn');
    assert.equal(msg.content.at(-1).text, "This is the emulator's answer to: And at sunset?");
    // Without the beta the control is not read.
    await assert.rejects(client().beta.messages.create(request),
      (e) => e instanceof Anthropic.BadRequestError && e.status === 400);
  });

  test('cache diagnostics: diagnostics.cache_miss_reason names a changed system, streamed or not', async () => {
    const system = 'You track parcels for the cache diagnostics test.';
    const question = { role: 'user', content: 'Where is my parcel, diagnostics edition?' };
    const plain = await client().messages.create({ model, max_tokens: 256, system, messages: [question] });
    assert.equal(plain.diagnostics, null);
    // The first turn opts in with a null id; an appended turn is no divergence.
    const first = await client().messages.create({ model, max_tokens: 256, system, messages: [question],
      diagnostics: { previous_message_id: null } });
    assert.equal(first.diagnostics, null);
    const appended = await client().messages.create({ model, max_tokens: 256, system,
      messages: [question, { role: 'assistant', content: first.content }, { role: 'user', content: 'And tomorrow?' }],
      diagnostics: { previous_message_id: first.id } });
    assert.equal(appended.diagnostics, null);
    const changed = await client().messages.create({ model, max_tokens: 256,
      system: `${system} Today is Monday.`, messages: [question], diagnostics: { previous_message_id: first.id } });
    assert.equal(changed.diagnostics.cache_miss_reason.type, 'system_changed');
    // Without tools, the previous prompt from the system on is all count_tokens counts (not
    // recorded: its answer is no Message for the schema check).
    const counted = await client({ fetch }).messages.countTokens({ model, system, messages: [question] });
    assert.equal(changed.diagnostics.cache_miss_reason.cache_missed_input_tokens, counted.input_tokens);
    // Streamed: message_start carries them, and the stream helper keeps them in its message.
    const stream = client().messages.stream({ model, max_tokens: 256, system, messages: [question],
      diagnostics: { previous_message_id: 'msg_never_answered' } });
    const final = await stream.finalMessage();
    assert.deepEqual(final.diagnostics, { cache_miss_reason: { type: 'previous_message_not_found' } });
    await assert.rejects(client().messages.create({ model, max_tokens: 256, messages: [question],
      diagnostics: { previous_message_id: 42 } }), (e) => {
      assert.ok(e instanceof Anthropic.BadRequestError, e.constructor.name);
      assert.equal(e.error.error.message, 'diagnostics.previous_message_id: Input should be a valid string');
      return true;
    });
  });

  test('a system message adds a tool by value through client.beta.messages with its beta', async () => {
    const mid = client({ baseURL: retiredUrl });
    const tools = [{ name: 'get_weather', description: 'Weather of a city', input_schema: weatherSchema }];
    const tides = { name: 'get_tides', description: 'Tides of a port',
      input_schema: { type: 'object', properties: { port: { type: 'string' } }, required: ['port'] } };
    const request = { model: 'claude-emu-mid', max_tokens: 256, tools,
      tool_choice: { type: 'tool', name: 'get_tides' },
      messages: [{ role: 'user', content: 'When is high tide in Brest' },
        { role: 'system', content: [
          { type: 'text', text: 'The tides service is available from now on.' },
          { type: 'tool_addition', tool: { type: 'tool_definition', definition: tides } }] }] };
    const msg = await mid.beta.messages.create({ ...request, betas: ['inline-tools-2026-09-15'] });
    assert.equal(msg.stop_reason, 'tool_use');
    const use = msg.content.find((b) => b.type === 'tool_use');
    assert.equal(use.name, 'get_tides');
    assert.deepEqual(use.input, { port: 'Brest' });
    // Without the beta the block is refused, named.
    await assert.rejects(mid.beta.messages.create(request), (e) => {
      assert.ok(e instanceof Anthropic.BadRequestError, e.constructor.name);
      assert.equal(e.error.error.message, 'messages.1.content.1: a tool_definition requires the '
        + 'anthropic-beta header "inline-tools-2026-09-15"');
      return true;
    });
    // A reference naming no tool: the SDK's own class, from error.details.error_code.
    const unresolved = { ...request, tool_choice: undefined, messages: [request.messages[0],
      { role: 'system', content: [{ type: 'tool_addition', tool: { type: 'tool_reference', name: 'get_tides' } }] }] };
    await assert.rejects(mid.beta.messages.create({ ...unresolved, betas: ['inline-tools-2026-09-15'] }), (e) => {
      assert.ok(e instanceof Anthropic.BadRequestError, e.constructor.name);
      assert.equal(e.name, 'ToolReferenceUnresolvedError');
      assert.equal(e.errorCode, 'tool_reference_unresolved');
      return true;
    });
  });

  // Message threads (wire.199-wire.205): the beta client sends `thread` with the beta, and the
  // SDK raises each thread error as its own class from error.details.error_code.
  const threadsBeta = 'message-threads-2026-08-12';
  const threadModel = 'claude-sonnet-5-5';

  /// A client whose requests' JSON bodies are kept in `sent`, in order.
  const capturing = (sent) => client({ fetch: async (url, init) => {
    sent.push(JSON.parse(init.body));
    return recordingFetch('anthropic')(url, init);
  } });

  test('threads: a continue is answered as the whole conversation, with its id', async () => {
    const system = 'You track parcels for the threads test.';
    const question = { role: 'user', content: 'Where is parcel T1' };
    const first = await client().beta.messages.create({ model: threadModel, max_tokens: 256, system,
      messages: [question], thread: { type: 'create' }, betas: [threadsBeta] });
    const next = { role: 'user', content: 'And parcel T2' };
    const second = await client().beta.messages.create({ model: threadModel, max_tokens: 256,
      messages: [next], thread: { type: 'continue', previous_message_id: first.id }, betas: [threadsBeta] });
    assert.equal(second.content[0].text, "This is the emulator's answer to: And parcel T2");
    const whole = await client().messages.create({ model: threadModel, max_tokens: 256, system,
      messages: [question, { role: 'assistant', content: first.content }, next] });
    assert.equal(second.id, whole.id);
    assert.equal(second.usage.input_tokens, whole.usage.input_tokens);
    // Each answer is continued once.
    await assert.rejects(client().beta.messages.create({ model: threadModel, max_tokens: 256,
      messages: [next], thread: { type: 'continue', previous_message_id: first.id }, betas: [threadsBeta] }), (e) => {
      assert.ok(e instanceof Anthropic.BadRequestError, e.constructor.name);
      assert.equal(e.name, 'ThreadAlreadyContinuedError');
      assert.equal(e.errorCode, 'thread_already_continued');
      return true;
    });
  });

  test('threads: each thread error is the SDK class of its error code', async () => {
    const create = { model: threadModel, max_tokens: 256, messages: [{ role: 'user', content: 'Parcel T3' }],
      thread: { type: 'create' }, betas: [threadsBeta] };
    const first = await client().beta.messages.create(create);
    const continuing = (extra = {}, options = {}) => client().beta.messages.create({ ...create,
      messages: [{ role: 'user', content: 'And T4' }],
      thread: { type: 'continue', previous_message_id: first.id }, ...extra }, options);
    const raised = (name, code, status) => (e) => {
      assert.equal(e.name, name);
      assert.equal(e.errorCode, code);
      assert.equal(e.status, status);
      return true;
    };
    await assert.rejects(continuing({ output_config: { effort: 'low' } }),
      raised('ThreadFingerprintMismatchError', 'thread_fingerprint_mismatch', 400));
    await assert.rejects(continuing({}, { headers: { 'x-emulator-fault': 'thread-busy' } }),
      raised('ThreadContinueInFlightError', 'thread_continue_in_flight', 400));
    await assert.rejects(continuing({ thread: { type: 'continue', previous_message_id: 'msg_never_answered' } }),
      (e) => e instanceof Anthropic.NotFoundError
        && raised('ThreadNotFoundError', 'thread_not_found', 404)(e));
    await assert.rejects(client().beta.messages.create({ ...create, model: 'claude-fable-5-2' }),
      raised('ThreadUnsupportedRequestError', 'thread_unsupported_request', 400));
    // Without the beta the member is an extra input.
    await assert.rejects(client().beta.messages.create({ ...create, betas: undefined }), (e) => {
      assert.ok(e instanceof Anthropic.BadRequestError, e.constructor.name);
      assert.equal(e.error.error.message, 'thread: Extra inputs are not permitted');
      return true;
    });
    // None of them consumed the answer.
    const ok = await continuing();
    assert.equal(ok.content[0].text, "This is the emulator's answer to: And T4");
  });

  test("threads: the SDK's thread helper sends only the new turn, and replays a lost or busy thread", async () => {
    const sent = [];
    const thread = capturing(sent).beta.messages.thread({ model: threadModel, max_tokens: 256,
      system: 'You track parcels for the helper test.' });
    const first = await thread.send({ role: 'user', content: 'Where is parcel H1' });
    const second = await thread.send({ role: 'user', content: 'And parcel H2' });
    assert.equal(second.content[0].text, "This is the emulator's answer to: And parcel H2");
    assert.deepEqual(sent[0].thread, { type: 'create' });
    assert.deepEqual(sent[1].thread, { type: 'continue', previous_message_id: first.id });
    assert.equal(sent[1].system, undefined);
    assert.deepEqual(sent[1].messages, [{ role: 'user', content: 'And parcel H2' }]);
    // Streamed through the helper: the stored answer is continued by the next turn.
    const streamed = await thread.stream({ role: 'user', content: 'And parcel H3' }).finalMessage();
    assert.equal(streamed.content[0].text, "This is the emulator's answer to: And parcel H3");
    let reply;
    for (const fault of ['thread-lost', 'thread-busy']) {
      const before = sent.length;
      reply = await thread.send({ role: 'user', content: `After ${fault}` }, {},
        { headers: { 'x-emulator-fault': fault } });
      assert.equal(reply.content[0].text, `This is the emulator's answer to: After ${fault}`);
      // The continue was refused, then the whole conversation went again under a new thread.
      assert.deepEqual(sent.slice(before).map((b) => b.thread.type), ['continue', 'create']);
      assert.equal(sent.at(-1).messages.length, thread.messages.length - 1);
    }
    const last = await thread.send({ role: 'user', content: 'And the last parcel' });
    assert.deepEqual(sent.at(-1).thread, { type: 'continue', previous_message_id: reply.id });
    assert.equal(sent.at(-1).messages.length, 1);
    assert.equal(last.content[0].text, "This is the emulator's answer to: And the last parcel");
  });

  schemaCheck('anthropic');
});

describe('openai', () => {
  const client = () => new OpenAI({
    apiKey: 'sk-emulator', baseURL: `${baseUrl}/v1`, maxRetries: 0, fetch: recordingFetch('openai'),
  });
  const model = 'gpt-4o';

  test('a plain answer, with the request id of the x-request-id header', async () => {
    const c = await client().chat.completions.create({
      model, messages: [{ role: 'user', content: 'Where is my parcel' }],
    });
    assert.equal(c.object, 'chat.completion');
    assert.equal(c.choices[0].finish_reason, 'stop');
    assert.equal(c.choices[0].message.content, "This is the emulator's answer to: Where is my parcel");
    assert.equal(c.usage.total_tokens, c.usage.prompt_tokens + c.usage.completion_tokens);
    assert.match(c._request_id, /^req_emu[0-9a-f]{25}$/);
  });

  test('a tool round: call, result, final answer', async () => {
    const tools = [{ type: 'function', function: { name: 'get_weather', parameters: weatherSchema } }];
    const question = { role: 'user', content: 'What is the weather in Paris' };
    const first = await client().chat.completions.create({ model, tools, messages: [question] });
    assert.equal(first.choices[0].finish_reason, 'tool_calls');
    const call = first.choices[0].message.tool_calls[0];
    assert.equal(call.function.name, 'get_weather');
    assert.deepEqual(JSON.parse(call.function.arguments), { city: 'Paris' });
    const second = await client().chat.completions.create({
      model, tools, messages: [question, first.choices[0].message,
        { role: 'tool', tool_call_id: call.id, content: 'Sunny, 21 C' }],
    });
    assert.equal(second.choices[0].finish_reason, 'stop');
    assert.equal(second.choices[0].message.content, 'The tool get_weather returned: Sunny, 21 C');
  });

  test('streaming: the stream helper assembles the same completion and the usage', async () => {
    const tools = [{ type: 'function', function: { name: 'get_weather', parameters: weatherSchema } }];
    const request = { model, tools, messages: [{ role: 'user', content: 'What is the weather in Rome' }] };
    const plain = await client().chat.completions.create(request);
    const final = await client().chat.completions
      .stream({ ...request, stream_options: { include_usage: true } }).finalChatCompletion();
    assert.equal(final.choices[0].finish_reason, 'tool_calls');
    assert.deepEqual(final.choices[0].message.tool_calls.map((c) => [c.id, c.function.name, c.function.arguments]),
      plain.choices[0].message.tool_calls.map((c) => [c.id, c.function.name, c.function.arguments]));
    assert.equal(final.usage.completion_tokens, plain.usage.completion_tokens);
    const text = await client().chat.completions
      .stream({ model, messages: [{ role: 'user', content: 'Stream me an answer' }] }).finalContent();
    assert.equal(text, "This is the emulator's answer to: Stream me an answer");
  });

  test('prompt caching over three calls: cached_tokens grows', async () => {
    const messages = [{ role: 'system', content: longSystem }];
    const cached = [];
    for (let n = 1; n <= 3; ++n) {
      messages.push({ role: 'user', content: longQuestion(n) });
      const c = await client().chat.completions.create({ model: 'gpt-cache-test', messages });
      cached.push(c.usage.prompt_tokens_details.cached_tokens);
      messages.push(c.choices[0].message);
    }
    assert.equal(cached[0], 0);
    assert.ok(cached[1] >= 1024 && cached[1] % 128 === 0, String(cached));
    assert.ok(cached[2] > cached[1] && cached[2] % 128 === 0, String(cached));
  });

  test('stop ends the content with finish_reason stop, streamed or not', async () => {
    const request = { model, stop: ['answer'], messages: [{ role: 'user', content: 'Stop early please' }] };
    const c = await client().chat.completions.create(request);
    assert.equal(c.choices[0].finish_reason, 'stop');
    assert.equal(c.choices[0].message.content, "This is the emulator's ");
    const final = await client().chat.completions.stream({ ...request, stop: 'answer' }).finalChatCompletion();
    assert.equal(final.choices[0].message.content, "This is the emulator's ");
  });

  const faulty = (fault) => client().chat.completions.create(
    { model, messages: [{ role: 'user', content: 'Hi' }] }, { headers: { 'x-emulator-fault': fault } });

  test('429 surfaces as RateLimitError with retry-after', async () => {
    await assert.rejects(faulty('429'), (e) => {
      assert.ok(e instanceof OpenAI.RateLimitError, e.constructor.name);
      assert.equal(e.status, 429);
      assert.equal(e.headers.get('retry-after'), '1');
      assert.equal(e.code, 'rate_limit_exceeded');
      assert.match(e.requestID, /^req_emu/);
      return true;
    });
  });

  test('500 and 503 surface as InternalServerError', async () => {
    for (const [fault, status] of [['500', 500], ['529', 503]]) {
      await assert.rejects(faulty(fault), (e) => {
        assert.ok(e instanceof OpenAI.InternalServerError, e.constructor.name);
        assert.equal(e.status, status);
        assert.equal(e.type, 'server_error');
        return true;
      });
    }
  });

  test('an orphan tool message surfaces as BadRequestError with the API text', async () => {
    const request = client().chat.completions.create({ model, messages: [
      { role: 'user', content: 'Hi' }, { role: 'tool', tool_call_id: 'call_nowhere', content: 'x' }] });
    await assert.rejects(request, (e) => {
      assert.ok(e instanceof OpenAI.BadRequestError, e.constructor.name);
      assert.equal(e.status, 400);
      assert.equal(e.param, 'messages.[1].role');
      assert.match(e.message, /must be a response to a preceeding message with 'tool_calls'/);
      return true;
    });
  });

  // ---- the per-model rules of the model catalog (wire.182, wire.185, wire.187, wire.189) ------

  const reasoning = (m, extra, c = client()) => c.chat.completions.create({
    model: m, messages: [{ role: 'user', content: 'What is the answer?' }], ...extra });

  test('a reasoning_effort the model does not list surfaces as BadRequestError unsupported_value', async () => {
    await assert.rejects(reasoning('gpt-5.6-sol', { reasoning_effort: 'max' }), (e) => {
      assert.ok(e instanceof OpenAI.BadRequestError, e.constructor.name);
      assert.equal(e.status, 400);
      assert.equal(e.type, 'invalid_request_error');
      assert.equal(e.code, 'unsupported_value');
      assert.equal(e.param, 'reasoning_effort');
      assert.equal(e.error.message, "Unsupported value: 'reasoning_effort' does not support 'max' with this "
        + "model. Supported values are: 'none', 'low', 'medium', 'high', and 'xhigh'.");
      assert.match(e.message, /^400 Unsupported value: 'reasoning_effort' does not support 'max'/);
      assert.match(e.requestID, /^req_emu/);
      return true;
    });
    // Its highest listed effort is answered, the reasoning counted in the usage.
    const c = await reasoning('gpt-5.6-sol', { reasoning_effort: 'xhigh' });
    assert.equal(c.choices[0].finish_reason, 'stop');
    const reasoningTokens = c.usage.completion_tokens_details.reasoning_tokens;
    assert.ok(reasoningTokens > 0, JSON.stringify(c.usage));
    assert.ok(c.usage.completion_tokens > reasoningTokens, JSON.stringify(c.usage));
    assert.equal(c.usage.total_tokens, c.usage.prompt_tokens + c.usage.completion_tokens);
  });

  test('reasoning_effort on a model that does not reason surfaces as unsupported_parameter', async () => {
    await assert.rejects(reasoning('gpt-4.1-2025-04-14', { reasoning_effort: 'low' }), (e) => {
      assert.ok(e instanceof OpenAI.BadRequestError, e.constructor.name);
      assert.equal(e.status, 400);
      assert.equal(e.code, 'unsupported_parameter');
      assert.equal(e.param, 'reasoning_effort');
      assert.equal(e.error.message, "Unsupported parameter: 'reasoning_effort' is not supported with this model.");
      return true;
    });
  });

  test('function tools with reasoning on Chat Completions surface as BadRequestError', async () => {
    const tools = [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object' } } }];
    await assert.rejects(reasoning('gpt-6-sol', { tools, reasoning_effort: 'medium' }), (e) => {
      assert.ok(e instanceof OpenAI.BadRequestError, e.constructor.name);
      assert.equal(e.status, 400);
      assert.equal(e.param, 'reasoning_effort');
      assert.equal(e.error.message, 'Function tools with reasoning_effort are not supported for gpt-6-sol in '
        + "/v1/chat/completions. To use function tools, use /v1/responses or set reasoning_effort to 'none'.");
      return true;
    });
    const c = await reasoning('gpt-6-sol', { tools, reasoning_effort: 'none' });
    assert.equal(c.object, 'chat.completion');
  });

  // caching.120-caching.124: explicit prompt-cache breakpoints on a model whose record says
  // `caching.breakpoints: explicit`, through the SDK's own parameter types.
  const marked = (text) => ({ type: 'text', text, prompt_cache_breakpoint: { mode: 'explicit' } });
  const breakpointSystem = `Breakpoints. ${longSystem}`;

  test('explicit breakpoints: the next call reads the prefix at its mark and writes the rest, streamed too', async () => {
    const options = { mode: 'explicit', ttl: '30m' };
    const turn = (n, mark) => ({ role: 'user', content: [mark ? marked(longQuestion(n)) : { type: 'text', text: longQuestion(n) }] });
    const messages = [{ role: 'system', content: [marked(breakpointSystem)] }, turn(1, true)];
    const first = await client().chat.completions.create({
      model: 'gpt-5.6-sol', messages, prompt_cache_options: options, prompt_cache_key: 'sdk-test' });
    const u1 = first.usage;
    assert.equal(u1.prompt_tokens_details.cached_tokens, 0);
    assert.equal(u1.prompt_tokens_details.cache_write_tokens, u1.prompt_tokens);
    messages.push(first.choices[0].message, turn(2, true));
    const second = await client().chat.completions.create({
      model: 'gpt-5.6-sol', messages, prompt_cache_options: options });
    const u2 = second.usage;
    assert.equal(u2.prompt_tokens_details.cached_tokens, u1.prompt_tokens);
    assert.equal(u2.prompt_tokens_details.cache_write_tokens, u2.prompt_tokens - u1.prompt_tokens);
    // The same request streamed: everything is read, nothing new is written.
    const streamed = await client().chat.completions.stream({
      model: 'gpt-5.6-sol', messages, prompt_cache_options: options, stream_options: { include_usage: true },
    }).finalChatCompletion();
    assert.equal(streamed.usage.prompt_tokens, u2.prompt_tokens);
    assert.equal(streamed.usage.prompt_tokens_details.cached_tokens, u2.prompt_tokens);
    assert.equal(streamed.usage.prompt_tokens_details.cache_write_tokens, 0);
    // Without a mark, explicit mode caches nothing.
    const unmarked = await client().chat.completions.create({ model: 'gpt-5.6-sol',
      messages: [{ role: 'system', content: `Unmarked. ${longSystem}` }, { role: 'user', content: 'Hi' }],
      prompt_cache_options: { mode: 'explicit' } });
    assert.equal(unmarked.usage.prompt_tokens_details.cached_tokens, 0);
    assert.equal(unmarked.usage.prompt_tokens_details.cache_write_tokens, 0);
  });

  test('implicit mode, the default: the whole prompt is written and read back', async () => {
    const request = { model: 'gpt-6-luna',
      messages: [{ role: 'system', content: `Implicit. ${longSystem}` }, { role: 'user', content: 'Hi' }] };
    const first = await client().chat.completions.create(request);
    assert.equal(first.usage.prompt_tokens_details.cache_write_tokens, first.usage.prompt_tokens);
    const again = await client().chat.completions.create({ ...request, prompt_cache_options: { mode: 'implicit' } });
    assert.equal(again.usage.prompt_tokens_details.cached_tokens, first.usage.prompt_tokens);
    assert.equal(again.usage.prompt_tokens_details.cache_write_tokens, 0);
  });

  test('a breakpoint of another mode surfaces as BadRequestError naming the field', async () => {
    const request = client().chat.completions.create({ model: 'gpt-6-luna', messages: [
      { role: 'user', content: [{ type: 'text', text: 'Hi', prompt_cache_breakpoint: { mode: 'implicit' } }] }] });
    await assert.rejects(request, (e) => {
      assert.ok(e instanceof OpenAI.BadRequestError, e.constructor.name);
      assert.equal(e.status, 400);
      assert.equal(e.type, 'invalid_request_error');
      assert.equal(e.code, 'invalid_value');
      assert.equal(e.param, 'messages[0].content[0].prompt_cache_breakpoint.mode');
      assert.match(e.error.message, /'messages\[0\]\.content\[0\]\.prompt_cache_breakpoint\.mode'/);
      return true;
    });
    const ttl = client().chat.completions.create({ model: 'gpt-6-luna',
      messages: [{ role: 'user', content: 'Hi' }], prompt_cache_options: { ttl: '1h' } });
    await assert.rejects(ttl, (e) => e instanceof OpenAI.BadRequestError && e.param === 'prompt_cache_options.ttl');
  });

  test('the breakpoint parameters on a model that caches automatically surface as unsupported_parameter', async () => {
    const options = client().chat.completions.create({ model: 'gpt-4.1-2025-04-14',
      messages: [{ role: 'user', content: 'Hi' }], prompt_cache_options: { mode: 'explicit' } });
    await assert.rejects(options, (e) => {
      assert.ok(e instanceof OpenAI.BadRequestError, e.constructor.name);
      assert.equal(e.status, 400);
      assert.equal(e.code, 'unsupported_parameter');
      assert.equal(e.param, 'prompt_cache_options');
      assert.equal(e.error.message,
        "Unsupported parameter: 'prompt_cache_options' is not supported for model gpt-4.1-2025-04-14.");
      return true;
    });
    const mark = client().chat.completions.create({ model: 'gpt-4o-mini-2024-07-18',
      messages: [{ role: 'user', content: [marked('Hi')] }] });
    await assert.rejects(mark, (e) => {
      assert.ok(e instanceof OpenAI.BadRequestError, e.constructor.name);
      assert.equal(e.param, 'messages[0].content[0].prompt_cache_breakpoint');
      assert.equal(e.error.message, "Unsupported parameter: 'messages[0].content[0].prompt_cache_breakpoint' "
        + 'is not supported for model gpt-4o-mini-2024-07-18.');
      return true;
    });
    // The routing key is taken on every model.
    const keyed = await client().chat.completions.create({ model: 'gpt-4.1-2025-04-14',
      messages: [{ role: 'user', content: 'Hi' }], prompt_cache_key: 'sdk-test' });
    assert.equal(keyed.object, 'chat.completion');
    assert.equal(keyed.usage.prompt_tokens_details.cache_write_tokens, undefined);
  });

  test('a retired model surfaces as NotFoundError, code model_not_found', async () => {
    const retired = new OpenAI({
      apiKey: 'sk-emulator', baseURL: `${retiredUrl}/v1`, maxRetries: 0, fetch: recordingFetch('openai'),
    });
    await assert.rejects(reasoning('gpt-4.5-preview', {}, retired), (e) => {
      assert.ok(e instanceof OpenAI.NotFoundError, e.constructor.name);
      assert.equal(e.status, 404);
      assert.equal(e.type, 'invalid_request_error');
      assert.equal(e.code, 'model_not_found');
      assert.equal(e.param, null);
      assert.equal(e.error.message, 'The model `gpt-4.5-preview` does not exist or you do not have access to it.');
      return true;
    });
  });

  schemaCheck('openai');
});

describe('@aws-sdk/client-bedrock-runtime', () => {
  // The emulator speaks HTTP/1.1 only, and the Bedrock Runtime client's default request handler
  // in Node.js is NodeHttp2Handler (HTTP/2; h2c on an http:// endpoint). The AWS SDK's documented
  // way to choose the handler is the client's `requestHandler` parameter, given an instance: its
  // supplemental docs, "Request Handler `requestHandler`"
  // (https://github.com/aws/aws-sdk-js-v3/blob/main/supplemental-docs/CLIENTS.md#request-handler-requesthandler),
  // show `requestHandler: new NodeHttpHandler({...})` from @smithy/node-http-handler, the package
  // that "implements the default requestHandler for Node.js using node:http, node:https, and
  // node:http2". The shorter form they document since v3.521.0, `requestHandler: { ...options }`,
  // keeps "the default requestHandler for the platform and service", which for this client is
  // NodeHttp2Handler: the docs list the clients that default to it (Bedrock Runtime is not named),
  // say the list may change and name each client's src/runtimeConfig.ts as the reference, and
  // Bedrock Runtime's has built a NodeHttp2Handler since 3.798.0 (aws/aws-sdk-js-v3#7041). So: an instance, never the options
  // form. The tests below give a RecordingHandler, which wraps a NodeHttpHandler.
  const handler = new RecordingHandler();
  after(() => handler.destroy());
  const client = (fault, extra = {}) => {
    const c = new bedrock.BedrockRuntimeClient({
      region: 'us-east-1', endpoint: baseUrl, maxAttempts: 1, requestHandler: handler,
      credentials: { accessKeyId: 'AKIDEMULATOR', secretAccessKey: 'emulator-secret' }, ...extra,
    });
    if (fault) {
      c.middlewareStack.add((next) => (args) => {
        args.request.headers['x-emulator-fault'] = fault;
        return next(args);
      }, { step: 'build', name: 'emulatorFault' });
    }
    return c;
  };
  const modelId = 'anthropic.claude-sonnet-4-5-v1:0';
  const user = (text) => ({ role: 'user', content: [{ text }] });

  test('a plain answer, with the request id of the x-amzn-RequestId header', async () => {
    const out = await client().send(new bedrock.ConverseCommand({ modelId, messages: [user('Where is my parcel')] }));
    assert.equal(out.stopReason, 'end_turn');
    assert.equal(out.output.message.role, 'assistant');
    assert.deepEqual(out.output.message.content, [{ text: "This is the emulator's answer to: Where is my parcel" }]);
    assert.equal(out.usage.totalTokens, out.usage.inputTokens + out.usage.outputTokens);
    assert.match(out.$metadata.requestId, /^00000000-0000-4000-8000-[0-9a-f]{12}$/);
  });

  test('HTTP/1.1 as documented: requestHandler: new NodeHttpHandler()', async () => {
    const c = new bedrock.BedrockRuntimeClient({
      region: 'us-east-1', endpoint: baseUrl, maxAttempts: 1, requestHandler: new NodeHttpHandler(),
      credentials: { accessKeyId: 'AKIDEMULATOR', secretAccessKey: 'emulator-secret' },
    });
    try {
      assert.equal(c.config.requestHandler.metadata.handlerProtocol, 'http/1.1');
      const out = await c.send(new bedrock.ConverseCommand({ modelId, messages: [user('Hi')] }));
      assert.equal(out.stopReason, 'end_turn');
    } finally {
      c.destroy();
    }
  });

  test('the default handler and the options form speak HTTP/2, which the emulator does not', async () => {
    for (const extra of [{}, { requestHandler: { requestTimeout: 5000 } }]) {
      const c = new bedrock.BedrockRuntimeClient({
        region: 'us-east-1', endpoint: baseUrl, maxAttempts: 1, ...extra,
        credentials: { accessKeyId: 'AKIDEMULATOR', secretAccessKey: 'emulator-secret' },
      });
      try {
        assert.equal(c.config.requestHandler.metadata.handlerProtocol, 'h2', JSON.stringify(extra));
        // The emulator (HTTP/1.1 only) closes an HTTP/2 connection without an answer (node: ERR_HTTP2_ERROR).
        await assert.rejects(c.send(new bedrock.ConverseCommand({ modelId, messages: [user('Hi')] })));
      } finally {
        c.destroy();
      }
    }
  });

  test('a Bedrock API key (Authorization: Bearer) is accepted', async () => {
    const c = client(undefined, {
      credentials: undefined, token: { token: 'bedrock-api-key-emulator' },
      authSchemePreference: ['httpBearerAuth'],
    });
    let sent;
    c.middlewareStack.add((next) => async (args) => {
      const out = await next(args);
      const headers = args.request.headers;
      sent = headers[Object.keys(headers).find((k) => k.toLowerCase() === 'authorization')];
      return out;
    }, { step: 'finalizeRequest', name: 'seeAuth', priority: 'low' });
    const out = await c.send(new bedrock.ConverseCommand({ modelId, messages: [user('Hi')] }));
    assert.equal(sent, 'Bearer bedrock-api-key-emulator');
    assert.equal(out.stopReason, 'end_turn');
  });

  test('a tool round: call, result, final answer', async () => {
    const toolConfig = { tools: [{ toolSpec: { name: 'get_weather', inputSchema: { json: weatherSchema } } }] };
    const question = user('What is the weather in Paris');
    const first = await client().send(new bedrock.ConverseCommand({ modelId, toolConfig, messages: [question] }));
    assert.equal(first.stopReason, 'tool_use');
    const use = first.output.message.content[0].toolUse;
    assert.equal(use.name, 'get_weather');
    assert.deepEqual(use.input, { city: 'Paris' });
    const second = await client().send(new bedrock.ConverseCommand({
      modelId, toolConfig, messages: [question, first.output.message,
        { role: 'user', content: [{ toolResult: { toolUseId: use.toolUseId, content: [{ text: 'Sunny, 21 C' }] } }] }],
    }));
    assert.equal(second.stopReason, 'end_turn');
    assert.equal(second.output.message.content[0].text, 'The tool get_weather returned: Sunny, 21 C');
  });

  test('streaming: the SDK decodes the event stream into the same message', async () => {
    const toolConfig = { tools: [{ toolSpec: { name: 'get_weather', inputSchema: { json: weatherSchema } } }] };
    for (const [messages, tools] of [[[user('Stream me an answer')], undefined], [[user('What is the weather in Rome')], toolConfig]]) {
      const plain = await client().send(new bedrock.ConverseCommand({ modelId, messages, toolConfig: tools }));
      const out = await client().send(new bedrock.ConverseStreamCommand({ modelId, messages, toolConfig: tools }));
      let text = '';
      let input = '';
      let stopReason;
      let usage;
      for await (const e of out.stream) {
        if (e.contentBlockDelta?.delta?.text) text += e.contentBlockDelta.delta.text;
        if (e.contentBlockDelta?.delta?.toolUse) input += e.contentBlockDelta.delta.toolUse.input;
        if (e.messageStop) stopReason = e.messageStop.stopReason;
        if (e.metadata) usage = e.metadata.usage;
      }
      assert.equal(stopReason, plain.stopReason);
      assert.equal(usage.outputTokens, plain.usage.outputTokens);
      const block = plain.output.message.content[0];
      if (block.toolUse) {
        assert.deepEqual(JSON.parse(input), block.toolUse.input);
      } else {
        assert.equal(text, block.text);
      }
    }
  });

  test('prompt caching over three calls with cachePoint blocks', async () => {
    const system = [{ text: longSystem }, { cachePoint: { type: 'default' } }];
    const messages = [];
    const usages = [];
    for (let n = 1; n <= 3; ++n) {
      messages.push({ role: 'user', content: [{ text: longQuestion(n) }, { cachePoint: { type: 'default' } }] });
      const out = await client().send(new bedrock.ConverseCommand({ modelId: 'cache-test-model', system, messages }));
      usages.push(out.usage);
      messages[messages.length - 1] = user(longQuestion(n));
      messages.push(out.output.message);
    }
    const [u1, u2, u3] = usages;
    assert.equal(u1.cacheReadInputTokens, 0);
    assert.ok(u1.cacheWriteInputTokens >= 1024, JSON.stringify(u1));
    assert.equal(u2.cacheReadInputTokens, u1.cacheWriteInputTokens);
    assert.equal(u3.cacheReadInputTokens, u2.cacheReadInputTokens + u2.cacheWriteInputTokens);
    for (const u of usages) {
      assert.equal(u.totalTokens, u.inputTokens + u.outputTokens + u.cacheReadInputTokens + u.cacheWriteInputTokens);
    }
  });

  test('usage.cacheDetails splits the cache writes by the TTL of their cachePoint, streamed or not', async () => {
    // caching.125: a 1-hour cachePoint after the system text, a 5-minute one after the question.
    const system = [{ text: `Details. ${longSystem}` }, { cachePoint: { type: 'default', ttl: '1h' } }];
    const ask = (n) => [{ role: 'user', content: [{ text: longQuestion(n) }, { cachePoint: { type: 'default' } }] }];
    const first = await client().send(new bedrock.ConverseCommand({ modelId: 'cache-details-model', system, messages: ask(1) }));
    const u1 = first.usage;
    assert.equal(u1.cacheDetails.length, 2, JSON.stringify(u1));
    assert.deepEqual(u1.cacheDetails.map((d) => d.ttl), ['1h', '5m']);
    assert.equal(u1.cacheDetails[0].inputTokens + u1.cacheDetails[1].inputTokens, u1.cacheWriteInputTokens);
    // Streamed, a new question: the 1-hour prefix is read, only the 5-minute tail is written.
    const out = await client().send(new bedrock.ConverseStreamCommand({ modelId: 'cache-details-model', system, messages: ask(2) }));
    let usage;
    for await (const event of out.stream) if (event.metadata) usage = event.metadata.usage;
    assert.equal(usage.cacheReadInputTokens, u1.cacheDetails[0].inputTokens);
    assert.deepEqual(usage.cacheDetails, [{ ttl: '5m', inputTokens: usage.cacheWriteInputTokens }]);
    // Nothing written: no cacheDetails.
    const again = await client().send(new bedrock.ConverseCommand({ modelId: 'cache-details-model', system, messages: ask(1) }));
    assert.equal(again.usage.cacheWriteInputTokens, 0);
    assert.equal(again.usage.cacheDetails, undefined);
  });

  test('stopSequences end the text with stopReason stop_sequence', async () => {
    const out = await client().send(new bedrock.ConverseCommand({
      modelId, inferenceConfig: { stopSequences: ['answer'] }, messages: [user('Stop early please')] }));
    assert.equal(out.stopReason, 'stop_sequence');
    assert.equal(out.output.message.content[0].text, "This is the emulator's ");
  });

  const faulty = (fault) => client(fault).send(new bedrock.ConverseCommand({ modelId, messages: [user('Hi')] }));

  test('429 surfaces as ThrottlingException', async () => {
    await assert.rejects(faulty('429'), (e) => {
      assert.ok(e instanceof bedrock.ThrottlingException, e.constructor.name);
      assert.equal(e.$metadata.httpStatusCode, 429);
      assert.match(e.$metadata.requestId, /^00000000-0000-4000-8000-/);
      return true;
    });
  });

  test('500 surfaces as InternalServerException, 529 as ServiceUnavailableException', async () => {
    await assert.rejects(faulty('500'), (e) => {
      assert.ok(e instanceof bedrock.InternalServerException, e.constructor.name);
      assert.equal(e.$metadata.httpStatusCode, 500);
      return true;
    });
    await assert.rejects(faulty('529'), (e) => {
      assert.ok(e instanceof bedrock.ServiceUnavailableException, e.constructor.name);
      assert.equal(e.$metadata.httpStatusCode, 503);
      return true;
    });
  });

  test('an orphan toolResult surfaces as ValidationException with the API text', async () => {
    const request = client().send(new bedrock.ConverseCommand({ modelId,
      toolConfig: { tools: [{ toolSpec: { name: 'get_weather', inputSchema: { json: weatherSchema } } }] },
      messages: [{ role: 'user', content: [{ toolResult: { toolUseId: 'tooluse_nowhere', content: [{ text: 'x' }] } }] }] }));
    await assert.rejects(request, (e) => {
      assert.ok(e instanceof bedrock.ValidationException, e.constructor.name);
      assert.equal(e.$metadata.httpStatusCode, 400);
      assert.equal(e.message, 'The number of toolResult blocks at messages.0.content exceeds the number of toolUse blocks of previous turn.');
      return true;
    });
  });

  // ---- the per-model rules of the model catalog (wire.183-wire.185): the Claude model's refusal
  // passed through as a ValidationException, a retired model as ResourceNotFoundException.

  test('temperature on a model whose record refuses sampling surfaces as ValidationException', async () => {
    const request = client().send(new bedrock.ConverseCommand({ modelId: 'us.anthropic.claude-sonnet-5-5',
      inferenceConfig: { maxTokens: 512, temperature: 0.2 }, messages: [user('What is the answer?')] }));
    await assert.rejects(request, (e) => {
      assert.ok(e instanceof bedrock.ValidationException, e.constructor.name);
      assert.equal(e.name, 'ValidationException');
      assert.equal(e.$metadata.httpStatusCode, 400);
      assert.equal(e.message, 'The model returned the following errors: `temperature` is deprecated for this model.');
      return true;
    });
    const out = await client().send(new bedrock.ConverseCommand({ modelId: 'us.anthropic.claude-sonnet-5-5',
      inferenceConfig: { maxTokens: 512 }, messages: [user('What is the answer?')] }));
    assert.equal(out.stopReason, 'end_turn');
  });

  test('thinking enabled on an adaptive model surfaces as ValidationException', async () => {
    const request = client().send(new bedrock.ConverseCommand({ modelId: 'us.anthropic.claude-sonnet-5-5',
      additionalModelRequestFields: { thinking: { type: 'enabled', budget_tokens: 2048 } },
      messages: [user('What is the answer?')] }));
    await assert.rejects(request, (e) => {
      assert.ok(e instanceof bedrock.ValidationException, e.constructor.name);
      assert.equal(e.$metadata.httpStatusCode, 400);
      assert.equal(e.message, 'The model returned the following errors: "thinking.type.enabled" is not '
        + 'supported for this model. Use "thinking.type.adaptive" and "output_config.effort" to control '
        + 'thinking behavior.');
      return true;
    });
  });

  // wire.195, wire.197: adaptive thinking on Converse answers a reasoningContent block bound to
  // its prefix.
  test('adaptive thinking answers reasoningContent, refused as ValidationException after a changed system', async () => {
    const request = (system, messages) => new bedrock.ConverseCommand({
      modelId: 'us.anthropic.claude-sonnet-5-5', system: [{ text: system }], messages,
      inferenceConfig: { maxTokens: 4096 }, outputConfig: { effort: 'low' },
      additionalModelRequestFields: { thinking: { type: 'adaptive' } } });
    const first = [user('Why is the sky blue?')];
    const out = await client().send(request('Terse.', first));
    const reasoning = out.output.message.content[0].reasoningContent.reasoningText;
    assert.match(reasoning.signature, /^emu-sig-/);
    const text = out.output.message.content[1].text;
    assert.equal(out.usage.outputTokens, 1000 + Math.ceil(Buffer.byteLength(text) / 4));
    const messages = [...first, out.output.message, user('And at sunset?')];
    const again = await client().send(request('Terse.', messages));
    assert.equal(again.stopReason, 'end_turn');
    await assert.rejects(client().send(request('Verbose.', messages)), (e) => {
      assert.ok(e instanceof bedrock.ValidationException, e.constructor.name);
      assert.equal(e.$metadata.httpStatusCode, 400);
      assert.ok(e.message.startsWith('The model returned the following errors: messages.1.content.0: '
        + 'The block is bound to a different conversation'), e.message);
      return true;
    });
  });

  test('a retired model surfaces as ResourceNotFoundException, streamed or not', async () => {
    const retired = client(undefined, { endpoint: retiredUrl });
    const gone = (e) => {
      assert.ok(e instanceof bedrock.ResourceNotFoundException, e.constructor.name);
      assert.equal(e.name, 'ResourceNotFoundException');
      assert.equal(e.$metadata.httpStatusCode, 404);
      assert.equal(e.message,
        'This model version has reached the end of its life. Please refer to the AWS documentation for more details.');
      return true;
    };
    const request = { modelId: 'anthropic.claude-v2:1', messages: [user('Hi')] };
    await assert.rejects(retired.send(new bedrock.ConverseCommand(request)), gone);
    await assert.rejects(retired.send(new bedrock.ConverseStreamCommand(request)), gone);
  });

  schemaCheck('bedrock');
});
