// The independent oracle of the threadStates derivation (src/derive/thread-states.ts; the rules:
// docs/design/streaming.md "threadStates"): the same definition written the simple way, with an object per
// switch, event and row and BigInt times, sorting with comparators and searching lists.
//
// Per thread (not the idle thread 0): its events, in (time, kind, then CPU order or row order), kinds in
// this order at equal times: Start, a switch-out that ends no switch-in of the thread on its CPU, ReadyThread,
// switch-in, End, a lifetime first seen in a rundown (at the trace's start). Each event ends the interval of
// the state before it (a row, unless it lasted no tick or the thread was not alive) and begins its own:
// Start → unknown; End → not alive; ReadyThread → ready (its CPU, the readying thread); a switch-in → a
// running row to the CPU's next cswitch row, then the state that row's switch-out gives (waiting, ready when
// preempted, not alive when Terminated, unknown when its state is null or it switched out another thread);
// nothing but other switch-ins counts inside a running interval. Before the first event: unknown from the
// trace's start (unless that event is a Start); after the last: the state stays open (end null).
import * as L from '../../src/generated/layout.js';
import type { Table } from '../../src/tables/table.js';
import { DerivedRows } from './derived-rows.js';

type State = { name: 'unknown' | 'running' | 'ready' | 'waiting'; cpu?: number; readying?: number | null; waitReason?: number | null; waitMode?: number | null; oldState?: number; priority?: number | null } | null;

interface Sw {
  i: number;
  ts: bigint;
  cpu: number;
  newTid: number | null;
  oldTid: number;
  state: number | null;
  wr: number | null;
  wm: number | null;
  newPri: number | null;
  oldPri: number | null;
  /** its position in its CPU's list */
  k: number;
}

interface Ev {
  ts: bigint;
  rank: number;
  /** ties of one rank: [cpu, position] or [row] */
  key: number[];
  what: 'start' | 'out' | 'ready' | 'run' | 'end' | 'seen';
  sw?: Sw;
  readyCpu?: number;
}

const RANK = { start: 0, out: 1, ready: 2, run: 3, end: 4, seen: 5 } as const;

export function threadStatesOracle(cswitch: Table<'cswitch'>, readythread: Table<'readythread'>, threads: Table<'threads'>): Table<'threadStates'> {
  const perCpu = new Map<number, Sw[]>();
  for (let i = 0; i < cswitch.length; i++) {
    const r = cswitch.get(i);
    const s: Sw = { i, ts: r.timestamp, cpu: r.cpu, newTid: r.newThreadId, oldTid: r.oldThreadId, state: r.oldThreadState, wr: r.oldThreadWaitReason, wm: r.oldThreadWaitMode, newPri: r.newThreadPriority, oldPri: r.oldThreadPriority, k: 0 };
    if (!perCpu.has(s.cpu)) perCpu.set(s.cpu, []);
    perCpu.get(s.cpu)!.push(s);
  }
  for (const list of perCpu.values()) {
    list.sort((a, b) => (a.ts < b.ts ? -1 : a.ts > b.ts ? 1 : a.i - b.i));
    list.forEach((s, k) => (s.k = k));
  }
  const readies = Array.from({ length: readythread.length }, (_, i) => readythread.get(i));
  const lifetimes = Array.from({ length: threads.length }, (_, i) => threads.get(i));

  const times: bigint[] = [];
  for (const list of perCpu.values()) for (const s of list) times.push(s.ts);
  for (const r of readies) times.push(r.timestamp);
  for (const l of lifetimes) {
    if (l.startTime !== null) times.push(l.startTime);
    if (l.endTime !== null) times.push(l.endTime);
  }
  const out = new DerivedRows('threadStates');
  if (times.length === 0) return out.take();
  const traceStart = times.reduce((a, b) => (b < a ? b : a));

  const pidOf = (tid: number, t: bigint): number | null => {
    if (tid === 0) return 0;
    let best: (typeof lifetimes)[number] | null = null;
    for (const l of lifetimes) {
      if (l.threadId !== tid || (l.startTime !== null && l.startTime > t)) continue;
      // the latest start wins (no start: the earliest); on a tie the later lifetime
      if (best === null) best = l;
      else if (l.startTime === null) {
        if (best.startTime === null) best = l;
      } else if (best.startTime === null || l.startTime >= best.startTime) best = l;
    }
    return best?.processId ?? null;
  };
  const readyingOf = (cpu: number, t: bigint): number | null => {
    // the last switch of the CPU at or before t (its list is in time order)
    const list = perCpu.get(cpu) ?? [];
    let lo = 0;
    let hi = list.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (list[mid]!.ts <= t) lo = mid + 1;
      else hi = mid;
    }
    return lo > 0 ? list[lo - 1]!.newTid : null;
  };
  const nextOnCpu = (s: Sw): Sw | null => perCpu.get(s.cpu)![s.k + 1] ?? null;

  // every thread's events
  const events = new Map<number, Ev[]>();
  const push = (tid: number, e: Ev) => {
    if (tid === 0) return;
    if (!events.has(tid)) events.set(tid, []);
    events.get(tid)!.push(e);
  };
  lifetimes.forEach((l, i) => {
    if (l.startTime !== null) push(l.threadId, { ts: l.startTime, rank: RANK.start, key: [i], what: 'start' });
    else push(l.threadId, { ts: traceStart, rank: RANK.seen, key: [i], what: 'seen' });
    if (l.endTime !== null) push(l.threadId, { ts: l.endTime, rank: RANK.end, key: [i], what: 'end' });
  });
  for (const list of perCpu.values()) {
    for (const s of list) {
      if (s.newTid !== null) push(s.newTid, { ts: s.ts, rank: RANK.run, key: [s.cpu, s.k], what: 'run', sw: s });
      const prev = list[s.k - 1];
      if (!(prev && prev.newTid === s.oldTid)) push(s.oldTid, { ts: s.ts, rank: RANK.out, key: [s.cpu, s.k], what: 'out', sw: s });
    }
  }
  readies.forEach((r, i) => push(r.threadId, { ts: r.timestamp, rank: RANK.ready, key: [i], what: 'ready', readyCpu: r.cpu }));

  const afterSwitchOut = (s: Sw, tid: number): State => {
    if (s.oldTid !== tid || s.state === null) return { name: 'unknown' };
    if (s.state === 4) return null; // Terminated
    if (s.state === 5) return { name: 'waiting', waitReason: s.wr, waitMode: s.wm, oldState: 5, priority: s.oldPri };
    return { name: 'ready', cpu: s.cpu, oldState: s.state, priority: s.oldPri };
  };
  const emit = (tid: number, st: NonNullable<State>, from: bigint, to: bigint | null) => {
    const r = out.add();
    out.set(r, L.TS_THREAD_ID, tid);
    out.maybe(r, L.TS_PROCESS_ID, pidOf(tid, from));
    out.set(r, L.TS_STATE, st.name);
    out.set(r, L.TS_START_TIME, from);
    if (to !== null) {
      out.set(r, L.TS_END_TIME, to);
      out.set(r, L.TS_DURATION, to - from);
    }
    out.maybe(r, L.TS_CPU, st.cpu);
    if (st.readying !== undefined && st.readying !== null) {
      out.set(r, L.TS_READYING_THREAD_ID, st.readying);
      out.maybe(r, L.TS_READYING_PROCESS_ID, pidOf(st.readying, from));
    }
    out.maybe(r, L.TS_WAIT_REASON, st.waitReason);
    out.maybe(r, L.TS_WAIT_MODE, st.waitMode);
    out.maybe(r, L.TS_OLD_THREAD_STATE, st.oldState);
    out.maybe(r, L.TS_PRIORITY, st.priority);
  };

  for (const tid of [...events.keys()].sort((a, b) => a - b)) {
    const list = events.get(tid)!;
    list.sort((a, b) => {
      if (a.ts !== b.ts) return a.ts < b.ts ? -1 : 1;
      if (a.rank !== b.rank) return a.rank - b.rank;
      for (let j = 0; j < a.key.length; j++) if (a.key[j] !== b.key[j]) return a.key[j]! - b.key[j]!;
      return 0;
    });
    let state: State = list[0]!.what === 'start' ? null : { name: 'unknown' };
    let since = traceStart;
    let runningToEnd = false; // an open switch-in: running to the end of the trace
    for (const e of list) {
      const inside = runningToEnd || e.ts < since;
      if (inside && e.what !== 'run') continue;
      if (!inside && state !== null && e.ts > since) {
        // ready with no priority known, ended by a switch-in: the priority it was switched in with
        emit(tid, e.what === 'run' && state.name === 'ready' && state.priority == null ? { ...state, priority: e.sw!.newPri } : state, since, e.ts);
      }
      if (e.what === 'run') {
        const next = nextOnCpu(e.sw!);
        emit(tid, { name: 'running', cpu: e.sw!.cpu, priority: e.sw!.newPri }, e.ts, next?.ts ?? null);
        if (runningToEnd) continue;
        if (next === null) {
          runningToEnd = true;
          continue;
        }
        if (inside && next.ts <= since) continue;
        state = afterSwitchOut(next, tid);
        since = next.ts;
        continue;
      }
      if (e.what === 'seen') continue;
      if (e.what === 'out') state = afterSwitchOut(e.sw!, tid);
      else if (e.what === 'start') state = { name: 'unknown' };
      else if (e.what === 'end') state = null;
      else {
        state = { name: 'ready', cpu: e.readyCpu!, readying: readyingOf(e.readyCpu!, e.ts) };
      }
      since = e.ts;
    }
    if (!runningToEnd && state !== null) emit(tid, state, since, null);
  }
  return out.take();
}
