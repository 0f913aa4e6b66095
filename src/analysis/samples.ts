// CPU usage from samples (WPA's CPU Usage (Sampled)): the `samples` table (SampledProfile, docs/format.md
// part G) counted by process, thread, module and address (module!offset). A sample's process is its
// thread's at the sample's time (the threads lifetimes, as src/select resolves it); its module the image
// lifetime holding the instruction pointer at the sample's time (ImageMap, derive/lifetimes.ts: the
// images of its process, of process 0 first for a kernel-space address). CPU time is Count × the profile
// interval in effect at the sample's time (SampleInterval, analysis/sample-interval.ts: WPA's Weight), when
// the trace states it. Per sample: words compared, no BigInt or object (a Map entry per new group).
import { isKernelAddress } from '../derive/stacks.js';
import type { Table } from '../tables/table.js';
import type { StreamResult } from '../result/summary.js';
import { resolveSelection, type Selection, type SelectionSummary } from '../select/selection.js';
import { selectTable } from '../select/tables.js';
import { ImageMap } from '../derive/lifetimes.js';
import { SampleInterval } from './sample-interval.js';

/** a group's samples, Count summed, CPU time in 100 ns units */
type Entry = [number, number, number];

export interface SampledGroup {
  /** process (byProcess, byThread), null if unknown */
  processId: number | null;
  imageFileName: string | null;
  /** thread (byThread), else null */
  threadId: number | null;
  /** module: the image's name (byModule, byAddress: null for addresses in no image), else null */
  module: string | null;
  /** byAddress: the instruction pointer as module!0xoffset, or 0x<address> when in no image; else null */
  address: string | null;
  /** SampledProfile events, and their Count summed */
  samples: number;
  weight: number;
  /** Count × the profile interval, in ms (WPA's Weight); null when the trace has no sample-interval event */
  cpuMs: number | null;
  /** weight as a percentage of all */
  percent: number;
}

export interface SampledAnalysis {
  samples: number;
  weight: number;
  /** CPU time of all samples, ms; null when the trace has no sample-interval event (then counts only) */
  cpuMs: number | null;
  /** the profile intervals the trace states (sampleIntervals, timer source), in ms; empty when none */
  intervalsMs: number[];
  byProcess: SampledGroup[];
  byThread: SampledGroup[];
  byModule: SampledGroup[];
  byAddress: SampledGroup[];
  /** samples whose thread's process is not known, and whose address is in no image of their process */
  unresolvedProcess: number;
  unresolvedModule: number;
  selection: SelectionSummary | null;
}

export interface SampledOptions {
  /** only these times, processes and threads */
  selection?: Selection;
}

/** Kernel space: the one rule, src/derive/stacks.ts (re-exported for the sample analyses). */
export { isKernelAddress };

/** The process of a sample's thread at its time (words: tHi signed, tLo): the idle thread's is 0; -1 when unknown (Selection.processOf). */
export function processOfSample(lifetimes: ReturnType<typeof resolveSelection>, tid: number, tHi: number, tLo: number): number {
  return lifetimes.processOf(tid, tHi, tLo);
}

/** What the samples' analyses read of a decode: the samples, image lifetimes, intervals and thread lifetimes. */
export type SamplesInput = { samples: Table<'samples'>; images: Table<'images'>; sampleIntervals?: Table<'sampleIntervals'> } & Pick<StreamResult, 'threads' | 'processes' | 'clock'>;

/** Samples by process, thread, module and address (WPA's CPU Usage (Sampled)), ordered by weight, then samples. */
export function analyzeSamples(
  r: SamplesInput,
  options: SampledOptions = {},
): SampledAnalysis {
  const sel = options.selection?.active ? options.selection : null;
  const samples = sel ? selectTable(r.samples, sel) : r.samples;
  const lifetimes = resolveSelection({}, r.clock, r);
  const map = new ImageMap(r.images);
  const interval = r.sampleIntervals ? new SampleInterval(r.sampleIntervals) : null;
  const timed = interval?.known === true;
  const imageName = r.images.column('name');
  const fileName = r.images.column('fileName');
  const image = new Map<number, string>();
  for (const p of r.processes) if (p.imageFileName !== null) image.set(p.processId, p.imageFileName);

  const ts = samples.column('timestamp');
  const tsw = new Int32Array(ts.buffer, ts.byteOffset, 2 * samples.length);
  const tid = samples.column('threadId');
  const ip = samples.column('instructionPointer');
  const ipw = new Uint32Array(ip.buffer, ip.byteOffset, 2 * samples.length);
  const count = samples.column('count');
  const pointerSize = samples.column('pointerSize');
  const proc = new Map<number, Entry>();
  const thread = new Map<number, Map<number, Entry>>();
  // per sample: its process, image row (-1: none) and CPU time in 100 ns units — modules and addresses are
  // counted from them when asked (a trace can have a distinct address per sample)
  const n = samples.length;
  const pidOf = new Int32Array(n);
  const rowOf = new Int32Array(n);
  const timeOf = timed ? new Float64Array(n) : null;
  const add = <K>(m: Map<K, Entry>, k: K, w: number, t: number) => {
    const e = m.get(k);
    if (e) {
      e[0]++;
      e[1] += w;
      e[2] += t;
    } else m.set(k, [1, w, t]);
  };
  const inner = <K>(m: Map<K, Map<number, Entry>>, k: K) => {
    let v = m.get(k);
    if (!v) m.set(k, (v = new Map()));
    return v;
  };
  let weight = 0;
  let time = 0;
  let unresolvedProcess = 0;
  let unresolvedModule = 0;
  let lastTid = -1;
  let lastThread: Map<number, Entry> | null = null;
  for (let i = 0; i < n; i++) {
    const w = count[i]!;
    weight += w;
    const t = tid[i]!;
    const tHi = tsw[2 * i + 1]!;
    const tLo = tsw[2 * i]! >>> 0;
    const p = processOfSample(lifetimes, t, tHi, tsw[2 * i]!);
    const cpu = timed ? w * interval!.at(tHi, tLo) : 0;
    time += cpu;
    if (p < 0) unresolvedProcess++;
    add(proc, p, w, cpu);
    if (t !== lastTid || lastThread === null) {
      lastTid = t;
      lastThread = inner(thread, t);
    }
    add(lastThread, p, w, cpu);
    const hi = ipw[2 * i + 1]!;
    const lo = ipw[2 * i]!;
    const row = map.find(p, isKernelAddress(pointerSize[i]!, hi, lo), hi, lo, tHi, tLo);
    if (row < 0) unresolvedModule++;
    pidOf[i] = p;
    rowOf[i] = row;
    if (timeOf) timeOf[i] = cpu;
  }
  const percent = (x: number) => (weight === 0 ? 0 : (100 * x) / weight);
  const order = (a: SampledGroup, b: SampledGroup) => b.weight - a.weight || b.samples - a.samples || (a.processId ?? -1) - (b.processId ?? -1) || (a.threadId ?? -1) - (b.threadId ?? -1) || ((a.module ?? a.address ?? '') < (b.module ?? b.address ?? '') ? -1 : 1);
  const named = (p: number) => (p < 0 ? null : p);
  const ms = (t: number) => (timed ? t / 10_000 : null);
  const group = (o: Partial<SampledGroup>, [n, w, t]: Entry): SampledGroup => ({ processId: null, imageFileName: null, threadId: null, module: null, address: null, ...o, samples: n, weight: w, cpuMs: ms(t), percent: percent(w) });
  const nameOf = (row: number) => (row < 0 ? null : (imageName[row] || fileName[row] || '(no name)'));
  // groups of the same module name (or module!offset) in several processes or lifetimes are one row
  const merged = (entries: [string | null, Entry, Partial<SampledGroup>][]) => {
    const m = new Map<string | null, [Entry, Partial<SampledGroup>]>();
    for (const [k, [n, w, t], o] of entries) {
      const e = m.get(k);
      if (e) {
        e[0][0] += n;
        e[0][1] += w;
        e[0][2] += t;
      } else m.set(k, [[n, w, t], o]);
    }
    return [...m.values()].map(([nw, o]) => group(o, nw)).sort(order);
  };
  const byModule = () => {
    const module = new Map<number, Entry>(); // images row (-1: none) → [samples, weight]
    for (let i = 0; i < n; i++) add(module, rowOf[i]!, count[i]!, timeOf ? timeOf[i]! : 0);
    return merged([...module].map(([row, nw]) => [nameOf(row), nw, { module: nameOf(row) }]));
  };
  const byAddress = () => {
    const inImage = new Map<number, Map<number, Entry>>(); // images row → offset → …
    const noImage = new Map<number, Map<number, Entry>>(); // address high word → low word → …
    for (let i = 0; i < n; i++) {
      const hi = ipw[2 * i + 1]!;
      const lo = ipw[2 * i]!;
      const row = rowOf[i]!;
      const w = count[i]!;
      const cpu = timeOf ? timeOf[i]! : 0;
      if (row < 0) add(inner(noImage, hi), lo, w, cpu);
      else add(inner(inImage, row), map.offset(row, hi, lo), w, cpu);
    }
    return merged([
      ...[...inImage].flatMap(([row, m]) => [...m].map(([off, nw]): [string, Entry, Partial<SampledGroup>] => {
        const address = `${nameOf(row)}!0x${off.toString(16)}`;
        return [address, nw, { module: nameOf(row), address }];
      })),
      ...[...noImage].flatMap(([hi, m]) => [...m].map(([lo, nw]): [string, Entry, Partial<SampledGroup>] => {
        const address = `0x${((BigInt(hi) << 32n) | BigInt(lo)).toString(16)}`;
        return [address, nw, { address }];
      })),
    ]);
  };
  const byProcess = [...proc].map(([p, nw]) => group({ processId: named(p), imageFileName: p < 0 ? null : (image.get(p) ?? null) }, nw)).sort(order);
  const byThread = [...thread].flatMap(([t, m]) => [...m].map(([p, nw]) => group({ processId: named(p), imageFileName: p < 0 ? null : (image.get(p) ?? null), threadId: t }, nw))).sort(order);
  const a = { samples: n, weight, cpuMs: ms(time), intervalsMs: (interval?.intervals ?? []).map((v) => v / 10_000), byProcess, byThread, unresolvedProcess, unresolvedModule, selection: sel?.describe(r.clock) ?? null };
  // by module and by address: made on first use (enumerable: JSON and copies see them as fields)
  return Object.defineProperties(a, { byModule: lazy(byModule), byAddress: lazy(byAddress) }) as SampledAnalysis;
}

/** An enumerable property made by `make` on first read, then kept. */
function lazy<T>(make: () => T): PropertyDescriptor {
  let value: T | undefined;
  let made = false;
  return {
    enumerable: true,
    get() {
      if (!made) {
        value = make();
        made = true;
      }
      return value;
    },
  };
}
