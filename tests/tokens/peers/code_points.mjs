// Reference token ids for the parity test over the code points assigned after Unicode 15.0
// (tokens.102), produced by the npm package `tiktoken` (the WASM build of OpenAI's Rust tiktoken).
//
// Usage: node code_points.mjs NODE_MODULES_DIR OUT_DIR LIST_FILE
// LIST_FILE is .cache/tokenizer/ucd/assigned-after-15.0.0.txt ("LO HI" hexadecimal ranges, written
// by scripts/fetch-unicode-data). Each code point is put in the contexts where the pre-split
// classes decide the pieces: alone, before a contraction, after a space, between letters,
// between digits, doubled, with a newline, after punctuation. Writes OUT_DIR/corpus.bin
// ([u32le length][bytes] per document), OUT_DIR/<encoding>.tiktoken.ids ([u32le count][u32le
// id]... per document) and OUT_DIR/versions.txt, the formats tests/tokens/reference.cpp reads.

import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";
import { writeDocs } from "./corpus.mjs";

const [modulesDir, outDir, listFile] = process.argv.slice(2);
if (!modulesDir || !outDir || !listFile) {
  console.error("usage: node code_points.mjs NODE_MODULES_DIR OUT_DIR LIST_FILE");
  process.exit(2);
}
const require = createRequire(path.join(path.resolve(modulesDir), "noop.cjs"));
const tiktoken = require("tiktoken");

const points = [];
for (const line of fs.readFileSync(listFile, "utf8").split("\n")) {
  if (!line.trim() || line.startsWith("#")) continue;
  const [lo, hi] = line.trim().split(/\s+/).map((h) => parseInt(h, 16));
  for (let cp = lo; cp <= hi; cp++) points.push(cp);
}
if (points.length === 0) throw new Error(`code_points: no code point in ${listFile}`);

const CONTEXTS = [
  (c) => c, (c) => `${c}'s`, (c) => `${c}'S`, (c) => ` ${c}`, (c) => `a${c}b`, (c) => `A${c}'ll`,
  (c) => `1${c}2`, (c) => `${c}${c} ${c}`, (c) => `${c}\n\n`, (c) => `.${c}x`, (c) => `${c}123`,
];
const docs = [];
for (const cp of points) {
  const c = String.fromCodePoint(cp);
  for (const make of CONTEXTS) docs.push(Buffer.from(make(c), "utf8"));
}

fs.mkdirSync(outDir, { recursive: true });
for (const name of ["o200k_base", "cl100k_base"]) {
  const wasm = tiktoken.get_encoding(name);
  const out = [];
  for (const doc of docs) {
    const ids = Array.from(wasm.encode_ordinary(doc.toString("utf8")));
    const buf = Buffer.alloc(4 * (ids.length + 1));
    buf.writeUInt32LE(ids.length, 0);
    ids.forEach((id, k) => buf.writeUInt32LE(id, 4 * (k + 1)));
    out.push(buf);
  }
  const file = path.join(outDir, `${name}.tiktoken.ids`);
  fs.writeFileSync(file + ".tmp", Buffer.concat(out));
  fs.renameSync(file + ".tmp", file);
  wasm.free();
}
const meta = JSON.parse(fs.readFileSync(path.join(modulesDir, "tiktoken", "package.json"), "utf8"));
fs.writeFileSync(path.join(outDir, "versions.txt"), `tiktoken ${meta.version}\n`);
// Written last: its presence means the whole reference is complete.
writeDocs(path.join(outDir, "corpus.bin"), docs);
console.log(`code points: ${points.length} assigned after 15.0, ${docs.length} documents`);
