// Spin lock contention (issue 9): analyzeSpinlocks and the streaming SpinlockAnalyzer against aggregates
// computed here, independently, from the writer's event specs (bigint arithmetic throughout); the same
// answer from a whole decode and from a stream of many small borrowed chunks, on both engines; the
// `spinlocks` command's text (exact lines) and --json (exact object) and its exit codes.
import { describe, expect, test, beforeAll } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { analyzeSpinlocks, decodeSync, SpinlockAnalyzer, streamFile, Table, TABLE_COLUMNS, type SpinlockAnalysis, type SpinlockStats, type StreamOptions } from '../src/node.js';
import { allocColumn } from '../src/tables/schema.js';
import { Rng, writeTrace, type SpinLockSpec, type TraceOptions } from '../src/writer/index.js';

const ENGINES = ['wasm', 'reference'] as const;
const BIN = fileURLToPath(new URL('../bin/etw-decode.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'etw-spin-'));
const U64 = (1n << 64n) - 1n;

function cli(args: string[]) {
  return spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8' });
}

type Fields = Pick<SpinLockSpec, 'spinLockAddress' | 'callerAddress' | 'acquireTime' | 'releaseTime' | 'waitTimeInCycles' | 'spinCount'>;

/** SpinLock specs, one per row, 1000 ticks apart, round robin over `cpus` processors. */
function specs(rows: Fields[], cpus = 2): SpinLockSpec[] {
  return rows.map((r, i) => ({
    kind: 'spinlock',
    cpu: i % cpus,
    timestamp: 2_000_000n + 1000n * BigInt(i),
    threadId: 100 + (i % 7),
    interruptCount: 0,
    irql: 2,
    acquireDepth: 1,
    acquireMode: 0,
    executeDpc: false,
    executeIsr: false,
    ...r,
  }));
}

// ---- the oracle: the definitions of the brief, by the simplest method

function oracleGroup(rows: Fields[], key: (r: Fields) => bigint, mhz: number | null): SpinlockStats[] {
  const by = new Map<bigint, Fields[]>();
  for (const r of rows) {
    const k = key(r);
    if (!by.has(k)) by.set(k, []);
    by.get(k)!.push(r);
  }
  const ns = (c: bigint | null) => (mhz === null || c === null ? null : (c * 1000n) / BigInt(mhz));
  const out: SpinlockStats[] = [...by].map(([address, rs]) => {
    const holds = rs.filter((r) => r.releaseTime >= r.acquireTime).map((r) => r.releaseTime - r.acquireTime);
    const sum = (xs: bigint[]) => xs.reduce((a, b) => a + b, 0n);
    const max = (xs: bigint[]) => (xs.length ? xs.reduce((a, b) => (b > a ? b : a)) : null);
    const spin = rs.map((r) => BigInt(r.spinCount));
    const wait = rs.map((r) => BigInt(r.waitTimeInCycles));
    return {
      address,
      count: rs.length,
      contended: rs.filter((r) => r.spinCount > 0).length,
      spinCountSum: sum(spin),
      spinCountMax: Number(max(spin)),
      waitTimeInCyclesSum: sum(wait),
      waitTimeInCyclesMax: Number(max(wait)),
      holdCyclesSum: sum(holds),
      holdCyclesMax: max(holds),
      inconsistent: rs.length - holds.length,
      waitNsSum: ns(sum(wait)),
      waitNsMax: ns(max(wait)),
      holdNsSum: ns(sum(holds)),
      holdNsMax: ns(max(holds)),
    };
  });
  // contended desc, then wait cycles desc, then address asc: a sort by a composite string key
  const k = (s: SpinlockStats) => `${(1e9 - s.contended).toString().padStart(10, '0')} ${(U64 * 4n - s.waitTimeInCyclesSum).toString().padStart(25, '0')} ${s.address.toString().padStart(25, '0')}`;
  return out.sort((a, b) => (k(a) < k(b) ? -1 : 1));
}

function oracle(rows: Fields[], mhz: number | null): SpinlockAnalysis {
  return {
    totals: {
      rows: rows.length,
      contended: rows.filter((r) => r.spinCount > 0).length,
      inconsistent: rows.filter((r) => r.releaseTime < r.acquireTime).length,
      locks: new Set(rows.map((r) => r.spinLockAddress)).size,
      callers: new Set(rows.map((r) => r.callerAddress)).size,
    },
    cpuSpeedInMHz: mhz,
    byLock: oracleGroup(rows, (r) => r.spinLockAddress, mhz),
    byCaller: oracleGroup(rows, (r) => r.callerAddress, mhz),
  };
}

// ---- a small trace whose every value is chosen

const LOCK_A = 0xfffff8006ba1bc20n;
const LOCK_B = 0xfffff9006ba1bc20n; // the low word of A: keys differ in the high word only
const LOCK_C = 0x1000n;
const CALLER_1 = 0xfffff80069e31234n;
const CALLER_2 = 0xfffff80069e35678n;
const CALLER_3 = 0x7ff612345678n;
const T = 0x0020_0000_0000_0000n; // rdtsc values above 2^53

const SMALL: Fields[] = [
  { spinLockAddress: LOCK_A, callerAddress: CALLER_1, acquireTime: T + 0x1000n, releaseTime: T + 0x1400n, spinCount: 20, waitTimeInCycles: 400 },
  // the low word wraps between acquire and release
  { spinLockAddress: LOCK_A, callerAddress: CALLER_2, acquireTime: T + 0xffffff00n, releaseTime: T + 0x1_0000_0100n, spinCount: 10, waitTimeInCycles: 200 },
  // released before it was acquired: inconsistent, not in hold
  { spinLockAddress: LOCK_A, callerAddress: CALLER_1, acquireTime: T + 0x5000n, releaseTime: T + 0x4f00n, spinCount: 0, waitTimeInCycles: 0 },
  // a hold of almost 2^64 cycles, u32 maxima
  { spinLockAddress: LOCK_B, callerAddress: CALLER_1, acquireTime: 5n, releaseTime: U64 - 0xffn, spinCount: 0xffffffff, waitTimeInCycles: 0xffffffff },
  // a hold just above 2^52
  { spinLockAddress: LOCK_B, callerAddress: CALLER_3, acquireTime: 0n, releaseTime: (1n << 52n) + 7n, spinCount: 0, waitTimeInCycles: 50 },
  // a hold of 0
  { spinLockAddress: LOCK_C, callerAddress: CALLER_3, acquireTime: 100n, releaseTime: 100n, spinCount: 0, waitTimeInCycles: 0 },
  // inconsistent by far (high words 2^32 apart)
  { spinLockAddress: LOCK_C, callerAddress: CALLER_2, acquireTime: 0xffff_0000_0000_0000n, releaseTime: 1n, spinCount: 3, waitTimeInCycles: 30 },
  // five holds of 2^51 + x: their sum passes 2^53
  ...[5n, 6n, 7n, 8n, 9n].map((x) => ({ spinLockAddress: LOCK_A, callerAddress: CALLER_3, acquireTime: T, releaseTime: T + (1n << 51n) + x, spinCount: 1, waitTimeInCycles: 10 })),
];

function smallTrace(options: TraceOptions = {}): Uint8Array {
  return writeTrace({ ...options, events: specs(SMALL) }).bytes;
}

describe('analyzeSpinlocks on a small trace with chosen values', () => {
  test.each(ENGINES)('%s engine: = the oracle, exactly', (engine) => {
    const a = analyzeSpinlocks(decodeSync(smallTrace(), { engine }));
    expect(a).toEqual(oracle(SMALL, 3000));
    // spot checks of the oracle itself, by hand
    expect(a.totals).toEqual({ rows: 12, contended: 9, inconsistent: 2, locks: 3, callers: 3 });
    expect(a.byLock.map((s) => s.address)).toEqual([LOCK_A, LOCK_B, LOCK_C]);
    const [lockA, lockB, lockC] = a.byLock;
    expect(lockA).toMatchObject({ count: 8, contended: 7, inconsistent: 1, holdCyclesSum: 0x400n + 0x200n + 5n * (1n << 51n) + 35n, holdCyclesMax: (1n << 51n) + 9n });
    expect(lockA!.holdCyclesSum > 2n ** 53n).toBe(true);
    expect(lockB).toMatchObject({ holdCyclesSum: U64 - 0xffn - 5n + (1n << 52n) + 7n, holdCyclesMax: U64 - 0x104n, spinCountSum: 0xffffffffn, waitTimeInCyclesSum: 0xffffffffn + 50n });
    expect(lockB!.holdNsMax).toBe(((U64 - 0x104n) * 1000n) / 3000n);
    expect(lockC).toMatchObject({ count: 2, inconsistent: 1, holdCyclesSum: 0n, holdCyclesMax: 0n });
    expect(a.byCaller.map((s) => s.address)).toEqual([CALLER_3, CALLER_1, CALLER_2]);
  });

  test('a key whose every row is inconsistent has holdCyclesMax null', () => {
    const rows = [{ ...SMALL[2]!, spinLockAddress: 0x42n }];
    const a = analyzeSpinlocks(decodeSync(writeTrace({ events: specs(rows) }).bytes));
    expect(a.byLock[0]).toMatchObject({ address: 0x42n, inconsistent: 1, holdCyclesSum: 0n, holdCyclesMax: null, holdNsSum: 0n, holdNsMax: null });
    expect(a).toEqual(oracle(rows, 3000));
  });

  test('ns: null without CpuSpeedInMHz; the option overrides the trace', () => {
    const noSpeed = decodeSync(smallTrace({ cpuSpeedInMHz: 0 }));
    expect(analyzeSpinlocks(noSpeed)).toEqual(oracle(SMALL, null));
    expect(analyzeSpinlocks(noSpeed, { cpuSpeedInMHz: 2400 })).toEqual(oracle(SMALL, 2400));
    const r = decodeSync(smallTrace());
    expect(analyzeSpinlocks(r, { cpuSpeedInMHz: null })).toEqual(oracle(SMALL, null));
    expect(analyzeSpinlocks({ spinlock: r.spinlock, info: null })).toEqual(oracle(SMALL, null));
    expect(() => analyzeSpinlocks(r, { cpuSpeedInMHz: 0 })).toThrow(RangeError);
  });

  test.each(ENGINES)('%s engine: a 32-bit trace', (engine) => {
    const rows: Fields[] = [
      { spinLockAddress: 0x82345678n, callerAddress: 0x81000010n, acquireTime: T + 10n, releaseTime: T + 70n, spinCount: 4, waitTimeInCycles: 44 },
      { spinLockAddress: 0x82345678n, callerAddress: 0x81000020n, acquireTime: T + 90n, releaseTime: T + 80n, spinCount: 0, waitTimeInCycles: 0 },
      { spinLockAddress: 0x8234567cn, callerAddress: 0x81000010n, acquireTime: 1n, releaseTime: 2n, spinCount: 9, waitTimeInCycles: 99 },
    ];
    const r = decodeSync(writeTrace({ pointerSize: 4, events: specs(rows) }).bytes, { engine });
    expect(r.spinlock.get(0).pointerSize).toBe(4);
    expect(analyzeSpinlocks(r)).toEqual(oracle(rows, 3000));
  });

  test('no rows: empty lists and zero totals', () => {
    const r = decodeSync(writeTrace({ events: [] }).bytes);
    expect(analyzeSpinlocks(r)).toEqual({ totals: { rows: 0, contended: 0, inconsistent: 0, locks: 0, callers: 0 }, cpuSpeedInMHz: 3000, byLock: [], byCaller: [] });
  });
});

// ---- SpinlockAnalyzer on tables built directly

function tableOf(rows: Fields[]): Table<'spinlock'> {
  const specsOf = TABLE_COLUMNS.spinlock;
  const columns = specsOf.map((c) => allocColumn(c.type, rows.length));
  const col = (name: string) => columns[specsOf.findIndex((c) => c.name === name)]!;
  rows.forEach((r, i) => {
    (col('spinLockAddress') as BigUint64Array)[i] = r.spinLockAddress;
    (col('callerAddress') as BigUint64Array)[i] = r.callerAddress;
    (col('acquireTime') as BigUint64Array)[i] = r.acquireTime;
    (col('releaseTime') as BigUint64Array)[i] = r.releaseTime;
    (col('spinCount') as Uint32Array)[i] = r.spinCount;
    (col('waitTimeInCycles') as Uint32Array)[i] = r.waitTimeInCycles;
  });
  return new Table('spinlock', { length: rows.length, columns });
}

describe('SpinlockAnalyzer', () => {
  test('keeps nothing of a chunk: overwriting it after add() changes nothing', () => {
    const t = tableOf(SMALL);
    const an = new SpinlockAnalyzer();
    an.add(t);
    for (const c of t.columns) if (!Array.isArray(c)) new Uint8Array(c.buffer, c.byteOffset, c.byteLength).fill(0xee);
    expect(an.result({ cpuSpeedInMHz: 3000 })).toEqual(oracle(SMALL, 3000));
  });

  test('spin and wait sums stay exact past 2^53 (3 million u32 maxima)', () => {
    const rows: Fields[] = Array.from({ length: 1000 }, (_, i) => ({
      spinLockAddress: LOCK_A,
      callerAddress: i % 2 ? CALLER_1 : CALLER_2,
      acquireTime: U64 - 1n,
      releaseTime: U64, // hold 1
      spinCount: 0xffffffff,
      waitTimeInCycles: 0xfffffffe,
    }));
    const t = tableOf(rows);
    const an = new SpinlockAnalyzer();
    for (let k = 0; k < 3000; k++) an.add(t);
    const a = an.result(null);
    const n = 3_000_000n;
    expect(a.byLock).toHaveLength(1);
    expect(a.byLock[0]).toMatchObject({ count: 3_000_000, contended: 3_000_000, spinCountSum: n * 0xffffffffn, waitTimeInCyclesSum: n * 0xfffffffen, holdCyclesSum: n, holdCyclesMax: 1n });
    expect(a.byLock[0]!.spinCountSum > 2n ** 53n).toBe(true);
    expect(a.byCaller.map((s) => s.spinCountSum)).toEqual([(n / 2n) * 0xffffffffn, (n / 2n) * 0xffffffffn]);
    // same contended and wait: by address
    expect(a.byCaller.map((s) => s.address)).toEqual([CALLER_1, CALLER_2]);
  });

  test('result() can be called between chunks', () => {
    const an = new SpinlockAnalyzer();
    an.add(tableOf(SMALL.slice(0, 4)));
    expect(an.result({ cpuSpeedInMHz: 3000 })).toEqual(oracle(SMALL.slice(0, 4), 3000));
    an.add(tableOf(SMALL.slice(4)));
    expect(an.result({ cpuSpeedInMHz: 3000 })).toEqual(oracle(SMALL, 3000));
  });
});

// ---- a random trace, streamed in many small chunks

describe('streaming = whole decode = oracle, on a random trace', () => {
  let rows: Fields[];
  let bytes: Uint8Array;
  let path: string;

  beforeAll(() => {
    const rng = new Rng(9);
    const lockPool = Array.from({ length: 40 }, (_, i) =>
      i % 4 === 0 ? BigInt(rng.next()) : i % 4 === 1 ? LOCK_A + (BigInt(i) << 32n) : 0xfffff80000000000n + BigInt(rng.next() & ~7),
    );
    const callerPool = Array.from({ length: 300 }, () => (rng.next() % 3 === 0 ? BigInt(rng.next()) : 0xfffff80000000000n | BigInt(rng.next())));
    rows = Array.from({ length: 12_000 }, () => {
      const acquireTime = rng.next() % 5 === 0 ? rng.bigint64() : T + BigInt(rng.next());
      const kind = rng.next() % 20;
      const hold = kind === 0 ? rng.bigint64() : kind === 1 ? -BigInt(rng.next() % 1000) - 1n : BigInt(rng.next() % 100_000);
      const releaseTime = (((acquireTime + hold) % (U64 + 1n)) + (U64 + 1n)) % (U64 + 1n);
      const contended = rng.next() % 3 === 0;
      return {
        spinLockAddress: lockPool[Math.min(lockPool.length - 1, Math.floor(rng.float() ** 2 * lockPool.length))]!,
        callerAddress: callerPool[rng.next() % callerPool.length]!,
        acquireTime,
        releaseTime,
        spinCount: contended ? 1 + (rng.next() % 5000) : 0,
        waitTimeInCycles: contended ? rng.next() : rng.next() % 100,
      };
    });
    bytes = writeTrace({ numberOfProcessors: 4, bufferSize: 0x1000, events: specs(rows, 4) }).bytes;
    path = join(dir, 'random.etl');
    writeFileSync(path, bytes);
  });

  test.each(ENGINES)('%s engine', async (engine) => {
    const whole = analyzeSpinlocks(decodeSync(bytes, { engine }));
    const expected = oracle(rows, 3000);
    expect(whole.totals.inconsistent).toBeGreaterThan(100);
    expect(whole).toEqual(expected);
    const an = new SpinlockAnalyzer();
    let chunks = 0;
    const options: StreamOptions = {
      engine,
      windowBytes: 0x1000,
      rows: 'borrow',
      onRows: ({ spinlock }) => {
        if (spinlock.length) chunks++;
        an.add(spinlock);
      },
    };
    // rows reach onRows once a table has DRAIN_ROWS pending (decode-steps.ts `drainRows`, an internal knob):
    // drain every 97 rows to cut the table into many uneven chunks
    const res = await streamFile(path, Object.assign(options, { drainRows: 97 }));
    expect(chunks).toBeGreaterThan(50);
    expect(an.result(res.info)).toEqual(expected);
  });
});

// ---- the command

describe('etw-decode spinlocks', () => {
  let small: string;
  beforeAll(() => {
    small = join(dir, 'small.etl');
    writeFileSync(small, smallTrace());
  });

  test('text: totals, then an aligned table by lock (exact lines)', () => {
    const r = cli(['spinlocks', small]);
    expect(r.status).toBe(0);
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe(
      [
        `${small}: 12 spin lock rows, 9 contended (75.0%), 3 locks, 3 callers; CPU 3000 MHz (ns = cycles × 1000 / MHz); 2 rows with releaseTime < acquireTime (inconsistent: not in hold)`,
        'top 3 of 3 locks by contended rows, then wait cycles:',
        '                            contended              spin count             wait cycles                                 hold cycles                               wait ns                                   hold ns',
        'lock                count  rows     %         sum         max         sum         max                   sum                   max  inconsistent         sum         max                  sum                  max',
        '0xfffff8006ba1bc20      8     7  87.5          35          20         650         400     11258999068427811      2251799813685257             1         216         133     3752999689475937      750599937895085',
        '0xfffff9006ba1bc20      2     1  50.0  4294967295  4294967295  4294967345  4294967295  18451247673336921858  18446744073709551355             0  1431655781  1431655765  6150415891112307286  6148914691236517118',
        '0x1000                  2     1  50.0           3           3          30          30                     0                     0             1          10          10                    0                    0',
      ].join('\n') + '\n',
    );
    // the reference engine prints the same
    expect(cli(['spinlocks', small, '--engine', 'reference']).stdout).toBe(r.stdout);
  });

  test('text: --by caller --top 2; no ns columns and no inconsistent column when the trace has neither', () => {
    const r = cli(['spinlocks', small, '--by', 'caller', '--top', '2']);
    expect(r.status).toBe(0);
    const lines = r.stdout.split('\n');
    expect(lines[1]).toBe('top 2 of 3 callers by contended rows, then wait cycles:');
    expect(lines[3]).toMatch(/^caller {14}count {2}rows/);
    expect(lines.slice(4, 6).map((l) => l.split(/ +/)[0])).toEqual(['0x7ff612345678', '0xfffff80069e31234']);

    const plain = join(dir, 'plain.etl');
    const rows: Fields[] = [
      { spinLockAddress: LOCK_A, callerAddress: CALLER_1, acquireTime: 1000n, releaseTime: 1500n, spinCount: 12, waitTimeInCycles: 3456 },
      { spinLockAddress: LOCK_A, callerAddress: CALLER_2, acquireTime: 2000n, releaseTime: 2100n, spinCount: 0, waitTimeInCycles: 7 },
      { spinLockAddress: LOCK_C, callerAddress: CALLER_2, acquireTime: 3000n, releaseTime: 3333n, spinCount: 0, waitTimeInCycles: 0 },
    ];
    writeFileSync(plain, writeTrace({ cpuSpeedInMHz: 0, events: specs(rows) }).bytes);
    const p = cli(['spinlocks', plain]);
    expect(p.status).toBe(0);
    expect(p.stdout).toBe(
      [
        `${plain}: 3 spin lock rows, 1 contended (33.3%), 2 locks, 2 callers; CpuSpeedInMHz unknown: cycles only`,
        'top 2 of 2 locks by contended rows, then wait cycles:',
        '                            contended  spin count  wait cycles  hold cycles',
        'lock                count  rows     %   sum   max    sum   max    sum   max',
        '0xfffff8006ba1bc20      2     1  50.0    12    12   3463  3456    600   500',
        '0x1000                  1     0   0.0     0     0      0     0    333   333',
      ].join('\n') + '\n',
    );
  });

  test('text: columns stay aligned on a larger trace', () => {
    const rng = new Rng(4);
    const rows: Fields[] = Array.from({ length: 500 }, () => ({
      spinLockAddress: rng.next() % 2 ? BigInt(rng.next() % 50) : 0xfffff80000000000n + BigInt(rng.next() % 50) * 0x40n,
      callerAddress: BigInt(rng.next()),
      acquireTime: T,
      releaseTime: T + BigInt(rng.next() % 2 ** rng.int(1, 31)),
      spinCount: rng.next() % 2 ? rng.next() % 2 ** rng.int(1, 31) : 0,
      waitTimeInCycles: rng.next() % 2 ** rng.int(1, 31),
    }));
    const f = join(dir, 'align.etl');
    writeFileSync(f, writeTrace({ events: specs(rows) }).bytes);
    const r = cli(['spinlocks', f, '--top', '1000']);
    expect(r.status).toBe(0);
    const table = r.stdout.trimEnd().split('\n').slice(3);
    expect(table).toHaveLength(new Set(rows.map((x) => x.spinLockAddress)).size + 1);
    // the address column left-aligned, every other cell ending where its column head ends
    const ends = (l: string) => [...l.matchAll(/\S+/g)].map((m) => m.index! + m[0].length);
    const heads = ends(table[0]!);
    expect(heads).toHaveLength(10 + 4);
    for (const l of table.slice(1)) {
      expect(l.startsWith('0x')).toBe(true);
      expect(ends(l).slice(1)).toEqual(heads.slice(1));
    }
  });

  test('--json: one object, addresses in hex, 64-bit values as decimal strings', () => {
    const r = cli(['spinlocks', small, '--json', '--top', '2']);
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({
      file: small,
      by: 'lock',
      cpuSpeedInMHz: 3000,
      totals: { rows: 12, contended: 9, inconsistent: 2, locks: 3, callers: 3 },
      top: [
        {
          address: '0xfffff8006ba1bc20',
          count: 8,
          contended: 7,
          spinCountSum: '35',
          spinCountMax: 20,
          waitTimeInCyclesSum: '650',
          waitTimeInCyclesMax: 400,
          holdCyclesSum: '11258999068427811',
          holdCyclesMax: '2251799813685257',
          inconsistent: 1,
          waitNsSum: '216',
          waitNsMax: '133',
          holdNsSum: '3752999689475937',
          holdNsMax: '750599937895085',
        },
        {
          address: '0xfffff9006ba1bc20',
          count: 2,
          contended: 1,
          spinCountSum: '4294967295',
          spinCountMax: 4294967295,
          waitTimeInCyclesSum: '4294967345',
          waitTimeInCyclesMax: 4294967295,
          holdCyclesSum: '18451247673336921858',
          holdCyclesMax: '18446744073709551355',
          inconsistent: 0,
          waitNsSum: '1431655781',
          waitNsMax: '1431655765',
          holdNsSum: '6150415891112307286',
          holdNsMax: '6148914691236517118',
        },
      ],
    });
    // the same as the library's answer
    const lib = analyzeSpinlocks(decodeSync(smallTrace()));
    const byCaller = JSON.parse(cli(['spinlocks', small, '--json', '--by', 'caller']).stdout);
    expect(byCaller.top.map((s: { address: string }) => BigInt(s.address))).toEqual(lib.byCaller.map((s) => s.address));
    expect(byCaller.top.map((s: { holdCyclesSum: string }) => BigInt(s.holdCyclesSum))).toEqual(lib.byCaller.map((s) => s.holdCyclesSum));
  });

  test('--json without CpuSpeedInMHz: ns values null; a key with only inconsistent rows: holdCyclesMax null', () => {
    const f = join(dir, 'nons.etl');
    writeFileSync(f, writeTrace({ cpuSpeedInMHz: 0, events: specs([SMALL[2]!]) }).bytes);
    const out = JSON.parse(cli(['spinlocks', f, '--json']).stdout);
    expect(out.cpuSpeedInMHz).toBeNull();
    expect(out.top).toEqual([
      {
        address: '0xfffff8006ba1bc20',
        count: 1,
        contended: 0,
        spinCountSum: '0',
        spinCountMax: 0,
        waitTimeInCyclesSum: '0',
        waitTimeInCyclesMax: 0,
        holdCyclesSum: '0',
        holdCyclesMax: null,
        inconsistent: 1,
        waitNsSum: null,
        waitNsMax: null,
        holdNsSum: null,
        holdNsMax: null,
      },
    ]);
  });

  test('a trace without SpinLock rows: the line `dump` gives, exit 0', () => {
    const f = join(dir, 'none.etl');
    const cs = { kind: 'cswitch', cpu: 0, timestamp: 2_000_000n, version: 4, newThreadId: 8, oldThreadId: 0, newThreadPriority: 8, oldThreadPriority: 0, previousCState: 0, newThreadPriorityDecrement: 0, oldThreadWaitReason: 0, oldThreadWaitMode: 0, oldThreadState: 2, oldThreadIdealProcessor: 0, newThreadWaitTime: 0, oldThreadRemainingQuantum: 0 } as const;
    writeFileSync(f, writeTrace({ events: [cs] }).bytes);
    const line = 'etw-decode: no spinlock rows: the trace has no events for this table (although the kernel flag SPINLOCK was on)\n';
    const r = cli(['spinlocks', f]);
    expect([r.status, r.stdout, r.stderr]).toEqual([0, '', line]);
    const d = cli(['dump', f, '--table', 'spinlock']);
    expect(d.stderr).toBe(line);
    const off = join(dir, 'off.etl');
    writeFileSync(off, writeTrace({ groupMasks: [0, 4, 0, 0, 0, 0, 0, 0], events: [cs] }).bytes);
    expect(cli(['spinlocks', off]).stderr).toBe('etw-decode: no spinlock rows: the trace has no events for this table (the kernel flag SPINLOCK was off)\n');
    const j = cli(['spinlocks', f, '--json']);
    expect(j.status).toBe(0);
    expect(JSON.parse(j.stdout)).toEqual({ file: f, by: 'lock', cpuSpeedInMHz: 3000, totals: { rows: 0, contended: 0, inconsistent: 0, locks: 0, callers: 0 }, top: [] });
    expect(j.stderr).toBe(line);
  });

  test('a damaged trace: what could be decoded, the data-loss line, exit 0', () => {
    const f = join(dir, 'cut.etl');
    const b = smallTrace();
    writeFileSync(f, b.subarray(0, b.length - 100));
    const r = cli(['spinlocks', f]);
    expect(r.status).toBe(0);
    expect(r.stderr).toMatch(/^etw-decode: .* — see `etw-decode summary`\n$/);
  });

  test.each([
    [['spinlocks', '--by', 'thread', 'X'], 2, /option '--by <key>' argument 'thread' is invalid/],
    [['spinlocks', '--top', '0', 'X'], 2, /expected a positive integer/],
    [['spinlocks', '--top', 'ten', 'X'], 2, /expected a positive integer/],
    [['spinlocks'], 2, /missing required argument 'file'/],
    [['spinlocks', 'nope.etl'], 1, /cannot open nope\.etl: no such file/],
  ])('%j: exit %d', (args, code, message) => {
    const r = cli(args.map((a) => (a === 'X' ? small : a)));
    expect(r.status).toBe(code);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(message);
  });

  test('not an ETL file: exit 1; --help: exit 0', () => {
    const f = join(dir, 'text.etl');
    writeFileSync(f, 'not a trace at all'.repeat(40));
    const r = cli(['spinlocks', f]);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/not an ETL file/);
    const h = cli(['spinlocks', '--help']);
    expect(h.status).toBe(0);
    expect(h.stdout).toMatch(/--by <key>[\s\S]*--top <n>[\s\S]*--json[\s\S]*--engine <engine>/);
    expect(cli(['--help']).stdout).toMatch(/spinlocks \[options\] <file>/);
  });
});

describe('SpinlockAnalyzer result({ top })', () => {
  test('the first `top` of the whole order, with the totals of all (ties of contended and wait broken by address; many locks)', () => {
    const rng = new Rng(31);
    const rows: Fields[] = [];
    for (let i = 0; i < 3000; i++) {
      // few values of spin and wait so that ties are common; addresses on both sides of 2^63
      const lock = (BigInt(rng.int(0, 400)) << 4n) | (i % 3 === 0 ? 0xffff800000000000n : 0n);
      rows.push({ spinLockAddress: lock, callerAddress: BigInt(rng.int(0, 900)) * 8n, acquireTime: 100n, releaseTime: 100n + BigInt(rng.int(0, 50)), spinCount: rng.int(0, 2), waitTimeInCycles: rng.int(0, 3) * 10 });
    }
    const r = decodeSync(writeTrace({ events: specs(rows) }).bytes);
    const an = new SpinlockAnalyzer();
    an.add(r.spinlock);
    const all = an.result(r.info);
    expect(all).toEqual(oracle(rows, 3000));
    for (const top of [1, 7, 50, 399, 5000]) {
      const some = an.result(r.info, { top });
      expect(some.totals).toEqual(all.totals);
      expect(some.byLock).toEqual(all.byLock.slice(0, top));
      expect(some.byCaller).toEqual(all.byCaller.slice(0, top));
    }
  });
});
