// The page's flame graphs, built in the decoding worker, one tree code for two weights:
// - sampled CPU (FlameSource): the `samples` rows (SampledProfile) of the selection aggregated into a call tree —
//   root → process (the sample's thread's, as analyzeSamples resolves it) → outermost frame → … → the
//   instruction pointer — whose stacks are the samples' (SampleFrames: the instruction pointer, then the walk's
//   callers). Each node sums the samples (events), their Count and, when the trace states the profile interval,
//   their CPU time, exactly as analyzeSamples does for the same rows.
// - wait time (WaitFlameSource; PerfView's Thread Time with ReadyThread): the cpuUsage rows with `waits` of the
//   selection (selectTable's rows, their waits clipped to the range, as `cpu --waits --from --to`) — root →
//   the waiting thread's process → the stack where it waited (its switch-in's cswitch stack), outermost first →
//   `READIED BY <process> (<pid>) tid <tid>` → the readying thread's stack (its ReadyThread row's), outermost
//   first: waitsToPprof's stacks read root first. Each node sums the waits, their blocked ticks and, when the
//   clock converts, their time; the totals are analyzeWaits's for the same rows.
// Frames are module!0xoffset (ImageMap: the image lifetime holding the address at the row's time; the address
// itself outside any image). A tree crosses to the page as typed arrays in pre-order (children by value,
// largest first) with each node's start in value units, plus one string per name.
import {
  ImageMap,
  resolveSelection,
  resolveStacks,
  selectTable,
  type Selection,
  type StreamResult,
  type Table,
} from '../../src/index.js';
import * as L from '../../src/generated/layout.js';
import { isKernelAddress, processOfSample } from '../../src/analysis/samples.js';
import { SampleInterval } from '../../src/analysis/sample-interval.js';
import { SampleFrames } from '../../src/analysis/sample-frames.js';
import { readiedByName, wholeWaitJoin, type WaitStackJoin, waitColumns } from '../../src/analysis/waits.js';
import type { ResolvedStacks } from '../../src/derive/stacks.js';
import { processMatches } from './search.js';

/** kinds of names */
export const NAME_ROOT = 0;
export const NAME_PROCESS = 1;
export const NAME_IN_IMAGE = 2;
export const NAME_NO_IMAGE = 3;
/** the `READIED BY …` frame between the stack where a thread waited and its readying thread's stack */
export const NAME_READIED = 4;
/** or'ed to NAME_IN_IMAGE / NAME_NO_IMAGE: a frame of the readying thread's stack */
export const NAME_READYING = 8;

export interface FlameData {
  /** what the tree weighs: sampled CPU, or the blocked time of switch-ins */
  of: 'samples' | 'waits';
  /** nodes in pre-order; node 0 is the root (every sample or wait kept) */
  nodes: number;
  /** per node: index into `names` */
  name: Int32Array;
  depth: Uint16Array;
  /** index past the node's subtree */
  end: Uint32Array;
  /** the node's start along the root's value (`time` when `timed`, else `weight`) */
  x: Float64Array;
  /** samples: SampledProfile events, their Count summed, their CPU time; waits: the waits, their blocked ticks, their blocked time — time in 100 ns units, 0 unless timed */
  samples: Float64Array;
  weight: Float64Array;
  time: Float64Array;
  names: string[];
  /** per name: NAME_ROOT, NAME_PROCESS, NAME_IN_IMAGE, NAME_NO_IMAGE, NAME_READIED (| NAME_READYING) */
  nameKind: Uint8Array;
  /** widths are time: samples, the trace states the profile interval; waits, the clock converts */
  timed: boolean;
  maxDepth: number;
  /** samples: kept samples with a stack; waits: kept waits with the stack where the thread waited */
  stacked: number;
  /** waits: kept waits with their readying thread's stack (0 for samples) */
  readyStacked: number;
}

/** A map of number → number maps, made on first use. */
function inner<K>(m: Map<K, Map<number, number>>, k: K): Map<number, number> {
  let v = m.get(k);
  if (!v) m.set(k, (v = new Map()));
  return v;
}

/** What a whole decode gives the trees: process image names, thread names, the image lifetimes. */
type Names = Pick<StreamResult, 'threads' | 'processes' | 'images'>;

/** The page's search box over a decode's processes and threads (lower case; '' keeps all): a process by id or image name, a thread by id or name. */
class SearchFilter {
  private readonly all: boolean;
  private readonly pids = new Map<number, boolean>();
  private readonly tids = new Set<number>();
  constructor(
    private readonly search: string,
    private readonly image: Map<number, string>,
    threadNames: Map<number, string[]>,
  ) {
    this.all = search === '';
    if (this.all) return;
    if (/^\d+$/.test(search)) this.tids.add(Number(search));
    for (const [t, names] of threadNames) if (names.some((n) => n.toLowerCase().includes(search))) this.tids.add(t);
  }
  /** does the row of thread `t` in process `p` (-1: unknown) match? */
  keeps(p: number, t: number): boolean {
    if (this.all || this.tids.has(t)) return true;
    let m = this.pids.get(p);
    if (m === undefined) this.pids.set(p, (m = p >= 0 && processMatches(this.search, p, this.image.get(p) ?? null)));
    return m;
  }
}

/** The names and image lookups a decode's trees share. */
class TreeContext {
  readonly map: ImageMap;
  readonly image = new Map<number, string>();
  readonly threadNames = new Map<number, string[]>();
  readonly imageName: string[];
  constructor(input: Names) {
    this.map = new ImageMap(input.images);
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
  filter(search: string): SearchFilter {
    return new SearchFilter(search, this.image, this.threadNames);
  }
  processName(p: number): string {
    return p < 0 ? 'unknown process' : `${this.image.get(p) ?? (p === 0 ? 'Idle' : 'pid')} (${p})`;
  }
}

/** A call tree being built: nodes by (parent, name) with their sums; each name (process, frame, marker) made once. */
class TreeBuilder {
  private readonly names: string[];
  private readonly kinds: number[];
  private readonly parent: number[] = [-1];
  private readonly nameOf: number[] = [0];
  private readonly nSamples: number[] = [0];
  private readonly nWeight: number[] = [0];
  private readonly nTime: number[] = [0];
  private readonly children = new Map<number, Map<number, number>>();
  private readonly procName = new Map<number, number>();
  private readonly rowName: Int32Array; // images row → module id
  private readonly moduleNames = new Map<string, number>();
  /** by side (0: the stack itself, NAME_READYING: a readying thread's): module id → offset → name, high word → low word → name */
  private readonly inImage = [new Map<number, Map<number, number>>(), new Map<number, Map<number, number>>()];
  private readonly noImage = [new Map<number, Map<number, number>>(), new Map<number, Map<number, number>>()];
  private readonly marked = new Map<string, number>();

  constructor(
    private readonly ctx: TreeContext,
    root: string,
  ) {
    this.names = [root];
    this.kinds = [NAME_ROOT];
    this.rowName = new Int32Array(ctx.imageName.length).fill(-1);
  }

  private newName(text: string, kind: number): number {
    this.names.push(text);
    this.kinds.push(kind);
    return this.names.length - 1;
  }

  /** The child of `node` named `name` (made on first use), with the row's sums added. */
  add(node: number, name: number, samples: number, weight: number, time: number): number {
    const m = inner(this.children, node);
    let c = m.get(name);
    if (c === undefined) {
      c = this.parent.length;
      this.parent.push(node);
      this.nameOf.push(name);
      this.nSamples.push(0);
      this.nWeight.push(0);
      this.nTime.push(0);
      m.set(name, c);
    }
    this.nSamples[c]! += samples;
    this.nWeight[c]! += weight;
    this.nTime[c]! += time;
    return c;
  }

  /** The root with the row's sums added, then its process's node. */
  process(p: number, samples: number, weight: number, time: number): number {
    let pn = this.procName.get(p);
    if (pn === undefined) this.procName.set(p, (pn = this.newName(this.ctx.processName(p), NAME_PROCESS)));
    this.nSamples[0]! += samples;
    this.nWeight[0]! += weight;
    this.nTime[0]! += time;
    return this.add(0, pn, samples, weight, time);
  }

  /** The name of the frame at address (hi, lo) of process `p` at time (tHi, tLo): module!0xoffset, or the address. */
  frame(p: number, pointerSize: number, hi: number, lo: number, tHi: number, tLo: number, side: 0 | typeof NAME_READYING): number {
    const s = side ? 1 : 0;
    const row = this.ctx.map.find(p, isKernelAddress(pointerSize, hi, lo), hi, lo, tHi, tLo);
    if (row < 0) {
      const m = inner(this.noImage[s]!, hi);
      let name = m.get(lo);
      if (name === undefined) m.set(lo, (name = this.newName(`0x${((BigInt(hi) << 32n) | BigInt(lo)).toString(16)}`, NAME_NO_IMAGE | side))); // once per address
      return name;
    }
    let mod = this.rowName[row]!;
    if (mod < 0) {
      const text = this.ctx.imageName[row]!;
      mod = this.moduleNames.get(text) ?? this.moduleNames.size;
      this.moduleNames.set(text, mod);
      this.rowName[row] = mod;
    }
    const offset = this.ctx.map.offset(row, hi, lo);
    const m = inner(this.inImage[s]!, mod);
    let name = m.get(offset);
    if (name === undefined) m.set(offset, (name = this.newName(`${this.ctx.imageName[row]}!0x${offset.toString(16)}`, NAME_IN_IMAGE | side))); // once per frame
    return name;
  }

  /** A named marker frame (once per text). */
  marker(text: string): number {
    let name = this.marked.get(text);
    if (name === undefined) this.marked.set(text, (name = this.newName(text, NAME_READIED)));
    return name;
  }

  /** The tree in pre-order, children by value (largest first, then name), with each node's start; `timeOf`: time from weight (else the sums of time). */
  finish(of: FlameData['of'], timed: boolean, stacked: number, readyStacked: number, timeOf?: (weight: number) => number): FlameData {
    const { nameOf, nSamples, nWeight, children, names } = this;
    const nTime = timeOf ? nWeight.map(timeOf) : this.nTime;
    const count = this.parent.length;
    const value = timed ? nTime : nWeight;
    const out: FlameData = {
      of,
      nodes: nSamples[0]! > 0 ? count : 0,
      name: new Int32Array(count),
      depth: new Uint16Array(count),
      end: new Uint32Array(count),
      x: new Float64Array(count),
      samples: new Float64Array(count),
      weight: new Float64Array(count),
      time: new Float64Array(count),
      names,
      nameKind: Uint8Array.from(this.kinds),
      timed,
      maxDepth: 0,
      stacked,
      readyStacked,
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

export interface FlameInput extends Pick<StreamResult, 'threads' | 'processes' | 'clock' | 'images'> {
  samples: Table<'samples'>;
  sampleIntervals: Table<'sampleIntervals'>;
  stackEvents: Table<'stackEvents'>;
  stackEventFrames: Table<'stackEventFrames'>;
}

/** The samples of a whole decode, resolved once (process, stack, interval); `build` makes a tree for a selection and search. */
export class FlameSource {
  readonly length: number;
  private readonly samples: Table<'samples'>;
  private readonly ctx: TreeContext;
  private readonly interval: SampleInterval | null;
  private readonly timed: boolean;
  private readonly frames: SampleFrames;
  private readonly pid: Int32Array;

  constructor(input: FlameInput) {
    const s = input.samples;
    this.samples = s;
    this.length = s.length;
    this.ctx = new TreeContext(input);
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
    const keep = this.ctx.filter(search);
    const tree = new TreeBuilder(this.ctx, 'all samples');
    let stacked = 0;
    for (let i = 0; i < s.length; i++) {
      const tHi = tsw[2 * i + 1]!;
      const tLo = tsw[2 * i]! >>> 0;
      const t = tid[i]!;
      if (sel && !(sel.timeIn(tHi, tsw[2 * i]!) && sel.thread(t, tHi, tsw[2 * i]!))) continue;
      const p = this.pid[i]!;
      if (!keep.keeps(p, t)) continue;
      const w = count[i]!;
      const cpu = this.timed ? w * this.interval!.at(tHi, tLo) : 0;
      const n = this.frames.of(i);
      if (this.frames.stackOfSample(i) >= 0) stacked++;
      const f = this.frames.words;
      let node = tree.process(p, 1, w, cpu);
      for (let k = n - 1; k >= 0; k--) node = tree.add(node, tree.frame(p, pointerSize[i]!, f[2 * k + 1]!, f[2 * k]!, tHi, tLo, 0), 1, w, cpu);
    }
    return tree.finish('samples', this.timed, stacked, 0);
  }
}

export interface WaitFlameInput extends Pick<StreamResult, 'threads' | 'processes' | 'clock' | 'images'> {
  cpuUsage: Table<'cpuUsage'>;
  cswitch: Table<'cswitch'>;
  readythread: Table<'readythread'>;
  stackEvents: Table<'stackEvents'>;
  stackEventFrames: Table<'stackEventFrames'>;
}

/** The switch-ins of a whole decode with their stacks joined once (WaitStackJoin); `build` makes the tree of the blocked time for a selection and search. */
export class WaitFlameSource {
  private readonly usage: Table<'cpuUsage'>;
  private readonly ctx: TreeContext;
  private readonly join: WaitStackJoin;
  private readonly stacks: ResolvedStacks;
  private readonly pointerSize: number;
  /** 100 ns units per tick, null when the clock does not convert */
  private readonly unitsPerTick: number | null;

  constructor(input: WaitFlameInput) {
    this.usage = input.cpuUsage;
    this.ctx = new TreeContext(input);
    ({ join: this.join, stacks: this.stacks } = wholeWaitJoin(input));
    this.pointerSize = input.stackEvents.length > 0 ? input.stackEvents.column('pointerSize')[0]! : 8;
    this.unitsPerTick = input.clock ? 1e7 / Number(input.clock.ticksPerSecond) : null;
  }

  /**
   * The tree of the waits of the cpuUsage rows `selection` keeps (selectTable: the switch-ins of its threads
   * whose run meets its range, their waits clipped to it) whose waiting thread or its process matches `search`
   * (the page's search box; '' keeps all).
   */
  build(selection: Selection | null, search = ''): FlameData {
    const u = selection?.active ? selectTable(this.usage, selection) : this.usage;
    const { wait, ready } = this.join.rows(u);
    const st = this.stacks.stacks;
    const fw = new Uint32Array(this.stacks.frames.address.buffer, this.stacks.frames.address.byteOffset, 2 * this.stacks.frames.length);
    const { valid, waitW, inW, rdW, pid, tid, rTid, rPid } = waitColumns(u);
    const keep = this.ctx.filter(search);
    const tree = new TreeBuilder(this.ctx, 'all waits');
    const ps = this.pointerSize;
    let stacked = 0;
    let readyStacked = 0;
    for (let i = 0; i < u.length; i++) {
      const v = valid[i]!;
      if (((v >>> L.CU_WAITS) & 1) === 0) continue;
      const p = (v >>> L.CU_NEW_PROCESS_ID) & 1 ? pid[i]! : -1;
      if (!keep.keeps(p, tid[i]!)) continue;
      const ticks = waitW[2 * i + 1]! * 4294967296 + (waitW[2 * i]! >>> 0);
      let node = tree.process(p, 1, ticks, 0);
      // where the thread waited (its switch-in's stack), outermost frame first
      const ws = wait[i]!;
      if (ws >= 0) {
        stacked++;
        const sp = st.processId[ws] === 0xffffffff ? 0 : st.processId[ws]!;
        for (let f = st.firstFrame[ws]! + st.frameCount[ws]! - 1; f >= st.firstFrame[ws]!; f--) node = tree.add(node, tree.frame(sp, ps, fw[2 * f + 1]!, fw[2 * f]!, inW[2 * i + 1]!, inW[2 * i]! >>> 0, 0), 1, ticks, 0);
      }
      // who readied it (waitsToPprof's marker frame), then its stack at the ready time, outermost frame first
      if ((v >>> L.CU_READYING_THREAD_ID) & 1) {
        const rp = (v >>> L.CU_READYING_PROCESS_ID) & 1 ? rPid[i]! : -1;
        node = tree.add(node, tree.marker(readiedByName(rp, this.ctx.image.get(rp), rTid[i]!)), 1, ticks, 0);
      }
      const rs = ready[i]!;
      if (rs >= 0) {
        readyStacked++;
        const sp = st.processId[rs] === 0xffffffff ? 0 : st.processId[rs]!;
        for (let f = st.firstFrame[rs]! + st.frameCount[rs]! - 1; f >= st.firstFrame[rs]!; f--) node = tree.add(node, tree.frame(sp, ps, fw[2 * f + 1]!, fw[2 * f]!, rdW[2 * i + 1]!, rdW[2 * i]! >>> 0, NAME_READYING), 1, ticks, 0);
      }
    }
    const k = this.unitsPerTick;
    return tree.finish('waits', k !== null, stacked, readyStacked, k === null ? undefined : (w) => w * k);
  }
}

/** The buffers of the tree, to transfer them without a copy. */
export function flameBuffers(d: FlameData): ArrayBuffer[] {
  return [d.name, d.depth, d.end, d.x, d.samples, d.weight, d.time, d.nameKind].map((a) => a.buffer as ArrayBuffer);
}
