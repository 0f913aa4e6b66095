// Small writer event lists shared by tests.
import { Rng, type CSwitchSpec } from '../../src/writer/index.js';

/** `n` CSwitch v4 events spread over `cpus` processors, 10 ticks apart, random thread ids (seeded). */
export function cswitches(n: number, cpus: number): CSwitchSpec[] {
  const rng = new Rng(5);
  return Array.from({ length: n }, (_, i) => ({
    kind: 'cswitch' as const,
    cpu: i % cpus,
    timestamp: 1_000_000n + BigInt(i * 10),
    version: 4 as const,
    newThreadId: rng.next(),
    oldThreadId: rng.next(),
    newThreadPriority: 8,
    oldThreadPriority: 9,
    previousCState: 0,
    newThreadPriorityDecrement: 0,
    oldThreadWaitReason: 6,
    oldThreadWaitMode: 1,
    oldThreadState: 5,
    oldThreadIdealProcessor: 0,
    newThreadWaitTime: 3,
    oldThreadRemainingQuantum: 0,
  }));
}
