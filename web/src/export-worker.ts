// The page's download worker: writes one table as CSV or Parquet, or the trace as a Perfetto trace
// (outputs.ts), streamed from the File. Its code (with the Parquet writer, ~2.5 MB) is export-worker.js,
// loaded by the page only when a download is asked for.
import { exportTable } from './outputs.js';
import type { ToWorker } from './protocol.js';
import { fail, post, progress } from './worker-common.js';

self.onmessage = (ev: MessageEvent<ToWorker>) => {
  const m = ev.data;
  if (m.type === 'export') {
    exportTable(m.file, m.name, m.table, m.format, m.range, progress()).then((x) => post({ type: 'exported', blob: x.blob, fileName: x.fileName, rows: x.rows }), fail);
  }
};
