// CPU usage from samples (WPA's CPU Usage (Sampled)): the `samples` table (SampledProfile, docs/format.md
// part G) counted by process, thread and module. A sample's process is its thread's at the sample's time
// (the threads lifetimes, as src/select resolves it); its module the image whose [imageBase, imageBase +
// imageSize) holds the instruction pointer, among the images of its process, or of process 0 (the
// system's: drivers and the kernel) for a kernel-space address. An image's load and unload times are not
// used yet (the last image seen at a base wins). Per sample: words compared, no BigInt or object.
import type { Table } from '../tables/table.js';
import type { StreamResult } from '../result/summary.js';
import { resolveSelection, type Selection, type SelectionSummary } from '../select/selection.js';
import { selectTable } from '../select/tables.js';

export interface SampledGroup {
  /** process (byProcess, byThread), null if unknown */
  processId: number | null;
  imageFileName: string | null;
  /** thread (byThread), else null */
  threadId: number | null;
  /** module file name (byModule: null for addresses in no image), else null */
  module: string | null;
  /** SampledProfile events, and their Count summed */
  samples: number;
  weight: number;
  /** weight as a percentage of all */
  percent: number;
}

export interface SampledAnalysis {
  samples: number;
  weight: number;
  byProcess: SampledGroup[];
  byThread: SampledGroup[];
  byModule: SampledGroup[];
  /** samples whose thread's process is not known, and whose address is in no image of their process */
  unresolvedProcess: number;
  unresolvedModule: number;
  selection: SelectionSummary | null;
}

export interface SampledOptions {
  /** only these times, processes and threads */
  selection?: Selection;
}

/** The base name of a kernel path (\Device\HarddiskVolume2\Windows\System32\ntdll.dll → ntdll.dll). */
function baseName(path: string): string {
  return path.slice(Math.max(path.lastIndexOf('\\'), path.lastIndexOf('/')) + 1);
}

/** (aHi, aLo) <= (bHi, bLo), unsigned 64-bit, words as uint32 numbers. */
function le(aHi: number, aLo: number, bHi: number, bLo: number): boolean {
  return aHi < bHi || (aHi === bHi && aLo <= bLo);
}

/** The images of each process as ranges sorted by base (words), for lookups by address. */
class ImageRanges {
  private readonly byPid = new Map<number, { baseHi: Float64Array; baseLo: Float64Array; endHi: Float64Array; endLo: Float64Array; name: string[] }>();

  constructor(images: Table<'images'>) {
    const pid = images.column('processId');
    const base = images.column('imageBase');
    const size = images.column('imageSize');
    const file = images.column('fileName');
    const per = new Map<number, Map<bigint, [bigint, string]>>();
    // a few thousand images: one BigInt each is fine here
    for (let i = 0; i < images.length; i++) {
      let m = per.get(pid[i]!);
      if (!m) per.set(pid[i]!, (m = new Map()));
      m.set(base[i]!, [base[i]! + size[i]!, baseName(file[i]!) || '(no name)']);
    }
    for (const [p, m] of per) {
      const bases = [...m.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
      const n = bases.length;
      const r = { baseHi: new Float64Array(n), baseLo: new Float64Array(n), endHi: new Float64Array(n), endLo: new Float64Array(n), name: new Array<string>(n) };
      bases.forEach((b, k) => {
        const [end, name] = m.get(b)!;
        r.baseHi[k] = Number(b >> 32n);
        r.baseLo[k] = Number(b & 0xffffffffn);
        const e = end > 0xffffffffffffffffn ? 0xffffffffffffffffn : end;
        r.endHi[k] = Number(e >> 32n);
        r.endLo[k] = Number(e & 0xffffffffn);
        r.name[k] = name;
      });
      this.byPid.set(p, r);
    }
  }

  /** The module of process `pid` holding the address (words), or null. */
  find(pid: number, hi: number, lo: number): string | null {
    const r = this.byPid.get(pid);
    if (!r) return null;
    let a = 0;
    let b = r.name.length;
    // the last base <= the address
    while (a < b) {
      const mid = (a + b) >>> 1;
      if (le(r.baseHi[mid]!, r.baseLo[mid]!, hi, lo)) a = mid + 1;
      else b = mid;
    }
    const k = a - 1;
    if (k < 0) return null;
    // inside [base, end)
    return le(r.endHi[k]!, r.endLo[k]!, hi, lo) ? null : r.name[k]!;
  }
}

/** Samples by process, thread and module (WPA's CPU Usage (Sampled)), ordered by weight, then samples. */
export function analyzeSamples(r: { samples: Table<'samples'>; images: Table<'images'> } & Pick<StreamResult, 'threads' | 'processes' | 'clock'>, options: SampledOptions = {}): SampledAnalysis {
  const sel = options.selection?.active ? options.selection : null;
  const samples = sel ? selectTable(r.samples, sel) : r.samples;
  const lifetimes = resolveSelection({}, r.clock, r);
  const modules = new ImageRanges(r.images);
  const image = new Map<number, string>();
  for (const p of r.processes) if (p.imageFileName !== null) image.set(p.processId, p.imageFileName);

  const ts = samples.column('timestamp');
  const tsw = new Int32Array(ts.buffer, ts.byteOffset, 2 * samples.length);
  const tid = samples.column('threadId');
  const ip = samples.column('instructionPointer');
  const ipw = new Uint32Array(ip.buffer, ip.byteOffset, 2 * samples.length);
  const count = samples.column('count');
  const pointerSize = samples.column('pointerSize');
  const proc = new Map<number, [number, number]>();
  const thread = new Map<number, Map<number, [number, number]>>();
  const module = new Map<string | null, [number, number]>();
  const add = <K>(m: Map<K, [number, number]>, k: K, w: number) => {
    const e = m.get(k);
    if (e) {
      e[0]++;
      e[1] += w;
    } else m.set(k, [1, w]);
  };
  let weight = 0;
  let unresolvedProcess = 0;
  let unresolvedModule = 0;
  for (let i = 0; i < samples.length; i++) {
    const w = count[i]!;
    weight += w;
    const t = tid[i]!;
    const p = t === 0 ? 0 : lifetimes.processOf(t, tsw[2 * i + 1]!, tsw[2 * i]!);
    if (p < 0) unresolvedProcess++;
    add(proc, p, w);
    let ofThread = thread.get(t);
    if (!ofThread) thread.set(t, (ofThread = new Map()));
    add(ofThread, p, w);
    const hi = ipw[2 * i + 1]!;
    const lo = ipw[2 * i]!;
    // kernel space: the upper half of the address space of the sample's pointer size
    const kernel = pointerSize[i] === 4 ? hi === 0 && lo >= 0x80000000 : hi >= 0x80000000;
    const name = modules.find(kernel ? 0 : p, hi, lo);
    if (name === null) unresolvedModule++;
    add(module, name, w);
  }
  const percent = (x: number) => (weight === 0 ? 0 : (100 * x) / weight);
  const order = (a: SampledGroup, b: SampledGroup) => b.weight - a.weight || b.samples - a.samples || (a.processId ?? -1) - (b.processId ?? -1) || (a.threadId ?? -1) - (b.threadId ?? -1);
  const named = (p: number) => (p < 0 ? null : p);
  const byProcess = [...proc].map(([p, [n, w]]) => ({ processId: named(p), imageFileName: p < 0 ? null : (image.get(p) ?? null), threadId: null, module: null, samples: n, weight: w, percent: percent(w) })).sort(order);
  const byThread = [...thread]
    .flatMap(([t, m]) => [...m].map(([p, [n, w]]) => ({ processId: named(p), imageFileName: p < 0 ? null : (image.get(p) ?? null), threadId: t, module: null, samples: n, weight: w, percent: percent(w) })))
    .sort(order);
  const byModule = [...module].map(([m, [n, w]]) => ({ processId: null, imageFileName: null, threadId: null, module: m, samples: n, weight: w, percent: percent(w) })).sort(order);
  return { samples: samples.length, weight, byProcess, byThread, byModule, unresolvedProcess, unresolvedModule, selection: sel?.describe(r.clock) ?? null };
}
