// The peer side of bench/peers: the Vercel AI SDK's Anthropic provider building the request of
// the conversation bench/peers/conversation.json describes (the one peer_bench.cpp builds through
// Nucleo), at each size, single-threaded. No network: the provider is given a `fetch` that keeps
// the body it is handed and answers with a canned message.
//
// Measured per size, medians of --runs after --warmup runs:
//   do_generate_body_ms  model.doGenerate from its call until the body reaches `fetch` (the
//                        request building: prompt conversion, tools, cache marks, JSON.stringify);
//                        do_generate_body_cpu_ms the process CPU time of the same span
//   do_generate_ms       model.doGenerate end to end (the canned answer parsed and returned)
//   generate_text_ms     generateText end to end with the same fetch (prompt standardization and
//                        validation, the provider call, the answer's processing); median of
//                        --text-runs after one warm-up (it is the slow one: seconds at 20,000)
//   growing_body_ms      one more question appended to a prompt that grew by one turn per run,
//                        then doGenerate to the fetch: the SDK keeps no state between calls, so
//                        this is its next-request cost on a growing conversation (and _cpu_ms)
//   body                 what the body carries: messages, tools, cache_control marks
//
// Usage: node ai_sdk_peer.mjs [--modules DIR] [--sizes 200,2000,20000] [--runs 5] [--warmup 2]
//                             [--text-runs 3] [--dump-body DIR]
// DIR defaults to .cache/peers/npm/node_modules of the source tree (scripts/fetch-bench-peers).
// Prints one JSON document: {peer, versions, runs, warmup, sizes: [{messages, body_bytes, ...}]}.
import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";
import { fileURLToPath, pathToFileURL } from "node:url";
import { performance } from "node:perf_hooks";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "../..");

function parseArgs(argv) {
  const opts = {
    modules: path.join(root, ".cache/peers/npm/node_modules"),
    sizes: [200, 2000, 20000],
    runs: 5,
    textRuns: 3,
    warmup: 2,
    dumpBody: null,
  };
  for (let a = 0; a < argv.length; a += 2) {
    const [flag, value] = [argv[a], argv[a + 1]];
    if (value === undefined) throw new Error(`ai_sdk_peer: ${flag} needs a value`);
    if (flag === "--modules") opts.modules = path.resolve(value);
    else if (flag === "--sizes") opts.sizes = value.split(",").map(Number);
    else if (flag === "--runs") opts.runs = Number(value);
    else if (flag === "--text-runs") opts.textRuns = Number(value);
    else if (flag === "--warmup") opts.warmup = Number(value);
    else if (flag === "--dump-body") opts.dumpBody = path.resolve(value);
    else throw new Error(`ai_sdk_peer: unknown option ${flag}`);
  }
  for (const n of opts.sizes) {
    if (!Number.isInteger(n) || n <= 0 || n % 4 !== 0) {
      throw new Error(`ai_sdk_peer: --sizes: ${n} is not a positive multiple of 4`);
    }
  }
  if (!(opts.runs >= 1) || !(opts.textRuns >= 1) || !(opts.warmup >= 0)) {
    throw new Error("ai_sdk_peer: --runs >= 1, --text-runs >= 1, --warmup >= 0");
  }
  return opts;
}

const opts = parseArgs(process.argv.slice(2));
if (!fs.existsSync(path.join(opts.modules, "ai"))) {
  console.error(`ai_sdk_peer: ${opts.modules}/ai not found (run scripts/fetch-bench-peers)`);
  process.exit(2);
}
const require = createRequire(path.join(opts.modules, "noop.cjs"));
const load = async (name) => import(pathToFileURL(require.resolve(name)).href);
const version = (name) =>
  JSON.parse(fs.readFileSync(path.join(opts.modules, name, "package.json"), "utf8")).version;
const { generateText, jsonSchema, tool } = await load("ai");
const { createAnthropic } = await load("@ai-sdk/anthropic");

const spec = JSON.parse(fs.readFileSync(path.join(here, "conversation.json"), "utf8"));

// ---- the conversation of conversation.json ----
const fill = (template, vars) => template.replace(/\{([a-z])\}/g, (_, k) => String(vars[k]));
const varsOf = (i) => {
  const r = Math.floor(i / 4);
  return { i, r, t: r % spec.tools.count };
};
const cacheMark = { anthropic: { cacheControl: { type: "ephemeral" } } };

const toolList = [];
for (let k = 0; k < spec.tools.count; ++k) {
  toolList.push({
    name: fill(spec.tools.name, { k }),
    description: fill(spec.tools.description, { k }),
    schema: spec.tools.input_schema,
  });
}

// A message of the cycle in the AI SDK's shape (the same for the provider's prompt and for
// generateText's messages), with a cache mark on its text when `cached`.
function message(i, cached) {
  const entry = spec.cycle[i % spec.cycle.length];
  const v = varsOf(i);
  const textPart = (text) => ({
    type: "text",
    text: fill(text, v),
    ...(cached ? { providerOptions: cacheMark } : {}),
  });
  switch (entry.role) {
    case "user":
      return { role: "user", content: [textPart(entry.text)] };
    case "assistant": {
      const content = [textPart(entry.text)];
      if (entry.tool_call) {
        const input = {};
        for (const [key, value] of Object.entries(entry.tool_call.input)) {
          input[key] = typeof value === "string" ? fill(value, v) : value;
        }
        content.push({
          type: "tool-call",
          toolCallId: fill(entry.tool_call.id, v),
          toolName: fill(entry.tool_call.name, v),
          input,
        });
      }
      return { role: "assistant", content };
    }
    case "tool":
      return {
        role: "tool",
        content: [{
          type: "tool-result",
          toolCallId: fill(entry.tool_call_id, v),
          toolName: fill(entry.tool_name, v),
          output: { type: "content", value: [{ type: "text", text: fill(entry.result, v) }] },
        }],
      };
    default:
      throw new Error(`conversation.json: cycle role ${entry.role}`);
  }
}

// The N history messages and the next question; the last `last_user_questions` user questions
// (the new one included) carry cache marks.
function messages(n) {
  const marks = new Set();
  for (let q = 0; q < spec.cache_marks.last_user_questions; ++q) marks.add(n - 4 * q);
  const out = [];
  for (let i = 0; i <= n; ++i) out.push(message(i, marks.has(i)));
  return out;
}

const systemMessage = {
  role: "system",
  content: spec.system,
  ...(spec.cache_marks.system ? { providerOptions: cacheMark } : {}),
};
const providerTools = toolList.map((t) => ({
  type: "function",
  name: t.name,
  description: t.description,
  inputSchema: t.schema,
}));
const sdkTools = Object.fromEntries(
  toolList.map((t) => [t.name, tool({ description: t.description, inputSchema: jsonSchema(t.schema) })]),
);

// ---- the provider, with a fetch that keeps the body and answers at once ----
const canned = JSON.stringify({
  id: "msg_bench",
  type: "message",
  role: "assistant",
  model: spec.model,
  content: [{ type: "text", text: "Done." }],
  stop_reason: "end_turn",
  stop_sequence: null,
  usage: { input_tokens: 100, output_tokens: 2 },
});
let lastBody = "";
let fetchAt = 0;
let fetchCpu = null;
const anthropic = createAnthropic({
  apiKey: "bench",
  fetch: async (_url, init) => {
    fetchAt = performance.now();
    fetchCpu = process.cpuUsage();
    lastBody = init.body;
    return new Response(canned, { status: 200, headers: { "content-type": "application/json" } });
  },
});
const model = anthropic(spec.model);

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

const cpuMs = (from, to) => (to.user - from.user + to.system - from.system) / 1e3;

// Wall and process CPU (every thread of node: the GC's helpers too) from the call to the fetch,
// and wall to the end.
async function timeDoGenerate(prompt) {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  await model.doGenerate({ prompt, tools: providerTools, maxOutputTokens: spec.max_tokens });
  const t1 = performance.now();
  return { body: fetchAt - t0, bodyCpu: cpuMs(c0, fetchCpu), total: t1 - t0 };
}

// What the body carries, to check both sides built the same conversation.
function summary(text) {
  const b = JSON.parse(text);
  return {
    messages: b.messages.length,
    tools: b.tools.length,
    cache_marks: (text.match(/"cache_control":/g) || []).length,
  };
}

async function measure(n) {
  const history = messages(n);
  const prompt = [systemMessage, ...history];
  const body = [];
  const bodyCpu = [];
  const total = [];
  for (let run = 0; run < opts.warmup + opts.runs; ++run) {
    const t = await timeDoGenerate(prompt);
    if (run >= opts.warmup) {
      body.push(t.body);
      bodyCpu.push(t.bodyCpu);
      total.push(t.total);
    }
  }
  const bodyBytes = Buffer.byteLength(lastBody, "utf8");
  if (opts.dumpBody) {
    fs.mkdirSync(opts.dumpBody, { recursive: true });
    fs.writeFileSync(path.join(opts.dumpBody, `ai_sdk_${n}.json`), lastBody);
  }

  const carried = summary(lastBody);
  const text = [];
  for (let run = 0; run < 1 + opts.textRuns; ++run) {
    const t0 = performance.now();
    await generateText({
      model,
      messages: [systemMessage, ...history],
      tools: sdkTools,
      maxOutputTokens: spec.max_tokens,
      maxRetries: 0,
      allowSystemInMessages: true,
    });
    if (run >= 1) text.push(performance.now() - t0);
  }

  // Growing: each run answers the last question (the cycle's next messages up to the next
  // question) and builds the next request; the marks stay where the first request put them.
  const grown = [...prompt];
  const growing = [];
  const growingCpu = [];
  let next = n + 1;
  for (let run = 0; run < opts.warmup + opts.runs; ++run) {
    for (; next % spec.cycle.length !== 0; ++next) grown.push(message(next, false));
    grown.push(message(next++, false));
    const t = await timeDoGenerate(grown);
    if (run >= opts.warmup) {
      growing.push(t.body);
      growingCpu.push(t.bodyCpu);
    }
  }

  return {
    messages: n,
    body_bytes: bodyBytes,
    body: carried,
    do_generate_body_ms: median(body),
    do_generate_body_cpu_ms: median(bodyCpu),
    do_generate_ms: median(total),
    generate_text_ms: median(text),
    growing_body_ms: median(growing),
    growing_body_cpu_ms: median(growingCpu),
  };
}

const sizes = [];
for (const n of opts.sizes) sizes.push(await measure(n));
process.stdout.write(
  JSON.stringify({
    peer: "@ai-sdk/anthropic",
    versions: { ai: version("ai"), "@ai-sdk/anthropic": version("@ai-sdk/anthropic") },
    node: process.version,
    runs: opts.runs,
    warmup: opts.warmup,
    text_runs: opts.textRuns,
    sizes,
  }) + "\n",
);
