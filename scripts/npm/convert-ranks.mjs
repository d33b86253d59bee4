// Converts js-tiktoken's compressed rank tables into the plain tiktoken text format the C++
// tokenizer loads: one "BASE64 RANK" line per token, plus "NAME.special.tsv" ("TEXT<TAB>RANK" per
// special token) so decode() can render special ids.
// Usage: node convert-ranks.mjs NODE_MODULES_DIR OUT_DIR [ENCODING...]
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

const [modulesDir, outDir, ...names] = process.argv.slice(2);
if (!modulesDir || !outDir) {
  console.error("usage: node convert-ranks.mjs NODE_MODULES_DIR OUT_DIR [ENCODING...]");
  process.exit(2);
}
const encodings = names.length ? names : ["o200k_base", "cl100k_base"];
fs.mkdirSync(outDir, { recursive: true });

for (const name of encodings) {
  const file = path.join(modulesDir, "js-tiktoken", "dist", "ranks", `${name}.js`);
  const ranks = (await import(pathToFileURL(file).href)).default;
  const lines = [];
  const seen = new Set();
  for (const row of ranks.bpe_ranks.split("\n")) {
    if (!row) continue;
    const [, offsetStr, ...tokens] = row.split(" ");
    const offset = Number.parseInt(offsetStr, 10);
    tokens.forEach((token, i) => {
      if (seen.has(token)) throw new Error(`${name}: token ${token} appears twice`);
      seen.add(token);
      lines.push(`${token} ${offset + i}`);
    });
  }
  const tmp = path.join(outDir, `${name}.tiktoken.tmp`);
  fs.writeFileSync(tmp, lines.join("\n") + "\n");
  fs.renameSync(tmp, path.join(outDir, `${name}.tiktoken`));
  const special = Object.entries(ranks.special_tokens).map(([text, rank]) => `${text}\t${rank}`);
  fs.writeFileSync(path.join(outDir, `${name}.special.tsv`), special.join("\n") + "\n");
  console.log(`convert-ranks: ${name}: ${lines.length} ranks, ${special.length} special tokens`);
}
