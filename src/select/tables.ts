// The rows of a table a selection (select/selection.ts, docs/selection.md) keeps, on columns: events by
// their timestamp and thread (or process), lifetimes that overlap the range, intervals (cpuUsage,
// threadStates) that overlap it, clipped to it as WPA's "in view" columns are. The kept rows are gathered
// into new columns; a table the selection keeps whole is returned as it is.
import { TABLE_COLUMNS, allocColumn, int32Words, type TableName, type TypedColumn } from '../tables/schema.js';
import { Table } from '../tables/table.js';
import type { Selection } from './selection.js';

/** The int32 words of an int64 column (element 2i the low word of row i, 2i + 1 the high one). */

/** The nullable bit of column `name` in the table's valid mask (-1: not nullable, or no mask). */
function bitOf(t: Table, name: string): number {
  const i = t.specs.findIndex((s) => s.name === name);
  return i >= 0 && t.specs[i]!.nullable ? i : -1;
}

/** Rows `keep[0..n)` of `t`, as a new table. */
function gather<T extends TableName>(t: Table<T>, keep: Int32Array, n: number): Table<T> {
  const columns = TABLE_COLUMNS[t.name].map((spec, c): TypedColumn => {
    const src = t.columns[c]!;
    const dst = allocColumn(spec.type, n);
    if (Array.isArray(src)) {
      const d = dst as string[];
      for (let i = 0; i < n; i++) d[i] = src[keep[i]!]!;
    } else {
      const s = src as unknown as { [i: number]: number | bigint };
      const d = dst as unknown as { [i: number]: number | bigint };
      // 64-bit columns copy their words (no BigInt per value)
      if (s instanceof BigInt64Array || s instanceof BigUint64Array) {
        const sw = int32Words(s);
        const dw = int32Words(dst as BigInt64Array);
        for (let i = 0; i < n; i++) {
          dw[2 * i] = sw[2 * keep[i]!]!;
          dw[2 * i + 1] = sw[2 * keep[i]! + 1]!;
        }
      } else {
        for (let i = 0; i < n; i++) d[i] = s[keep[i]!]!;
      }
    }
    return dst as TypedColumn;
  });
  return new Table(t.name, { length: n, columns });
}

/** The table's rows the selection keeps (intervals clipped); `t` itself when it keeps every row unchanged. */
export function selectTable<T extends TableName>(t: Table<T>, sel: Selection): Table<T> {
  // stacks and stackFrames are the dictionary the selected rows' stackId points into: a stack is shared by
  // events of any time, thread and (kernel-only) process, so they are kept whole (docs/selection.md)
  if (!sel.active || t.name === 'traces' || t.name === 'stacks' || t.name === 'stackFrames') return t;
  const keep = new Int32Array(t.length);
  let n = 0;
  const any = t as Table;
  switch (t.name) {
    case 'cswitch': {
      const ts = int32Words(any.column('timestamp') as BigInt64Array);
      const nt = any.column('newThreadId') as Uint32Array;
      const ot = any.column('oldThreadId') as Uint32Array;
      for (let i = 0; i < t.length; i++) {
        const hi = ts[2 * i + 1]!;
        const lo = ts[2 * i]!;
        if (sel.timeIn(hi, lo) && (sel.thread(nt[i]!, hi, lo) || sel.thread(ot[i]!, hi, lo))) keep[n++] = i;
      }
      break;
    }
    case 'readythread':
    case 'spinlock':
    case 'samples': {
      const ts = int32Words(any.column('timestamp') as BigInt64Array);
      const tid = any.column('threadId') as Uint32Array;
      for (let i = 0; i < t.length; i++) {
        const hi = ts[2 * i + 1]!;
        const lo = ts[2 * i]!;
        if (sel.timeIn(hi, lo) && sel.thread(tid[i]!, hi, lo)) keep[n++] = i;
      }
      break;
    }
    case 'threadEvents': {
      const ts = int32Words(any.column('timestamp') as BigInt64Array);
      const tid = any.column('threadId') as Uint32Array;
      const pid = any.column('processId') as Uint32Array;
      for (let i = 0; i < t.length; i++) if (sel.timeIn(ts[2 * i + 1]!, ts[2 * i]!) && sel.ids(tid[i]!, pid[i]!, 1)) keep[n++] = i;
      break;
    }
    case 'processEvents':
    case 'imageEvents': {
      const ts = int32Words(any.column('timestamp') as BigInt64Array);
      const pid = any.column('processId') as Uint32Array;
      for (let i = 0; i < t.length; i++) if (sel.timeIn(ts[2 * i + 1]!, ts[2 * i]!) && sel.process(pid[i]!)) keep[n++] = i;
      break;
    }
    case 'stackEvents':
    case 'stackEventFrames':
    case 'sampleIntervals': {
      // by the time of the event only: a stack key definition has no thread, the frames of a stackEvents row
      // must stay with it (docs/selection.md), and sample intervals are trace-wide settings
      const ts = int32Words(any.column('timestamp') as BigInt64Array);
      for (let i = 0; i < t.length; i++) if (sel.timeIn(ts[2 * i + 1]!, ts[2 * i]!)) keep[n++] = i;
      break;
    }
    case 'threads':
    case 'processes':
    case 'images': {
      // an image's lifetime runs from its loadTime to its unloadTime
      const image = t.name === 'images';
      const [start, end] = image ? ['loadTime', 'unloadTime'] : ['startTime', 'endTime'];
      const s = int32Words((image ? any.column('loadTime') : any.column('startTime')) as BigInt64Array);
      const e = int32Words((image ? any.column('unloadTime') : any.column('endTime')) as BigInt64Array);
      const pid = any.column('processId') as Uint32Array;
      const tid = t.name === 'threads' ? (any.column('threadId') as Uint32Array) : null;
      const valid = any.column('valid') as Uint32Array;
      const sb = bitOf(any, start);
      const eb = bitOf(any, end);
      const pb = bitOf(any, 'processId');
      for (let i = 0; i < t.length; i++) {
        const v = valid[i]!;
        const ids = tid ? sel.ids(tid[i]!, pid[i]!, pb < 0 ? 1 : (v >>> pb) & 1) : sel.process(pid[i]!);
        if (ids && sel.overlaps(s[2 * i + 1]!, s[2 * i]!, e[2 * i + 1]!, e[2 * i]!, ((v >>> sb) & 1) === 0, ((v >>> eb) & 1) === 0)) keep[n++] = i;
      }
      break;
    }
    case 'cpuUsage': {
      const cu = t as Table<'cpuUsage'>;
      const s = int32Words(cu.column('switchInTime'));
      const e = int32Words(cu.column('nextSwitchOutTime'));
      const tid = cu.column('newThreadId');
      const pid = cu.column('newProcessId');
      const valid = cu.column('valid');
      const pb = bitOf(cu, 'newProcessId');
      const eb = bitOf(cu, 'nextSwitchOutTime');
      for (let i = 0; i < t.length; i++) {
        const v = valid[i]!;
        if (sel.ids(tid[i]!, pid[i]!, (v >>> pb) & 1) && sel.overlaps(s[2 * i + 1]!, s[2 * i]!, e[2 * i + 1]!, e[2 * i]!, false, eb >= 0 && ((v >>> eb) & 1) === 0)) keep[n++] = i;
      }
      const out = gather(cu, keep, n);
      if (sel.hasTime) clipCpuUsage(out, sel);
      return out as unknown as Table<T>;
    }
    case 'threadStates': {
      const ts = t as Table<'threadStates'>;
      const s = int32Words(ts.column('startTime'));
      const e = int32Words(ts.column('endTime'));
      const tid = ts.column('threadId');
      const pid = ts.column('processId');
      const valid = ts.column('valid');
      const pb = bitOf(ts, 'processId');
      const sb = bitOf(ts, 'startTime');
      const eb = bitOf(ts, 'endTime');
      for (let i = 0; i < t.length; i++) {
        const v = valid[i]!;
        const open0 = sb >= 0 && ((v >>> sb) & 1) === 0;
        const open1 = eb >= 0 && ((v >>> eb) & 1) === 0;
        if (sel.ids(tid[i]!, pid[i]!, pb < 0 ? 1 : (v >>> pb) & 1) && sel.overlaps(s[2 * i + 1]!, s[2 * i]!, e[2 * i + 1]!, e[2 * i]!, open0, open1)) keep[n++] = i;
      }
      const out = gather(ts, keep, n);
      if (sel.hasTime) clipThreadStates(out, sel);
      return out as unknown as Table<T>;
    }
    case 'traces':
    case 'stacks':
    case 'stackFrames':
      return t;
    default: {
      // every table has its rule: a table added to the registry must get one here
      const never: never = t.name as never;
      throw new Error(`selectTable: no rule for table ${String(never)}`);
    }
  }
  return n === t.length ? t : gather(t, keep, n);
}

/** cpuUsage rows clipped: cpuUsage, ready and waits become their parts inside the range (times unchanged). */
function clipCpuUsage(t: Table<'cpuUsage'>, sel: Selection): void {
  const inT = int32Words(t.column('switchInTime'));
  const out = int32Words(t.column('nextSwitchOutTime'));
  const readyT = int32Words(t.column('readyTime'));
  const lastT = int32Words(t.column('lastSwitchOutTime'));
  const usage = int32Words(t.column('cpuUsage'));
  const ready = int32Words(t.column('ready'));
  const waits = int32Words(t.column('waits'));
  const valid = t.column('valid');
  const ub = bitOf(t, 'cpuUsage');
  const rb = bitOf(t, 'ready');
  const wb = bitOf(t, 'waits');
  const put = (col: Int32Array, i: number) => {
    col[2 * i] = sel.lo;
    col[2 * i + 1] = sel.hi;
  };
  for (let i = 0; i < t.length; i++) {
    const v = valid[i]!;
    if ((v >>> ub) & 1) {
      sel.clip(inT[2 * i + 1]!, inT[2 * i]!, out[2 * i + 1]!, out[2 * i]!);
      put(usage, i);
    }
    if ((v >>> rb) & 1) {
      sel.clip(readyT[2 * i + 1]!, readyT[2 * i]!, inT[2 * i + 1]!, inT[2 * i]!);
      put(ready, i);
    }
    if ((v >>> wb) & 1) {
      sel.clip(lastT[2 * i + 1]!, lastT[2 * i]!, readyT[2 * i + 1]!, readyT[2 * i]!);
      put(waits, i);
    }
  }
}

/**
 * threadStates rows clipped to the range: startTime, endTime and duration of the part inside it. An unknown
 * bound (a state before the first or after the last switch of the trace) stays unknown, as in cpuUsage.
 */
function clipThreadStates(t: Table<'threadStates'>, sel: Selection): void {
  const start = int32Words(t.column('startTime'));
  const end = int32Words(t.column('endTime'));
  const duration = int32Words(t.column('duration'));
  const valid = t.column('valid');
  const sb = bitOf(t, 'startTime');
  const eb = bitOf(t, 'endTime');
  const known = (v: number, bit: number): boolean => bit < 0 || ((v >>> bit) & 1) === 1;
  for (let i = 0; i < t.length; i++) {
    const v = valid[i]!;
    const hasStart = known(v, sb);
    const hasEnd = known(v, eb);
    if (hasStart && sel.before(start[2 * i + 1]!, start[2 * i]!)) {
      start[2 * i + 1] = sel.fromHi;
      start[2 * i] = sel.fromLo;
    }
    if (hasEnd && sel.after(end[2 * i + 1]!, end[2 * i]!)) {
      end[2 * i + 1] = sel.toHi;
      end[2 * i] = sel.toLo;
    }
    if (hasStart && hasEnd) {
      sel.clip(start[2 * i + 1]!, start[2 * i]!, end[2 * i + 1]!, end[2 * i]!);
      duration[2 * i] = sel.lo;
      duration[2 * i + 1] = sel.hi;
    }
  }
}
