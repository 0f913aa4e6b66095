// The stacks and stackFrames tables (registry, derived from a whole trace's stack events; docs/design/stacks.md):
// the distinct stacks of StackAttacher / resolveStacks and their frames, each frame named through the image
// lifetimes (ImageMap) at the stack's first use — the time of the first event with that stack — in the
// stack's process (kernel-space addresses among the kernel's images first). StackFrameImages is that naming,
// the one `cpu --waits` names its frames with too.
import { ImageMap } from './lifetimes.js';
import * as R from '../generated/registry.js';
import { allocColumn, TABLE_COLUMNS, type TableName, type TypedColumn } from '../tables/schema.js';
import { Table } from '../tables/table.js';
import { isKernelAddress, resolveStacks, type ResolvedStacks } from './stacks.js';

/** The int32 words of an int64 column (element 2i the low word of row i, 2i + 1 the high one). */
function words(col: BigInt64Array | BigUint64Array): Int32Array {
  return new Int32Array(col.buffer, col.byteOffset, col.length * 2);
}

/** The image lifetime (row of `images`, -1: none) and offset in it of every frame of the distinct stacks. */
export class StackFrameImages {
  /** per frame of `frames`: its images row, -1 outside any image */
  readonly row: Int32Array;
  /** per frame: address - imageBase of that row (below the image's size: exact) */
  readonly offset: Float64Array;

  constructor(
    st: Pick<ResolvedStacks, 'stacks' | 'frames' | 'events'>,
    readonly images: Table<'images'>,
    /** the trace's pointer size (4 or 8): which addresses are kernel space */
    pointerSize: number,
  ) {
    const map = new ImageMap(images);
    const addr = words(st.frames.address);
    const S = st.stacks.length;
    // per stack: the time of its first event (words), where its images are looked up
    const firstHi = new Int32Array(S).fill(0x7fffffff);
    const firstLo = new Int32Array(S).fill(-1);
    const ev = st.events;
    const t = words(ev.eventTimestamp);
    for (let i = 0; i < ev.length; i++) {
      const s = ev.stackId[i]!;
      const hi = t[2 * i + 1]!;
      const lo = t[2 * i]!;
      if (hi < firstHi[s]! || (hi === firstHi[s] && lo >>> 0 < firstLo[s]! >>> 0)) {
        firstHi[s] = hi;
        firstLo[s] = lo;
      }
    }
    const F = st.frames.length;
    this.row = new Int32Array(F).fill(-1);
    this.offset = new Float64Array(F);
    const { stacks } = st;
    for (let s = 0; s < S; s++) {
      const pid = stacks.processId[s] === 0xffffffff ? 0 : stacks.processId[s]!;
      for (let f = stacks.firstFrame[s]!, end = f + stacks.frameCount[s]!; f < end; f++) {
        const hi = addr[2 * f + 1]! >>> 0;
        const lo = addr[2 * f]! >>> 0;
        const row = map.find(pid, isKernelAddress(pointerSize, hi, lo), hi, lo, firstHi[s]!, firstLo[s]! >>> 0);
        this.row[f] = row;
        if (row >= 0) this.offset[f] = map.offset(row, hi, lo);
      }
    }
  }
}

/** The pointer size of a trace's stack events (8 when it has none). */
export function stackPointerSize(stackEvents: Table<'stackEvents'>): number {
  return stackEvents.length > 0 ? stackEvents.column('pointerSize')[0]! : 8;
}

function table<T extends TableName>(name: T, length: number): { columns: TypedColumn[]; make: () => Table<T> } {
  const columns = TABLE_COLUMNS[name].map((c) => allocColumn(c.type, length) as TypedColumn);
  return { columns, make: () => new Table(name, { length, columns }) };
}

/** The stacks and stackFrames tables of resolved stacks, frames named through `images`. */
export function stackTables(
  st: Pick<ResolvedStacks, 'stacks' | 'frames' | 'events'>,
  images: Table<'images'>,
  pointerSize: number,
): { stacks: Table<'stacks'>; stackFrames: Table<'stackFrames'> } {
  const S = st.stacks.length;
  const s = table('stacks', S);
  const [sId, sPid, sCount, sKernel, sValid] = s.columns as [Uint32Array, Uint32Array, Uint32Array, Uint32Array, Uint32Array];
  const pidBit = 1 << R.ST_PROCESS_ID;
  const always = R.ST_ALWAYS_VALID;
  for (let i = 0; i < S; i++) {
    sId[i] = i;
    const p = st.stacks.processId[i]!;
    sCount[i] = st.stacks.frameCount[i]!;
    sKernel[i] = st.stacks.kernelFrameCount[i]!;
    if (p !== 0xffffffff) {
      sPid[i] = p;
      sValid[i] = always | pidBit;
    } else sValid[i] = always;
  }
  const F = st.frames.length;
  const named = new StackFrameImages(st, images, pointerSize);
  const f = table('stackFrames', F);
  const [fId, fDepth, fAddr, fName, fOffset, fValid] = f.columns as [Uint32Array, Uint16Array, BigUint64Array, string[], BigUint64Array, Uint32Array];
  fId.set(st.frames.stackId);
  fDepth.set(st.frames.depth);
  fAddr.set(st.frames.address);
  const ow = words(fOffset);
  const nameCol = images.column('name');
  const fileCol = images.column('fileName');
  const NAME = 1 << R.SK_IMAGE_NAME;
  const OFFSET = 1 << R.SK_IMAGE_OFFSET;
  const base = R.SK_ALWAYS_VALID;
  for (let i = 0; i < F; i++) {
    const row = named.row[i]!;
    if (row < 0) {
      fValid[i] = base;
      continue;
    }
    const o = named.offset[i]!;
    ow[2 * i] = o % 2 ** 32;
    ow[2 * i + 1] = Math.floor(o / 2 ** 32);
    const name = nameCol[row] || fileCol[row] || '';
    fName[i] = name;
    fValid[i] = base | OFFSET | (name ? NAME : 0);
  }
  return { stacks: s.make(), stackFrames: f.make() };
}

/** The stacks and stackFrames tables of a whole decode (empty when it has no stack events). */
export function stacksOfTrace(r: { stackEvents: Table<'stackEvents'>; stackEventFrames: Table<'stackEventFrames'>; images: Table<'images'> }): {
  stacks: Table<'stacks'>;
  stackFrames: Table<'stackFrames'>;
} {
  return stackTables(resolveStacks(r), r.images, stackPointerSize(r.stackEvents));
}
