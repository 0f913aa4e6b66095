// The profile interval in effect at a time (docs/format.md §G.4): from the `sampleIntervals` rows of the
// timer source (KPROFILE_SOURCE 0, ProfileTime, whose interrupts log SampledProfile), applied in timestamp
// order — a sample's interval is the NewInterval of the latest event at or before its time; before the first
// event, the interval that event started from (a SetInterval's OldInterval, a rundown's NewInterval). Used by
// analyzeSamples (CPU time = Count × interval, WPA's Weight) and the pprof writer. A lookup: a binary search
// over words, no allocation.
import type { Table } from '../tables/table.js';

const PROFILE_TIME = 0; // KPROFILE_SOURCE ProfileTime
const OPCODE_SET_INTERVAL = 72;

export class SampleInterval {
  /** the events of the timer source in time order: timestamp words (high signed, low unsigned) and interval */
  private readonly tHi: Float64Array;
  private readonly tLo: Float64Array;
  private readonly interval: Float64Array;
  private readonly before: number;
  /** the distinct intervals the trace states, 100 ns units, in time order */
  readonly intervals: number[];

  constructor(rows: Table<'sampleIntervals'>) {
    const ts = rows.column('timestamp');
    const source = rows.column('source');
    const opcode = rows.column('opcode');
    const next = rows.column('newInterval');
    const prev = rows.column('oldInterval');
    const order = Array.from({ length: rows.length }, (_, i) => i)
      .filter((i) => source[i] === PROFILE_TIME)
      .sort((a, b) => (ts[a]! < ts[b]! ? -1 : ts[a]! > ts[b]! ? 1 : a - b));
    const n = order.length;
    this.tHi = new Float64Array(n);
    this.tLo = new Float64Array(n);
    this.interval = new Float64Array(n);
    order.forEach((i, k) => {
      this.tHi[k] = Number(ts[i]! >> 32n);
      this.tLo[k] = Number(ts[i]! & 0xffffffffn);
      this.interval[k] = next[i]!;
    });
    const first = order[0];
    this.before = first === undefined ? -1 : opcode[first] === OPCODE_SET_INTERVAL ? prev[first]! : next[first]!;
    this.intervals = [];
    for (const v of [this.before, ...this.interval]) if (v >= 0 && !this.intervals.includes(v)) this.intervals.push(v);
  }

  /** whether the trace states an interval at all */
  get known(): boolean {
    return this.before >= 0;
  }

  /** The interval at time (tHi signed, tLo unsigned), in 100 ns units; -1 when the trace states none. */
  at(tHi: number, tLo: number): number {
    let a = 0;
    let b = this.interval.length;
    // the last event at or before t
    while (a < b) {
      const mid = (a + b) >>> 1;
      if (tHi < this.tHi[mid]! || (tHi === this.tHi[mid]! && tLo < this.tLo[mid]!)) b = mid;
      else a = mid + 1;
    }
    return a === 0 ? this.before : this.interval[a - 1]!;
  }
}
