// Generates the code both engines share from the project's declarations:
//   assembly/layout.ts   → src/generated/layout.ts (a copy with TypeScript aliases for i32/u32/…)
//   schema/tables.mjs    → assembly/generated/registry.ts, src/generated/registry.ts (table registry, HookIds,
//                          decoder ids; for TypeScript also the typed column views), docs/tables.md, and the
//                          HookId dispatch of each engine: assembly/generated/dispatch.ts,
//                          src/generated/reference-dispatch.ts
//   schema/stats.mjs     → the registry files (stats table) and docs/stats.md
// Run by `npm run gen` (part of `npm run build`). `--check` only reports whether docs/stats.md and docs/tables.md
// are current. Imported (test/registry.test.ts), it only exports checkDeclarations and DISPATCH_ARGS.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TABLES, TRACE_HOOKS } from '../schema/tables.mjs';
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

/** every decoder of the decoded tables' events, with its table and decoder id */
const decodersOf = (tables) =>
  tables.filter((t) => !t.derived).flatMap((t) => (t.decoders ?? []).map((d) => ({ ...d, table: t.name, id: `DEC_${d.file.toUpperCase()}` })));
/** every declared HookId: [name, value, Windows name, decoder id or null] */
const hooksOf = (tables, traceHooks) => [
  ...traceHooks.map(([name, value, windowsName, walk]) => [name, value, windowsName, walk === 'walk' ? `DEC_${name}` : null]),
  ...decodersOf(tables).flatMap((d) => (d.hooks ?? []).map(([name, value, windowsName]) => [name, value, windowsName, d.id])),
];
const DECODERS = decodersOf(TABLES);
const HOOKS = hooksOf(TABLES, TRACE_HOOKS);
/** decoder ids: 0 = none (tallied only), the walk's own, then the tables' decoders */
const DECODER_IDS = ['DEC_NONE', ...TRACE_HOOKS.filter((h) => h[3] === 'walk').map(([name]) => `DEC_${name}`), ...DECODERS.map((d) => d.id)];
/** what the dispatch passes a decoder, by the names of schema/tables.mjs `args`: AssemblyScript and reference expressions */
const ARGS = {
  data: 'data',
  n: 'n',
  version: 'version',
  pointerSize: 'pointerSize',
  opcode: 'hookId & 0xff',
  cpu: 'cpu',
  tsAt: 'tsAt',
  fileOffset: 'fileOffset',
  bias: 'bias',
};
/** the names a decoder's `args` may use */
export const DISPATCH_ARGS = Object.keys(ARGS);

/** camelCase → CAMEL_CASE */
const snake = (name) => name.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase();
const hex = (v) => '0x' + (v >>> 0).toString(16);
const hex4 = (v) => '0x' + v.toString(16).padStart(4, '0');
/** table name → PascalCase (the generated column-view interfaces: CswitchColumns, ThreadEventsColumns, …) */
const pascal = (name) => name[0].toUpperCase() + name.slice(1);

/** Throws on a declaration the generated code could not follow (the project's own by default). */
export function checkDeclarations(tables = TABLES, traceHooks = TRACE_HOOKS, stats = STATS) {
  const decoded = tables.filter((t) => !t.derived);
  const names = new Set();
  for (const t of tables) {
    if (names.has(t.name)) throw new Error(`schema/tables.mjs: table ${t.name} declared twice`);
    names.add(t.name);
    if (t.columns.length > 32) throw new Error(`${t.name}: more than 32 columns do not fit the valid mask`);
    for (const [name, type] of t.columns) {
      if (!(type.replace('?', '') in WIDTH)) throw new Error(`${t.name}.${name}: unknown type ${type}`);
    }
    if (!t.derived && !(t.reserve >= 1)) throw new Error(`${t.name}: a decoded table needs a row reserve`);
    if (!t.derived && tables.indexOf(t) !== decoded.indexOf(t)) throw new Error(`${t.name}: decoded tables come before derived ones`);
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
  for (const t of tables) {
    if (t.derived) {
      if (t.decoders) throw new Error(`${t.name}: a derived table has no decoders`);
      continue;
    }
    // a child table (rowsOf): its rows are written by the decoders of the table it names (stackEventFrames)
    if (t.rowsOf !== undefined) {
      const parent = tables.find((p) => p.name === t.rowsOf);
      if (!parent || parent.derived || !parent.decoders || t.decoders) throw new Error(`${t.name}: rowsOf names a decoded table with decoders, and the child has none of its own`);
      continue;
    }
    if (!Array.isArray(t.decoders) || t.decoders.length === 0) throw new Error(`${t.name}: a decoded table names its decoders (and their HookIds), or the table whose decoders write its rows (rowsOf)`);
  }
  const files = new Set();
  for (const d of decodersOf(tables)) {
    if (files.has(d.file)) throw new Error(`schema/tables.mjs: decoder file ${d.file} declared twice`);
    files.add(d.file);
    for (const a of d.args) if (!(a in ARGS)) throw new Error(`${d.table}: decoder ${d.fn}: unknown argument ${a} (known: ${Object.keys(ARGS).join(', ')})`);
    if (!Array.isArray(d.hooks) || d.hooks.length === 0) throw new Error(`${d.table}: decoder ${d.fn} takes no HookId`);
    // both twins exist and export the function
    for (const path of [`assembly/${d.file}.ts`, `src/engine/reference/${d.file}.ts`]) {
      const text = existsSync(join(root, path)) ? readFileSync(join(root, path), 'utf8') : '';
      if (!text.includes(`export function ${d.fn}(`)) throw new Error(`${d.table}: ${path} must export function ${d.fn}`);
    }
  }
  const hookNames = new Set();
  const hookValues = new Map();
  for (const [name, value, windowsName] of hooksOf(tables, traceHooks)) {
    if (!/^[A-Z][A-Z0-9_]*$/.test(name)) throw new Error(`HookId ${name}: expected an upper-case constant name`);
    if (!Number.isInteger(value) || value < 0 || value > 0xffff) throw new Error(`HookId ${name}: ${value} is not a u16`);
    if (typeof windowsName !== 'string' || windowsName === '') throw new Error(`HookId ${name}: its events need a name`);
    if (hookNames.has(name)) throw new Error(`HookId ${name} declared twice`);
    if (hookValues.has(value)) throw new Error(`HookId ${hex4(value)} declared twice (${hookValues.get(value)}, ${name})`);
    hookNames.add(name);
    hookValues.set(value, name);
  }
  const ids = new Set();
  for (const s of stats) {
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
  out.push('', '// ---- HookIds (docs/format.md §B.5; schema/tables.mjs decoders and TRACE_HOOKS)');
  for (const [name, value, windowsName, decoder] of HOOKS) {
    out.push(`export const HOOK_${name}: i32 = ${hex4(value)}; // ${windowsName}${decoder ? ` → ${decoder}` : ''}`);
  }
  out.push('/** decoder ids of the HookId dispatch (generated/dispatch.ts): DEC_NONE = tallied only */');
  DECODER_IDS.forEach((id, i) => {
    const d = DECODERS.find((x) => x.id === id);
    const what = i === 0 ? 'tallied only' : d ? `${d.file}.ts ${d.fn} (${d.table})` : 'walk.ts itself';
    out.push(`export const ${id}: i32 = ${i}; // ${what}`);
  });
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
        const address = kind === 'address';
        const enumName = time || address ? null : (kind ?? null);
        return `      { id: ${c}, name: ${JSON.stringify(name)}, type: ${JSON.stringify(type.replace('?', ''))}, nullable: ${nullable}, enum: ${JSON.stringify(enumName)}, time: ${JSON.stringify(time)}, address: ${address}, description: ${JSON.stringify(description)} },`;
      })
      .join('\n');
    const flags = t.kernelFlags.map(([flag, mask]) => `{ name: ${JSON.stringify(flag)}, groupMask: ${hex(mask)} }`).join(', ');
    const hooks = (t.decoders ?? [])
      .flatMap((d) => d.hooks.map(([name, value]) => `{ name: ${JSON.stringify(name)}, hookId: ${hex4(value)}, decoder: ${JSON.stringify(d.file)} }`))
      .join(', ');
    return `  ${t.name}: {\n    id: ${i},\n    name: ${JSON.stringify(t.name)},\n    derived: ${Boolean(t.derived)},\n    rowsOf: ${JSON.stringify(t.rowsOf ?? null)},\n    description: ${JSON.stringify(t.description)},\n    kernelFlags: [${flags}],\n    hooks: [${hooks}],\n    columns: [\n${cols}\n    ],\n  },`;
  });
  const ARRAY = {
    i64: 'BigInt64Array',
    u64: 'BigUint64Array',
    f64: 'Float64Array',
    u32: 'Uint32Array',
    i32: 'Int32Array',
    u16: 'Uint16Array',
    u8: 'Uint8Array',
    i8: 'Int8Array',
    str: 'string[]',
  };
  const arrayOf = (type) => ARRAY[type.replace('?', '')];
  const views = TABLES.flatMap((t) => [
    `/** The columns of a chunk of ${t.name} rows, by name (null cells hold 0 or ''; \`valid\` says which are null). */`,
    `export interface ${pascal(t.name)}Columns {`,
    ...t.columns.map(([name, type, description]) => `  /** ${type}: ${description.replaceAll('*/', '* /')} */\n  readonly ${name}: ${arrayOf(type)};`),
    '}',
  ]);
  const makers = TABLES.map(
    (t) =>
      `  ${t.name}: (c: readonly unknown[]): ${pascal(t.name)}Columns => ({\n${t.columns.map(([name, type], i) => `    ${name}: c[${i}] as ${arrayOf(type)},`).join('\n')}\n  }),`,
  );
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
    '// ---- typed column access',
    ...views,
    '',
    '/** The column views of every table, by table name. */',
    `export interface TableColumns {\n${TABLES.map((t) => `  ${t.name}: ${pascal(t.name)}Columns;`).join('\n')}\n}`,
    '',
    '/** Makes the typed view of a chunk\'s columns (schema order): once per chunk, never per row. */',
    `export const COLUMN_VIEWS: { readonly [T in keyof TableColumns]: (columns: readonly unknown[]) => TableColumns[T] } = {\n${makers.join('\n')}\n};`,
    '',
    '/** The name of the events of each declared HookId (summary.eventsByKind). */',
    `export const HOOK_NAMES: Readonly<Record<number, string>> = {\n${HOOKS.map(([name, , windowsName]) => `  [HOOK_${name}]: ${JSON.stringify(windowsName)},`).join('\n')}\n};`,
    '',
    '/** Every diagnostic counter, in id order; details: [value, meaning]. */',
    `export const STATS = [\n${stats.join('\n')}\n] as const;`,
    '',
  ].join('\n');
}

/** The table id (registry index) a decoder id's decoder writes; -1 for the walk's own decoders. */
function decoderTableId(decoder) {
  const d = DECODERS.find((x) => x.id === decoder);
  return d ? TABLES.findIndex((t) => t.name === d.table) : -1;
}

/** The parameters of the generated decodeTableEvent after the decoder id (AssemblyScript types). */
const DISPATCH_PARAMS = [
  ['data', 'usize'],
  ['n', 'i32'],
  ['version', 'i32'],
  ['pointerSize', 'i32'],
  ['hookId', 'i32'],
  ['cpu', 'i32'],
  ['tsAt', 'usize'],
  ['fileOffset', 'f64'],
  ['bias', 'i32'],
];

/** assembly/generated/dispatch.ts: the WebAssembly engine's routing of HookIds (used by assembly/walk.ts). */
function asDispatch() {
  const imports = DECODERS.map((d) => `import { ${d.fn} } from '../${d.file}';`);
  return [
    '// B.5: the decoder of each HookId (a byte table by HookId, filled by walk.ts init) and the call of each',
    '// table decoder (a switch on the decoder id, inlined into walk.ts dispatch). The walk decodes the',
    '// DEC_HEADER and DEC_HEADER_EXTENSION events itself.',
    "import * as L from '../layout';",
    ...imports,
    '',
    '/**',
    ' * Writes the decoder id of every declared HookId into `table` (one byte per HookId, zero elsewhere): the walk\'s',
    ' * own, and those of the tables whose bit (table id) is set in `kept` (the others stay DEC_NONE: tallied only).',
    ' */',
    'export function fillHookDecoders(table: usize, kept: u32): void {',
    ...HOOKS.filter((h) => h[3]).map(([name, , , decoder]) => {
      const store = `store<u8>(table + <usize>L.HOOK_${name}, <u8>L.${decoder});`;
      const t = decoderTableId(decoder);
      return t < 0 ? `  ${store}` : `  if (kept & (1 << ${t})) ${store}`;
    }),
    '}',
    '',
    '/** Decodes one event of a decoded table with the decoder `decoder` (nothing for other ids). */',
    '// @ts-ignore: decorator',
    '@inline',
    `export function decodeTableEvent(decoder: i32, ${DISPATCH_PARAMS.map(([p, t]) => `${p}: ${t}`).join(', ')}): void {`,
    '  switch (decoder) {',
    ...DECODERS.flatMap((d) => [`    case L.${d.id}:`, `      ${d.fn}(${d.args.map((a) => ARGS[a]).join(', ')});`, '      break;']),
    '    default:',
    '      break;',
    '  }',
    '}',
    '',
  ].join('\n');
}

/** src/generated/reference-dispatch.ts: the reference engine's routing of HookIds (used by its walk.ts). */
function referenceDispatch() {
  const imports = DECODERS.map((d) => `import { ${d.fn} } from '../engine/reference/${d.file}.js';`);
  const tsType = (t) => (t === 'usize' || t === 'i32' || t === 'f64' ? 'number' : t);
  return [
    '// §B.5: the decoder of each HookId (a byte table by HookId) and the call of each table decoder (a switch',
    '// on the decoder id): the twin of assembly/generated/dispatch.ts. The walk decodes the DEC_HEADER and',
    '// DEC_HEADER_EXTENSION events itself.',
    "import * as L from './layout.js';",
    "import type { Arena } from '../engine/reference/memory.js';",
    ...imports,
    '',
    '/**',
    ' * The decoder id of every HookId (one byte per HookId; DEC_NONE for the undeclared ones): the walk\'s own, and',
    ' * those of the tables whose bit (table id) is set in `kept` (the others stay DEC_NONE: tallied only).',
    ' */',
    'export function hookDecoders(kept: number): Uint8Array {',
    '  const table = new Uint8Array(0x10000);',
    ...HOOKS.filter((h) => h[3]).map(([name, , , decoder]) => {
      const store = `table[L.HOOK_${name}] = L.${decoder};`;
      const t = decoderTableId(decoder);
      return t < 0 ? `  ${store}` : `  if (kept & (1 << ${t})) ${store}`;
    }),
    '  return table;',
    '}',
    '',
    '/** The decoder id of every HookId, every table decoded. */',
    'export const HOOK_DECODERS: Uint8Array = hookDecoders(-1);',
    '',
    '/** Decodes one event of a decoded table with the decoder `decoder` (nothing for other ids). */',
    `export function decodeTableEvent(decoder: number, a: Arena, d: DataView, ${DISPATCH_PARAMS.map(([p, t]) => `${p}: ${tsType(t)}`).join(', ')}): void {`,
    '  switch (decoder) {',
    ...DECODERS.flatMap((d) => [`    case L.${d.id}:`, `      ${d.fn}(a, d, ${d.args.map((x) => ARGS[x]).join(', ')});`, '      break;']),
    '    default:',
    '      break;',
    '  }',
    '}',
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
    '(bigint in JavaScript), f64 holds integers below 2^53 (a JavaScript number; int64 in Arrow and Parquet), `str` is text; `?` marks a column that can be null (its bit in `valid` is clear).',
    'Decoded tables come from the engines; derived tables are computed from them in TypeScript.',
    '',
  ];
  for (const t of TABLES) {
    lines.push(`## \`${t.name}\` (${t.derived ? 'derived' : 'decoded'})`, '', `${t.description}. Recorded with the kernel flag ${t.kernelFlags.map(([f]) => f).join(' or ')}.`, '');
    for (const d of t.decoders ?? []) {
      lines.push(`Decoded by \`${d.fn}\` (\`assembly/${d.file}.ts\`) from HookId ${d.hooks.map(([, value, windowsName]) => `${hex4(value)} (${windowsName})`).join(', ')}.`, '');
    }
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

function main() {
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
  write('assembly/generated/dispatch.ts', banner('schema/tables.mjs') + asDispatch());
  write('src/generated/reference-dispatch.ts', banner('schema/tables.mjs') + referenceDispatch());
  write('docs/stats.md', doc);
  write('docs/tables.md', tablesDoc());
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
