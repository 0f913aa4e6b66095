// The page's flame graph of the sampled CPU, built in the decoding worker: the `samples` rows (SampledProfile)
// of the selection aggregated into a call tree — root → process (the sample's thread's, as analyzeSamples
// resolves it) → outermost frame → … → the instruction pointer — whose frames are module!0xoffset (ImageMap:
// the image lifetime holding the address at the sample's time; the address itself outside any image) and
// whose stacks are the samples' (SampleFrames: the instruction pointer, then the walk's callers). Each node
// sums the samples (events), their Count and, when the trace states the profile interval, their CPU time,
// exactly as analyzeSamples does for the same rows. It crosses to the page as typed arrays in pre-order
// (children by value, largest first) with each node's start in value units, plus one string per name.
import {
  ImageMap,
  resolveSelection,
  resolveStacks,
  type Selection,
  type StreamResult,
  type Table,
} from '../../src/index.js';
import { isKernelAddress, processOfSample } from '../../src/analysis/samples.js';
import { SampleInterval } from '../../src/analysis/sample-interval.js';
import { SampleFrames } from '../../src/analysis/sample-frames.js';
import { processMatches } from './search.js';

/** kinds of names */
export const NAME_ROOT = 0;
export const NAME_PROCESS = 1;
export const NAME_IN_IMAGE = 2;
export const NAME_NO_IMAGE = 3;

export interface FlameData {
  /** nodes in pre-order; node 0 is the root (every sample kept) */
  nodes: number;
  /** per node: index into `names` */
  name: Int32Array;
  depth: Uint16Array;
  /** index past the node's subtree */
  end: Uint32Array;
  /** the node's start along the root's value (CPU time in 100 ns units when `timed`, else the Count summed) */
  x: Float64Array;
  /** SampledProfile events, their Count summed, their CPU time (100 ns units; 0 unless timed) */
  samples: Float64Array;
  weight: Float64Array;
  time: Float64Array;
  names: string[];
  /** per name: NAME_ROOT, NAME_PROCESS, NAME_IN_IMAGE, NAME_NO_IMAGE */
  nameKind: Uint8Array;
  /** the trace states the profile interval: widths are CPU time */
  timed: boolean;
  maxDepth: number;
  /** kept samples that had a stack */
  stacked: number;
}

export interface FlameInput extends Pick<StreamResult, 'threads' | 'processes' | 'clock' | 'images'> {
  samples: Table<'samples'>;
  sampleIntervals: Table<'sampleIntervals'>;
  stackEvents: Table<'stackEvents'>;
  stackEventFrames: Table<'stackEventFrames'>;
}

/** A map of number → number maps, made on first use. */
function inner<K>(m: Map<K, Map<number, number>>, k: K): Map<number, number> {
  let v = m.get(k);
  if (!v) m.set(k, (v = new Map()));
  return v;
}

/** The samples of a whole decode, resolved once (process, stack, interval); `build` makes a tree for a selection and search. */
export class FlameSource {
  readonly length: number;
  private readonly samples: Table<'samples'>;
  private readonly map: ImageMap;
  private readonly interval: SampleInterval | null;
  private readonly timed: boolean;
  private readonly frames: SampleFrames;
  private readonly pid: Int32Array;
  private readonly image = new Map<number, string>();
  private readonly threadNames = new Map<number, string[]>();
  private readonly imageName: string[];

  constructor(input: FlameInput) {
    const s = input.samples;
    this.samples = s;
    this.length = s.length;
    this.map = new ImageMap(input.images);
    this.interval = input.sampleIntervals.length ? new SampleInterval(input.sampleIntervals) : null;
    this.timed = this.interval?.known === true;
    const stacks = input.stackEvents.length > 0 && s.length > 0 ? resolveStacks({ stackEvents: input.stackEvents, stackEventFrames: input.stackEventFrames, samples: s }) : null;
    this.frames = new SampleFrames(s, stacks);
    const lifetimes = resolveSelection({}, input.clock, input);
    const ts = s.column('timestamp');
    const tsw = new Int32Array(ts.buffer, ts.byteOffset, 2 * s.length);
    const tid = s.column('threadId');
    this.pid = new Int32Array(s.length);
    for (let i = 0; i < s.length; i++) this.pid[i] = processOfSample(lifetimes, tid[i]!, tsw[2 * i + 1]!, tsw[2 * i]!);
    for (const p of input.processes) if (p.imageFileName !== null) this.image.set(p.processId, p.imageFileName);
    for (const t of input.threads) {
      if (!t.name) continue;
      const names = this.threadNames.get(t.threadId);
      if (names) names.push(t.name);
      else this.threadNames.set(t.threadId, [t.name]);
    }
    const names = input.images.column('name');
    const files = input.images.column('fileName');
    this.imageName = Array.from({ length: input.images.length }, (_, r) => names[r] || files[r] || '(no name)');
  }

  /**
   * The call tree of the samples `selection` keeps (its time range and threads, as selectTable does) whose
   * process matches `search` (lower case: the page's search box — a process by id or image name, a thread
   * by id or name); '' keeps all.
   */
  build(selection: Selection | null, search = ''): FlameData {
    const sel = selection?.active ? selection : null;
    const s = this.samples;
    const ts = s.column('timestamp');
    const tsw = new Int32Array(ts.buffer, ts.byteOffset, 2 * s.length);
    const tid = s.column('threadId');
    const count = s.column('count');
    const pointerSize = s.column('pointerSize');
    // the search, as sets of processes and threads
    let keepPid: Set<number> | null = null;
    let keepTid: Set<number> | null = null;
    if (search !== '') {
      keepPid = new Set();
      keepTid = new Set();
      for (let i = 0; i < s.length; i++) {
        const p = this.pid[i]!;
        if (!keepPid.has(p) && p >= 0 && processMatches(search, p, this.image.get(p) ?? null)) keepPid.add(p);
      }
      if (/^\d+$/.test(search)) keepTid.add(Number(search));
      for (const [t, names] of this.threadNames) if (names.some((n) => n.toLowerCase().includes(search))) keepTid.add(t);
    }

    const names: string[] = ['all samples'];
    const kinds: number[] = [NAME_ROOT];
    const newName = (text: string, kind: number) => {
      names.push(text);
      kinds.push(kind);
      return names.length - 1;
    };
    const procName = new Map<number, number>();
    const rowName = new Int32Array(this.imageName.length).fill(-1); // images row → module name id
    const inImage = new Map<number, Map<number, number>>(); // module name id → offset → name
    const noImage = new Map<number, Map<number, number>>(); // high word → low word → name
    // the tree: node 0 the root; children by (node, name)
    const parent: number[] = [-1];
    const nameOf: number[] = [0];
    const nSamples: number[] = [0];
    const nWeight: number[] = [0];
    const nTime: number[] = [0];
    const children = new Map<number, Map<number, number>>();
    const child = (node: number, name: number) => {
      const m = inner(children, node);
      let c = m.get(name);
      if (c === undefined) {
        c = parent.length;
        parent.push(node);
        nameOf.push(name);
        nSamples.push(0);
        nWeight.push(0);
        nTime.push(0);
        m.set(name, c);
      }
      return c;
    };
    const moduleNames = new Map<string, number>();
    let stacked = 0;
    for (let i = 0; i < s.length; i++) {
      const tHi = tsw[2 * i + 1]!;
      const tLo = tsw[2 * i]! >>> 0;
      const t = tid[i]!;
      if (sel && !(sel.timeIn(tHi, tsw[2 * i]!) && sel.thread(t, tHi, tsw[2 * i]!))) continue;
      const p = this.pid[i]!;
      if (keepPid && !keepPid.has(p) && !keepTid!.has(t)) continue;
      const w = count[i]!;
      const cpu = this.timed ? w * this.interval!.at(tHi, tLo) : 0;
      const n = this.frames.of(i);
      if (this.frames.stackOfSample(i) >= 0) stacked++;
      const f = this.frames.words;
      let pn = procName.get(p);
      if (pn === undefined) {
        pn = newName(p < 0 ? 'unknown process' : `${this.image.get(p) ?? (p === 0 ? 'Idle' : 'pid')} (${p})`, NAME_PROCESS);
        procName.set(p, pn);
      }
      let node = child(0, pn);
      nSamples[0]++;
      nWeight[0] += w;
      nTime[0] += cpu;
      nSamples[node]++;
      nWeight[node] += w;
      nTime[node] += cpu;
      for (let k = n - 1; k >= 0; k--) {
        const hi = f[2 * k + 1]!;
        const lo = f[2 * k]!;
        const row = this.map.find(p, isKernelAddress(pointerSize[i]!, hi, lo), hi, lo, tHi, tLo);
        let name: number | undefined;
        if (row < 0) {
          const m = inner(noImage, hi);
          name = m.get(lo);
          if (name === undefined) {
            name = newName(`0x${((BigInt(hi) << 32n) | BigInt(lo)).toString(16)}`, NAME_NO_IMAGE); // once per address
            m.set(lo, name);
          }
        } else {
          let mod = rowName[row]!;
          if (mod < 0) {
            const text = this.imageName[row]!;
            mod = moduleNames.get(text) ?? moduleNames.size;
            moduleNames.set(text, mod);
            rowName[row] = mod;
          }
          const offset = this.map.offset(row, hi, lo);
          const m = inner(inImage, mod);
          name = m.get(offset);
          if (name === undefined) {
            name = newName(`${this.imageName[row]}!0x${offset.toString(16)}`, NAME_IN_IMAGE); // once per frame
            m.set(offset, name);
          }
        }
        node = child(node, name);
        nSamples[node]++;
        nWeight[node] += w;
        nTime[node] += cpu;
      }
    }
    return this.preorder(parent.length, nameOf, nSamples, nWeight, nTime, children, names, kinds, stacked);
  }

  /** The tree in pre-order, children by value (largest first, then name), with each node's start. */
  private preorder(count: number, nameOf: number[], nSamples: number[], nWeight: number[], nTime: number[], children: Map<number, Map<number, number>>, names: string[], kinds: number[], stacked: number): FlameData {
    const value = this.timed ? nTime : nWeight;
    const out: FlameData = {
      nodes: nSamples[0]! > 0 ? count : 0,
      name: new Int32Array(count),
      depth: new Uint16Array(count),
      end: new Uint32Array(count),
      x: new Float64Array(count),
      samples: new Float64Array(count),
      weight: new Float64Array(count),
      time: new Float64Array(count),
      names,
      nameKind: Uint8Array.from(kinds),
      timed: this.timed,
      maxDepth: 0,
      stacked,
    };
    if (nSamples[0] === 0) return out;
    // iterative DFS: a stack of (node, depth, start)
    const stack: [number, number, number][] = [[0, 0, 0]];
    const openAt: number[] = []; // the output index of each open node, by depth
    let k = 0;
    while (stack.length) {
      const [node, depth, x] = stack.pop()!;
      // close the subtrees at this depth and deeper
      while (openAt.length > depth) out.end[openAt.pop()!] = k;
      out.name[k] = nameOf[node]!;
      out.depth[k] = depth;
      out.x[k] = x;
      out.samples[k] = nSamples[node]!;
      out.weight[k] = nWeight[node]!;
      out.time[k] = nTime[node]!;
      if (depth > out.maxDepth) out.maxDepth = depth;
      openAt.push(k);
      k++;
      const m = children.get(node);
      if (!m) continue;
      const kids = [...m.values()].sort((a, b) => value[b]! - value[a]! || (names[nameOf[a]!]! < names[nameOf[b]!]! ? -1 : 1));
      let at = x;
      const starts = kids.map((c) => {
        const s = at;
        at += value[c]!;
        return s;
      });
      for (let i = kids.length - 1; i >= 0; i--) stack.push([kids[i]!, depth + 1, starts[i]!]);
    }
    while (openAt.length) out.end[openAt.pop()!] = k;
    return out;
  }
}

/** The buffers of the tree, to transfer them without a copy. */
export function flameBuffers(d: FlameData): ArrayBuffer[] {
  return [d.name, d.depth, d.end, d.x, d.samples, d.weight, d.time, d.nameKind].map((a) => a.buffer as ArrayBuffer);
}
