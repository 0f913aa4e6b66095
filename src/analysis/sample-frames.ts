// The frames of a SampledProfile row, leaf first, as the profiles built from samples see them: the sample's
// instruction pointer (the leaf analyzeSamples counts), then, when the trace has stacks (resolveStacks,
// src/derive/stacks.ts), the callers — the walk's frames after Stack1 when Stack1 is the instruction pointer,
// all of them when it is not. Used by the page's flame graph (web/src/flame-data.ts). Per sample: words
// copied into one reused buffer (no allocation, BigInt or closure), grown only for a deeper stack.
import type { Table } from '../tables/table.js';
import type { ResolvedStacks } from '../derive/stacks.js';

export class SampleFrames {
  /** the frames of the last `at`: frame k's low word at 2k, its high word at 2k + 1 */
  frames = new Uint32Array(64);
  private readonly ip: Uint32Array;
  private readonly stackOf: Int32Array | null;
  private readonly firstFrame: Uint32Array | null;
  private readonly frameCount: Uint32Array | null;
  private readonly walk: Uint32Array;

  /** `stacks`: resolveStacks over the same `samples` table (its stackIdOf.samples), or null for none. */
  constructor(samples: Table<'samples'>, stacks: Pick<ResolvedStacks, 'stacks' | 'frames' | 'stackIdOf'> | null) {
    const ip = samples.column('instructionPointer');
    this.ip = new Uint32Array(ip.buffer, ip.byteOffset, 2 * samples.length);
    this.stackOf = stacks ? stacks.stackIdOf.samples : null;
    this.firstFrame = stacks ? stacks.stacks.firstFrame : null;
    this.frameCount = stacks ? stacks.stacks.frameCount : null;
    const a = stacks?.frames.address;
    this.walk = a ? new Uint32Array(a.buffer, a.byteOffset, 2 * a.length) : new Uint32Array(0);
  }

  /** Whether row `i` has a stack. */
  stacked(i: number): boolean {
    return this.stackOf !== null && this.stackOf[i]! >= 0;
  }

  /** Fills `frames` with the frames of row `i`, leaf first; returns how many. */
  at(i: number): number {
    let f = this.frames;
    f[0] = this.ip[2 * i]!;
    f[1] = this.ip[2 * i + 1]!;
    const s = this.stackOf !== null ? this.stackOf[i]! : -1;
    if (s < 0) return 1;
    const w = this.walk;
    let at = this.firstFrame![s]!;
    const end = at + this.frameCount![s]!;
    if (at < end && w[2 * at] === f[0] && w[2 * at + 1] === f[1]) at++;
    const need = 2 * (1 + end - at);
    if (need > f.length) {
      const grown = new Uint32Array(Math.max(need, 2 * f.length));
      grown.set(f.subarray(0, 2));
      this.frames = f = grown;
    }
    let n = 1;
    for (; at < end; at++, n++) {
      f[2 * n] = w[2 * at]!;
      f[2 * n + 1] = w[2 * at + 1]!;
    }
    return n;
  }
}
