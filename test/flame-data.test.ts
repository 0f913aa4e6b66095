// The page's flame graph data (web/src/flame-data.ts): the call tree of the samples against analyzeSamples
// over the same rows — the root's and each process's totals, the self weight of every frame name (the leaf
// is the instruction pointer), a selected range and the search — and the samples' stacks as its paths; the
// tree of the wait time against analyzeWaits over the same cpuUsage rows — totals, per process, the stacks
// where threads waited and the readying stacks as paths, a selected range and thread, the search, no stacks.
import { describe, expect, test } from 'vitest';
import { analyzeSamples, cpuUsage, decodeSync, resolveSelection, resolveStacks, selectTable, type Selection } from '../src/node.js';
import { analyzeWaits, type WaitStack } from '../src/analysis/waits.js';
import { Table } from '../src/tables/table.js';
import { emptyChunk } from '../src/tables/schema.js';
import { simulateSchedule, writeTrace } from '../src/writer/index.js';
import { SampleFrames } from '../src/analysis/sample-frames.js';
import { FlameSource, NAME_PROCESS, NAME_READIED, NAME_READYING, WaitFlameSource, type FlameData } from '../web/src/flame-data.js';

const r = decodeSync(writeTrace(simulateSchedule({ seed: 7, cpus: 2, duration: 400_000, switchMode: 'mixed', profileInterval: 1_000, images: true, stacks: true }).description).bytes);
const source = new FlameSource(r);

/** Self weight (weight not in a child) summed by name, and the structure checked on the way. */
function selfByName(d: FlameData): Map<string, number> {
  const self = new Map<string, number>();
  for (let k = 0; k < d.nodes; k++) {
    let kids = 0;
    for (let c = k + 1; c < d.end[k]!; c = d.end[c]!) {
      expect(d.depth[c]).toBe(d.depth[k]! + 1);
      expect(d.x[c]).toBe(d.x[k]! + (d.timed ? d.time : d.weight).subarray(k + 1, c).reduce((a, v, i) => a + (d.depth[k + 1 + i] === d.depth[k]! + 1 ? v : 0), 0));
      kids += d.weight[c]!;
    }
    const s = d.weight[k]! - kids;
    expect(s).toBeGreaterThanOrEqual(0);
    if (s > 0) self.set(d.names[d.name[k]!]!, (self.get(d.names[d.name[k]!]!) ?? 0) + s);
  }
  return self;
}

describe('the call tree of the samples', () => {
  const d = source.build(null);
  const a = analyzeSamples(r);

  test('the root is analyzeSamples’s total; its children are the processes, with their totals', () => {
    expect(a.samples).toBeGreaterThan(100);
    expect(a.cpuMs).not.toBeNull();
    expect([d.samples[0], d.weight[0], d.time[0]! / 10_000]).toEqual([a.samples, a.weight, a.cpuMs]);
    expect(d.timed).toBe(true);
    const procs = new Map<string, number>();
    for (let c = 1; c < d.nodes; c = d.end[c]!) {
      expect(d.nameKind[d.name[c]!]).toBe(NAME_PROCESS);
      procs.set(d.names[d.name[c]!]!.replace(/^.* \((\d+)\)$/, '$1'), d.weight[c]!);
    }
    expect(procs).toEqual(new Map(a.byProcess.map((p) => [String(p.processId), p.weight])));
  });

  test('every leaf is an instruction pointer: the self weights by frame are analyzeSamples’s byAddress', () => {
    expect(selfByName(d)).toEqual(new Map(a.byAddress.map((x) => [x.address!, x.weight])));
  });

  test('the samples with a stack have their callers: paths deeper than process → instruction pointer', () => {
    const st = resolveStacks(r);
    const stacked = st.stackIdOf.samples.filter((x) => x >= 0).length;
    expect(stacked).toBeGreaterThan(10);
    expect(d.stacked).toBe(stacked);
    expect(d.maxDepth).toBeGreaterThan(3);
    // each sample's path: its instruction pointer, then the walk's frames after Stack1 (all when Stack1 is not it)
    const ip = r.samples.column('instructionPointer');
    const count = r.samples.column('count');
    const want = new Map<number, number>(); // depth of the leaf → weight
    for (let i = 0; i < r.samples.length; i++) {
      const s = st.stackIdOf.samples[i]!;
      let n = 1;
      if (s >= 0) {
        const from = st.stacks.firstFrame[s]!;
        n += st.stacks.frameCount[s]! - (st.frames.address[from] === ip[i] ? 1 : 0);
      }
      want.set(n + 1, (want.get(n + 1) ?? 0) + count[i]!);
    }
    const got = new Map<number, number>();
    for (let k = 0; k < d.nodes; k++) {
      let kids = 0;
      for (let c = k + 1; c < d.end[k]!; c = d.end[c]!) kids += d.weight[c]!;
      if (d.weight[k]! > kids) got.set(d.depth[k]!, (got.get(d.depth[k]!) ?? 0) + d.weight[k]! - kids);
    }
    expect(got).toEqual(want);
    expect([...want.keys()].some((n) => n > 3)).toBe(true);
    // without stacks: root → process → instruction pointer
    const flat = new FlameSource({ ...r, stackEvents: new Table('stackEvents', emptyChunk('stackEvents')), stackEventFrames: new Table('stackEventFrames', emptyChunk('stackEventFrames')) }).build(null);
    expect(flat.maxDepth).toBe(2);
    expect(flat.stacked).toBe(0);
    expect(selfByName(flat)).toEqual(selfByName(d));
  });

  test('a selected range and the search keep the samples analyzeSamples keeps', () => {
    const first = r.samples.column('timestamp')[0]!;
    const last = r.samples.column('timestamp')[r.samples.length - 1]!;
    const selection = resolveSelection({ from: { ticks: first + (last - first) / 3n }, to: { ticks: first + (2n * (last - first)) / 3n } }, r.clock, r);
    const part = source.build(selection);
    const b = analyzeSamples(r, { selection });
    expect(b.samples).toBeLessThan(a.samples);
    expect([part.samples[0], part.weight[0], part.time[0]! / 10_000]).toEqual([b.samples, b.weight, b.cpuMs]);
    expect(selfByName(part)).toEqual(new Map(b.byAddress.map((x) => [x.address!, x.weight])));
    // the search: a process by id
    const p = a.byProcess.find((x) => x.processId !== null && x.processId !== 0)!;
    const one = source.build(null, String(p.processId));
    expect(one.weight[0]).toBeGreaterThanOrEqual(p.weight);
    expect(d.names[one.name[1]!]).toBeDefined();
    expect(one.names[one.name[1]!]).toMatch(new RegExp(`\\(${p.processId}\\)$`));
    // nothing matches: an empty tree
    expect(source.build(null, 'no such process anywhere').nodes).toBe(0);
  });
});

describe('SampleFrames', () => {
  test('the instruction pointer, then the walk after Stack1 when Stack1 is it, else the whole walk; no stack: the pointer alone', () => {
    const ip = r.samples.column('instructionPointer');
    const [a, b] = [ip[0]!, ip[1]!];
    // stack 0 starts with sample 0's pointer, stack 1 does not
    const address = BigUint64Array.from([a, 0x1000n, 0x2000n, 0xffff800000001234n, 0x3000n]);
    const stackIdOf = new Int32Array(r.samples.length).fill(-1);
    stackIdOf[0] = 0;
    stackIdOf[1] = 1;
    const sf = new SampleFrames(r.samples, {
      stacks: { length: 2, processId: new Uint32Array(2), frameCount: Uint32Array.from([3, 2]), kernelFrameCount: new Uint32Array(2), firstFrame: Uint32Array.from([0, 3]) },
      frames: { length: 5, stackId: Uint32Array.from([0, 0, 0, 1, 1]), depth: Uint32Array.from([0, 1, 2, 0, 1]), address },
      stackIdOf: { samples: stackIdOf, cswitch: new Int32Array(0), readythread: new Int32Array(0) },
    });
    const got = (i: number) => {
      const n = sf.of(i);
      return Array.from({ length: n }, (_, k) => (BigInt(sf.words[2 * k + 1]!) << 32n) | BigInt(sf.words[2 * k]!));
    };
    expect(got(0)).toEqual([a, 0x1000n, 0x2000n]);
    expect(got(1)).toEqual([b, 0xffff800000001234n, 0x3000n]);
    expect(got(2)).toEqual([ip[2]!]);
    expect([sf.stackOfSample(0) >= 0, sf.stackOfSample(2) >= 0]).toEqual([true, false]);
  });
});

describe('the call tree of the wait time', () => {
  // a longer schedule on 3 CPUs (hundreds of waits), with CSwitch and ReadyThread stacks
  const r = decodeSync(writeTrace(simulateSchedule({ seed: 3, cpus: 3, duration: 1_500_000, switchMode: 'mixed', profileInterval: 1_000, images: true, stacks: true }).description).bytes);
  const usage = cpuUsage(r);
  const source = new WaitFlameSource({ ...r, cpuUsage: usage });
  const waitsOf = (u = usage) => analyzeWaits({ cpuUsage: u, cswitch: r.cswitch, readythread: r.readythread, stackEvents: r.stackEvents, stackEventFrames: r.stackEventFrames, images: r.images, ticksPerSecond: r.clock!.ticksPerSecond });
  const d = source.build(null);
  const a = waitsOf();
  /** the root's totals as the page shows them */
  const totals = (x: FlameData) => ({ waits: x.samples[0], ticks: x.weight[0], stacked: x.stacked, readyStacked: x.readyStacked });
  const want = (w: ReturnType<typeof waitsOf>) => ({ waits: w.waits, ticks: Number(w.waitTicks), stacked: w.withWaitStack, readyStacked: w.withReadyStack });
  /** the nodes under `from` (its children, then theirs) along `path` (names), or -1 */
  const walk = (x: FlameData, from: number, path: string[]): number => {
    let k = from;
    for (const name of path) {
      let c = k + 1;
      while (c < x.end[k]! && x.names[x.name[c]!] !== name) c = x.end[c]!;
      if (c >= x.end[k]!) return -1;
      k = c;
    }
    return k;
  };
  const children = (x: FlameData, k: number) => {
    const out: number[] = [];
    for (let c = k + 1; c < x.end[k]!; c = x.end[c]!) out.push(c);
    return out;
  };
  /** blocked ticks of the stacks of `list` whose frames (leaf first) end with `s`'s: the waits a root-first path through `s` holds */
  const through = (list: WaitStack[], s: WaitStack) =>
    list.filter((t) => t.stackId >= 0 && t.frames.length >= s.frames.length && t.frames.slice(t.frames.length - s.frames.length).join() === s.frames.join()).reduce((n, t) => n + Number(t.waitTicks), 0);

  test('the root is analyzeWaits’s total (waits, ticks, time; with a wait stack, with a ready stack); its children the waiting processes', () => {
    expect(a.waits).toBeGreaterThan(100);
    expect(a.withWaitStack).toBeGreaterThan(10);
    expect(a.withReadyStack).toBeGreaterThan(10);
    expect(totals(d)).toEqual(want(a));
    expect(d.of).toBe('waits');
    expect(d.timed).toBe(true);
    expect(d.time[0]! / 10_000).toBeCloseTo(a.waitMs!, 9);
    expect(d.names[d.name[0]!]).toBe('all waits');
    // per process: the waits of the rows of its threads, summed by hand
    const valid = usage.toArray();
    const byPid = new Map<string, number>();
    for (const u of valid) if (u.waits !== null) byPid.set(String(u.newProcessId ?? -1), (byPid.get(String(u.newProcessId ?? -1)) ?? 0) + Number(u.waits));
    const got = new Map<string, number>();
    for (const c of children(d, 0)) {
      expect(d.nameKind[d.name[c]!]).toBe(NAME_PROCESS);
      got.set(d.names[d.name[c]!]!.replace(/^unknown process$/, '(-1)').replace(/^.*\((-?\d+)\)$/, '$1'), d.weight[c]!);
    }
    expect(got).toEqual(byPid);
  });

  test('the stacks where threads waited are paths under the processes, outermost frame first; the readying stacks follow READIED BY', () => {
    // a few wait stacks by hand: the node at the end of the stack's path (over every process) holds the waits of the stacks ending with it
    const waitStacks = a.byWaitStack.filter((s) => s.stackId >= 0).slice(0, 5);
    expect(waitStacks.length).toBe(5);
    for (const s of waitStacks) {
      const path = [...s.frames].reverse();
      let held = 0;
      for (const p of children(d, 0)) {
        const k = walk(d, p, path);
        if (k >= 0) held += d.weight[k]!;
      }
      expect(held).toBe(through(a.byWaitStack, s));
      expect(held).toBeGreaterThanOrEqual(Number(s.waitTicks));
    }
    // the readying stacks: below each READIED BY frame, their frames outermost first
    const markers: number[] = [];
    for (let k = 0; k < d.nodes; k++) if (d.nameKind[d.name[k]!] === NAME_READIED) markers.push(k);
    expect(markers.length).toBeGreaterThan(0);
    expect(d.names[d.name[markers[0]!]!]).toMatch(/^READIED BY .+ \(\d+\) tid \d+$|^READIED BY \? tid \d+$/);
    for (const s of a.byReadyStack.filter((x) => x.stackId >= 0).slice(0, 5)) {
      const path = [...s.frames].reverse();
      let held = 0;
      for (const m of markers) {
        const k = walk(d, m, path);
        if (k >= 0) {
          held += d.weight[k]!;
          expect(d.nameKind[d.name[k]!]! & NAME_READYING).toBe(NAME_READYING);
        }
      }
      expect(held).toBe(through(a.byReadyStack, s));
    }
    // every wait with a readying thread passes one marker: the markers' weights sum to those waits' ticks
    const marked = usage.toArray().filter((u) => u.waits !== null && u.readyingThreadId !== null).reduce((n, u) => n + Number(u.waits), 0);
    expect(markers.reduce((n, m) => n + d.weight[m]!, 0)).toBe(marked);
  });

  test('a selected range and thread, and the search: the waits of selectTable’s rows, as analyzeWaits', () => {
    const first = usage.column('switchInTime')[0]!;
    const last = usage.column('switchInTime')[usage.length - 1]!;
    const from = { ticks: first + (last - first) / 3n };
    const to = { ticks: first + (2n * (last - first)) / 3n };
    const check = (sel: Selection) => {
      const got = source.build(sel);
      const w = waitsOf(selectTable(usage, sel));
      expect(totals(got)).toEqual(want(w));
      return w;
    };
    const part = check(resolveSelection({ from, to }, r.clock, r));
    expect(part.waits).toBeLessThan(a.waits);
    expect(part.waits).toBeGreaterThan(0);
    const tid = usage.toArray().find((u) => u.waits !== null && u.waits > 0n && u.newProcessId !== 0)!.newThreadId;
    const one = check(resolveSelection({ from, to, threadIds: [tid] }, r.clock, r));
    expect(one.waits).toBeLessThan(part.waits);
    // the search: a process by (a part of) its image name — and the threads named with it, all of them in those processes here
    const pid = usage.toArray().find((u) => u.waits !== null && u.newProcessId !== null && u.newProcessId > 4)!.newProcessId!;
    const q = r.processes.toArray().find((p) => p.processId === pid)!.imageFileName!.toLowerCase().replace(/\.exe$/, '');
    const pids = r.processes.toArray().filter((p) => (p.imageFileName ?? '').toLowerCase().includes(q)).map((p) => p.processId);
    expect(r.threads.toArray().filter((t) => (t.name ?? '').toLowerCase().includes(q)).every((t) => pids.includes(t.processId!))).toBe(true);
    const byName = source.build(null, q);
    expect(totals(byName)).toEqual(want(waitsOf(selectTable(usage, resolveSelection({ processIds: pids }, r.clock, r)))));
    expect(children(byName, 0).map((c) => byName.names[byName.name[c]!])).toContain(`${r.processes.toArray().find((p) => p.processId === pid)!.imageFileName} (${pid})`);
    expect(source.build(null, 'no such process anywhere').nodes).toBe(0);
  });

  test('without stacks: root → process → READIED BY, the same totals, no stacked waits', () => {
    const none = { stackEvents: new Table('stackEvents', emptyChunk('stackEvents')), stackEventFrames: new Table('stackEventFrames', emptyChunk('stackEventFrames')) };
    const flat = new WaitFlameSource({ ...r, ...none, cpuUsage: usage }).build(null);
    expect(flat.maxDepth).toBe(2);
    expect([flat.samples[0], flat.weight[0], flat.stacked, flat.readyStacked]).toEqual([a.waits, Number(a.waitTicks), 0, 0]);
  });
});
