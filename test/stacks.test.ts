// resolveStacks (src/derive/stacks.ts, docs/format.md §H.2): stack ids from the stackEvents rows of a decode,
// checked against simulated schedules with stacks (their ground truth: every stacked event's kernel and user
// frames) in both engines and pointer sizes, and against a hand-made trace for the rules the simulation
// does not reach (a key reused after its KeyDelete, a reference never defined, a stack of no decoded row).
import { describe, expect, test } from 'vitest';
import { resolveStacks, type ResolvedStacks } from '../src/derive/stacks.js';
import { decodeSync, type DecodeResult } from '../src/node.js';
import type { Table } from '../src/tables/table.js';
import { simulateSchedule, writeTrace, type StackWalkSpec } from '../src/writer/index.js';

/** The frames of stack `id`. */
function framesOf(s: ResolvedStacks, id: number): bigint[] {
  const f0 = s.stacks.firstFrame[id]!;
  return Array.from(s.frames.address.subarray(f0, f0 + s.stacks.frameCount[id]!));
}

describe.each(['wasm', 'reference'] as const)('%s engine', (engine) => {
  test.each([8, 4] as const)('simulated schedule with stacks (pointer size %i): every stacked event attached to its row with its frames', (pointerSize) => {
    const sim = simulateSchedule({ seed: 7, cpus: 4, duration: 400_000, profileInterval: 2_000, stacks: true, pointerSize, switchMode: 'mixed' });
    const r = decodeSync(writeTrace(sim.description).bytes, { engine });
    expect(r.summary.diagnostics['stackEventsSkippedShort']).toBe(0);
    const s = resolveStacks(r);
    const truth = sim.stacks;
    const by = (t: string) => truth.filter((x) => x.table === t).length;
    expect(by('cswitch')).toBeGreaterThan(50);
    expect(by('readythread')).toBeGreaterThan(50);
    expect(by('samples')).toBeGreaterThan(50);
    expect(s.counts.unresolvedReferences).toBe(0);
    expect(s.counts.unmatched).toBe(0);
    expect(s.counts.claimedTwice).toBe(0);
    expect(s.counts.attached).toEqual({ cswitch: by('cswitch'), readythread: by('readythread'), samples: by('samples') });
    expect(s.events.length).toBe(truth.length);
    // each truth entry: the row with its timestamp has the stack of its frames, kernel frames first
    const rowOf = (r: DecodeResult, table: 'cswitch' | 'readythread' | 'samples', ts: bigint): number => {
      const col = (r[table] as Table<'samples'>).column('timestamp');
      const i = col.indexOf(ts);
      expect(i, `${table} row at ${ts}`).toBeGreaterThanOrEqual(0);
      return i;
    };
    for (const t of truth) {
      const id = s.stackIdOf[t.table][rowOf(r, t.table, t.eventTimestamp)]!;
      expect(id, `${t.table} ${t.eventTimestamp}`).toBeGreaterThanOrEqual(0);
      expect(framesOf(s, id)).toEqual([...t.kernelFrames, ...t.userFrames]);
      expect(s.stacks.kernelFrameCount[id]).toBe(t.kernelFrames.length);
      expect(s.stacks.processId[id]).toBe(t.userFrames.length > 0 ? t.processId : 0xffffffff);
    }
    // rows without a stack: compact switches (they carry none)
    const withStack = (a: Int32Array) => a.reduce((n, v) => n + (v >= 0 ? 1 : 0), 0);
    expect(withStack(s.stackIdOf.cswitch)).toBe(by('cswitch'));
    expect(withStack(s.stackIdOf.samples)).toBe(r.samples.length);
    // deduplicated: distinct stacks are far fewer than stacked events, and no two ids have the same frames and process
    expect(s.stacks.length).toBeLessThan(truth.length / 2);
    const seen = new Set<string>();
    for (let id = 0; id < s.stacks.length; id++) {
      const k = `${s.stacks.processId[id]}:${s.stacks.kernelFrameCount[id]}:${framesOf(s, id).join(',')}`;
      expect(seen.has(k)).toBe(false);
      seen.add(k);
    }
    // stack caching exercised: KeyDelete (a reused key) and KeyRundown
    const ops = Array.from(r.stackEvents.column('opcode'));
    for (const op of [0x20, 0x23, 0x24, 0x25, 0x26]) expect(ops.includes(op), `opcode ${op}`).toBe(true);
  });
});

test('hand-made: a reused key resolves by time, halves join, unmatched and unresolved stacks are counted', () => {
  const K = 0xfffffa8003000100n;
  const kernelA = [0xfffff80021400013n, 0xfffff80021400240n];
  const kernelB = [0xfffff80021401013n];
  const user = [0x7ffb45d01000n, 0x7ffb45d00008n];
  const sw = (o: Omit<StackWalkSpec, 'kind' | 'cpu'>, cpu = 0): StackWalkSpec => ({ kind: 'stackWalk', cpu, ...o });
  const events = [
    // sample 1 (thread 8 of process 4, ts 100): kernel half by key K (first stack of K), user half by a StackWalk
    { kind: 'sampledProfile' as const, cpu: 0, timestamp: 100n, instructionPointer: kernelA[0]!, threadId: 8 },
    sw({ timestamp: 101n, opcode: 'keyKernel', eventTimestamp: 100n, processId: 4, threadId: 8, stackKey: K }),
    sw({ timestamp: 102n, opcode: 'stack', eventTimestamp: 100n, processId: 4, threadId: 8, frames: user }),
    // K evicted: its first stack; then reused for kernelB
    sw({ timestamp: 103n, opcode: 'keyDelete', stackKey: K, frames: kernelA }),
    // sample 2 (ts 110, thread 8): kernel half by K again (now kernelB), no user half
    { kind: 'sampledProfile' as const, cpu: 0, timestamp: 110n, instructionPointer: kernelB[0]!, threadId: 8 },
    sw({ timestamp: 111n, opcode: 'keyKernel', eventTimestamp: 110n, processId: 4, threadId: 8, stackKey: K }),
    // a stack of an event that is no decoded row (ts 120), and a reference whose key is never defined
    sw({ timestamp: 121n, opcode: 'stack', eventTimestamp: 120n, processId: 4, threadId: 8, frames: kernelA }),
    sw({ timestamp: 122n, opcode: 'keyUser', eventTimestamp: 120n, processId: 4, threadId: 8, stackKey: 0xfffffa80030fff00n }),
    // sample 3 (ts 130, thread 9 of process 5): the same kernel stack as sample 1 and the same user addresses in another process
    { kind: 'sampledProfile' as const, cpu: 0, timestamp: 130n, instructionPointer: kernelA[0]!, threadId: 9 },
    sw({ timestamp: 131n, opcode: 'stack', eventTimestamp: 130n, processId: 5, threadId: 9, frames: kernelA }),
    sw({ timestamp: 132n, opcode: 'stack', eventTimestamp: 130n, processId: 5, threadId: 9, frames: user }),
    sw({ timestamp: 200n, opcode: 'keyRundown', stackKey: K, frames: kernelB }),
  ];
  for (const engine of ['wasm', 'reference'] as const) {
    const r = decodeSync(writeTrace({ pointerSize: 8, numberOfProcessors: 1, outOfOrder: false, events }).bytes, { engine });
    const s = resolveStacks(r);
    expect(s.counts).toEqual({
      walks: 4, references: 3, definitions: 2, unresolvedReferences: 1, emptyWalks: 0, duplicateHalves: 0, joined: 2, kernelOnly: 2, userOnly: 0,
      attached: { cswitch: 0, readythread: 0, samples: 3 }, unmatched: 1, claimedTwice: 0,
    });
    const [a, b, c] = Array.from(s.stackIdOf.samples);
    expect(framesOf(s, a!)).toEqual([...kernelA, ...user]);
    expect(framesOf(s, b!)).toEqual(kernelB);
    expect(framesOf(s, c!)).toEqual([...kernelA, ...user]);
    expect(c).not.toBe(a); // user frames of another process: another stack
    expect([s.stacks.processId[a!], s.stacks.processId[b!], s.stacks.processId[c!]]).toEqual([4, 0xffffffff, 5]);
    // the stack of ts 120 (kernel only: its user reference is unresolved) is kernelA alone, attached to no row
    const e = Array.from(s.events.eventTimestamp).indexOf(120n);
    expect([s.events.table[e], s.events.row[e], framesOf(s, s.events.stackId[e]!)]).toEqual([0, -1, kernelA]);
  }
});
