// The deterministic mixed corpus of the tokenizer parity test and benchmark (tokens.1): English,
// code, JSON, CJK, emoji, other scripts with combining marks, long whitespace runs, digits, a
// random "soup" of the characters the pre-split patterns treat specially and, unless disabled,
// invalid UTF-8. Same seed and size → same bytes, on any machine.
//
// The "bench" profile (for throughput) is ordinary text: valid UTF-8, whitespace runs of at most
// 200 characters and no character soup, so no peer is measured on its quadratic corner cases.
//
// As a program: node corpus.mjs OUT.bin BYTES [--valid-only | --bench]
// writes the documents as [u32le length][bytes]... (the format corpus_io reads in C++).

import fs from "node:fs";

/** mulberry32: a small seeded PRNG, so the corpus never depends on Math.random. */
function rng(seed) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n) => Math.floor(next() * n);
  const pick = (arr) => arr[int(arr.length)];
  return { next, int, pick, chance: (p) => next() < p };
}

const WORDS = (
  "the of and to in is it that was for on are with as his they be at one have this from or had " +
  "by word but what some we can out other were all there when up use your how said an each she " +
  "which do their time if will way about many then them write would like so these her long make " +
  "thing see him two has look more day could go come did number sound no most people my over know " +
  "water than call first who may down side been now find any new work part take get place made " +
  "live where after back little only round man year came show every good me give our under name " +
  "tokenizer compaction conversation artifact summary provider latency throughput Kubernetes " +
  "PostgreSQL JSON YAML HTTP OAuth2 gRPC McDonald iPhone eBay O'Neil rock'n'roll naïve café " +
  "résumé coöperate façade Zürich São Ångström"
).split(" ");
const CONTRACTIONS = ["don't", "I'm", "they're", "we've", "she'll", "he'd", "it's", "can't",
  "WON'T", "YOU'RE", "We'Ll", "I'D", "She'S", "isn't", "'tis", "ma'am", "y'all", "o'clock",
  "the dog's", "James'", "'quoted'", "rock'n'roll", "l'ſ", "it'ſ"];
const PUNCT = [".", ",", ";", ":", "!", "?", "...", " —", " –", "…", "?!", "!!!", ".\"", ")."];

function english(r) {
  const out = [];
  const sentences = 3 + r.int(12);
  for (let s = 0; s < sentences; s++) {
    const n = 4 + r.int(18);
    const words = [];
    for (let i = 0; i < n; i++) {
      let w = r.chance(0.08) ? r.pick(CONTRACTIONS) : r.pick(WORDS);
      const k = r.next();
      if (k < 0.05) w = w.toUpperCase();
      else if (k < 0.15 || i === 0) w = w[0].toUpperCase() + w.slice(1);
      if (r.chance(0.05)) w = String(r.int(10 ** (1 + r.int(9))));
      if (r.chance(0.02)) w = `${r.int(100)}.${r.int(1000)}%`;
      if (r.chance(0.02)) w = `(${w})`;
      if (r.chance(0.02)) w = `"${w}"`;
      if (r.chance(0.01)) w = `${w}-${r.pick(WORDS)}`;
      words.push(w);
      if (r.chance(0.06)) words.push(",");
    }
    out.push(words.join(" ").replace(/ ,/g, ",") + r.pick(PUNCT));
  }
  return out.join(r.chance(0.2) ? "\n\n" : " ") + (r.chance(0.3) ? "\n" : "");
}

const IDENTS = ["i", "j", "count", "buffer", "tokenizer_", "kMaxSize", "getValue", "std::vector",
  "self", "this", "userId", "HTTPServer", "parse_json", "__init__", "$scope", "fooBar42", "x1"];
const OPS = [" = ", " == ", " != ", " += ", " -> ", " => ", " && ", " || ", " << ", "::", ".",
  " ? ", " : ", "++", "--", " <= ", " >= ", " % ", " / ", "**", "//", "/*", "*/"];

function code(r) {
  const lines = [];
  const n = 5 + r.int(40);
  let depth = 0;
  const indent = r.chance(0.3) ? "\t" : " ".repeat(r.pick([2, 4, 8]));
  const eol = r.chance(0.15) ? "\r\n" : "\n";
  for (let i = 0; i < n; i++) {
    const pad = indent.repeat(depth);
    const k = r.int(10);
    let line;
    if (k === 0) {
      line = `${pad}for (int ${r.pick(IDENTS)} = 0; i < ${r.int(1000)}; ++i) {`;
      depth++;
    } else if (k === 1 && depth > 0) {
      depth--;
      line = `${indent.repeat(depth)}}`;
    } else if (k === 2) {
      line = `${pad}// ${english(r).split("\n")[0].slice(0, 60)}`;
    } else if (k === 3) {
      line = `${pad}def ${r.pick(IDENTS)}(self, ${r.pick(IDENTS)}: int = ${r.int(99)}) -> str:`;
    } else if (k === 4) {
      line = `${pad}printf("%d items in %s\\n", ${r.pick(IDENTS)}, "${r.pick(WORDS)}");`;
    } else if (k === 5) {
      line = `${pad}const ${r.pick(IDENTS)} = await fetch(\`/api/v${r.int(3)}/${r.pick(WORDS)}?id=${r.int(1e6)}\`);`;
    } else if (k === 6) {
      line = "";
    } else if (k === 7) {
      line = `${pad}#include <${r.pick(["vector", "string_view", "sys/types.h", "../x/y.hpp"])}>`;
    } else {
      const parts = [];
      for (let t = 0; t < 2 + r.int(6); t++) parts.push(r.pick(IDENTS), r.pick(OPS));
      parts.push(String(r.int(65536)));
      line = pad + parts.join("") + r.pick([";", "", ",", " {", ");"]);
    }
    if (r.chance(0.05)) line += "   ";  // trailing spaces before the newline
    lines.push(line);
  }
  return lines.join(eol) + eol;
}

const CJK_HAN = "的一是不了人我在有他这为之大来以个中上们到说国和地也子时道出而要于就下得可你年生自会那后能对着事其里所去行过家十用发天如然作方成者多日都三小军二无同么经法当起与好看学进种将还分此心前面又定见只主没公从";
const HIRA = "あいうえおかきくけこさしすせそたちつてとなにぬねのはひふへほまみむめもやゆよらりるれろわをんがぎぐげござじずぜぞだぢづでどばびぶべぼぱぴぷぺぽっゃゅょー";
const KATA = "アイウエオカキクケコサシスセソタチツテトナニヌネノハヒフヘホマミムメモヤユヨラリルレロワヲンガギグゲゴザジズゼゾダヂヅデドバビブベボパピプペポッャュョー";
const HANGUL = "가나다라마바사아자차카타파하그는을를이가에서의와과도로으로한국어입니다합니다있습니다없습니다";
const CJK_PUNCT = ["。", "、", "！", "？", "「", "」", "（", "）", "：", "；", "・", "　", "〜", "…"];

function cjk(r) {
  const pools = [CJK_HAN, HIRA, KATA, HANGUL];
  let out = "";
  const n = 20 + r.int(200);
  for (let i = 0; i < n; i++) {
    const pool = [...r.pick(pools)];
    const len = 1 + r.int(8);
    for (let k = 0; k < len; k++) out += r.pick(pool);
    if (r.chance(0.25)) out += r.pick(CJK_PUNCT);
    if (r.chance(0.05)) out += " " + r.pick(WORDS) + " ";
    if (r.chance(0.05)) out += String(r.int(2025));
    if (r.chance(0.03)) out += "\n";
  }
  return out;
}

const EMOJI = ["😀", "😂", "🥲", "👍", "👍🏽", "👍🏿", "❤️", "❤", "🔥", "🚀", "✅", "⚠️", "🇫🇷", "🇯🇵",
  "🏳️‍🌈", "👨‍👩‍👧‍👦", "👩🏽‍💻", "🧑‍🤝‍🧑", "1️⃣", "#️⃣", "©️", "™", "🫠", "🐈‍⬛", "😶‍🌫️", "⌚", "☕"];

function emoji(r) {
  let out = "";
  const n = 10 + r.int(60);
  for (let i = 0; i < n; i++) {
    if (r.chance(0.5)) out += r.pick(WORDS) + (r.chance(0.5) ? " " : "");
    const k = 1 + r.int(r.chance(0.1) ? 12 : 3);
    for (let e = 0; e < k; e++) out += r.pick(EMOJI);
    out += r.pick([" ", "", "\n", "! ", ". "]);
  }
  return out;
}

const SCRIPTS = [
  "Привет мир, это тест токенизатора. Съешь же ещё этих мягких французских булок",
  "Γειά σου Κόσμε· ΑΒΓΔ αβγδ ς ΐ ὰ ᾧ",
  "مرحبا بالعالم، هَذَا اِخْتِبَارٌ ١٢٣٤٥٦٧ ۱۲۳",
  "שָׁלוֹם עוֹלָם, זה מבחן",
  "नमस्ते दुनिया, यह एक परीक्षण है। क्षत्रिय ०१२३४",
  "สวัสดีชาวโลก นี่คือการทดสอบ ๑๒๓",
  "e\u0301le\u0300ve cafe\u0301 n\u0303 A\u030a Z\u0335\u0321a\u0337\u0328l\u0334g\u0336o\u0338",
  "ǅemal ǈubljana ǋuna ᾈ ᾼ Ⅻ ⅷ ² ³ ½ ① ⑴ ʰʲʷ ˈstress ꜰᴀᴋᴇ ﬁ ﬀ",
  "Ꭰ Ᏸ ꭰ ᏸ ᚠᚢᚦ ᠮᠣᠩᠭᠣᠯ ꦗꦮ ߒߞߏ 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 𝟙𝟚𝟛 𐐀𐐨 𓀀𓀁",
  "ÀÉÎÕÜ àéîõü ŒœßẞÆæ ĲĳŉſǄǆ İı",
];

function scripts(r) {
  const out = [];
  const n = 3 + r.int(20);
  for (let i = 0; i < n; i++) {
    let s = r.pick(SCRIPTS);
    if (r.chance(0.3)) s = s.toUpperCase();
    if (r.chance(0.2)) s = s.toLowerCase();
    out.push(s);
  }
  return out.join(r.pick([" ", "\n", ". ", "  "]));
}

const SPACES = [" ", "\t", "\n", "\r\n", "\u00a0", "\u3000", "\u2003", "\u2028", "\u0085", "\u000b",
  "\u000c", "\u202f", "\ufeff"];

function whitespace(r, longest = 3000) {
  let out = "";
  const n = 5 + r.int(40);
  for (let i = 0; i < n; i++) {
    const k = r.next();
    if (k < 0.1) out += " ".repeat(1 + r.int(r.chance(0.2) ? longest : 40));
    else if (k < 0.2) out += "\n".repeat(1 + r.int(20));
    else if (k < 0.25) out += "\t".repeat(1 + r.int(30));
    else if (k < 0.5) {
      const m = 1 + r.int(12);
      for (let j = 0; j < m; j++) out += r.pick(SPACES);
    }
    out += r.pick([r.pick(WORDS), r.pick(WORDS), "42", "{", "}", "//", "'s", "é", "中", "😀", "—"]);
  }
  if (r.chance(0.5)) out += " ".repeat(r.int(10)) + (r.chance(0.5) ? "\n" : "") + "  ";
  return out;
}

function json(r) {
  const value = (d) => {
    const k = r.int(d > 3 ? 5 : 8);
    if (k === 0) return r.int(1e6) - 5e5;
    if (k === 1) return Math.round(r.next() * 1e6) / 1e3;
    if (k === 2) return r.chance(0.5);
    if (k === 3) return null;
    if (k === 4) return r.pick([r.pick(WORDS), english(r).slice(0, 80), r.pick(EMOJI), cjk(r).slice(0, 20),
      "C:\\path\\to\\file.txt", "line1\nline2\ttab \"quoted\"", "https://example.com/a?b=c&d=e"]);
    if (k === 5 || k === 6) {
      const o = {};
      for (let i = 0; i < 1 + r.int(6); i++) o[r.pick(IDENTS) + (r.chance(0.3) ? "_" + r.int(9) : "")] = value(d + 1);
      return o;
    }
    const a = [];
    for (let i = 0; i < r.int(6); i++) a.push(value(d + 1));
    return a;
  };
  const doc = value(0);
  const k = r.int(3);
  if (k === 0) return JSON.stringify(doc);
  if (k === 1) return JSON.stringify(doc, null, 2) + "\n";
  return JSON.stringify(doc, null, "\t").replace(/[\u0080-\uffff]/g, (c) =>
    "\\u" + c.charCodeAt(0).toString(16).padStart(4, "0"));
}

function digits(r) {
  let out = "";
  const n = 10 + r.int(50);
  for (let i = 0; i < n; i++) {
    const k = r.int(7);
    if (k === 0) out += String(r.int(10 ** (1 + r.int(12))));
    else if (k === 1) out += "3.14159265358979323846".slice(0, 2 + r.int(20));
    else if (k === 2) out += `${1990 + r.int(40)}-${String(1 + r.int(12)).padStart(2, "0")}-0${1 + r.int(9)}`;
    else if (k === 3) out += `$${r.int(1e6).toLocaleString("en-US")}.${r.int(100)}`;
    else if (k === 4) out += "٠١٢٣٤٥٦٧٨٩".slice(0, 1 + r.int(10)) + "१२३";
    else if (k === 5) out += `v${r.int(10)}.${r.int(30)}.${r.int(100)}`;
    else out += `${r.int(255)}.${r.int(255)}.${r.int(255)}.${r.int(255)}:${r.int(65535)}`;
    out += r.pick([" ", ", ", "\n", "x", "", "abc", "²"]);
  }
  return out;
}

// The characters the pre-split treats specially, mixed at random: contractions (also 'ſ, which
// (?i) folds to 's), letters of each class (Lu Ll Lt Lm Lo, marks), numbers (Nd Nl No),
// punctuation with '/' and newlines, every kind of whitespace.
const SOUP = ["'", "'", "s", "S", "t", "T", "r", "e", "E", "v", "V", "m", "M", "l", "L", "d", "D",
  "ſ", "K", "a", "Z", "é", "É", "ǅ", "ʰ", "中", "あ", "\u0301", "\u0903", "\u20dd", "\ufe0f",
  "\u200d", "0", "7", "٣", "Ⅻ", "²", " ", " ", " ", "\t", "\n", "\r", "\u00a0", "\u3000", "\u0085",
  "\ufeff", "\u2028", "\u000b", ".", ",", "/", "//", "-", "!", "?", "(", ")", "{", "\"", "_", "😀",
  "👍🏽", "<|endoftext|>", "$", "€", "@", "#"];

function soup(r) {
  let out = "";
  const n = 50 + r.int(400);
  for (let i = 0; i < n; i++) out += r.pick(SOUP);
  return out;
}

// Invalid UTF-8: stray continuation bytes, truncated sequences, overlongs, surrogates, code
// points above U+10FFFF, bytes F5..FF, between and inside valid text.
const BAD = [[0x80], [0xbf], [0xc0, 0x80], [0xc1, 0xbf], [0xe2, 0x82], [0xe0, 0x80, 0x80],
  [0xed, 0xa0, 0x80], [0xf0, 0x8f, 0xbf, 0xbf], [0xf4, 0x90, 0x80, 0x80], [0xf5], [0xff], [0xfe],
  [0xf0, 0x9f, 0x98], [0xc3], [0xe4, 0xb8]];

function invalid(r, parts) {
  const chunks = [];
  const n = 3 + r.int(15);
  for (let i = 0; i < n; i++) {
    const text = parts[r.int(parts.length)](r);
    const buf = Buffer.from(text.slice(0, 200), "utf8");
    const at = r.int(buf.length + 1);
    chunks.push(buf.subarray(0, at), Buffer.from(r.pick(BAD)), buf.subarray(at));
    if (r.chance(0.3)) chunks.push(Buffer.from(r.pick(BAD)));
  }
  return Buffer.concat(chunks);
}

/** Documents (Buffers) of about `bytes` in total. */
export function makeCorpus(bytes, { seed = 20240501, validOnly = false, bench = false } = {}) {
  const r = rng(seed);
  const kinds = bench
    ? [english, english, english, english, code, code, code, json, json, cjk, emoji, scripts,
       (g) => whitespace(g, 200), digits]
    : [english, english, english, code, code, json, json, cjk, emoji, scripts, whitespace, digits,
       soup];
  validOnly = validOnly || bench;
  const docs = [];
  let total = 0;
  while (total < bytes) {
    const doc = !validOnly && r.chance(0.06) ? invalid(r, kinds)
                                             : Buffer.from(r.pick(kinds)(r), "utf8");
    docs.push(doc);
    total += doc.length;
  }
  return docs;
}

export function writeDocs(file, docs) {
  const chunks = [];
  for (const d of docs) {
    const len = Buffer.alloc(4);
    len.writeUInt32LE(d.length);
    chunks.push(len, d);
  }
  fs.writeFileSync(file, Buffer.concat(chunks));
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split("/").pop())) {
  const [out, bytes, flag] = process.argv.slice(2);
  if (!out || !bytes) {
    console.error("usage: node corpus.mjs OUT.bin BYTES [--valid-only | --bench]");
    process.exit(2);
  }
  writeDocs(out, makeCorpus(Number(bytes), { validOnly: flag === "--valid-only", bench: flag === "--bench" }));
}
