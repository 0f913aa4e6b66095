// The body of a decoding worker, the same in Node (worker-node.ts, worker_threads) and browsers
// (worker-web.ts, Web Workers): one WebAssembly instance of the module the coordinator sends (its own
// memory), partitions decoded one at a time (partition.ts), rows posted as they come with their buffers
// transferred, and no more than `budget` bytes of rows sent ahead of what the coordinator has consumed.
import { EtlError, fileSizeChanged } from '../errors.js';
import { runAsync, type AsyncSource } from '../decode/runners.js';
import { WasmEngine } from '../engine/wasm/engine.js';
import { partitionSteps, type PartitionSink } from './partition.js';
import { chunkBuffers, chunkBytes, deserializeError, serializeError, type FromWorker, type ToWorker, type WorkerSource } from './protocol.js';

/** What a worker runs in: messages both ways, and files (Node only). */
export interface WorkerEndpoint {
  post(message: FromWorker, transfer?: Transferable[]): void;
  listen(handler: (message: ToWorker) => void): void;
  /** opens a file by path for reading (Node); absent where workers cannot open files */
  openFile?(path: string): { source: AsyncSource; close(): void };
}

class Cancelled extends Error {}

/** bytes of input decoded between two progress messages */
const PROGRESS_BYTES = 4 << 20;

interface RunningJob {
  id: number;
  cancelled: boolean;
}

/** Serves the coordinator's messages until the worker is terminated. */
export function serveWorker(ep: WorkerEndpoint): void {
  let engine: WasmEngine | null = null;
  let running: RunningJob | null = null;
  /** bytes of rows sent and not yet credited back, over all jobs */
  let outstanding = 0;
  /** wakes the job waiting for credit or cancellation */
  let wake: (() => void) | null = null;
  const wakeUp = () => {
    const w = wake;
    wake = null;
    w?.();
  };
  const reads = new Map<number, { resolve: (b: Uint8Array) => void; reject: (e: Error) => void }>();
  let nextRead = 0;

  const remoteSource = (job: RunningJob, size: number): AsyncSource => {
    const request = (position: number, length: number): Promise<Uint8Array> =>
      new Promise((resolve, reject) => {
        if (job.cancelled) return reject(new Cancelled());
        const id = nextRead++;
        reads.set(id, { resolve, reject });
        ep.post({ t: 'read', job: job.id, id, position, length });
      });
    return {
      size,
      read: (position, length) => request(position, length),
      readInto: async (position, target) => {
        const b = await request(position, target.length);
        target.set(b);
        return b.length;
      },
    };
  };

  const queue: Extract<ToWorker, { t: 'job' }>[] = [];
  let pumping = false;
  async function pump(): Promise<void> {
    if (pumping) return;
    pumping = true;
    for (let m = queue.shift(); m; m = queue.shift()) await run(m.job, m.spec, m.source, m.budget);
    pumping = false;
  }

  async function run(id: number, spec: Parameters<typeof partitionSteps>[1], where: WorkerSource, budget: number): Promise<void> {
    const job: RunningJob = { id, cancelled: false };
    running = job;
    let file: { source: AsyncSource; close(): void } | null = null;
    try {
      if (!engine) throw new Error('worker: no decoder module');
      let source: AsyncSource;
      if (where.kind === 'file') {
        if (!ep.openFile) throw new Error('worker: this worker cannot open files');
        file = ep.openFile(where.path);
        source = file.source;
        if (source.size !== spec.inputSize) {
          throw fileSizeChanged(where.path, source.size, spec.inputSize);
        }
      } else {
        source = remoteSource(job, spec.inputSize);
      }
      const sink: PartitionSink = { marks: [], started: (trace) => ep.post({ t: 'started', job: id, trace }) };
      let posted = 0;
      const outcome = await runAsync(
        source,
        partitionSteps(engine, spec, sink),
        async (chunks) => {
          if (job.cancelled) throw new Cancelled();
          const marks = sink.marks.splice(0);
          const bytes = chunkBytes(chunks);
          if (bytes === 0 && marks.length === 0) return;
          ep.post({ t: 'rows', job: id, chunks, marks, bytes }, chunkBuffers(chunks));
          outstanding += bytes;
          while (outstanding > budget && !job.cancelled) await new Promise<void>((w) => (wake = w));
          if (job.cancelled) throw new Cancelled();
        },
        (_phase, done) => {
          // a message per PROGRESS_BYTES of input at most (the decode reports every 64 buffers)
          if (done - posted < PROGRESS_BYTES && done < spec.inputSize) return;
          posted = done;
          ep.post({ t: 'progress', job: id, done });
        },
      );
      ep.post({ t: 'done', job: id, outcome });
    } catch (e) {
      ep.post({ t: 'error', job: id, error: e instanceof Cancelled ? { name: 'Cancelled', message: 'cancelled' } : serializeError(e) });
    } finally {
      file?.close();
      running = null;
    }
  }

  ep.listen((m) => {
    switch (m.t) {
      case 'init':
        try {
          engine = new WasmEngine(m.module);
          ep.post({ t: 'ready' });
        } catch (e) {
          ep.post({ t: 'fatal', error: serializeError(e) });
        }
        break;
      case 'job':
        // one job at a time (one engine): the next one waits here, so the worker goes on without a round trip
        queue.push(m);
        void pump();
        break;
      case 'credit':
        outstanding -= m.bytes;
        wakeUp();
        break;
      case 'cancel': {
        const q = queue.findIndex((x) => x.job === m.job);
        if (q >= 0) {
          queue.splice(q, 1);
          ep.post({ t: 'error', job: m.job, error: { name: 'Cancelled', message: 'cancelled' } });
        }
        const j = running;
        if (j && j.id === m.job) {
          j.cancelled = true;
          wakeUp();
          for (const [id, r] of reads) {
            reads.delete(id);
            r.reject(new Cancelled());
          }
        }
        break;
      }
      case 'data': {
        const r = reads.get(m.id);
        if (!r) break;
        reads.delete(m.id);
        if (m.bytes) r.resolve(m.bytes);
        else r.reject(m.error ? deserializeError(m.error, 'reading the input') : new EtlError('READ_FAILED', 'read failed'));
        break;
      }
    }
  });
}
