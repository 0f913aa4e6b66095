// Stacks (docs/format.md §H.2, docs/design/stacks.md): the decoded stackEvents / stackEventFrames rows of a
// whole decode resolved into one id per distinct stack, its frames in a child table, and the stack id of
// each cswitch, readythread and samples row that has one.
//
//   1. Stack-key references (StackKeyKernel/StackKeyUser) take the frames of the first definition of their
//      key (KeyDelete or KeyRundown) at or after them in time; references whose key is never defined are
//      counted, never resolved.
//   2. A StackWalk, or a resolved reference, is one half of a stack: kernel or user (a reference by its
//      opcode; a StackWalk by its outermost frame, as TraceEvent's TraceLog). The halves of one event —
//      same EventTimeStamp and StackThread — are joined: kernel frames first, then the user frames.
//   3. Distinct stacks get ids 0, 1, … in order of first use: the frames, and the process when the stack has
//      user frames (user addresses mean something only in their process; a kernel-only stack is shared).
//   4. An event's stack is attached to the row with its timestamp and thread: samples (threadId), cswitch
//      (newThreadId: the stack is walked on the thread switched in), readythread (the readying thread is not
//      in the row: the processor of the stack's kernel half, logged with its event). A stack that matches no
//      row, or a row claimed by a second stack, is counted, never guessed. StackAttacher.attach takes the rows
//      in order, whole tables or streamed chunks, and fillStackIds writes the ids into the rows' nullable
//      stackId column: a whole decode's (TableCollector) and a streamed output's (stack-pass.ts) alike.
//
// Memory is proportional to the stack events and the distinct stacks; the hot loops read 64-bit values as
// int32 words (no BigInt per record) and keep their state in typed arrays.
import { int32Words } from '../tables/schema.js';
import type { Table } from '../tables/table.js';

/** A growable int32 vector. */
class Ints {
  a = new Int32Array(64);
  n = 0;
  push(v: number): void {
    if (this.n === this.a.length) {
      const b = new Int32Array(this.a.length * 2);
      b.set(this.a);
      this.a = b;
    }
    this.a[this.n++] = v;
  }
  get view(): Int32Array {
    return this.a.subarray(0, this.n);
  }
}

/** Open-addressing map from a key of three int32 words to an int32 value (get: -1 when absent). */
export class WordMap {
  private keys: Int32Array;
  private vals: Int32Array;
  private full: Uint8Array;
  private used = 0;
  constructor(capacity = 1024) {
    let c = 16;
    while (c < capacity * 2) c <<= 1;
    this.keys = new Int32Array(c * 3);
    this.vals = new Int32Array(c);
    this.full = new Uint8Array(c);
  }
  private slot(a: number, b: number, c: number): number {
    const mask = this.vals.length - 1;
    let h = Math.imul(a ^ Math.imul(b, 0x9e3779b1) ^ Math.imul(c, 0x85ebca6b), 0xc2b2ae35);
    h ^= h >>> 15;
    let i = h & mask;
    for (;;) {
      if (this.full[i] === 0) return i;
      const k = 3 * i;
      if (this.keys[k] === a && this.keys[k + 1] === b && this.keys[k + 2] === c) return i;
      i = (i + 1) & mask;
    }
  }
  /** keys held */
  get size(): number {
    return this.used;
  }
  get(a: number, b: number, c: number): number {
    const i = this.slot(a, b, c);
    return this.full[i] === 0 ? -1 : this.vals[i]!;
  }
  set(a: number, b: number, c: number, v: number): void {
    let i = this.slot(a, b, c);
    if (this.full[i] === 0) {
      if (2 * (this.used + 1) > this.vals.length) {
        this.grow();
        i = this.slot(a, b, c);
      }
      this.used++;
      this.full[i] = 1;
      this.keys[3 * i] = a;
      this.keys[3 * i + 1] = b;
      this.keys[3 * i + 2] = c;
    }
    this.vals[i] = v;
  }
  private grow(): void {
    const keys = this.keys;
    const vals = this.vals;
    const full = this.full;
    this.keys = new Int32Array(keys.length * 2);
    this.vals = new Int32Array(vals.length * 2);
    this.full = new Uint8Array(full.length * 2);
    for (let i = 0; i < vals.length; i++) {
      if (full[i] === 0) continue;
      const j = this.slot(keys[3 * i]!, keys[3 * i + 1]!, keys[3 * i + 2]!);
      this.full[j] = 1;
      this.keys.set(keys.subarray(3 * i, 3 * i + 3), 3 * j);
      this.vals[j] = vals[i]!;
    }
  }
}

/** The int32 words of an int64 column (element 2i the low word of row i, 2i + 1 the high one). */

const OPCODE_STACK = 0x20;
const OPCODE_KEY_DELETE = 0x23;
const OPCODE_KEY_RUNDOWN = 0x24;
const OPCODE_KEY_KERNEL = 0x25;
const OPCODE_KEY_USER = 0x26;

/**
 * Kernel space (docs/format.md §G.4, §H.2): the upper half of the pointer size's address space — x86 from
 * 0x80000000, x64 with bit 63 set (Windows' kernel addresses are 0xFFFF8…; TraceEvent's TraceLog test, the top
 * 16 bits set, differs only on non-canonical addresses). The address as its two 32-bit words, signed or not.
 */
export function isKernelAddress(pointerSize: number, hi: number, lo: number): boolean {
  return pointerSize === 4 ? (hi | 0) === 0 && lo >>> 0 >= 0x80000000 : hi >>> 0 >= 0x80000000;
}

export interface StacksInput {
  stackEvents: Table<'stackEvents'>;
  stackEventFrames: Table<'stackEventFrames'>;
  cswitch?: Table<'cswitch'>;
  readythread?: Table<'readythread'>;
  samples?: Table<'samples'>;
}

/** Where an event's stack was attached: 0 none, 1 cswitch, 2 readythread, 3 samples. */
export const STACK_ATTACHED_TABLES = [null, 'cswitch', 'readythread', 'samples'] as const;

export interface ResolvedStacks {
  /** one entry per distinct stack: stack id = index */
  stacks: {
    length: number;
    /** the process of its user frames; 0xFFFFFFFF for a kernel-only stack (shared by every process) */
    processId: Uint32Array;
    frameCount: Uint32Array;
    /** its first frames are kernel frames (the rest are user frames) */
    kernelFrameCount: Uint32Array;
    /** index of its first row in `frames` */
    firstFrame: Uint32Array;
  };
  /** frames of the distinct stacks, stack by stack, innermost first */
  frames: { length: number; stackId: Uint32Array; depth: Uint32Array; address: BigUint64Array };
  /** one entry per stacked event (distinct EventTimeStamp and StackThread with a resolved half), in time order */
  events: {
    length: number;
    eventTimestamp: BigInt64Array;
    threadId: Uint32Array;
    processId: Uint32Array;
    stackId: Uint32Array;
    /** STACK_ATTACHED_TABLES index of the row it was attached to (0: none) */
    table: Uint8Array;
    /** that row's index, -1 when none */
    row: Int32Array;
  };
  /** the stack id of each row of the tables given (-1: none), the nullable stackId the rows get */
  stackIdOf: { cswitch: Int32Array; readythread: Int32Array; samples: Int32Array };
  counts: {
    /** stackEvents rows: StackWalk, key references, key definitions */
    walks: number;
    references: number;
    definitions: number;
    /** references whose key has no later definition (not resolved) */
    unresolvedReferences: number;
    /** StackWalk rows without frames (nothing to join) */
    emptyWalks: number;
    /** a second kernel (or user) half for an event that already has one (the first is kept) */
    duplicateHalves: number;
    /** stacked events: with both halves, kernel only, user only */
    joined: number;
    kernelOnly: number;
    userOnly: number;
    /** stacked events attached to a row, by table, and those that match no row */
    attached: { cswitch: number; readythread: number; samples: number };
    unmatched: number;
    /** rows that a second stacked event also matched (left with the first) */
    claimedTwice: number;
  };
}

/** Resolves the stacks of a whole decode (see the file comment). */
export function resolveStacks(input: StacksInput): ResolvedStacks {
  const attacher = new StackAttacher(input.stackEvents, input.stackEventFrames);
  // whole tables are met in this order: a stack matched by rows of two tables goes to the first
  const samples = input.samples ? attacher.attach('samples', input.samples) : new Int32Array(0);
  const cswitch = input.cswitch ? attacher.attach('cswitch', input.cswitch) : new Int32Array(0);
  const readythread = input.readythread ? attacher.attach('readythread', input.readythread) : new Int32Array(0);
  return attacher.result({ cswitch, readythread, samples });
}

/** The tables whose rows get a stack id. */
export type StackedTableName = 'cswitch' | 'readythread' | 'samples';

/**
 * Steps 1–3 over the stack tables (at construction), then step 4 for rows met in order: `attach` takes a
 * whole table or one chunk of its rows after another (a streamed decode), so a whole decode and a stream
 * attach by the same code. Rows are met table by table in the order given; a stack matched by a second
 * row — of its table or another — stays with the first (counted in claimedTwice).
 */
export class StackAttacher {
  private readonly ets: Int32Array;
  private readonly tid: Uint32Array;
  private readonly pid: Uint32Array;
  private readonly counts: ResolvedStacks['counts'];
  private readonly groupOf = new WordMap();
  /** (EventTimeStamp, processor of the kernel half) → group, -2 when several */
  private readonly byCpu = new WordMap();
  private readonly gRow: Int32Array;
  private readonly gStack: Int32Array;
  private readonly gTable: Uint8Array;
  private readonly gAttachedRow: Int32Array;
  private readonly met = { cswitch: 0, readythread: 0, samples: 0 };
  private readonly stacks: ResolvedStacks['stacks'];
  private readonly frames: ResolvedStacks['frames'];

  constructor(ev: Table<'stackEvents'>, fr: Table<'stackEventFrames'>) {
    const n = ev.length;
    const ts = int32Words(ev.column('timestamp'));
    const ets = (this.ets = int32Words(ev.column('eventTimestamp')));
    const opcode = ev.column('opcode');
    const cpu = ev.column('cpu');
    const tid = (this.tid = ev.column('threadId'));
    const pid = (this.pid = ev.column('processId'));
    const key = int32Words(ev.column('stackKey'));
    const frameCount = ev.column('frameCount');
    const pointerSize = ev.column('pointerSize');
    const addr = int32Words(fr.column('address'));

    // frames of row i: [first[i], first[i] + frameCount[i]) of stackEventFrames
    const first = new Int32Array(n);
    for (let i = 0, at = 0; i < n; i++) {
      first[i] = at;
      at += frameCount[i]!;
    }
    // time order of the stack events (ties: decode order)
    const order = new Int32Array(n);
    for (let i = 0; i < n; i++) order[i] = i;
    order.sort((a, b) => ts[2 * a + 1]! - ts[2 * b + 1]! || (ts[2 * a]! >>> 0) - (ts[2 * b]! >>> 0) || a - b);

    const counts: ResolvedStacks['counts'] = (this.counts = {
      walks: 0, references: 0, definitions: 0, unresolvedReferences: 0, emptyWalks: 0, duplicateHalves: 0, joined: 0, kernelOnly: 0, userOnly: 0,
      attached: { cswitch: 0, readythread: 0, samples: 0 }, unmatched: 0, claimedTwice: 0,
    });

    // 1. references → the row of their definition (-1: none yet)
    const definition = new Int32Array(n).fill(-1);
    const pendingHead = new WordMap(); // key → first pending reference row
    const pendingNext = new Int32Array(n).fill(-1);
    for (let k = 0; k < n; k++) {
      const i = order[k]!;
      const op = opcode[i]!;
      if (op === OPCODE_KEY_KERNEL || op === OPCODE_KEY_USER) {
        counts.references++;
        pendingNext[i] = pendingHead.get(key[2 * i]!, key[2 * i + 1]!, 0);
        pendingHead.set(key[2 * i]!, key[2 * i + 1]!, 0, i);
      } else if (op === OPCODE_KEY_DELETE || op === OPCODE_KEY_RUNDOWN) {
        counts.definitions++;
        for (let r = pendingHead.get(key[2 * i]!, key[2 * i + 1]!, 0); r >= 0; r = pendingNext[r]!) definition[r] = i;
        pendingHead.set(key[2 * i]!, key[2 * i + 1]!, 0, -1);
      } else if (op === OPCODE_STACK) counts.walks++;
      else counts.definitions++; // KeyCreate: a definition that names no earlier reference
    }

    // 2. halves grouped by (EventTimeStamp, StackThread), in time order of their first half
    const groupOf = this.groupOf;
    const gKernel = new Ints(); // row whose frames are the kernel half (-1: none)
    const gUser = new Ints();
    const gRow = new Ints(); // the first row of the group (its EventTimeStamp, thread, process)
    const gCpu = new Ints(); // processor of the kernel half's stack event (-1: none)
    for (let k = 0; k < n; k++) {
      const i = order[k]!;
      const op = opcode[i]!;
      let src: number;
      let kernel: boolean;
      if (op === OPCODE_STACK) {
        const c = frameCount[i]!;
        if (c === 0) {
          counts.emptyWalks++;
          continue;
        }
        const last = first[i]! + c - 1;
        src = i;
        kernel = isKernelAddress(pointerSize[i]!, addr[2 * last + 1]!, addr[2 * last]!);
      } else if (op === OPCODE_KEY_KERNEL || op === OPCODE_KEY_USER) {
        src = definition[i]!;
        if (src < 0) {
          counts.unresolvedReferences++;
          continue;
        }
        kernel = op === OPCODE_KEY_KERNEL;
      } else continue;
      let g = groupOf.get(ets[2 * i]!, ets[2 * i + 1]!, tid[i]! | 0);
      if (g < 0) {
        g = gRow.n;
        groupOf.set(ets[2 * i]!, ets[2 * i + 1]!, tid[i]! | 0, g);
        gKernel.push(-1);
        gUser.push(-1);
        gRow.push(i);
        gCpu.push(-1);
      }
      const half = kernel ? gKernel : gUser;
      if (half.a[g]! >= 0) {
        counts.duplicateHalves++;
        continue;
      }
      half.a[g] = src;
      if (kernel) gCpu.a[g] = cpu[i]!;
    }

    // 3. distinct stacks
    const G = gRow.n;
    const sPid = new Ints();
    const sCount = new Ints();
    const sKernel = new Ints();
    const sFirst = new Ints();
    const fLo = new Ints();
    const fHi = new Ints();
    const fStack = new Ints();
    const fDepth = new Ints();
    let table: Int32Array = new Int32Array(1024).fill(-1); // hash → stack id
    const gStack = (this.gStack = new Int32Array(G));
    const frameWord = (row: number, j: number, hi: number): number => addr[2 * (first[row]! + j) + hi]!;
    for (let g = 0; g < G; g++) {
      const kr = gKernel.a[g]!;
      const ur = gUser.a[g]!;
      const kn = kr >= 0 ? frameCount[kr]! : 0;
      const un = ur >= 0 ? frameCount[ur]! : 0;
      if (kr >= 0 && ur >= 0) counts.joined++;
      else if (kr >= 0) counts.kernelOnly++;
      else counts.userOnly++;
      const p = un > 0 ? pid[gRow.a[g]!]! | 0 : -1;
      let h = Math.imul(p ^ (kn << 16) ^ un, 0x9e3779b1);
      for (let j = 0; j < kn + un; j++) {
        const row = j < kn ? kr : ur;
        const jj = j < kn ? j : j - kn;
        h = Math.imul(h ^ frameWord(row, jj, 0), 0x85ebca6b) ^ Math.imul(frameWord(row, jj, 1), 0xc2b2ae35);
        h ^= h >>> 13;
      }
      if (2 * sCount.n >= table.length) {
        table = rehash(table.length * 2, sCount.n, sFirst, sCount, sKernel, sPid, fLo, fHi);
      }
      const mask = table.length - 1;
      let slot = (h ^ (h >>> 16)) & mask;
      let id = -1;
      for (;;) {
        const s = table[slot]!;
        if (s < 0) break;
        if (sCount.a[s] === kn + un && sKernel.a[s] === kn && sPid.a[s] === p) {
          const f0 = sFirst.a[s]!;
          let same = true;
          for (let j = 0; j < kn + un && same; j++) {
            const row = j < kn ? kr : ur;
            const jj = j < kn ? j : j - kn;
            same = fLo.a[f0 + j] === frameWord(row, jj, 0) && fHi.a[f0 + j] === frameWord(row, jj, 1);
          }
          if (same) {
            id = s;
            break;
          }
        }
        slot = (slot + 1) & mask;
      }
      if (id < 0) {
        id = sCount.n;
        table[slot] = id;
        sPid.push(p);
        sCount.push(kn + un);
        sKernel.push(kn);
        sFirst.push(fLo.n);
        for (let j = 0; j < kn + un; j++) {
          const row = j < kn ? kr : ur;
          const jj = j < kn ? j : j - kn;
          fLo.push(frameWord(row, jj, 0));
          fHi.push(frameWord(row, jj, 1));
          fStack.push(id);
          fDepth.push(j);
        }
      }
      gStack[g] = id;
    }
    this.gRow = new Int32Array(gRow.view);
    this.gTable = new Uint8Array(G);
    this.gAttachedRow = new Int32Array(G).fill(-1);
    for (let g = 0; g < G; g++) {
      const i = gRow.a[g]!;
      const c = gCpu.a[g]!;
      if (c >= 0) this.byCpu.set(ets[2 * i]!, ets[2 * i + 1]!, c, this.byCpu.get(ets[2 * i]!, ets[2 * i + 1]!, c) === -1 ? g : -2);
    }
    const F = fLo.n;
    const address = new BigUint64Array(F);
    const aw = new Int32Array(address.buffer);
    for (let f = 0; f < F; f++) {
      aw[2 * f] = fLo.a[f]!;
      aw[2 * f + 1] = fHi.a[f]!;
    }
    this.stacks = {
      length: sCount.n,
      processId: new Uint32Array(sPid.view),
      frameCount: new Uint32Array(sCount.view),
      kernelFrameCount: new Uint32Array(sKernel.view),
      firstFrame: new Uint32Array(sFirst.view),
    };
    this.frames = { length: F, stackId: new Uint32Array(fStack.view), depth: new Uint32Array(fDepth.view), address };
  }

  /** No stack was resolved: no row can get one. */
  get empty(): boolean {
    return this.gStack.length === 0;
  }

  /**
   * 4. The stack id of each row of `t` (-1: none), rows met after those of the earlier calls for the same
   * table; the stacks they match are theirs from now on.
   */
  attach(name: StackedTableName, t: Table<StackedTableName>): Int32Array {
    const rows = t.length;
    const out = new Int32Array(rows).fill(-1);
    const base = this.met[name];
    this.met[name] += rows;
    if (this.gStack.length === 0) return out;
    const ts = int32Words(t.column('timestamp'));
    const tableIndex = STACK_ATTACHED_TABLES.indexOf(name);
    const groupOf = this.groupOf;
    let thread: Uint32Array | null = null;
    let valid: Uint32Array | null = null;
    let newBit = 0;
    let cpu: Uint16Array | null = null;
    if (name === 'samples') thread = (t as Table<'samples'>).column('threadId');
    else if (name === 'cswitch') {
      const cs = t as Table<'cswitch'>;
      thread = cs.column('newThreadId');
      valid = cs.column('valid');
      newBit = cs.specs.findIndex((s) => s.name === 'newThreadId');
    } else cpu = (t as Table<'readythread'>).column('cpu');
    for (let r = 0; r < rows; r++) {
      let g: number;
      if (cpu !== null) g = this.byCpu.get(ts[2 * r]!, ts[2 * r + 1]!, cpu[r]!);
      else if (valid !== null && ((valid[r]! >>> newBit) & 1) === 0) continue;
      else g = groupOf.get(ts[2 * r]!, ts[2 * r + 1]!, thread![r]! | 0);
      if (g < 0) continue;
      if (this.gTable[g] !== 0) {
        this.counts.claimedTwice++;
        continue;
      }
      this.gTable[g] = tableIndex;
      this.gAttachedRow[g] = base + r;
      out[r] = this.gStack[g]!;
    }
    return out;
  }

  /** The resolution, with the stack ids the rows met got (`stackIdOf`). */
  result(stackIdOf: ResolvedStacks['stackIdOf']): ResolvedStacks {
    const counts = this.counts;
    const G = this.gStack.length;
    counts.attached = { cswitch: 0, readythread: 0, samples: 0 };
    counts.unmatched = 0;
    for (let g = 0; g < G; g++) {
      const t = this.gTable[g]!;
      if (t === 1) counts.attached.cswitch++;
      else if (t === 2) counts.attached.readythread++;
      else if (t === 3) counts.attached.samples++;
      else counts.unmatched++;
    }
    const eventTimestamp = new BigInt64Array(G);
    const ew = new Int32Array(eventTimestamp.buffer);
    const eTid = new Uint32Array(G);
    const ePid = new Uint32Array(G);
    for (let g = 0; g < G; g++) {
      const i = this.gRow[g]!;
      ew[2 * g] = this.ets[2 * i]!;
      ew[2 * g + 1] = this.ets[2 * i + 1]!;
      eTid[g] = this.tid[i]!;
      ePid[g] = this.pid[i]!;
    }
    return {
      stacks: this.stacks,
      frames: this.frames,
      events: { length: G, eventTimestamp, threadId: eTid, processId: ePid, stackId: new Uint32Array(this.gStack), table: new Uint8Array(this.gTable), row: new Int32Array(this.gAttachedRow) },
      stackIdOf,
      counts: { ...counts, attached: { ...counts.attached } },
    };
  }
}

/** A hash table of `size` slots over the stacks so far (same hash as above). */
function rehash(size: number, count: number, sFirst: Ints, sCount: Ints, sKernel: Ints, sPid: Ints, fLo: Ints, fHi: Ints): Int32Array {
  const table = new Int32Array(size).fill(-1);
  const mask = size - 1;
  for (let s = 0; s < count; s++) {
    const kn = sKernel.a[s]!;
    const total = sCount.a[s]!;
    let h = Math.imul(sPid.a[s]! ^ (kn << 16) ^ (total - kn), 0x9e3779b1);
    const f0 = sFirst.a[s]!;
    for (let j = 0; j < total; j++) {
      h = Math.imul(h ^ fLo.a[f0 + j]!, 0x85ebca6b) ^ Math.imul(fHi.a[f0 + j]!, 0xc2b2ae35);
      h ^= h >>> 13;
    }
    let slot = (h ^ (h >>> 16)) & mask;
    while (table[slot]! >= 0) slot = (slot + 1) & mask;
    table[slot] = s;
  }
  return table;
}

// The nullable stackId column of cswitch, readythread and samples rows: the engines leave it null, and it is
// filled after the decode by the attachment above — over whole tables for a whole decode (TableCollector), or
// chunk by chunk after a first pass over the stack tables (src/derive/stack-pass.ts: convert, dump, the
// page's downloads). One typed-array store per row, no allocation per row.

/** The stacked tables, in the order a whole decode meets their rows. */
export const STACKED_TABLES = ['samples', 'cswitch', 'readythread'] as const satisfies readonly StackedTableName[];

/** Rows of the stacked tables: a whole decode's tables, or one streamed chunk of each. */
export type StackedRows = { readonly [T in StackedTableName]?: Table<T> };

/**
 * Writes the stack ids of the rows of `rows` (met after those of the earlier calls) into their stackId
 * column, setting its valid bit where a stack was attached and clearing it elsewhere.
 */
export function fillStackIds(attacher: StackAttacher, rows: StackedRows): void {
  for (const name of STACKED_TABLES) {
    const t = rows[name];
    if (!t || t.length === 0) continue;
    writeStackIds(t, attacher.attach(name, t));
  }
}

/** Fills the stackId column of a whole decode's tables when it has stack events; returns the attacher (null: none). */
export function attachWholeStacks(tables: StackedRows & { stackEvents: Table<'stackEvents'>; stackEventFrames: Table<'stackEventFrames'> }): StackAttacher | null {
  if (tables.stackEvents.length === 0) return null;
  const attacher = new StackAttacher(tables.stackEvents, tables.stackEventFrames);
  if (!attacher.empty) fillStackIds(attacher, tables);
  return attacher;
}

function writeStackIds(t: Table<StackedTableName>, ids: Int32Array): void {
  const bit = t.specs.findIndex((s) => s.name === 'stackId');
  const stackId = t.columns[bit] as Uint32Array;
  const valid = t.columns[t.specs.findIndex((s) => s.name === 'valid')] as Uint32Array;
  const set = 1 << bit;
  for (let r = 0; r < ids.length; r++) {
    const id = ids[r]!;
    if (id >= 0) {
      stackId[r] = id;
      valid[r] = valid[r]! | set;
    } else {
      stackId[r] = 0;
      valid[r] = valid[r]! & ~set;
    }
  }
}
