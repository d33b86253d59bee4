// Exports what the tokenizer's Unicode tables need from the npm packages of the Unicode Character
// Database (@unicode/unicode-X.Y.Z), as small text files scripts/gen-unicode-tables reads.
//
// Usage: node export-ucd.mjs PACKAGE_DIR VERSION OLD_PACKAGE_DIR OLD_VERSION OUT_DIR
// PACKAGE_DIR holds the extracted files of @unicode/unicode-VERSION (decode-ranges.mjs and the
// ranges.mjs of the General_Category and Binary_Property/White_Space folders); OLD_PACKAGE_DIR
// those of @unicode/unicode-OLD_VERSION (decode-ranges.mjs, General_Category/Unassigned). Writes
//   OUT_DIR/categories.txt   "Lu 0041 005A" per range of each letter, mark and number category
//   OUT_DIR/white_space.txt  "White_Space 0009 000D" per range
//   OUT_DIR/assigned-after-OLD_VERSION.txt  "10D40 10D65" per range assigned after OLD_VERSION
// each starting with "# version VERSION", ranges inclusive, in hexadecimal.

import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

const [pkgDir, version, oldDir, oldVersion, outDir] = process.argv.slice(2);
if (!outDir) {
  console.error("usage: node export-ucd.mjs PACKAGE_DIR VERSION OLD_PACKAGE_DIR OLD_VERSION OUT_DIR");
  process.exit(2);
}

// The categories the pre-split patterns test (\p{L}, \p{M}, \p{N} and their parts).
const CATEGORIES = {
  Lu: "Uppercase_Letter", Ll: "Lowercase_Letter", Lt: "Titlecase_Letter", Lm: "Modifier_Letter",
  Lo: "Other_Letter", Mn: "Nonspacing_Mark", Mc: "Spacing_Mark", Me: "Enclosing_Mark",
  Nd: "Decimal_Number", Nl: "Letter_Number", No: "Other_Number",
};

async function ranges(dir, rel) {
  const file = path.join(dir, rel, "ranges.mjs");
  if (!fs.existsSync(file)) throw new Error(`export-ucd: ${file} is missing`);
  const list = (await import(pathToFileURL(file).href)).default;
  return list.map((r) => [r.begin, r.end - 1]);  // the package's ends are exclusive
}

const hex = (n) => n.toString(16).toUpperCase().padStart(4, "0");
const header = `# version ${version}\n`;

fs.mkdirSync(outDir, { recursive: true });
let categories = header;
for (const [short, long] of Object.entries(CATEGORIES)) {
  for (const [lo, hi] of await ranges(pkgDir, `General_Category/${long}`)) {
    categories += `${short} ${hex(lo)} ${hex(hi)}\n`;
  }
}
let space = header;
for (const [lo, hi] of await ranges(pkgDir, "Binary_Property/White_Space")) {
  space += `White_Space ${hex(lo)} ${hex(hi)}\n`;
}

// Assigned after OLD_VERSION: unassigned there, assigned here.
const unassigned = (list) => {
  const set = new Uint8Array(0x110000);
  for (const [lo, hi] of list) set.fill(1, lo, hi + 1);
  return set;
};
const before = unassigned(await ranges(oldDir, "General_Category/Unassigned"));
const now = unassigned(await ranges(pkgDir, "General_Category/Unassigned"));
let after = header;
for (let cp = 0; cp < 0x110000; ) {
  if (!(before[cp] && !now[cp])) { ++cp; continue; }
  const lo = cp;
  while (cp < 0x110000 && before[cp] && !now[cp]) ++cp;
  after += `${hex(lo)} ${hex(cp - 1)}\n`;
}

// Write each file whole, then rename, so a reader never sees half of one.
for (const [name, text] of [["categories.txt", categories], ["white_space.txt", space],
                            [`assigned-after-${oldVersion}.txt`, after]]) {
  const target = path.join(outDir, name);
  fs.writeFileSync(`${target}.tmp`, text);
  fs.renameSync(`${target}.tmp`, target);
}
