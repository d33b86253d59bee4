#!/usr/bin/env node
// Type-checks request bodies against the official SDKs' request types, with the TypeScript
// compiler: a check of our wire bodies that owes nothing to our own encoder, rule book or
// emulator. Each body becomes `const body_K: <SDK request type> = <the body as a literal>;` in one
// generated .ts file per run (all bodies of one provider in ONE program: the SDK's types are
// loaded and checked once), compiled with --strict and --noEmit. An object literal assigned to a
// typed const gets TypeScript's excess property check, so a field the SDK does not know is an
// error, as is a value of the wrong type or a missing required field.
//
//   provider   type each body is checked against
//   anthropic  Anthropic.MessageCreateParams (@anthropic-ai/sdk; the union of the streaming and
//              non-streaming params), Anthropic.MessageCountTokensParams for a .../count_tokens path;
//              an envelope whose headers carry `anthropic-beta` is a request of the beta API, and
//              is checked against Anthropic.Beta.MessageCreateParams (or the Beta count params)
//   openai     ChatCompletionCreateParams (openai/resources/chat/completions; streaming or not)
//   bedrock    ConverseCommandInput (path .../converse), ConverseStreamCommandInput (path
//              .../converse-stream), their union when the path is not known
//              (@aws-sdk/client-bedrock-runtime)
//   gemini     the generateContent REST body (@google/genai): `contents` Content[], and the optional
//              `systemInstruction` Content, `tools` Tool[], `toolConfig` ToolConfig and
//              `generationConfig` GenerationConfig, the SDK's own types of those members (the SDK
//              builds this body from its GenerateContentParameters; it exports no type of the
//              body as a whole)
//   openai-responses  ResponseCreateParams (openai/resources/responses/responses; streaming or
//              not), the POST /responses body (responses.1)
//
// A Bedrock Converse wire body is not the SDK's input as it stands, and is mapped to it, minimally:
//   - the model id travels in the URL path (/model/{modelId}/converse), not in the body, while the
//     SDK input has a required `modelId`: it is added, taken from the envelope's path when there is
//     one (else a placeholder). A wire body that carries `modelId` itself is an error (the API
//     takes it from the path only).
//   - blob members are base64 strings in the JSON wire body (the REST-JSON protocol's encoding of
//     a blob) and Uint8Array in the SDK input: a string under `bytes` (image, document, video,
//     audio sources) or `redactedContent` (a redacted reasoning block), the two blob members of the
//     Converse input, becomes a value typed Uint8Array. Any other value there (a number, an
//     object) is left as it is, so the type check reports it.
// Nothing else is changed: every other member has the same name and JSON shape on the wire as in
// the SDK input.
// A Gemini body's `thinkingLevel` is a string on the wire and the SDK's string enum ThinkingLevel
// in its types, to which a string literal is not assignable: it is written ThinkingLevel["HIGH"],
// so a value that is no member of the enum is reported.
//
// Usage:
//   node tests/sdk_types/check_bodies.mjs --provider anthropic|openai|bedrock|gemini|openai-responses
//        [--modules DIR] [--verbose] [--keep-ts FILE] FILE_OR_DIR...
// A directory stands for the *.json files directly in it (sorted, not recursive). A file holds one
// body, or an envelope {"method", "path" or "url", "headers", "body"}: the repository's golden
// files (tests/providers/*/fixtures/encode) and `nucleo render`'s output. Then its "body" is
// checked, and the request path chooses the type and gives Bedrock's model id.
// The SDKs and typescript are read from --modules or else $NUCLEO_SDK_MODULES (the node_modules
// folder scripts/fetch-sdk-clients installs into .cache/sdk/npm).
// Output: for each failing file, FAIL and each diagnostic with the JSON path it points at ($ is
// the body); with --verbose an "ok" line for each passing file; last, "N passed, M failed".
// Exit status: 0 when every body passes, 1 when any fails (or the check itself cannot run).
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync }
  from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const usage = 'usage: check_bodies.mjs --provider anthropic|openai|bedrock|gemini|openai-responses ' +
  '[--modules DIR] ' +
  '[--verbose] [--keep-ts FILE] FILE_OR_DIR...';

function fail(message) {
  console.error(`check_bodies: ${message}`);
  process.exit(1);
}

function parseArgs(argv) {
  const opts = { provider: undefined, modules: process.env.NUCLEO_SDK_MODULES, verbose: false,
    keepTs: undefined, inputs: [] };
  for (let i = 0; i < argv.length; ++i) {
    const a = argv[i];
    const value = () => (i + 1 < argv.length ? argv[++i] : fail(`${a} needs a value\n${usage}`));
    if (a === '--provider') opts.provider = value();
    else if (a.startsWith('--provider=')) opts.provider = a.slice(11);
    else if (a === '--modules') opts.modules = value();
    else if (a === '--verbose') opts.verbose = true;
    else if (a === '--keep-ts') opts.keepTs = value();
    else if (a === '--help' || a === '-h') { console.log(usage); process.exit(0); }
    else if (a.startsWith('--')) fail(`unknown option ${a}\n${usage}`);
    else opts.inputs.push(a);
  }
  if (!['anthropic', 'openai', 'bedrock', 'gemini', 'openai-responses'].includes(opts.provider)) fail(`--provider is required\n${usage}`);
  if (!opts.modules) fail('no SDK modules: pass --modules DIR or set NUCLEO_SDK_MODULES');
  opts.modules = resolve(opts.modules);
  if (!existsSync(join(opts.modules, 'typescript'))) {
    fail(`typescript is not installed in ${opts.modules}: run scripts/fetch-sdk-clients`);
  }
  if (opts.inputs.length === 0) fail(`no body files\n${usage}`);
  return opts;
}

function listFiles(inputs) {
  const files = [];
  for (const input of inputs) {
    if (!existsSync(input)) fail(`${input}: no such file or directory`);
    if (statSync(input).isDirectory()) {
      for (const name of readdirSync(input).filter((n) => n.endsWith('.json')).sort()) {
        files.push(join(input, name));
      }
    } else {
      files.push(input);
    }
  }
  return files;
}

// The SDK types each provider's bodies are checked against, by the request path when known.
const providers = {
  anthropic: {
    prelude: "import type Anthropic from '@anthropic-ai/sdk';",
    typeFor: (path, headers) => {
      const api = headers !== undefined && Object.keys(headers)
        .some((h) => h.toLowerCase() === 'anthropic-beta') ? 'Anthropic.Beta.' : 'Anthropic.';
      return api + (path !== undefined && /\/count_tokens$/.test(path)
        ? 'MessageCountTokensParams' : 'MessageCreateParams');
    },
  },
  openai: {
    prelude: "import type { ChatCompletionCreateParams } from 'openai/resources/chat/completions';",
    typeFor: () => 'ChatCompletionCreateParams',
  },
  'openai-responses': {
    prelude: "import type { ResponseCreateParams } from 'openai/resources/responses/responses';",
    typeFor: () => 'ResponseCreateParams',
  },
  bedrock: {
    prelude: "import type { ConverseCommandInput, ConverseStreamCommandInput } from " +
      "'@aws-sdk/client-bedrock-runtime';\n" +
      '// A blob member: a base64 string on the wire, a Uint8Array in the SDK input.\n' +
      'declare function wireBlob(base64: string): Uint8Array;',
    typeFor: (path) => {
      if (path === undefined) return 'ConverseCommandInput | ConverseStreamCommandInput';
      if (/\/converse-stream$/.test(path)) return 'ConverseStreamCommandInput';
      return 'ConverseCommandInput';
    },
  },
  gemini: {
    prelude: "import type { Content, GenerationConfig, Tool, ToolConfig } from '@google/genai';\n" +
      "import { ThinkingLevel } from '@google/genai';\n" +
      '// The generateContent REST body, of the SDK\'s own member types.\n' +
      'type GenerateContentBody = { contents: Content[]; systemInstruction?: Content; tools?: Tool[]; ' +
      'toolConfig?: ToolConfig; generationConfig?: GenerationConfig };',
    typeFor: () => 'GenerateContentBody',
  },
};

// The Converse input's blob members (see the head of this file).
const bedrockBlobKeys = new Set(['bytes', 'redactedContent']);

/// Reads one file: the body, and the request path when the file is a golden-file envelope.
function readBody(file) {
  let doc;
  try {
    doc = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    return { error: `not JSON: ${e.message}` };
  }
  const isEnvelope = doc !== null && typeof doc === 'object' && !Array.isArray(doc) &&
    typeof doc.method === 'string' && (typeof doc.path === 'string' || typeof doc.url === 'string') &&
    doc.body !== null && typeof doc.body === 'object';
  const body = isEnvelope ? doc.body : doc;
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    return { error: 'the body is not a JSON object' };
  }
  if (!isEnvelope) return { body };
  const headers = doc.headers !== null && typeof doc.headers === 'object' ? doc.headers : undefined;
  let path = doc.path;
  if (typeof path !== 'string') {
    try {
      path = new URL(doc.url).pathname;
    } catch {
      return { error: `the envelope's url is not a URL: ${doc.url}` };
    }
  }
  return { body, path: path.split('?')[0], headers };
}

/// The JSON path syntax of the report: $.key, $["odd key"], $.list[0].
function pathStep(key) {
  return typeof key === 'number' ? `[${key}]`
    : /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
}

/// The body as a TypeScript expression: JSON (a valid object literal), except Bedrock's blob
/// strings, written wireBlob("...") so they are typed Uint8Array, and the patches of a later round
/// (see setAside).
function literal(value, provider, key, path, patches) {
  if (patches.get(path) === 'any') return `(${literal(value, provider, key, path, new Map())} as any)`;
  if (provider === 'bedrock' && typeof value === 'string' && bedrockBlobKeys.has(key)) {
    return `wireBlob(${JSON.stringify(value)})`;
  }
  if (provider === 'gemini' && typeof value === 'string' && key === 'thinkingLevel') {
    return `ThinkingLevel[${JSON.stringify(value)}]`;
  }
  if (Array.isArray(value)) {
    const items = value.map((v, i) => literal(v, provider, undefined, path + pathStep(i), patches));
    return `[${items.join(',\n')}]`;
  }
  if (value !== null && typeof value === 'object') {
    const members = [];
    for (const [k, v] of Object.entries(value)) {
      const at = path + pathStep(k);
      // A key that is an identifier is written bare, so the compiler's messages name it plainly.
      const name = /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(k) && k !== '__proto__' ? k : JSON.stringify(k);
      if (patches.get(at) !== 'delete') members.push(`${name}: ${literal(v, provider, k, at, patches)}`);
    }
    return `{${members.join(',\n')}}`;
  }
  return JSON.stringify(value);
}

/// The JSON path of the literal node a diagnostic points at, and the body it lies in.
function locate(ts, sourceFile, position) {
  let node = sourceFile;
  const visit = (child) => {
    if (position >= child.getStart(sourceFile) && position < child.getEnd()) {
      node = child;
      ts.forEachChild(child, visit);
    }
  };
  ts.forEachChild(sourceFile, visit);
  const parts = [];
  for (let n = node; n !== undefined; n = n.parent) {
    if (ts.isVariableDeclaration(n)) {
      const m = /^body_(\d+)$/.exec(n.name.getText(sourceFile));
      return m ? { index: Number(m[1]), path: '$' + parts.reverse().join('') } : undefined;
    }
    if (ts.isPropertyAssignment(n)) {
      parts.push(pathStep(ts.isStringLiteral(n.name) ? n.name.text : n.name.getText(sourceFile)));
    }
    if (n.parent !== undefined && ts.isArrayLiteralExpression(n.parent)) {
      parts.push(pathStep(n.parent.elements.indexOf(n)));
    }
  }
  return undefined;
}

// TypeScript reports one failed relation per object literal: a property of the wrong type can hide
// an unknown field beside it. So a failing body is checked again with what was reported set aside
// (an unknown field deleted, a value of the wrong type cast to any), until nothing new is reported
// or after maxRounds; every round's diagnostics are reported.
const maxRounds = 8;
const unknownFieldCodes = new Set([2353, 2561]); // "may only specify known properties" (+ "did you mean")

function setAside(code) {
  return unknownFieldCodes.has(code) ? 'delete' : 'any';
}

function compilerOptions(ts) {
  return {
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'],
    types: [],
  };
}

function main() {
  const opts = parseArgs(process.argv.slice(2));
  const provider = providers[opts.provider];
  const ts = createRequire(join(opts.modules, 'noop.js'))('typescript');
  const files = listFiles(opts.inputs);

  // Each file's body, the type it is checked against, and its problems (none: it passes).
  const results = files.map((file) => {
    const r = { file, problems: [], patches: new Map() };
    const { body, path, headers, error } = readBody(file);
    if (error !== undefined) {
      r.problems.push(error);
      return r;
    }
    r.type = provider.typeFor(path, headers);
    r.body = body;
    if (opts.provider === 'bedrock') {
      if (Object.hasOwn(body, 'modelId')) {
        r.problems.push('$.modelId: a Converse wire body carries no modelId (the model id is in the URL path)');
      }
      const fromPath = path === undefined ? undefined : /\/model\/([^/]+)\//.exec(path);
      const modelId = fromPath ? decodeURIComponent(fromPath[1]) : 'model-id-of-the-url-path';
      r.body = { modelId, ...body };
    }
    return r;
  });

  // The generated file lies beside a node_modules link to the SDKs, so the compiler resolves the
  // SDK packages (and their "exports") from $NUCLEO_SDK_MODULES as node would.
  const dir = mkdtempSync(join(tmpdir(), 'nucleo-sdk-types-'));
  try {
    symlinkSync(opts.modules, join(dir, 'node_modules'), 'dir');
    const source = join(dir, `bodies_${opts.provider}.ts`);
    let program;
    let pending = results.filter((r) => r.body !== undefined).map((r) => results.indexOf(r));
    for (let round = 1; round <= maxRounds && pending.length > 0; ++round) {
      const lines = [provider.prelude, ''];
      for (const index of pending) {
        const r = results[index];
        lines.push(`// ${r.file.replace(/[\r\n]/g, ' ')}`);
        lines.push(`const body_${index}: ${r.type} = ${literal(r.body, opts.provider, undefined, '$', r.patches)};`);
        lines.push('');
      }
      const text = lines.join('\n');
      writeFileSync(source, text);
      if (opts.keepTs && round === 1) writeFileSync(opts.keepTs, text);
      program = ts.createProgram([source], compilerOptions(ts), undefined, program);
      const sourceFile = program.getSourceFile(source);
      const setup = [];
      const again = new Set();
      for (const d of ts.getPreEmitDiagnostics(program)) {
        const message = ts.flattenDiagnosticMessageText(d.messageText, '\n');
        const where = d.file === sourceFile && d.start !== undefined ? locate(ts, sourceFile, d.start) : undefined;
        if (where === undefined) {
          setup.push(`${d.file ? d.file.fileName : 'tsc'}: TS${d.code}: ${message}`);
          continue;
        }
        const r = results[where.index];
        const problem = `${where.path}: TS${d.code}: ${message.replace(/\n/g, '\n      ')}`;
        if (!r.problems.includes(problem)) r.problems.push(problem);
        // The whole body cannot be set aside; a path already set aside is not set aside again.
        if (where.path !== '$' && !r.patches.has(where.path)) {
          r.patches.set(where.path, setAside(d.code));
          again.add(where.index);
        }
      }
      if (setup.length > 0) {
        // An error outside every body (an SDK type not found, say): no body can be trusted to pass.
        for (const s of setup) console.log(`ERROR ${s}`);
        console.log(`0 passed, ${results.length} failed`);
        process.exitCode = 1;
        return;
      }
      pending = [...again].sort((a, b) => a - b);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }

  let passed = 0;
  for (const r of results) {
    if (r.problems.length === 0) {
      ++passed;
      if (opts.verbose) console.log(`ok   ${r.file}`);
      continue;
    }
    console.log(`FAIL ${r.file}`);
    for (const p of r.problems) console.log(`  at ${p}`);
  }
  const failed = results.length - passed;
  console.log(`${passed} passed, ${failed} failed`);
  process.exitCode = failed === 0 ? 0 : 1;
}

main();
