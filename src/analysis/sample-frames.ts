// The frames of SampledProfile rows, leaf first, and the names of frames without symbols — for the outputs
// that show samples as call stacks: pprof (output/pprof.ts), the Perfetto timeline (output/perfetto-samples.ts),
// the page's flame graph (web/src/flame-data.ts).
//
// A sample's frames: its instruction pointer, then — when the trace has stacks (resolveStacks,
// src/derive/stacks.ts) and the sample has one — the stack's callers: its frames after Stack1 when Stack1 is
// the instruction pointer (all of them when it is not). A frame's name is module!0xoffset in the image
// lifetime holding it (ImageMap), the address itself (0x…) outside any image.
//
// Per sample: no allocation (the frame buffer grows to the deepest stack once), no BigInt, no closure.
import type { Table } from '../tables/table.js';
import { resolveStacks, type ResolvedStacks } from '../derive/stacks.js';

export interface SampleStacksInput {
  stackEvents: Table<'stackEvents'>;
  stackEventFrames: Table<'stackEventFrames'>;
}

/** What SampleFrames reads of resolved stacks. */
export type ResolvedSampleStacks = Pick<ResolvedStacks, 'stacks' | 'frames' | 'stackIdOf'>;

export class SampleFrames {
  /** the frames of the last sample of(i) filled: frame k's low word at 2k, its high word at 2k + 1 */
  words = new Uint32Array(64);
  /** the resolved stacks (null: the trace has no stack events, or none were given) */
  readonly stacks: ResolvedSampleStacks | null;
  private readonly ip: Uint32Array;
  private readonly stackOf: Int32Array | null;
  private readonly fw: Uint32Array;

  /**
   * `stacks`: the trace's stack events (resolved here, against `samples`), or stacks resolveStacks already
   * resolved with this same `samples` table; none: every sample is its instruction pointer alone.
   */
  constructor(samples: Table<'samples'>, stacks?: SampleStacksInput | ResolvedSampleStacks | null) {
    const ip = samples.column('instructionPointer');
    this.ip = new Uint32Array(ip.buffer, ip.byteOffset, 2 * samples.length);
    this.stacks = !stacks ? null : 'stackIdOf' in stacks ? stacks : stacks.stackEvents.length > 0 ? resolveStacks({ ...stacks, samples }) : null;
    this.stackOf = this.stacks?.stackIdOf.samples ?? null;
    const a = this.stacks?.frames.address;
    this.fw = a ? new Uint32Array(a.buffer, a.byteOffset, 2 * a.length) : new Uint32Array(0);
  }

  /** the stack id of sample i (-1: none) */
  stackOfSample(i: number): number {
    return this.stackOf !== null ? this.stackOf[i]! : -1;
  }

  /** Fills `words` with the frames of sample i, leaf first; returns their number (1 without a stack). */
  of(i: number): number {
    const lo = this.ip[2 * i]!;
    const hi = this.ip[2 * i + 1]!;
    let w = this.words;
    w[0] = lo;
    w[1] = hi;
    const s = this.stackOfSample(i);
    if (s < 0) return 1;
    const st = this.stacks!.stacks;
    const fw = this.fw;
    let at = st.firstFrame[s]!;
    const end = at + st.frameCount[s]!;
    if (at < end && fw[2 * at] === lo && fw[2 * at + 1] === hi) at++;
    if (2 * (1 + end - at) > w.length) {
      const grown = new Uint32Array(Math.max(2 * (1 + end - at), 2 * w.length));
      grown.set(w.subarray(0, 2));
      this.words = w = grown;
    }
    let n = 1;
    for (; at < end; at++, n++) {
      w[2 * n] = fw[2 * at]!;
      w[2 * n + 1] = fw[2 * at + 1]!;
    }
    return n;
  }
}

/** The name of a frame in image lifetime `row` of `images` at `offset` from its base: module!0xoffset. */
export function moduleOffsetName(images: Table<'images'>, row: number, offset: number): string {
  const name = images.column('name')[row] || images.column('fileName')[row] || '(no name)';
  return `${name}!0x${offset.toString(16)}`;
}

/** The name of a frame outside any image: its address in hex (words hi, lo). */
export function addressName(hi: number, lo: number): string {
  return `0x${((BigInt(hi >>> 0) << 32n) | BigInt(lo >>> 0)).toString(16)}`;
}

/** The build id of an image lifetime as symbol servers key PE files: TimeDateStamp (8 hex digits), then SizeOfImage (hex). */
export function peBuildId(images: Table<'images'>, row: number): string {
  const stamp = images.column('timeDateStamp')[row]!;
  const size = images.column('imageSize')[row]!;
  return `${stamp.toString(16).toUpperCase().padStart(8, '0')}${size.toString(16).toUpperCase()}`;
}
