// Generates the code both engines share from the project's declarations:
//   assembly/layout.ts   → src/generated/layout.ts (a copy with TypeScript aliases for i32/u32/…)
//   schema/tables.mjs    → assembly/generated/registry.ts, src/generated/registry.ts (table registry)
//   schema/stats.mjs     → the same two files (stats table) and docs/stats.md; schema/tables.mjs → docs/tables.md
// Run by `npm run gen` (part of `npm run build`). `--check` only reports whether docs/stats.md is current.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TABLES } from '../schema/tables.mjs';
import { STATS } from '../schema/stats.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const WIDTH = { i64: 8, u64: 8, f64: 8, u32: 4, i32: 4, u16: 2, u8: 1, i8: 1, str: 4 };
/** rows a table of the WebAssembly engine holds at most (its default capacity) */
const ENGINE_MAX_ROWS = 131072;
/** bytes after each column of the WebAssembly engine: staggers the columns across cache sets (assembly/memory.ts), and
 *  takes the up to 56 bytes that assembly/compcs.ts fastBatch writes past a column's last row (8 rows at a time) */
const ENGINE_COLUMN_GAP = 64;
/** tables the engines decode (their ids index the arenas), then the derived ones */
const DECODED = TABLES.filter((t) => !t.derived);

/** camelCase → CAMEL_CASE */
const snake = (name) => name.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase();
const hex = (v) => '0x' + (v >>> 0).toString(16);

function checkDeclarations() {
  const names = new Set();
  for (const t of TABLES) {
    if (names.has(t.name)) throw new Error(`schema/tables.mjs: table ${t.name} declared twice`);
    names.add(t.name);
    if (t.columns.length > 32) throw new Error(`${t.name}: more than 32 columns do not fit the valid mask`);
    for (const [name, type] of t.columns) {
      if (!(type.replace('?', '') in WIDTH)) throw new Error(`${t.name}.${name}: unknown type ${type}`);
    }
    if (!t.derived && !(t.reserve >= 1)) throw new Error(`${t.name}: a decoded table needs a row reserve`);
    if (!t.derived && TABLES.indexOf(t) !== DECODED.indexOf(t)) throw new Error(`${t.name}: decoded tables come before derived ones`);
    const nullable = t.columns.some(([, type]) => type.endsWith('?'));
    const last = t.columns[t.columns.length - 1];
    if (nullable && (last[0] !== 'valid' || last[1] !== 'u32')) throw new Error(`${t.name}: a table with nullable columns ends with valid (u32)`);
    // a derived table whose rows come from no event (traces: from the logfile header and the decode) lists none
    if (!Array.isArray(t.kernelFlags) || (t.kernelFlags.length === 0 && !t.derived)) throw new Error(`${t.name}: kernelFlags must name the kernel flag(s) that record its events`);
    for (const [flag, mask] of t.kernelFlags) {
      if (!/^[A-Z][A-Z0-9_]*$/.test(flag)) throw new Error(`${t.name}: kernel flag ${flag}: expected an xperf flag name (CSWITCH, SPINLOCK, …)`);
      if (!Number.isInteger(mask) || mask < 0 || mask > 0xffffffff || (mask & 0x1fffffff) === 0) throw new Error(`${t.name}: kernel flag ${flag}: expected a PERF_* group-mask constant`);
    }
  }
  const ids = new Set();
  for (const s of STATS) {
    if (ids.has(s.id) || ids.has(s.name)) throw new Error(`schema/stats.mjs: ${s.id} declared twice`);
    ids.add(s.id);
    ids.add(s.name);
  }
}

/** The constants shared by both engines: valid AssemblyScript and (with type aliases) TypeScript. */
function registryConstants() {
  const out = [];
  out.push('// ---- tables (schema/tables.mjs)');
  TABLES.forEach((t, i) => out.push(`export const TABLE_${snake(t.name)}: i32 = ${i};`));
  out.push(`/** decoded tables (the engines' arenas hold these); derived tables follow them */`);
  out.push(`export const TABLE_COUNT: i32 = ${DECODED.length};`);
  out.push(`export const MAX_COLUMNS: i32 = ${Math.max(...DECODED.map((t) => t.columns.length))};`);
  out.push(
    '/** WebAssembly engine arena: a decoded table is one block of columns, each room for ENGINE_MAX_ROWS rows',
    ' *  followed by ENGINE_COLUMN_GAP bytes (assembly/memory.ts), so a column sits at a constant offset in its',
    ' *  block (the <PREFIX>_<COLUMN>_AT constants: store immediates for the row writers) */',
    `export const ENGINE_MAX_ROWS: i32 = ${ENGINE_MAX_ROWS};`,
    `export const ENGINE_COLUMN_GAP: i32 = ${ENGINE_COLUMN_GAP};`,
  );
  for (const t of TABLES) {
    out.push('', `// ${t.name}: ${t.description}`);
    let always = 0;
    t.columns.forEach(([name, type], c) => {
      out.push(`export const ${t.prefix}_${snake(name)}: i32 = ${c}; // ${type}`);
      if (!type.endsWith('?')) always |= 1 << c;
    });
    out.push(`export const ${t.prefix}_COLUMN_COUNT: i32 = ${t.columns.length};`);
    out.push(`/** columns every ${t.name} row carries (the non-nullable ones) */`);
    out.push(`export const ${t.prefix}_ALWAYS_VALID: u32 = ${hex(always)};`);
    if (!t.derived) {
      out.push(`export const ${t.prefix}_ROW_RESERVE: i32 = ${t.reserve};`);
      out.push(`/** byte offset of each column in the table's block of the WebAssembly engine */`);
      let before = 0;
      t.columns.forEach(([name, type], c) => {
        out.push(`export const ${t.prefix}_${snake(name)}_AT: i32 = ${before * ENGINE_MAX_ROWS + c * ENGINE_COLUMN_GAP};`);
        before += WIDTH[type.replace('?', '')];
      });
      out.push(`export const ${t.prefix}_BLOCK_BYTES: i32 = ${before * ENGINE_MAX_ROWS + t.columns.length * ENGINE_COLUMN_GAP};`);
    }
  }
  out.push('', '/** Columns of a table. */', 'export function columnCount(table: i32): i32 {');
  DECODED.forEach((t, i) => out.push(`  if (table == ${i}) return ${t.columns.length};`));
  out.push('  return 0;', '}');
  out.push('', '/** Rows that must be free in a table before one event is walked. */', 'export function rowReserve(table: i32): i32 {');
  DECODED.forEach((t, i) => out.push(`  if (table == ${i}) return ${t.reserve};`));
  out.push('  return 0;', '}');
  out.push('', '/** Byte width of a column of a decoded table in engine memory: 1, 2, 4 or 8 (0 for no such column). */', 'export function columnWidth(table: i32, column: i32): i32 {');
  DECODED.forEach((t, i) => {
    out.push(`  if (table == ${i}) {`, `    if (column < 0 || column >= ${t.columns.length}) return 0;`);
    for (const w of [8, 4, 2]) {
      const cols = t.columns.flatMap(([, type], c) => (WIDTH[type.replace('?', '')] === w ? [c] : []));
      if (cols.length) out.push(`    if (${cols.map((c) => `column == ${c}`).join(' || ')}) return ${w};`);
    }
    out.push('    return 1;', '  }');
  });
  out.push('  return 0;', '}');
  out.push('', '// ---- diagnostic counters (schema/stats.mjs): u64 slots of the engines, in this order');
  STATS.forEach((s, i) => out.push(`export const ${s.id}: i32 = ${i}; // ${s.name} (${s.severity})`));
  out.push(`export const D_COUNTER_COUNT: i32 = ${STATS.length};`);
  out.push('', '// detail values of issue-log entries');
  for (const s of STATS) {
    for (const [constant, value] of s.details ?? []) out.push(`export const ${constant}: i32 = ${detailValue(value)}; // ${s.id}`);
  }
  return out.join('\n') + '\n';
}

function detailValue(value) {
  if (typeof value === 'number') return value;
  const i = STATS.findIndex((s) => s.id === value);
  if (i < 0) throw new Error(`schema/stats.mjs: detail refers to unknown counter ${value}`);
  return i;
}

const TS_ALIASES = ['type i32 = number;', 'type u32 = number;', 'type bool = boolean;', ''].join('\n');

function tsRegistry() {
  const tables = TABLES.map((t, i) => {
    const cols = t.columns
      .map(([name, type, description, kind], c) => {
        const nullable = type.endsWith('?');
        const time = kind === 'time' || kind === 'duration' ? kind : null;
        const enumName = time ? null : (kind ?? null);
        return `      { id: ${c}, name: ${JSON.stringify(name)}, type: ${JSON.stringify(type.replace('?', ''))}, nullable: ${nullable}, enum: ${JSON.stringify(enumName)}, time: ${JSON.stringify(time)}, description: ${JSON.stringify(description)} },`;
      })
      .join('\n');
    const flags = t.kernelFlags.map(([flag, mask]) => `{ name: ${JSON.stringify(flag)}, groupMask: ${hex(mask)} }`).join(', ');
    return `  ${t.name}: {\n    id: ${i},\n    name: ${JSON.stringify(t.name)},\n    derived: ${Boolean(t.derived)},\n    description: ${JSON.stringify(t.description)},\n    kernelFlags: [${flags}],\n    columns: [\n${cols}\n    ],\n  },`;
  });
  const stats = STATS.map((s, i) => {
    const details = (s.details ?? []).map(([, value, text]) => `[${detailValue(value)}, ${JSON.stringify(text)}]`).join(', ');
    return `  { id: ${i}, name: ${JSON.stringify(s.name)}, severity: ${JSON.stringify(s.severity)}, description: ${JSON.stringify(s.description)}, detail: ${JSON.stringify(s.detail ?? null)}, details: [${details}] },`;
  });
  return [
    '',
    '// ---- the registry as data, for the TypeScript side',
    '/** Every decoded table and its columns, in id order. */',
    `export const TABLES = {\n${tables.join('\n')}\n} as const;`,
    '',
    '/** Every diagnostic counter, in id order; details: [value, meaning]. */',
    `export const STATS = [\n${stats.join('\n')}\n] as const;`,
    '',
  ].join('\n');
}

function statsDoc() {
  const esc = (s) => s.replace(/\|/g, '\\|');
  const lines = [
    '# Diagnostic counters',
    '',
    '<!-- GENERATED by scripts/gen.mjs from schema/stats.mjs. Do not edit; edit the declaration. -->',
    '',
    'Every decode result carries these counters in `summary.diagnostics` (and the first 1024 problems with their',
    'file offsets in `summary.issues`). Severity: **info** = what was seen; **dataLoss** = events or bytes that were',
    'not decoded; **error** = decoded, but the data contradicts the format or the chosen bias.',
    '',
    '| counter | severity | meaning | detail of its issues |',
    '|---|---|---|---|',
  ];
  for (const s of STATS) {
    const details = [
      ...(s.detail ? [esc(s.detail)] : []),
      ...(s.details ?? []).map(([constant, value, text]) => `${detailValue(value)} (\`${constant}\`): ${esc(text)}`),
    ].join('<br>');
    lines.push(`| \`${s.name}\` | ${s.severity} | ${esc(s.description)} | ${details} |`);
  }
  return lines.join('\n') + '\n';
}

function tablesDoc() {
  const esc = (x) => x.replace(/\|/g, '\\|');
  const lines = [
    '# Tables',
    '',
    '<!-- GENERATED by scripts/gen.mjs from schema/tables.mjs. Do not edit; edit the declaration. -->',
    '',
    'Every table etw-decode produces, with its columns in order. Types: i64/u64 are exact 64-bit integers',
    '(bigint in JavaScript), `str` is text; `?` marks a column that can be null (its bit in `valid` is clear).',
    'Decoded tables come from the engines; derived tables are computed from them in TypeScript.',
    '',
  ];
  for (const t of TABLES) {
    lines.push(`## \`${t.name}\` (${t.derived ? 'derived' : 'decoded'})`, '', `${t.description}. Recorded with the kernel flag ${t.kernelFlags.map(([f]) => f).join(' or ')}.`, '');
    lines.push('| # | column | type | meaning |', '|---|---|---|---|');
    t.columns.forEach(([name, type, description, enumName], c) => {
      lines.push(`| ${c} | \`${name}\` | ${type}${enumName ? ` (${enumName})` : ''} | ${esc(description)} |`);
    });
    lines.push('');
  }
  return lines.join('\n');
}

function write(path, text) {
  mkdirSync(dirname(join(root, path)), { recursive: true });
  writeFileSync(join(root, path), text);
}

checkDeclarations();
const doc = statsDoc();
if (process.argv.includes('--check')) {
  let current = '';
  try {
    current = readFileSync(join(root, 'docs/stats.md'), 'utf8');
  } catch {}
  let tables = '';
  try {
    tables = readFileSync(join(root, 'docs/tables.md'), 'utf8');
  } catch {}
  if (current !== doc || tables !== tablesDoc()) {
    console.error('docs/stats.md or docs/tables.md is out of date: run npm run gen');
    process.exit(1);
  }
  process.exit(0);
}
const banner = (from) => `// GENERATED by scripts/gen.mjs from ${from}. Do not edit; edit the source.\n/* eslint-disable */\n`;
const constants = registryConstants();
write('assembly/generated/registry.ts', banner('schema/tables.mjs and schema/stats.mjs') + constants);
write('src/generated/registry.ts', banner('schema/tables.mjs and schema/stats.mjs') + TS_ALIASES + constants + tsRegistry());
const layout = readFileSync(join(root, 'assembly/layout.ts'), 'utf8').replaceAll("'./generated/registry'", "'./registry.js'");
write('src/generated/layout.ts', banner('assembly/layout.ts') + TS_ALIASES + layout);
write('docs/stats.md', doc);
write('docs/tables.md', tablesDoc());
