// `etw-decode cpu` and `dump --table cpuUsage|threads|processes|readythread`: the same numbers as the
// library, aligned text, exact JSON (64-bit values as strings), exit codes.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, test } from 'vitest';
import { analyzeCpu, cpuUsage, decodeSync } from '../src/node.js';
import { simulateSchedule, writeTrace } from '../src/writer/index.js';
import { corpusPath, corpusTestsEnabled } from './helpers/corpus.js';

const BIN = fileURLToPath(new URL('../bin/etw-decode.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'etw-cpu-cli-'));
const trace = join(dir, 'sched.etl');
const bytes = writeTrace(simulateSchedule({ seed: 5, cpus: 4, duration: 1_500_000, switchMode: 'mixed' }).description).bytes;
writeFileSync(trace, bytes);
const run = (args: string[]) => execFileSync(process.execPath, [BIN, ...args], { encoding: 'utf8' });

test('cpu --json: the library analysis, every process, 64-bit totals as strings', () => {
  const lib = analyzeCpu(decodeSync(bytes));
  const out = JSON.parse(run(['cpu', trace, '--json', '--top', '0']));
  expect(out.by).toBe('process');
  expect(out.rows.length).toBe(lib.processes.length);
  out.rows.forEach((row: { processId: number; cpuTicks: string; switchIns: number; imageFileName: string }, i: number) => {
    expect(row.processId).toBe(lib.processes[i]!.processId);
    expect(row.cpuTicks).toBe(String(lib.processes[i]!.cpuTicks));
    expect(row.switchIns).toBe(lib.processes[i]!.switchIns);
    expect(row.imageFileName).toBe(lib.processes[i]!.imageFileName);
  });
  expect(out.total.cpuTicks).toBe(String(lib.total.cpuTicks));
  expect(out.cpuUsage.lateEvents).toBe(0);
});

test('cpu text: aligned columns, top N, names', () => {
  const text = run(['cpu', trace, '--top', '3']).split('\n');
  expect(text[0]).toMatch(/^.*sched\.etl: CPU usage by process \(CPU Usage \(Precise\)\): \d+ switch-ins, [\d.]+ ms of CPU time in total$/);
  expect(text[1]).toMatch(/^process\s+pid\s+threads\s+switch-ins\s+CPU ms\s+CPU %\s+ready ms\s+waits ms$/);
  const header = text[1]!;
  for (const line of text.slice(2, 5)) expect(line.length).toBe(header.length); // right-aligned to the header
  expect(text[5]).toMatch(/^… \d+ more \(--top 0 shows all\)$/);
  const threads = run(['cpu', trace, '--by', 'thread', '--top', '0']).trim().split('\n');
  expect(threads[1]).toMatch(/^\s*tid\s+thread\s+process\s+pid/);
  expect(threads.length).toBe(2 + analyzeCpu(decodeSync(bytes)).threads.length);
});

test('dump --table cpu-usage streams the same rows as cpuUsage(), per CPU in time order', () => {
  const lines = run(['dump', trace, '--table', 'cpu-usage']).trim().split('\n');
  const lib = cpuUsage(decodeSync(bytes));
  expect(lines.length).toBe(1 + lib.length);
  const head = lines[0]!.split(',');
  const at = (name: string) => head.indexOf(name);
  const rows = lines.slice(1).map((l) => l.split(','));
  rows.sort((a, b) => Number(a[at('cpu')]) - Number(b[at('cpu')]) || (BigInt(a[at('switchInTime')]!) < BigInt(b[at('switchInTime')]!) ? -1 : 1));
  rows.forEach((r, i) => {
    const x = lib.get(i);
    expect([r[at('cpu')], r[at('switchInTime')], r[at('readyTime')], r[at('newProcessId')]]).toEqual([
      String(x.cpu),
      String(x.switchInTime),
      x.readyTime === null ? '' : String(x.readyTime),
      x.newProcessId === null ? '' : String(x.newProcessId),
    ]);
  });
});

test('dump --table threads / processes / readythread with names', () => {
  const lib = decodeSync(bytes);
  const procs = run(['dump', trace, '--table', 'processes']).trim().split('\n');
  expect(procs[0]).toBe('processId,parentId,sessionId,imageFileName,commandLine,startTime,endTime,exitStatus');
  expect(procs.length).toBe(1 + lib.processes.length);
  const threads = JSON.parse(run(['dump', trace, '--table', 'threads', '--format', 'jsonl']).split('\n')[0]!);
  expect(Object.keys(threads)).toEqual(['threadId', 'processId', 'startTime', 'endTime', 'name', 'win32StartAddr', 'basePriority']);
  const ready = run(['dump', trace, '--table', 'readythread', '--names']).split('\n');
  expect(ready[0]).toBe('timestamp,cpu,threadId,adjustReason,adjustIncrement,flags,version,fileOffset,stackId,adjustReasonName');
  expect(ready.length - 2).toBe(lib.readythread.length);
});

test('cpu: usage errors exit 2', () => {
  expect(spawnSync(process.execPath, [BIN, 'cpu', trace, '--by', 'cpu']).status).toBe(2);
  expect(spawnSync(process.execPath, [BIN, 'cpu', trace, '--top', '-1']).status).toBe(2);
});

test.skipIf(!corpusTestsEnabled())('cpu: a trace without switches says which kernel flag records them', () => {
  const corpus = corpusPath('perfview-net.4.5.2.x64.etl');
  const r = spawnSync(process.execPath, [BIN, 'cpu', corpus], { encoding: 'utf8' });
  expect(r.status).toBe(0);
  expect(r.stderr).toMatch(/^etw-decode: no cswitch rows: the trace has no events for this table \(.*CSWITCH.*\)\n$/);
});
