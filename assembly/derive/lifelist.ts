// The threads' lifetimes of a derivation core (cpu-usage.ts, thread-states.ts; the process id rule: README
// "cpuUsage" and the `threads` table): a list per thread slot in one region, LTB bytes per lifetime, the
// core keeping each slot's first and last (index + 1) — and which lifetime holds a time, kept per slot (PC)
// until a lifetime is added to it. An instance is one core's: these regions are its.
import { regrow } from './reorder';

export const LTB: i32 = 24;
export const LT_FLAGS: i32 = 0; // LF_ bits
export const LT_PID: i32 = 4;
export const LT_START: i32 = 8; // i64
export const LT_NEXT: i32 = 16; // index + 1; 0: the last
/** it has a start (else it holds from the trace's start) */
export const LF_START: i32 = 1;
/** it is open (cpu-usage.ts: a Thread event ends it) */
export const LF_OPEN: i32 = 2;

export let LT: usize = 0;
let ltCap: i32 = 0;
let nLifetimes: i32 = 0;

// The process of a slot of several lifetimes as pidOfLifetimes last found it: PCB bytes per slot — the answer
// (i64: -1 unknown) and the times [lo, hi) it holds for (no lifetime starts inside); valid 0: none.
const PCB: i32 = 32;
const P_LO: i32 = 0; // i64
const P_HI: i32 = 8; // i64
const P_PID: i32 = 16; // i64
const P_VALID: i32 = 24;
let PC: usize = 0;
let pcCap: i32 = 0;

/** A lifetime of slot s (flags LF_, start t, process pid) after its last one (`tail`: index + 1; 0: none): its index. */
export function lifeAppend(s: i32, tail: i32, flags: i32, t: i64, pid: i32): i32 {
  const l = nLifetimes++;
  if (nLifetimes > ltCap) {
    const cap = max(256, 2 * ltCap);
    LT = regrow(LT, <usize>ltCap * LTB, <usize>cap * LTB);
    ltCap = cap;
  }
  const x = LT + <usize>l * LTB;
  store<i32>(x, flags, LT_FLAGS);
  store<i64>(x, t, LT_START);
  store<i32>(x, pid, LT_PID);
  store<i32>(x, 0, LT_NEXT);
  if (tail != 0) store<i32>(LT + <usize>(tail - 1) * LTB, l + 1, LT_NEXT);
  if (s >= pcCap) {
    let cap = max(256, pcCap);
    while (cap <= s) cap *= 2;
    PC = regrow(PC, <usize>pcCap * PCB, <usize>cap * PCB);
    pcCap = cap;
  }
  store<i32>(PC + <usize>s * PCB, 0, P_VALID);
  return l;
}

/**
 * The process at t of slot s, whose lifetimes start at index l (several; one has its copy in the core's
 * slot): the latest start at or before t wins (a null start is the earliest; on a tie the later lifetime);
 * -1: none. The answer holds from the winner's start (a null one: from the first time) to the next start
 * after t; it is kept for the slot until a lifetime is added to it.
 */
export function pidOfLifetimes(s: i32, l: i32, t: i64): i64 {
  const pc = PC + <usize>s * PCB;
  if (load<i32>(pc, P_VALID) != 0 && t >= load<i64>(pc, P_LO) && t < load<i64>(pc, P_HI)) return load<i64>(pc, P_PID);
  let best: usize = 0;
  let hasBest = false;
  let hi: i64 = i64.MAX_VALUE;
  for (; l >= 0; l = load<i32>(LT + <usize>l * LTB, LT_NEXT) - 1) {
    const x = LT + <usize>l * LTB;
    if (load<i32>(x, LT_FLAGS) & LF_START) {
      const st = load<i64>(x, LT_START);
      if (t < st) {
        if (st < hi) hi = st;
        continue;
      }
      if (!hasBest || (load<i32>(best, LT_FLAGS) & LF_START) == 0 || !(st < load<i64>(best, LT_START))) {
        best = x;
        hasBest = true;
      }
    } else if (!hasBest || (load<i32>(best, LT_FLAGS) & LF_START) == 0) {
      best = x;
      hasBest = true;
    }
  }
  const pid: i64 = hasBest ? <i64>load<u32>(best, LT_PID) : -1;
  store<i64>(pc, hasBest && load<i32>(best, LT_FLAGS) & LF_START ? load<i64>(best, LT_START) : i64.MIN_VALUE, P_LO);
  store<i64>(pc, hi, P_HI);
  store<i64>(pc, pid, P_PID);
  store<i32>(pc, 1, P_VALID);
  return pid;
}
