// Throughput of the npm tokenizers on the benchmark corpus, single-threaded, same documents and
// same order as the C++ bench (bench/tokens/tokenizer_bench.cpp).
// Usage: node peers.mjs NODE_MODULES_DIR CORPUS.bin [MIN_SECONDS]
// Prints one JSON object per line: {peer, version, encoding, mb_per_s, tokens, seconds, passes}.
import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";

const [modulesDir, corpusFile, minSecondsArg] = process.argv.slice(2);
if (!modulesDir || !corpusFile) {
  console.error("usage: node peers.mjs NODE_MODULES_DIR CORPUS.bin [MIN_SECONDS]");
  process.exit(2);
}
const minSeconds = Number(minSecondsArg || 3);
const require = createRequire(path.join(path.resolve(modulesDir), "noop.cjs"));
const version = (p) => JSON.parse(fs.readFileSync(path.join(modulesDir, p, "package.json"), "utf8")).version;

const data = fs.readFileSync(corpusFile);
const docs = [];
for (let at = 0; at + 4 <= data.length;) {
  const len = data.readUInt32LE(at);
  docs.push(data.subarray(at + 4, at + 4 + len).toString("utf8"));
  at += 4 + len;
}
const bytes = docs.reduce((a, d) => a + Buffer.byteLength(d, "utf8"), 0);

const tiktoken = require("tiktoken");
const jsTiktoken = require("js-tiktoken");
const peers = [];
for (const encoding of ["o200k_base", "cl100k_base"]) {
  const wasm = tiktoken.get_encoding(encoding);
  const js = jsTiktoken.getEncoding(encoding);
  const gpt = require(`gpt-tokenizer/encoding/${encoding}`);
  peers.push(
    { peer: "tiktoken", encoding, encode: (s) => wasm.encode_ordinary(s).length },
    { peer: "js-tiktoken", encoding, encode: (s) => js.encode(s, [], []).length },
    { peer: "gpt-tokenizer", encoding, encode: (s) => gpt.encode(s, { disallowedSpecial: new Set() }).length },
  );
}

for (const p of peers) {
  let tokens = 0;
  for (const d of docs) tokens += p.encode(d);  // warm-up pass (JIT, lazy rank tables)
  let passes = 0;
  const start = process.hrtime.bigint();
  let seconds = 0;
  do {
    for (const d of docs) p.encode(d);
    passes++;
    seconds = Number(process.hrtime.bigint() - start) / 1e9;
  } while (seconds < minSeconds);
  const mbps = (bytes * passes) / seconds / 1e6;
  console.log(JSON.stringify({ peer: p.peer, version: version(p.peer), encoding: p.encoding,
    mb_per_s: Number(mbps.toFixed(2)), tokens, seconds: Number(seconds.toFixed(2)), passes, bytes }));
}
