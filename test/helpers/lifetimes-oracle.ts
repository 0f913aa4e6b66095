// An independent oracle of the `threads` and `processes` tables (src/derive/lifetimes.ts): the rules of
// docs/format.md §F.1-F.3 applied row by row with BigInt times, a comparator sort and a Map — the plain
// form the typed derivation must equal.
import * as L from '../../src/generated/layout.js';
import { DerivedRows } from './derived-rows.js';
import { Table } from '../../src/tables/table.js';

/** Row indices of `ts` in timestamp order, ties in row order. */
function timeOrder(ts: BigInt64Array): number[] {
  const order = Array.from({ length: ts.length }, (_, i) => i);
  return order.sort((a, b) => (ts[a]! < ts[b]! ? -1 : ts[a]! > ts[b]! ? 1 : a - b));
}

export function threadsOracle(ev: Table<'threadEvents'>): Table<'threads'> {
  const out = new DerivedRows('threads');
  const ts = ev.column('timestamp');
  const opcode = ev.column('opcode');
  const tid = ev.column('threadId');
  const pid = ev.column('processId');
  const addr = ev.column('win32StartAddr');
  const prio = ev.column('basePriority');
  const name = ev.column('name');
  const open = new Map<number, number>();
  for (const i of timeOrder(ts)) {
    const id = tid[i]!;
    const op = opcode[i]!;
    let row = open.get(id);
    if (op === L.OPCODE_START || row === undefined) {
      row = out.add();
      out.set(row, L.TH_THREAD_ID, id);
      open.set(id, row);
      if (op === L.OPCODE_START) out.set(row, L.TH_START_TIME, ts[i]);
    }
    out.fill(row, L.TH_PROCESS_ID, pid[i]);
    if (!ev.isNull(L.TE_WIN32_START_ADDR, i)) out.fill(row, L.TH_WIN32_START_ADDR, addr[i]);
    if (!ev.isNull(L.TE_BASE_PRIORITY, i)) out.fill(row, L.TH_BASE_PRIORITY, prio[i]);
    if (!ev.isNull(L.TE_NAME, i) && name[i] !== '') out.set(row, L.TH_NAME, name[i]);
    if (op === L.OPCODE_END) {
      out.set(row, L.TH_END_TIME, ts[i]);
      open.delete(id);
    }
  }
  return out.take();
}

export function processesOracle(ev: Table<'processEvents'>): Table<'processes'> {
  const out = new DerivedRows('processes');
  const ts = ev.column('timestamp');
  const opcode = ev.column('opcode');
  const pid = ev.column('processId');
  const parent = ev.column('parentId');
  const session = ev.column('sessionId');
  const exitStatus = ev.column('exitStatus');
  const image = ev.column('imageFileName');
  const commandLine = ev.column('commandLine');
  const open = new Map<number, number>();
  for (const i of timeOrder(ts)) {
    const id = pid[i]!;
    const op = opcode[i]!;
    let row = open.get(id);
    if (op === L.OPCODE_PROCESS_DEFUNCT && row === undefined) continue;
    if (op === L.OPCODE_START || row === undefined) {
      row = out.add();
      out.set(row, L.PR_PROCESS_ID, id);
      open.set(id, row);
      if (op === L.OPCODE_START) out.set(row, L.PR_START_TIME, ts[i]);
    }
    out.fill(row, L.PR_PARENT_ID, parent[i]);
    out.fill(row, L.PR_SESSION_ID, session[i]);
    out.fill(row, L.PR_IMAGE_FILE_NAME, image[i]);
    if (!ev.isNull(L.PE_COMMAND_LINE, i)) out.fill(row, L.PR_COMMAND_LINE, commandLine[i]);
    if (op === L.OPCODE_END) {
      out.set(row, L.PR_END_TIME, ts[i]);
      out.set(row, L.PR_EXIT_STATUS, exitStatus[i]);
      open.delete(id);
    }
  }
  return out.take();
}
