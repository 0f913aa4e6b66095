// The `cpuUsage` table (WPA's CPU Usage (Precise); README "cpuUsage"), computed by the simplest correct
// method: sort everything and search. The test oracle of the streaming derivation (src/derive/cpu-usage.ts).
//
// For each cswitch row with a known newThreadId, ordered by (cpu, switchInTime, decode order):
// - next = the next cswitch row on the same cpu (nextSwitchOutTime, newOutPri);
// - a switch-out of N = a cswitch row whose oldThreadId is N; lastSwitchOut = the latest one before
//   switchInTime (any cpu; tid 0, one idle thread per cpu: the same cpu), ties: the last in
//   (timestamp, cpu, decode order);
// - readyTime = the latest readythread row of N with lastSwitchOutTime < t <= switchInTime;
// - readyingThreadId = newThreadId of the latest cswitch row on the ready event's cpu with timestamp <=
//   the ready event's; process ids from the threads lifetimes (latest startTime <= the time, null
//   startTime = -infinity; tid 0 -> 0).
import * as L from '../generated/layout.js';
import { DerivedRows } from '../tables/derived-rows.js';
import type { Table } from '../tables/table.js';

interface Sw {
  i: number; // row in the cswitch table
  ts: bigint;
  cpu: number;
}

/** The last index of `xs` (sorted by key) whose key satisfies `ok` (a prefix property), or -1. */
function lastWhere<T>(xs: readonly T[], ok: (x: T) => boolean): number {
  let lo = 0;
  let hi = xs.length; // ok holds for [0, lo), fails from hi
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (ok(xs[mid]!)) lo = mid + 1;
    else hi = mid;
  }
  return lo - 1;
}

const byTime = (a: Sw, b: Sw): number => (a.ts < b.ts ? -1 : a.ts > b.ts ? 1 : a.cpu - b.cpu || a.i - b.i);

/** Process of `tid` at time `t` from the threads table (lifetimes of a tid by startTime). */
export function processResolver(threads: Table<'threads'>): (tid: number, t: bigint) => number | null {
  const byTid = new Map<number, { start: bigint | null; pid: number }[]>();
  for (let i = 0; i < threads.length; i++) {
    const r = threads.get(i);
    const list = byTid.get(r.threadId) ?? [];
    list.push({ start: r.startTime, pid: r.processId });
    byTid.set(r.threadId, list);
  }
  for (const list of byTid.values()) list.sort((a, b) => (a.start === b.start ? 0 : a.start === null ? -1 : b.start === null ? 1 : a.start < b.start ? -1 : 1));
  return (tid, t) => {
    if (tid === 0) return 0;
    const list = byTid.get(tid);
    if (!list) return null;
    const k = lastWhere(list, (x) => x.start === null || x.start <= t);
    return k < 0 ? null : list[k]!.pid;
  };
}

export function cpuUsageReference(cswitch: Table<'cswitch'>, readythread: Table<'readythread'>, threads: Table<'threads'>): Table<'cpuUsage'> {
  const cs = cswitch.columns;
  const ts = cs[L.CS_TIMESTAMP] as BigInt64Array;
  const cpuCol = cs[L.CS_CPU] as Uint16Array;
  const newTid = cs[L.CS_NEW_THREAD_ID] as Uint32Array;
  const oldTid = cs[L.CS_OLD_THREAD_ID] as Uint32Array;
  const all: Sw[] = Array.from({ length: cswitch.length }, (_, i) => ({ i, ts: ts[i]!, cpu: cpuCol[i]! }));
  // per cpu in time order (decode order within equal times)
  const perCpu = new Map<number, Sw[]>();
  for (const s of all) (perCpu.get(s.cpu) ?? perCpu.set(s.cpu, []).get(s.cpu)!).push(s);
  for (const list of perCpu.values()) list.sort((a, b) => (a.ts < b.ts ? -1 : a.ts > b.ts ? 1 : a.i - b.i));
  // switch-outs by thread (idle: by cpu), in (time, cpu, decode order)
  const outs = new Map<string, Sw[]>();
  for (const s of [...all].sort(byTime)) {
    const key = oldTid[s.i] === 0 ? `0/${s.cpu}` : String(oldTid[s.i]);
    (outs.get(key) ?? outs.set(key, []).get(key)!).push(s);
  }
  // ready events by thread, in time order
  const rts = readythread.columns[L.RT_TIMESTAMP] as BigInt64Array;
  const readies = new Map<number, number[]>();
  const readyOrder = Array.from({ length: readythread.length }, (_, i) => i).sort((a, b) => (rts[a]! < rts[b]! ? -1 : rts[a]! > rts[b]! ? 1 : a - b));
  for (const k of readyOrder) {
    const tid = (readythread.columns[L.RT_THREAD_ID] as Uint32Array)[k]!;
    (readies.get(tid) ?? readies.set(tid, []).get(tid)!).push(k);
  }
  const pidOf = processResolver(threads);
  const out = new DerivedRows('cpuUsage');
  const cpus = [...perCpu.keys()].sort((a, b) => a - b);
  for (const cpu of cpus) {
    const list = perCpu.get(cpu)!;
    list.forEach((s, k) => {
      if (cswitch.isNull(L.CS_NEW_THREAD_ID, s.i)) return;
      const t = s.ts;
      const tid = newTid[s.i]!;
      const r = out.add();
      const row = cswitch.get(s.i);
      out.set(r, L.CU_CPU, cpu);
      out.set(r, L.CU_SWITCH_IN_TIME, t);
      out.set(r, L.CU_NEW_THREAD_ID, tid);
      out.set(r, L.CU_OLD_THREAD_ID, oldTid[s.i]);
      out.maybe(r, L.CU_NEW_PROCESS_ID, pidOf(tid, t));
      out.maybe(r, L.CU_OLD_PROCESS_ID, pidOf(oldTid[s.i]!, t));
      out.maybe(r, L.CU_NEW_IN_PRI, row.newThreadPriority);
      out.maybe(r, L.CU_OLD_OUT_PRI, row.oldThreadPriority);
      out.maybe(r, L.CU_OLD_STATE, row.oldThreadState);
      out.maybe(r, L.CU_OLD_WAIT_REASON, row.oldThreadWaitReason);
      out.maybe(r, L.CU_PREV_CSTATE, row.previousCState);
      const next = list[k + 1];
      if (next) {
        out.set(r, L.CU_NEXT_SWITCH_OUT_TIME, next.ts);
        out.maybe(r, L.CU_NEW_OUT_PRI, cswitch.get(next.i).oldThreadPriority);
        out.set(r, L.CU_CPU_USAGE, next.ts - t);
      }
      const myOuts = outs.get(tid === 0 ? `0/${cpu}` : String(tid)) ?? [];
      const o = lastWhere(myOuts, (x) => x.ts < t);
      const last = o >= 0 ? myOuts[o]! : null;
      if (last) {
        const lr = cswitch.get(last.i);
        out.set(r, L.CU_LAST_SWITCH_OUT_TIME, last.ts);
        out.maybe(r, L.CU_NEW_PREV_OUT_PRI, lr.oldThreadPriority);
        out.maybe(r, L.CU_NEW_PREV_STATE, lr.oldThreadState);
        out.maybe(r, L.CU_NEW_PREV_WAIT_REASON, lr.oldThreadWaitReason);
      }
      const myReadies = readies.get(tid) ?? [];
      const q = lastWhere(myReadies, (x) => rts[x]! <= t);
      if (q >= 0 && (last === null || rts[myReadies[q]!]! > last.ts)) {
        const ready = myReadies[q]!;
        const rt = rts[ready]!;
        out.set(r, L.CU_READY_TIME, rt);
        out.set(r, L.CU_READY, t - rt);
        if (last) out.set(r, L.CU_WAITS, rt - last.ts);
        const onCpu = perCpu.get((readythread.columns[L.RT_CPU] as Uint16Array)[ready]!) ?? [];
        const w = lastWhere(onCpu, (x) => x.ts <= rt);
        if (w >= 0 && !cswitch.isNull(L.CS_NEW_THREAD_ID, onCpu[w]!.i)) {
          const readying = newTid[onCpu[w]!.i]!;
          out.set(r, L.CU_READYING_THREAD_ID, readying);
          out.maybe(r, L.CU_READYING_PROCESS_ID, pidOf(readying, rt));
        }
      }
    });
  }
  return out.take();
}
