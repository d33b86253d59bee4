// Reference token ids for the tokenizer parity test (tokens.1), produced by the npm packages:
// `tiktoken` (the WASM build of OpenAI's Rust tiktoken: THE reference) and `js-tiktoken`.
//
// Usage: node reference.mjs NODE_MODULES_DIR OUT_DIR [BYTES]
// Writes OUT_DIR/corpus.bin (see corpus.mjs) and, per encoding and package,
// OUT_DIR/<encoding>.<package>.ids: [u32le count][u32le id]... per document. js-tiktoken is
// about 30x slower than the WASM build on non-ASCII text, so it encodes every JS_EVERY-th
// document only; the others get the count 0xFFFFFFFF (not computed) and no ids.
//
// Invalid UTF-8 cannot reach tiktoken (it encodes strings). Nucleo's documented rule: each
// invalid byte is its own piece, and the valid runs around it are encoded as separate texts. The
// reference applies that rule here with the packages doing all the encoding: the valid runs go
// through encode_ordinary, each invalid byte through encode_single_token. The validity check
// below follows Unicode Table 3-7, as the C++ does.

import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";
import { makeCorpus, writeDocs } from "./corpus.mjs";

const [modulesDir, outDir, bytesArg] = process.argv.slice(2);
if (!modulesDir || !outDir) {
  console.error("usage: node reference.mjs NODE_MODULES_DIR OUT_DIR [BYTES]");
  process.exit(2);
}
const require = createRequire(path.join(path.resolve(modulesDir), "noop.cjs"));
const tiktoken = require("tiktoken");
const jsTiktoken = require("js-tiktoken");

/** Length of the valid UTF-8 sequence at buf[i], 0 when none starts there. */
function validSequence(buf, i) {
  const b = buf[i];
  const cont = (k, lo = 0x80, hi = 0xbf) => i + k < buf.length && buf[i + k] >= lo && buf[i + k] <= hi;
  if (b < 0x80) return 1;
  if (b >= 0xc2 && b <= 0xdf) return cont(1) ? 2 : 0;
  if (b >= 0xe0 && b <= 0xef) {
    return cont(1, b === 0xe0 ? 0xa0 : 0x80, b === 0xed ? 0x9f : 0xbf) && cont(2) ? 3 : 0;
  }
  if (b >= 0xf0 && b <= 0xf4) {
    return cont(1, b === 0xf0 ? 0x90 : 0x80, b === 0xf4 ? 0x8f : 0xbf) && cont(2) && cont(3) ? 4 : 0;
  }
  return 0;
}

/** Splits a document into valid UTF-8 runs (strings) and invalid bytes (numbers). */
function segments(buf) {
  const out = [];
  let start = 0;
  let i = 0;
  while (i < buf.length) {
    const len = validSequence(buf, i);
    if (len) {
      i += len;
      continue;
    }
    if (i > start) out.push(buf.subarray(start, i).toString("utf8"));
    out.push(buf[i]);
    i += 1;
    start = i;
  }
  if (i > start) out.push(buf.subarray(start, i).toString("utf8"));
  return out;
}

const bytes = Number(bytesArg || 1200000);
const JS_EVERY = 16;
const NOT_COMPUTED = 0xffffffff;
const docs = makeCorpus(bytes);
fs.mkdirSync(outDir, { recursive: true });

for (const name of ["o200k_base", "cl100k_base"]) {
  const wasm = tiktoken.get_encoding(name);
  const js = jsTiktoken.getEncoding(name);
  const encoders = {
    tiktoken: (s) => Array.from(wasm.encode_ordinary(s)),
    "js-tiktoken": (s) => js.encode(s, [], []),
  };
  for (const [pkg, encode] of Object.entries(encoders)) {
    const out = [];
    for (const [index, doc] of docs.entries()) {
      if (pkg === "js-tiktoken" && index % JS_EVERY !== 0) {
        const skip = Buffer.alloc(4);
        skip.writeUInt32LE(NOT_COMPUTED);
        out.push(skip);
        continue;
      }
      const ids = [];
      for (const seg of segments(doc)) {
        if (typeof seg === "number") ids.push(wasm.encode_single_token(Uint8Array.of(seg)));
        else ids.push(...encode(seg));
      }
      const buf = Buffer.alloc(4 * (ids.length + 1));
      buf.writeUInt32LE(ids.length, 0);
      ids.forEach((id, k) => buf.writeUInt32LE(id, 4 * (k + 1)));
      out.push(buf);
    }
    const file = path.join(outDir, `${name}.${pkg}.ids`);
    fs.writeFileSync(file + ".tmp", Buffer.concat(out));
    fs.renameSync(file + ".tmp", file);
  }
  wasm.free();
}
// Written last: its presence means the whole reference is complete.
writeDocs(path.join(outDir, "corpus.bin"), docs);
const versions = ["tiktoken", "js-tiktoken"].map((p) => {
  const meta = JSON.parse(fs.readFileSync(path.join(modulesDir, p, "package.json"), "utf8"));
  return `${p} ${meta.version}`;
});
fs.writeFileSync(path.join(outDir, "versions.txt"), versions.join("\n") + "\n");
console.log(`reference: ${docs.length} documents, ${docs.reduce((a, d) => a + d.length, 0)} bytes; ${versions.join(", ")}`);
