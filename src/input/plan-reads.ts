// Reading a load plan (ordering.ts) into the engine's input, decode position after decode position: a
// chunk is loaded into its slot when the plan says so, a buffer read on its own goes to the single-buffer
// region, and the next chunk is read ahead into the other slot once the plan allows it. One walker for the
// one-thread decode (decode-steps.ts) and a partition's (parallel/partition.ts).
import { EtlError, hex } from '../errors.js';
import { SINGLE, type LoadPlan } from '../framing/ordering.js';
import { load, prefetch, type Steps } from '../decode/steps.js';

/** A read that returned fewer bytes than framing saw there. */
export function readFailed(position: number, wanted: number, got: number): EtlError {
  return new EtlError(
    'READ_FAILED',
    `could not read ${wanted} bytes at ${hex(position)}: got ${got} (did the file change while it was read?)`,
    position,
    `${wanted} bytes`,
    `${got} bytes`,
  );
}

export class PlanReader {
  /** what was read: loads of chunks, buffers read on their own, bytes */
  readonly reads = { loads: 0, singles: 0, bytes: 0 };
  /** file offset of the chunk in each slot */
  private readonly slotStart = [0, 0];
  private readonly singleBase: number;
  private nextLoad = 0;
  /** the last load read ahead */
  private prefetched = -1;
  /**
   * Read-ahead: an async runner reads the next chunk into its slot while others are decoded. Not when a
   * buffer is compressed: decompression may grow the engine's memory, which must not happen while a read
   * into it is in flight. Off too once the runner says it does not read ahead.
   */
  private readAhead: boolean;

  /**
   * `input`: the engine's input region (asked again for every read: it moves when the memory grows);
   * `fileOffset`/`size`: the buffer records the plan's decode order indexes.
   */
  constructor(
    private readonly plan: LoadPlan,
    private readonly input: () => Uint8Array,
    private readonly fileOffset: Float64Array,
    private readonly size: Uint32Array,
    anyCompressed: boolean,
  ) {
    this.singleBase = plan.slotsUsed * plan.window;
    this.readAhead = plan.loads > 1 && !anyCompressed;
  }

  /** Bytes of engine input the plan needs (both slots and the single-buffer region). */
  get inputBytes(): number {
    return this.singleBase + this.plan.largestSingle;
  }

  private slotView(k: number): Uint8Array {
    const plan = this.plan;
    const c = plan.loadChunk[k]!;
    const base = plan.loadSlot[k]! * plan.window;
    return this.input().subarray(base, base + (plan.chunkEnd[c]! - plan.chunkStart[c]!));
  }

  /**
   * The place in the engine's input of buffer `r` at decode position `i` when nothing has to be read for it
   * first, else -1 (then `place`). No generator per buffer where no read is due: that is most of them.
   */
  at(i: number, r: number): number {
    const plan = this.plan;
    const s = plan.slot[i]!;
    if (s === SINGLE || (this.nextLoad < plan.loads && plan.loadAt[this.nextLoad] === i)) return -1;
    return s * plan.window + this.fileOffset[r]! - this.slotStart[s]!;
  }

  /** The place in the engine's input of buffer `r`, at decode position `i`: its chunk loaded first, or itself read alone. */
  *place(i: number, r: number): Steps<number> {
    const plan = this.plan;
    const reads = this.reads;
    if (this.nextLoad < plan.loads && plan.loadAt[this.nextLoad] === i) {
      const c = plan.loadChunk[this.nextLoad]!;
      const target = this.slotView(this.nextLoad);
      const got = yield* load(plan.chunkStart[c]!, target);
      if (got < target.length) throw readFailed(plan.chunkStart[c]!, target.length, got);
      this.slotStart[plan.loadSlot[this.nextLoad]!] = plan.chunkStart[c]!;
      reads.loads++;
      reads.bytes += got;
      this.nextLoad++;
    }
    const s = plan.slot[i]!;
    const at = this.fileOffset[r]!;
    if (s !== SINGLE) return s * plan.window + at - this.slotStart[s]!;
    const target = this.input().subarray(this.singleBase, this.singleBase + this.size[r]!);
    const got = yield* load(at, target);
    if (got < target.length) throw readFailed(at, target.length, got);
    reads.singles++;
    reads.bytes += got;
    return this.singleBase;
  }

  /** Whether, after decode position `i`, the next chunk is to be read ahead (then `ahead`). */
  aheadDue(i: number): boolean {
    const plan = this.plan;
    const k = this.nextLoad;
    return this.readAhead && k < plan.loads && this.prefetched !== k && plan.loadAfter[k]! <= i;
  }

  /** Starts reading the next chunk ahead (when `aheadDue`). */
  *ahead(): Steps<void> {
    const k = (this.prefetched = this.nextLoad);
    this.readAhead = yield* prefetch(this.plan.chunkStart[this.plan.loadChunk[k]!]!, this.slotView(k)); // false: the runner does not read ahead
  }
}
