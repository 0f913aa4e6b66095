// Staged cpuUsage rows (RWS int32 words each, the R_ layout of src/derive/cpu-usage.ts) made from a property's
// rows, as the deriver stages them: for the tests of CpuAnalyzer.addStaged and of the WebAssembly fold.
import * as L from '../../src/generated/layout.js';
import * as R from '../../src/derive/cpu-usage.js';

/** A drawn row: times as 64-bit values, null where absent. */
export interface TimedRow {
  tid: number;
  pid: number | null;
  cpu: number;
  in: bigint;
  next: bigint | null;
  ready: bigint | null;
  last: bigint | null;
  readying?: number | null;
}

/** Stages `r` as row i of S with deriver thread slot `slot`; returns its valid bits. */
export function stageRow(S: Int32Array, i: number, r: TimedRow, slot: number): number {
  const b = i * R.RWS;
  const word = (hi: number, lo: number, x: bigint) => {
    S[b + hi] = Number(BigInt.asIntN(32, x >> 32n));
    S[b + lo] = Number(BigInt.asIntN(32, x));
  };
  let v = (1 << L.CU_VALID) | (1 << L.CU_CPU) | (1 << L.CU_SWITCH_IN_TIME) | (1 << L.CU_NEW_THREAD_ID) | (1 << L.CU_OLD_THREAD_ID);
  S[b + R.R_CPU] = r.cpu;
  S[b + R.R_NEW_TID] = r.tid;
  S[b + R.R_NEW_SLOT] = slot;
  word(R.R_IN_HI, R.R_IN_LO, r.in);
  if (r.pid !== null) {
    v |= 1 << L.CU_NEW_PROCESS_ID;
    S[b + R.R_NEW_PID] = r.pid;
  }
  if (r.next !== null) {
    v |= (1 << L.CU_NEXT_SWITCH_OUT_TIME) | (1 << L.CU_CPU_USAGE);
    word(R.R_NEXT_HI, R.R_NEXT_LO, r.next);
  }
  if (r.ready !== null) {
    v |= (1 << L.CU_READY_TIME) | (1 << L.CU_READY);
    word(R.R_READY_HI, R.R_READY_LO, r.ready);
    if (r.readying != null) {
      v |= 1 << L.CU_READYING_THREAD_ID;
      S[b + R.R_READYING_TID] = r.readying;
    }
  }
  if (r.last !== null) {
    v |= 1 << L.CU_LAST_SWITCH_OUT_TIME;
    word(R.R_LAST_HI, R.R_LAST_LO, r.last);
    if (r.ready !== null) v |= 1 << L.CU_WAITS;
  }
  S[b + R.R_VALID] = v;
  return v;
}
