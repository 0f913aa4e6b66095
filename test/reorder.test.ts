// EventReorder (src/derive/reorder.ts), the time reorder of the streaming derivations, on its own: the
// release order (time, key, arrival) against a plain sort, the watermark (at or before its time), the
// window, late events, CPUs watched from the start, and hold().
import { describe, expect, it } from 'vitest';
import { E_HI, E_KEY, E_LO, EventReorder } from '../src/derive/reorder.js';

/** Records of 4 words: the reorder's three, then the event's id (its arrival number). */
const WORDS = 4;
const E_ID = 3;

class Harness {
  readonly r: EventReorder;
  /** ids in the order they were applied, and the length of each apply call */
  readonly applied: number[] = [];
  readonly calls: number[] = [];
  private id = 0;
  constructor(window: number, atWatermark: boolean) {
    this.r = new EventReorder({
      words: WORDS,
      window,
      atWatermark,
      apply: (order, from, to) => {
        this.calls.push(to - from);
        for (let i = from; i < to; i++) this.applied.push(this.r.E[order[i]! * WORDS + E_ID]!);
      },
    });
  }
  /** Commits an event of time t (a bigint: signed 64-bit) and key; `cpu` ≥ 0: a switch of that CPU. Returns its id. */
  push(t: bigint, key: number, cpu = -1): number {
    const E = this.r.E;
    const e = this.r.top * WORDS;
    const u = BigInt.asUintN(64, t);
    const hi = Number(u >> 32n) | 0;
    const lo = Number(u & 0xffffffffn) | 0;
    E[e + E_HI] = hi;
    E[e + E_LO] = lo;
    E[e + E_KEY] = key;
    E[e + E_ID] = this.id;
    if (cpu >= 0) this.r.switchAt(cpu, hi, lo);
    this.r.commit();
    return this.id++;
  }
}

/** A small seeded generator (xorshift32). */
function rng(seed: number): () => number {
  let x = seed | 0 || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 4294967296;
  };
}

describe('EventReorder', () => {
  it('releases events in (time, key, arrival) order across chunks, whatever the span of the times', () => {
    for (const [seed, span] of [
      [1, 1000n],
      [2, 1n << 20n],
      [3, 1n << 40n], // the high words differ: the sort's passes over them
      [4, 3n], // many equal times: ties by key, then arrival
    ] as const) {
      const next = rng(seed);
      const h = new Harness(1 << 20, true);
      const cpus = 4;
      // every event is a switch of its CPU, each CPU's times strictly increasing: nothing arrives behind the watermark
      const clock = Array.from({ length: cpus }, () => -(1n << 62n) + BigInt(Math.floor(next() * 50)));
      const events: { t: bigint; key: number; id: number }[] = [];
      for (let chunk = 0; chunk < 40; chunk++) {
        const n = Math.floor(next() * 60);
        h.r.begin(n);
        for (let i = 0; i < n; i++) {
          const cpu = Math.floor(next() * cpus);
          clock[cpu] = clock[cpu]! + 1n + BigInt(Math.floor(next() * Number(span)));
          const key = (Math.floor(next() * 3) << 16) | cpu;
          events.push({ t: clock[cpu]!, key, id: h.push(clock[cpu]!, key, cpu) });
        }
        h.r.release(false);
      }
      h.r.begin(0);
      h.r.release(true);
      const want = [...events].sort((a, b) => (a.t < b.t ? -1 : a.t > b.t ? 1 : a.key - b.key || a.id - b.id)).map((e) => e.id);
      expect(h.applied).toEqual(want);
      expect(h.r.lateEvents).toBe(0);
    }
  });

  it('releases up to the least latest switch of the CPUs seen: at its time too with atWatermark, else only before it', () => {
    for (const atWatermark of [true, false]) {
      const h = new Harness(1000, atWatermark);
      h.r.begin(5);
      const a = h.push(10n, 0, 0);
      const b = h.push(20n, 0, 0);
      const c = h.push(15n, 0, 1); // the watermark: min(20, 15) = 15
      const d = h.push(16n, 0, -1);
      h.push(30n, 0, -1);
      h.r.release(false);
      expect(h.applied).toEqual(atWatermark ? [a, c] : [a]);
      expect(h.applied.includes(d)).toBe(false);
      expect(h.r.released[0]).toBe(1);
      expect(h.r.maxHeld).toBe(atWatermark ? 3 : 4);
    }
  });

  it('holds at most the window, applies an event behind the released time at once and counts it late', () => {
    const h = new Harness(3, true);
    h.r.watchCpus(2); // CPU 1 never switches: only the window releases
    h.r.begin(8);
    for (let t = 1n; t <= 8n; t++) h.push(t * 10n, 0, 0);
    h.r.release(false);
    expect(h.applied).toEqual([0, 1, 2, 3, 4]);
    expect(h.r.maxHeld).toBe(3);
    h.r.begin(2);
    const late = h.push(45n, 0, -1); // behind 50, the last released
    const onTime = h.push(55n, 0, -1);
    expect(h.applied).toEqual([0, 1, 2, 3, 4, late]);
    expect(h.calls.at(-1)).toBe(1);
    expect(h.r.lateEvents).toBe(1);
    h.r.release(false);
    expect(h.applied.slice(6)).toEqual([onTime]); // 55 goes: the window holds 60, 70, 80
    h.r.begin(0);
    h.r.release(true);
    expect(h.applied.slice(7)).toEqual([5, 6, 7]);
  });

  it('a group of one time is not split by the window', () => {
    const h = new Harness(2, true);
    h.r.watchCpus(1);
    h.r.begin(5);
    h.push(1n, 0);
    h.push(2n, 0);
    h.push(2n, 1);
    h.push(2n, 2);
    h.push(3n, 0);
    h.r.release(false);
    expect(h.applied).toEqual([0, 1, 2, 3]);
  });

  it('CPUs watched from the start hold the watermark back until their first switch', () => {
    const h = new Harness(1000, false);
    h.r.watchCpus(2);
    h.r.begin(2);
    h.push(10n, 0, 0);
    h.push(20n, 0, 0);
    h.r.release(false);
    expect(h.applied).toEqual([]);
    h.r.begin(1);
    h.push(15n, 0, 1);
    h.r.release(false);
    expect(h.applied).toEqual([0]); // before 15 (not at it: atWatermark false)
  });

  it('hold() keeps the events unsorted until a release sorts them all', () => {
    const h = new Harness(1000, true);
    h.r.begin(3);
    h.push(30n, 0);
    h.push(10n, 0);
    h.r.hold();
    h.r.begin(2);
    h.push(20n, 0);
    h.push(10n, 1 << 16);
    h.r.hold();
    expect(h.applied).toEqual([]);
    h.r.begin(0);
    h.r.release(true);
    expect(h.applied).toEqual([1, 3, 2, 0]);
  });
});
