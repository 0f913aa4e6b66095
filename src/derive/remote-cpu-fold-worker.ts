// The worker of remote-cpu-fold.ts: a CpuUsageDeriver (the WebAssembly core) folding the chunks it is sent
// for the sink on the other side — each chunk's input columns made into the tables the deriver reads (the
// other columns empty: it does not read them), its buffer handed back once added — and at the end the
// fold (copied out of the core's memory, handed over) and the statistics.
import { parentPort, workerData } from 'node:worker_threads';
import { INPUT_COLUMNS, type DeriveInputTable } from '../engine/wasm/derive.js';
import { allocColumn, TABLE_COLUMNS, type NumericColumn, type TypedColumn } from '../tables/schema.js';
import { Table } from '../tables/table.js';
import { CpuUsageDeriver, type CoreFold, type CoreFoldSink } from './cpu-usage.js';
import { inputColumns, type RemoteFoldMessage, type RemoteFoldReply, type RemoteFoldSetup } from './remote-cpu-fold.js';

const port = parentPort!;
const setup = workerData as RemoteFoldSetup;
let fold: CoreFold | null = null;
const sink: CoreFoldSink = {
  coreFold: () => setup.request,
  // the core's memory goes with the worker: the fold's arrays copied, to be handed over
  addCoreFold: (f) => {
    fold = { ...f, slots: f.slots.slice(), high: f.high.slice(), histograms: f.histograms && [{ ...f.histograms[0], table: f.histograms[0].table.slice() }, { ...f.histograms[1], table: f.histograms[1].table.slice() }] };
  },
  addStaged: () => {
    throw new Error('the core staged rows it was to fold');
  },
};
const deriver = new CpuUsageDeriver(sink, { engine: 'wasm', windowEvents: setup.windowEvents, holdRows: setup.holdRows });
/** per table: its columns, empty ones where the input has none */
const empty = (t: DeriveInputTable): TypedColumn[] => TABLE_COLUMNS[t].map((c) => allocColumn(c.type, 0) as TypedColumn);
const columns = { cswitch: empty('cswitch'), readythread: empty('readythread'), threadEvents: empty('threadEvents') };
const at = INPUT_COLUMNS.map(([t, c]) => TABLE_COLUMNS[t].findIndex((x) => x.name === c));

port.on('message', (m: RemoteFoldMessage) => {
  try {
    if (m.kind === 'chunk') {
      const rows = { cswitch: m.nS, readythread: m.nR, threadEvents: m.nT };
      const input = inputColumns(m.buffer, m.cells);
      for (let i = 0; i < INPUT_COLUMNS.length; i++) {
        const t = INPUT_COLUMNS[i]![0];
        columns[t][at[i]!] = input[i]!.subarray(0, rows[t]) as NumericColumn;
      }
      const table = <T extends DeriveInputTable>(t: T) => new Table(t, { length: rows[t], columns: columns[t] });
      deriver.add(table('cswitch'), table('readythread'), table('threadEvents'));
      port.postMessage({ kind: 'added', buffer: m.buffer, cells: m.cells } satisfies RemoteFoldReply, [m.buffer]);
      return;
    }
    const stats = deriver.finish();
    const f = fold!;
    const transfer = [f.slots.buffer, f.high.buffer, ...(f.histograms ? [f.histograms[0].table.buffer, f.histograms[1].table.buffer] : [])] as ArrayBuffer[];
    port.postMessage({ kind: 'finished', fold: f, stats } satisfies RemoteFoldReply, transfer);
  } catch (e) {
    port.postMessage({ kind: 'error', message: (e as Error)?.message ?? String(e) } satisfies RemoteFoldReply);
  }
});
