// The command line: summary (text and --json), dump (csv / jsonl, exact 64-bit, empty cells for null),
// --help, and errors: exit code 2 for usage errors (bad option values, unknown command or option, missing
// argument), 1 for runtime errors (file missing, not an ETL file), as the README promises.
import { describe, expect, test, beforeAll } from 'vitest';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CORPUS_DIR, corpusTestsEnabled } from './helpers/corpus.js';

const corpus = corpusTestsEnabled();
import { generateMixedTrace } from '../src/writer/index.js';
import { decodeSync, rowSourceName, threadStateName } from '../src/node.js';
import { readTraceInfo } from '../src/node.js';
import { minimalTrace } from './helpers/bytes.js';

const BIN = fileURLToPath(new URL('../bin/etw-decode.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'etw-cli-'));
const trace = join(dir, 'mixed.etl');
let bytes: Uint8Array;

function cli(args: string[]) {
  return spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8' });
}

beforeAll(() => {
  bytes = generateMixedTrace({ seed: 3, targetBytes: 200_000, cpus: 2, bufferSize: 0x4000 }).bytes;
  writeFileSync(trace, bytes);
});

describe('summary', () => {
  test('--json has the contract fields and matches the library', () => {
    const out = JSON.parse(execFileSync(process.execPath, [BIN, 'summary', trace, '--json'], { encoding: 'utf8' }));
    const lib = decodeSync(bytes);
    expect(out.buffers).toBe(lib.summary.buffers);
    expect(out.events).toBe(lib.summary.events);
    expect(out.cswitch).toBe(lib.cswitch.length);
    expect(out.spinlock).toBe(lib.spinlock.length);
    expect(out.diagnostics.events).toBe(lib.summary.events);
    expect(out.eventsByKind.length).toBe(lib.summary.eventsByKind.length);
    const cs = out.eventsByKind.find((k: { hookId?: number }) => k.hookId === 0x0524);
    expect(cs).toMatchObject({ headerType: 'PERFINFO64', hookId: 0x0524 });
    expect(typeof out.trace.perfFreq).toBe('string'); // bigint as exact decimal text
  });

  test.skipIf(!corpus)('--json on a real file reports EVENT_HEADER kinds with provider and eventId', () => {
    const out = JSON.parse(execFileSync(process.execPath, [BIN, 'summary', join(CORPUS_DIR, 'airbus-lxcore_kernel.etl'), '--json'], { encoding: 'utf8' }));
    expect(out.buffers).toBe(3);
    expect(out.events).toBe(4);
    expect(out.eventsByKind).toContainEqual(
      expect.objectContaining({ headerType: 'EVENT_HEADER64', provider: '0cd1c309-0878-4515-83db-749843b3f5c9', eventId: 0, count: 2 }),
    );
  });

  test('text summary', () => {
    const r = cli(['summary', trace, '--no-progress']);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/buffers/);
    expect(r.stdout).toMatch(/cswitch rows: \d+/);
  });
});

describe('dump', () => {
  test('csv: header row, one row per record, 64-bit exact, empty cell for null', () => {
    const out = join(dir, 'cs.csv');
    const r = cli(['dump', trace, '--table', 'cswitch', '--format', 'csv', '-o', out]);
    expect(r.status).toBe(0);
    const lines = readFileSync(out, 'utf8').trimEnd().split('\n');
    const lib = decodeSync(bytes);
    expect(lines.length).toBe(lib.cswitch.length + 1);
    const header = lines[0]!.split(',');
    expect(header.slice(0, 4)).toEqual(['timestamp', 'cpu', 'newThreadId', 'oldThreadId']);
    const row0 = lines[1]!.split(',');
    const rec = lib.cswitch.get(0);
    expect(row0[0]).toBe(rec.timestamp.toString());
    expect(row0[header.indexOf('newThreadPriority')]).toBe(rec.newThreadPriority === null ? '' : String(rec.newThreadPriority));
    // compact rows carry no newThreadPriority: some cells must be empty
    expect(lines.slice(1).some((l) => l.split(',')[header.indexOf('newThreadPriority')] === '')).toBe(true);
  });

  test('jsonl spinlock rows: exact u64 addresses as hex text, other 64-bit columns always decimal strings', () => {
    const r = cli(['dump', trace, '--table', 'spinlock', '--format', 'jsonl', '--time', 'ns']);
    expect(r.status).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    const lib = decodeSync(bytes);
    expect(lines.length).toBe(lib.spinlock.length);
    const first = lines[0]!;
    expect(first).toContain(`"spinLockAddress":"0x${lib.spinlock.get(0).spinLockAddress.toString(16)}"`);
    for (const line of lines) {
      const o = JSON.parse(line);
      for (const k of ['timestamp', 'spinLockAddress', 'callerAddress', 'acquireTime', 'releaseTime', 'timeNs']) expect([k, typeof o[k]]).toEqual([k, 'string']);
      for (const k of ['cpu', 'spinCount', 'threadId', 'fileOffset']) expect([k, typeof o[k]]).toEqual([k, 'number']);
    }
    const i = lines.findIndex((l) => BigInt(JSON.parse(l).spinLockAddress) > 2n ** 53n);
    expect(i).toBeGreaterThanOrEqual(0);
    expect(BigInt(JSON.parse(lines[i]!).spinLockAddress)).toBe(lib.spinlock.get(i).spinLockAddress);
  });

  test('--names and --time ns add exact extra columns', () => {
    const r = cli(['dump', trace, '--names', '--time', 'ns']);
    expect(r.status).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    const header = lines[0]!.split(',');
    expect(header.slice(-5)).toEqual(['timeNs', 'oldThreadWaitReasonName', 'oldThreadWaitModeName', 'oldThreadStateName', 'sourceName']);
    const lib = decodeSync(bytes);
    const rec = lib.cswitch.get(5);
    const cells = lines[6]!.split(',');
    expect(cells[header.indexOf('timeNs')]).toBe(lib.clock!.toNanoseconds(rec.timestamp).toString());
    expect(cells[header.indexOf('oldThreadStateName')]).toBe(rec.oldThreadState === null ? '' : threadStateName(rec.oldThreadState)!);
    expect(cells[header.indexOf('sourceName')]).toBe(rowSourceName(rec.source));
  });

  test('readTraceInfo reads only the header buffer', async () => {
    const info = await readTraceInfo(trace);
    expect(info).toEqual(decodeSync(bytes).info);
  });

  test.skipIf(!corpus)('events table', () => {
    const r = cli(['dump', join(CORPUS_DIR, 'perfview-smallEtlFile.etl'), '--table', 'events']);
    expect(r.status).toBe(0);
    expect(r.stdout.split('\n')[0]).toMatch(/^headerType,hookId/);
    expect(r.stdout).toMatch(/SYSTEM32,0,WMI_LOG_TYPE_HEADER/);
  });
});

describe('help and errors', () => {
  test.each([['--help'], ['summary', '--help'], ['dump', '--help']])('%s', (...args) => {
    const r = cli(args);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/Usage: etw-decode/);
  });

  test('--threads help states the automatic thresholds in force', async () => {
    const { AUTO_MIN_BYTES, AUTO_MIN_BYTES_ROWS } = await import('../src/parallel/run.js');
    const r = cli(['summary', '--help']);
    const help = r.stdout.replace(/\s+/g, ' ');
    expect(help).toContain(`${AUTO_MIN_BYTES / 2 ** 20} MiB and more for summary`);
    expect(help).toContain(`${AUTO_MIN_BYTES_ROWS / 2 ** 30} GiB for rows`);
  });

  test('missing file: one line, exit 1', () => {
    const r = cli(['summary', join(dir, 'nope.etl')]);
    expect(r.status).toBe(1);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/cannot open .*nope\.etl: no such file/);
  });

  test('not an ETL file: one line naming offset, expected and found; exit 1', () => {
    const f = join(dir, 'text.etl');
    writeFileSync(f, 'definitely not a trace'.repeat(20));
    const r = cli(['summary', f]);
    expect(r.status).toBe(1);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/not an ETL file: at offset 0x0 expected/);
  });

  test('bad option value', () => {
    const r = cli(['summary', trace, '--bias', 'x']);
    expect(r.status).not.toBe(0);
    expect(r.stderr).toMatch(/MaximumWaitReason/);
  });
});

describe('exit codes', () => {
  // README: "exit code 1 (2 for bad options)"
  test.each([
    ['--table nope', ['dump', trace, '--table', 'nope'], /nope/],
    ['--format xml', ['dump', trace, '--format', 'xml'], /xml/],
    ['--time ms', ['dump', trace, '--time', 'ms'], /--time/],
    ['--engine gpu', ['summary', trace, '--engine', 'gpu'], /gpu/],
    ['--bias 99', ['summary', trace, '--bias', '99'], /MaximumWaitReason/],
    ['--bias 0', ['dump', trace, '--bias', '0'], /MaximumWaitReason/],
    ['--bias x', ['summary', trace, '--bias', 'x'], /MaximumWaitReason/],
    ['unknown option', ['summary', trace, '--wat'], /--wat/],
    ['unknown command', ['nope', trace], /nope/],
    ['summary without a file argument', ['summary'], /file/],
    ['dump without a file argument', ['dump', '--table', 'spinlock'], /file/],
    ['two file arguments', ['summary', trace, trace], /argument/],
  ])('usage error, %s: exit code 2', (_label, args, message) => {
    const r = cli(args);
    expect(r.stderr).toMatch(message);
    expect(r.status).toBe(2);
  });

  test('a bad option found after reading the file (--time ns on a clock without conversion): exit code 2', () => {
    const f = join(dir, 'raw-clock.etl');
    writeFileSync(f, minimalTrace({ clockType: 0, buffers: [] }).bytes); // ReservedFlags 0: "raw" clock (A.8)
    const r = cli(['dump', f, '--time', 'ns']);
    expect(r.stderr).toMatch(/clock type 0/);
    expect(r.status).toBe(2);
  });

  test.each([
    ['summary of a missing file', () => ['summary', join(dir, 'missing.etl')], /no such file/],
    ['dump of a missing file', () => ['dump', join(dir, 'missing.etl')], /no such file/],
    ['a directory', () => ['summary', dir], /it is a directory|not a regular file/],
    ['an empty file', () => (writeFileSync(join(dir, 'empty.etl'), ''), ['summary', join(dir, 'empty.etl')]), /input is empty/],
    ['not an ETL file', () => (writeFileSync(join(dir, 'junk.etl'), 'x'.repeat(500)), ['dump', join(dir, 'junk.etl')]), /not an ETL file/],
  ] as const)('runtime error, %s: one line, exit code 1', (_label, args, message) => {
    const r = cli([...args()]);
    expect(r.stderr).toMatch(message);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.status).toBe(1);
  });

  test('success: exit code 0', () => {
    expect(cli(['summary', trace, '--no-progress']).status).toBe(0);
    expect(cli(['dump', trace, '--table', 'spinlock', '-o', join(dir, 'sl.csv')]).status).toBe(0);
  });
});
