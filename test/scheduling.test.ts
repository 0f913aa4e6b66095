// Round trips through the writer's scheduler simulation: the decoded threads, processes, ReadyThread
// rows and switches reproduce the simulation's ground truth, with both engines, for every switch
// encoding, pointer size and event version the simulation writes.
import { describe, expect, test } from 'vitest';
import { decodeSync, type DecodeResult } from '../src/node.js';
import { simulateSchedule, writeTrace, type ScheduleOptions } from '../src/writer/index.js';

const ENGINES = ['wasm', 'reference'] as const;
const CASES: [string, Partial<ScheduleOptions>][] = [
  ['compact, x64, Thread v3, Process v4', { seed: 1, switchMode: 'compact' }],
  ['CSwitch v2-v4, x64, Thread v4, Process v4', { seed: 2, switchMode: 'cswitch', cswitchVersions: [2, 3, 4], threadVersion: 4 }],
  ['mixed per CPU, x86, Thread v2, Process v3', { seed: 3, switchMode: 'mixed', pointerSize: 4, threadVersion: 2, processVersion: 3 }],
  ['mixed, PERFINFO headers, Process v2', { seed: 4, switchMode: 'mixed', processVersion: 2, headers: { thread: 'PERFINFO', processStartEnd: 'PERFINFO', processRundown: 'SYSTEM', readyThread: 'SYSTEM' } }],
];

function decoded(options: Partial<ScheduleOptions>, engine: (typeof ENGINES)[number]) {
  const sim = simulateSchedule({ seed: 1, cpus: 4, duration: 2_000_000, ...options });
  const bytes = writeTrace(sim.description).bytes;
  return { sim, r: decodeSync(bytes, { engine }) };
}

function rows<T>(t: { length: number; get(i: number): T }): T[] {
  return Array.from({ length: t.length }, (_, i) => t.get(i));
}

function expectNothingLost(r: DecodeResult): void {
  const d = r.summary.diagnostics;
  for (const name of Object.keys(d)) if (/Skipped|Corrupt|Unterminated|Truncated/.test(name)) expect([name, d[name]]).toEqual([name, 0]);
}

describe.each(ENGINES)('%s engine', (engine) => {
  test.each(CASES)('%s: threads, processes and wake-ups are the simulation\'s', (_, options) => {
    const { sim, r } = decoded(options, engine);
    expectNothingLost(r);
    expect(sim.reusedThreadIds.length).toBeGreaterThan(0);
    expect(rows(r.threads).map(({ threadId, processId, startTime, endTime, name }) => ({ threadId, processId, startTime, endTime, name }))).toEqual(
      sim.threads,
    );
    expect(
      rows(r.processes).map(({ processId, parentId, sessionId, imageFileName, commandLine, startTime, endTime, exitStatus }) => ({
        processId,
        parentId,
        sessionId,
        imageFileName,
        commandLine,
        startTime,
        endTime,
        exitStatus,
      })),
    ).toEqual(sim.processes);
    const readies = rows(r.readythread)
      .map(({ timestamp, cpu, threadId, adjustReason, adjustIncrement, flags }) => ({ timestamp, cpu, threadId, adjustReason, adjustIncrement, flags }))
      .sort((a, b) => (a.timestamp < b.timestamp ? -1 : a.timestamp > b.timestamp ? 1 : 0));
    expect(readies).toEqual(sim.readies.map(({ readyingThreadId: _, ...rest }) => rest));
  });

  test.each(CASES)('%s: switches are the simulation\'s', (_, options) => {
    const { sim, r } = decoded(options, engine);
    const got = rows(r.cswitch)
      .map((s) => ({ cpu: s.cpu, timestamp: s.timestamp, oldThreadId: s.oldThreadId, newThreadId: s.newThreadId }))
      .sort((a, b) => a.cpu - b.cpu || (a.timestamp < b.timestamp ? -1 : a.timestamp > b.timestamp ? 1 : 0));
    // the last compact switch of a CPU does not know its new thread
    const lastCompact = new Set<number>();
    const want = [...sim.switches].reverse().map((s) => {
      const unknown = s.encoding === 'compact' && !lastCompact.has(s.cpu);
      lastCompact.add(s.cpu);
      return { cpu: s.cpu, timestamp: s.timestamp, oldThreadId: s.oldThreadId, newThreadId: unknown ? null : s.newThreadId };
    });
    expect(got).toEqual(want.reverse());
  });
});
