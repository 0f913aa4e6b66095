// The worker of remote-cpu-fold.ts: the apply half of the WebAssembly cpuUsage core (CpuUsageOptions.split),
// applying the events the intake on the other side released — each buffer handed back once applied —
// folding the rows for the sink there, and at the end the fold (copied out of the core's memory, handed
// over) and the statistics.
import { parentPort, workerData } from 'node:worker_threads';
import { CpuUsageDeriver, type CoreFold, type CoreFoldSink } from './cpu-usage.js';
import { releasedIn, type RemoteFoldMessage, type RemoteFoldReply, type RemoteFoldSetup } from './remote-cpu-fold.js';

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
const deriver = new CpuUsageDeriver(sink, { engine: 'wasm', split: 'apply', holdRows: setup.holdRows });

port.on('message', (m: RemoteFoldMessage) => {
  try {
    if (m.kind === 'chunk') {
      deriver.addReleased(releasedIn(m.buffer, m.bytes, m.count, m.groups, m.idle, m.slots));
      port.postMessage({ kind: 'added', buffer: m.buffer } satisfies RemoteFoldReply, [m.buffer]);
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
