// A thread known only from the end rundown (Thread DCEnd), one first seen in its End and one seen only in a
// SetName run on the CPUs before those events: every cpuUsage path gives them their process (README
// "cpuUsage": the threads lifetime with the latest startTime <= the time, a null startTime = -infinity) —
// `cpu --json` and `dump --table cpuUsage` (the CLI, streaming), cpuUsage() of a whole decode, and the
// streaming deriver fed chunk by chunk.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { cpuUsage, CpuUsageDeriver, decodeSync, streamFile, type Table } from '../src/node.js';
import { writeTrace, type CSwitchSpec, type EventSpec } from '../src/writer/index.js';

const BIN = fileURLToPath(new URL('../bin/etw-decode.js', import.meta.url));

const A = 0x104; // process 0x40, from the start rundown (DCStart)
const B = 0x204; // process 0x50, only in the end rundown (DCEnd)
const C = 0x304; // process 0x60, first seen in its End
const D = 0x404; // process 0x70, only in a SetName
const PID: Record<number, number> = { 0: 0, [A]: 0x40, [B]: 0x50, [C]: 0x60, [D]: 0x70 };

const sw = (cpu: number, timestamp: bigint, newThreadId: number, oldThreadId: number): CSwitchSpec => ({
  kind: 'cswitch', cpu, timestamp, version: 2, newThreadId, oldThreadId, newThreadPriority: 8, oldThreadPriority: 8,
  previousCState: 0, newThreadPriorityDecrement: 0, oldThreadWaitReason: 6, oldThreadWaitMode: 0, oldThreadState: 5, oldThreadIdealProcessor: 0,
});

const events: EventSpec[] = [
  { kind: 'thread', cpu: 0, timestamp: 2_000_000n, opcode: 'dcStart', processId: PID[A]!, threadId: A },
  sw(0, 3_000_000n, B, 0),
  sw(1, 3_200_000n, D, 0),
  { kind: 'readyThread', cpu: 0, timestamp: 3_400_000n, threadId: A }, // readied by B, running on cpu 0
  sw(0, 3_500_000n, A, B),
  sw(1, 3_800_000n, B, D),
  sw(0, 4_000_000n, C, A),
  sw(1, 5_000_000n, 0, B),
  { kind: 'thread', cpu: 0, timestamp: 6_000_000n, opcode: 'end', processId: PID[C]!, threadId: C },
  sw(0, 6_100_000n, 0, C),
  { kind: 'setThreadName', cpu: 1, timestamp: 7_000_000n, processId: PID[D]!, threadId: D, name: 'worker' },
  sw(0, 7_500_000n, D, 0),
  sw(0, 8_000_000n, 0, D),
  { kind: 'thread', cpu: 1, timestamp: 9_000_000n, opcode: 'dcEnd', processId: PID[B]!, threadId: B },
];
const bytes = writeTrace({ numberOfProcessors: 2, events }).bytes;
const dir = mkdtempSync(join(tmpdir(), 'etw-dcend-'));
const trace = join(dir, 'dcend.etl');
writeFileSync(trace, bytes);
const run = (args: string[]) => execFileSync(process.execPath, [BIN, ...args], { encoding: 'utf8' });

type Cells = (string | number | bigint | null)[];
const key = (c: Cells) => c.map((x) => (x === '' || x === null ? 'null' : String(x))).join(' ');

/** (cpu, switchInTime, newThreadId, oldThreadId, newProcessId, oldProcessId, readyingThreadId, readyingProcessId) by the definition */
const SWITCHES = events.filter((e): e is CSwitchSpec => e.kind === 'cswitch').sort((x, y) => x.cpu - y.cpu || Number(x.timestamp - y.timestamp));
const EXPECTED = SWITCHES.map((s) => {
  const readied = s.newThreadId === A;
  return key([s.cpu, s.timestamp, s.newThreadId, s.oldThreadId, PID[s.newThreadId]!, PID[s.oldThreadId]!, readied ? B : null, readied ? PID[B]! : null]);
});

const sortKeys = (keys: string[]) =>
  keys.sort((x, y) => {
    const [cx, tx] = x.split(' ');
    const [cy, ty] = y.split(' ');
    return Number(cx) - Number(cy) || Number(BigInt(tx!) - BigInt(ty!));
  });
const fromTables = (tables: Table<'cpuUsage'>[]) =>
  tables.flatMap((t) =>
    Array.from({ length: t.length }, (_, i) => {
      const r = t.get(i);
      return key([r.cpu, r.switchInTime, r.newThreadId, r.oldThreadId, r.newProcessId, r.oldProcessId, r.readyingThreadId, r.readyingProcessId]);
    }),
  );

describe('a thread seen only in the end rundown, in its End or in a SetName gets its process', () => {
  test('the trace: the threads table knows every one (startTime null)', () => {
    const r = decodeSync(bytes);
    const threads = [...r.threads].map((t) => [t.threadId, t.processId, t.startTime]);
    expect(threads).toEqual(expect.arrayContaining([[A, PID[A], null], [B, PID[B], null], [C, PID[C], null], [D, PID[D], null]]));
    expect(r.cswitch.length).toBe(SWITCHES.length);
  });

  test('cpuUsage() of a whole decode', () => {
    expect(fromTables([cpuUsage(decodeSync(bytes))])).toEqual(EXPECTED);
    expect(fromTables([cpuUsage(decodeSync(bytes, { engine: 'reference' }))])).toEqual(EXPECTED);
  });

  test('the streaming deriver, whatever the chunks', async () => {
    for (const windowBytes of [0x1000, 1 << 20]) {
      const got: Table<'cpuUsage'>[] = [];
      const d = new CpuUsageDeriver((t) => got.push(t), { chunkRows: 2 });
      await streamFile(trace, { windowBytes, rows: 'borrow', onRows: (t) => d.add(t.cswitch, t.readythread, t.threadEvents) });
      const stats = d.finish();
      expect(sortKeys(fromTables(got))).toEqual(EXPECTED);
      expect(stats.rows).toBe(EXPECTED.length);
    }
  });

  test('dump --table cpuUsage (the CLI)', () => {
    const lines = run(['dump', trace, '--table', 'cpuUsage']).trim().split('\n');
    const head = lines[0]!.split(',');
    const cols = ['cpu', 'switchInTime', 'newThreadId', 'oldThreadId', 'newProcessId', 'oldProcessId', 'readyingThreadId', 'readyingProcessId'].map((c) => head.indexOf(c));
    expect(cols).not.toContain(-1);
    const keys = lines.slice(1).map((l) => {
      const cells = l.split(',');
      return key(cols.map((c) => cells[c]!));
    });
    expect(sortKeys(keys)).toEqual(EXPECTED);
  });

  test('cpu --json (the CLI): per thread and per process', () => {
    const byThread = JSON.parse(run(['cpu', trace, '--json', '--by', 'thread', '--top', '0'])) as { rows: { threadId: number; processId: number | null; switchIns: number }[] };
    const pidOf = new Map(byThread.rows.map((r) => [r.threadId, r.processId]));
    for (const tid of [A, B, C, D]) expect(pidOf.get(tid), `thread ${tid}`).toBe(PID[tid]);
    expect(byThread.rows.filter((r) => r.processId === null)).toEqual([]);
    const byProcess = JSON.parse(run(['cpu', trace, '--json', '--top', '0'])) as { rows: { processId: number | null; switchIns: number }[] };
    expect(byProcess.rows.map((r) => r.processId).sort((x, y) => (x ?? -1) - (y ?? -1))).toEqual([0, 0x40, 0x50, 0x60, 0x70]);
  });
});

test('more rows waiting than the hold keeps: the rest go out unresolved, counted, and the CLI says so', () => {
  // 70 000 switches among threads known only from the end rundown: 65 536 rows wait (the default hold); each
  // CPU's last row completes at the end, after the rundown: 4462 rows go out before their process is known
  const unresolved = 70_000 - 65_536 - 2;
  const tids = [0x1004, 0x1008, 0x100c, 0x1010, 0x1014];
  const many: EventSpec[] = [];
  for (let i = 0; i < 70_000; i++) many.push(sw(i & 1, 2_000_000n + BigInt(i) * 50n, tids[(i >> 1) % 5]!, tids[((i >> 1) + 4) % 5]!));
  for (const [k, tid] of tids.entries()) many.push({ kind: 'thread', cpu: 0, timestamp: 9_000_000n, opcode: 'dcEnd', processId: 0x200 + k, threadId: tid });
  const file = join(dir, 'many.etl');
  writeFileSync(file, writeTrace({ numberOfProcessors: 2, events: many }).bytes);
  const json = JSON.parse(run(['cpu', file, '--json'])) as { cpuUsage: { rows: number; heldRows: number; unresolvedRows: number } };
  expect(json.cpuUsage).toMatchObject({ rows: 70_000, heldRows: 65_536, unresolvedRows: unresolved });
  expect(run(['cpu', file])).toContain(`note: ${unresolved} switch-ins were counted before their thread's process was known`);
  const dump = spawnSync(process.execPath, [BIN, 'dump', file, '--table', 'cpuUsage'], { encoding: 'utf8', maxBuffer: 1 << 28 });
  expect(dump.status).toBe(0);
  expect(dump.stderr).toContain(`${unresolved} cpuUsage rows were written before their thread's process was known`);
  // the rows that waited got their process; those past the hold did not
  const lines = dump.stdout.trim().split('\n');
  const at = lines[0]!.split(',').indexOf('newProcessId');
  expect(lines.slice(1).filter((l) => l.split(',')[at] === '').length).toBe(unresolved);
});
