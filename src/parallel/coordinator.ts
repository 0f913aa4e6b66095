// A decode split across threads, with the rows, their order and the counters of one thread:
//
// 1. the input is framed and ordered here, as by decode-steps.ts (framing.ts, ordering.ts);
// 2. the decode order is cut into partitions — contiguous ranges of about equal bytes, several per
//    decoder — which the decoders (workers, each its own WebAssembly instance of one compiled module, and in
//    Node this thread too) take one at a time, in order, as they become free (partition.ts);
// 3. the partitions' rows are handed on in decode order, partition after partition, each made what one
//    engine would have produced by the stitcher (stitch.ts), which also merges the counters, issues and
//    kinds; a partition whose guessed start was wrong, or whose outcome the stitching cannot repair, is
//    decoded again here from the exact state;
// 4. last, every processor's held-back compact switch (newThreadId null).
//
// Memory: a decoder sends rows ahead of the consumer up to `budget` bytes (then waits), so what waits here
// is at most budget x decoders, plus each decoder's engine; with no consumer of the big tables (summary)
// only the small thread and process event rows travel, and every decoder runs at full speed.
import type { DriverResult } from '../decode-steps.js';
import { frameBuffers, type FramingIssue } from '../framing.js';
import * as L from '../generated/layout.js';
import { decodeOrder } from '../ordering.js';
import { runAsync, type AsyncSource, type ProgressHandler } from '../runners.js';
import type { Chunks, DecodedTableName } from '../schema.js';
import type { BufferTable } from '../buffers.js';
import { WasmEngine } from '../wasm/engine.js';
import { loadWasmModule } from '../wasm/instance.js';
import type { ParallelHost, WorkerPort } from './host.js';
import { partitionSteps, type PartitionStart, type PartitionJob, type PartitionOutcome, type PlaceholderMark } from './partition.js';
import { chunkBuffers, chunkBytes, deserializeError, serializeError, type FromWorker, type WorkerSource } from './protocol.js';
import { Stitcher } from './stitch.js';
import type { TraceState } from './state.js';

export interface ParallelRequest {
  source: AsyncSource;
  /** decoders (threads) */
  threads: number;
  /** where workers come from; null: every decoder runs in this thread (tests) */
  host: ParallelHost | null;
  bias?: number;
  windowBytes?: number;
  drainRows?: number;
  /** tables whose rows the consumer gets (the others are counted only) */
  ship: readonly DecodedTableName[];
  /** bytes of rows a decoder may send ahead of the consumer (Infinity: no limit) */
  budget: number;
  /** partitions of about equal bytes (default: guidedBounds()) */
  partitions?: number;
  /** decode positions where partitions start (tests; instead of `partitions`) */
  cuts?: readonly number[];
  onChunks: (chunks: Chunks) => void | Promise<void>;
  onProgress?: ProgressHandler;
  /** filled in with what the decode did (tests, benchmarks) */
  report?: ParallelReport;
}

/** What a parallel decode did. */
export interface ParallelReport {
  partitions: number;
  /** workers started, and how many became ready */
  workers: number;
  workersReady: number;
  /** partitions decoded again from the exact state, by reason */
  reruns: { trace: number; kinds: number; log: number };
}

/** Most and least bytes of a partition by default. */
const PARTITION_MAX = 64 << 20;
const PARTITION_MIN = 4 << 20;
/** bytes of the first partition, decoded before the others start (they take its trace-wide state and kinds) */
const FIRST_PARTITION = 4 << 20;

type PartitionEvent =
  | { type: 'started'; trace: TraceState }
  | { type: 'rows'; chunks: Chunks; marks: PlaceholderMark[]; bytes: number }
  | { type: 'done'; outcome: PartitionOutcome }
  | { type: 'error'; error: Error };

/** The events of one job, in order, for the consumer. */
class EventQueue {
  private readonly items: PartitionEvent[] = [];
  private waiter: ((e: PartitionEvent) => void) | null = null;
  push(e: PartitionEvent): void {
    const w = this.waiter;
    if (w) {
      this.waiter = null;
      w(e);
    } else this.items.push(e);
  }
  next(): Promise<PartitionEvent> {
    const e = this.items.shift();
    if (e) return Promise.resolve(e);
    return new Promise((resolve) => (this.waiter = resolve));
  }
  /** Drops the rows waiting (handing their bytes to `credit`); later rows are dropped as they come. */
  discard(credit: (bytes: number) => void): void {
    this.dropping = credit;
    for (const e of this.items.splice(0)) if (e.type === 'rows') credit(e.bytes);
  }
  dropping: ((bytes: number) => void) | null = null;
}

interface JobSink {
  started(trace: TraceState): void;
  rows(chunks: Chunks, marks: PlaceholderMark[], bytes: number): void;
  progress(done: number): void;
  /** the job ended (done or error); the decoder is free again */
  end(e: { type: 'done'; outcome: PartitionOutcome } | { type: 'error'; error: Error }): void;
}

interface Decoder {
  run(job: number, spec: PartitionJob, sink: JobSink): void;
  credit(job: number, bytes: number): void;
  cancel(job: number): void;
}

class Cancelled extends Error {}

/** A decoder in this thread: its own engine instance, the coordinator's source. */
class LocalDecoder implements Decoder {
  private engine: WasmEngine | null = null;
  private readonly jobs = new Map<number, { cancelled: boolean }>();
  /** bytes of rows handed on and not yet consumed, over all jobs */
  private outstanding = 0;
  private wake: (() => void) | null = null;

  constructor(
    private readonly module: WebAssembly.Module,
    private readonly source: AsyncSource,
    private readonly budget: number,
  ) {}

  run(id: number, spec: PartitionJob, sink: JobSink): void {
    const job = { cancelled: false };
    this.jobs.set(id, job);
    this.engine ??= new WasmEngine(this.module);
    const marks = { marks: [] as PlaceholderMark[], started: (t: TraceState) => sink.started(t) };
    runAsync(
      this.source,
      partitionSteps(this.engine, spec, marks),
      async (chunks) => {
        if (job.cancelled) throw new Cancelled();
        const m = marks.marks.splice(0);
        const bytes = chunkBytes(chunks);
        if (bytes === 0 && m.length === 0) return;
        sink.rows(chunks, m, bytes);
        this.outstanding += bytes;
        while (this.outstanding > this.budget && !job.cancelled) await new Promise<void>((wake) => (this.wake = wake));
        if (job.cancelled) throw new Cancelled();
      },
      (_phase, done) => sink.progress(done),
    ).then(
      (outcome) => {
        this.jobs.delete(id);
        sink.end({ type: 'done', outcome });
      },
      (error: unknown) => {
        this.jobs.delete(id);
        sink.end({ type: 'error', error: error instanceof Error ? error : new Error(String(error)) });
      },
    );
  }

  credit(_id: number, bytes: number): void {
    this.outstanding -= bytes;
    this.wakeUp();
  }

  cancel(id: number): void {
    const j = this.jobs.get(id);
    if (!j) return;
    j.cancelled = true;
    this.wakeUp();
  }

  private wakeUp(): void {
    const w = this.wake;
    this.wake = null;
    w?.();
  }
}

/** A decoder in a worker: messages to and from it, reads served from the coordinator's source. */
class WorkerDecoder implements Decoder {
  ready = false;
  dead: Error | null = null;
  private readonly sinks = new Map<number, JobSink>();

  constructor(
    readonly port: WorkerPort,
    module: WebAssembly.Module,
    private readonly source: AsyncSource,
    private readonly where: WorkerSource,
    private readonly budget: number,
    onReady: (d: WorkerDecoder) => void,
    onDead: (d: WorkerDecoder, e: Error) => void,
  ) {
    port.onMessage((m: FromWorker) => {
      if (m.t === 'ready') {
        this.ready = true;
        onReady(this);
        return;
      }
      if (m.t === 'fatal') {
        this.die(deserializeError(m.error), onDead);
        return;
      }
      if (m.t === 'read') {
        void this.serveRead(m.id, m.position, m.length);
        return;
      }
      const sink = this.sinks.get(m.job);
      if (!sink) return;
      if (m.t === 'started') sink.started(m.trace);
      else if (m.t === 'rows') sink.rows(m.chunks, m.marks, m.bytes);
      else if (m.t === 'progress') sink.progress(m.done);
      else if (m.t === 'done') {
        this.sinks.delete(m.job);
        sink.end({ type: 'done', outcome: m.outcome });
      } else if (m.t === 'error') {
        this.sinks.delete(m.job);
        sink.end({ type: 'error', error: m.error.name === 'Cancelled' ? new Cancelled() : deserializeError(m.error) });
      }
    });
    port.onFailure((e) => this.die(e, onDead));
    port.post({ t: 'init', module });
  }

  private die(e: Error, onDead: (d: WorkerDecoder, e: Error) => void): void {
    if (this.dead) return;
    this.dead = e;
    for (const [id, sink] of this.sinks) {
      this.sinks.delete(id);
      sink.end({ type: 'error', error: e });
    }
    onDead(this, e);
  }

  private async serveRead(id: number, position: number, length: number): Promise<void> {
    try {
      const b = new Uint8Array(Math.max(0, Math.min(length, this.source.size - position)));
      const n = await this.source.readInto(position, b);
      this.port.post({ t: 'data', id, bytes: b.subarray(0, n), error: null }, [b.buffer]);
    } catch (e) {
      this.port.post({ t: 'data', id, bytes: null, error: serializeError(e) });
    }
  }

  run(id: number, spec: PartitionJob, sink: JobSink): void {
    if (this.dead) {
      sink.end({ type: 'error', error: this.dead });
      return;
    }
    this.sinks.set(id, sink);
    const transfer = [spec.fileOffset.buffer, spec.size.buffer, spec.cpu.buffer, spec.order.buffer] as ArrayBuffer[];
    this.port.post({ t: 'job', job: id, spec, source: this.where, budget: this.budget }, transfer);
  }

  credit(id: number, bytes: number): void {
    if (!this.dead) this.port.post({ t: 'credit', job: id, bytes });
  }

  cancel(id: number): void {
    if (!this.dead) this.port.post({ t: 'cancel', job: id });
  }
}

/** Decode positions [bounds[k], bounds[k + 1]) make partition k: `partitions` of about equal bytes, none empty. */
export function partitionBounds(sizes: Uint32Array, order: Uint32Array, partitions: number): number[] {
  const n = order.length;
  const p = Math.max(1, Math.min(partitions, n));
  let total = 0;
  for (let i = 0; i < n; i++) total += sizes[order[i]!]!;
  const bounds = [0];
  let sum = 0;
  for (let i = 0; i < n - 1 && bounds.length < p; i++) {
    sum += sizes[order[i]!]!;
    // cut after position i once its share is reached (or when the buffers left are just enough), leaving
    // a buffer for each partition still to come
    const left = n - (i + 1);
    const after = p - bounds.length;
    if (left >= after && (sum >= (total * bounds.length) / p || left === after)) bounds.push(i + 1);
  }
  bounds.push(n);
  return bounds;
}

/**
 * The default partitions: a first one of FIRST_PARTITION bytes (decoded before the others start, which
 * take its trace-wide state and kinds), then partitions of a share of what remains — remaining / (2 x
 * decoders), from PARTITION_MIN to PARTITION_MAX bytes — so they get smaller towards the end and the
 * decoders finish together.
 */
export function guidedBounds(sizes: Uint32Array, order: Uint32Array, decoders: number): number[] {
  const n = order.length;
  let remaining = 0;
  for (let i = 0; i < n; i++) remaining += sizes[order[i]!]!;
  const bounds = [0];
  let want = FIRST_PARTITION;
  let sum = 0;
  for (let i = 0; i < n; i++) {
    const s = sizes[order[i]!]!;
    sum += s;
    remaining -= s;
    if (sum >= want && i + 1 < n) {
      bounds.push(i + 1);
      sum = 0;
      want = Math.min(PARTITION_MAX, Math.max(PARTITION_MIN, remaining / (2 * decoders)));
    }
  }
  bounds.push(n);
  return bounds;
}

/** The job of decode positions [a, b): its buffers in file order and their decode order. */
function jobOf(
  table: BufferTable,
  order: Uint32Array,
  a: number,
  b: number,
  partition: number,
  start: PartitionStart,
  req: ParallelRequest,
  ship: readonly DecodedTableName[],
): PartitionJob {
  const ids = order.subarray(a, b);
  const n = ids.length;
  let ascending = true;
  for (let i = 1; i < n && ascending; i++) ascending = ids[i - 1]! < ids[i]!;
  const sorted = ascending ? ids.slice() : ids.slice().sort();
  const local = new Uint32Array(n);
  if (ascending) for (let i = 0; i < n; i++) local[i] = i;
  else {
    for (let i = 0; i < n; i++) {
      // the rank of ids[i] in sorted (record indices are distinct)
      let lo = 0;
      let hi = n - 1;
      const v = ids[i]!;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (sorted[mid]! < v) lo = mid + 1;
        else hi = mid;
      }
      local[i] = lo;
    }
  }
  const fileOffset = new Float64Array(n);
  const size = new Uint32Array(n);
  const cpu = new Uint16Array(n);
  let largest = 0;
  let anyCompressed = false;
  for (let i = 0; i < n; i++) {
    const r = sorted[i]!;
    fileOffset[i] = table.fileOffset[r]!;
    size[i] = table.size[r]!;
    cpu[i] = table.cpu[r]!;
    largest = Math.max(largest, size[i]!);
    if (table.flags[r]! & L.BUFFER_FLAG_COMPRESSED) anyCompressed = true;
  }
  return {
    partition,
    inputSize: req.source.size,
    fileOffset,
    size,
    cpu,
    order: local,
    largest,
    anyCompressed,
    start,
    bias: req.bias,
    windowBytes: req.windowBytes,
    drainRows: req.drainRows,
    ship,
  };
}

/** The decode of `req.source` split across `req.threads` decoders (see the file comment). */
export async function decodeParallel(req: ParallelRequest): Promise<DriverResult> {
  const { source, host } = req;
  const size = source.size;
  const module = await loadWasmModule();
  const threads = Math.max(1, Math.floor(req.threads));
  const workers: WorkerDecoder[] = [];
  const idle: Decoder[] = [];
  let local: LocalDecoder | null = null;
  let exact: LocalDecoder | null = null;
  let wake: (() => void) | null = null;
  let dispatch = () => {};
  const kick = () => {
    dispatch();
    const w = wake;
    wake = null;
    w?.();
  };
  const stitcher = new Stitcher();
  try {
    // workers start now: their scripts load while the input is framed
    const wanted = host ? (host.mainThreadDecodes ? threads - 1 : threads) : 0;
    const path = host?.filePathOf(source) ?? null;
    const where: WorkerSource = path !== null ? { kind: 'file', path } : { kind: 'remote' };
    for (let i = 0; i < wanted; i++) {
      workers.push(
        new WorkerDecoder(
          host!.spawn(),
          module,
          source,
          where,
          req.budget,
          (d) => {
            if (req.report) req.report.workersReady++;
            idle.push(d);
            kick();
          },
          (d) => {
            const at = idle.indexOf(d);
            if (at >= 0) idle.splice(at, 1);
            kick();
          },
        ),
      );
    }
    if (!host) {
      // no workers (tests): every decoder in this thread, each its own engine, interleaved at their reads
      for (let i = 0; i < threads; i++) idle.push((local = new LocalDecoder(module, source, req.budget)));
    } else if (host.mainThreadDecodes || threads === 1) {
      local = new LocalDecoder(module, source, req.budget);
      idle.push(local);
    }

    // 1. framing and order (this thread)
    const framingIssues: FramingIssue[] = [];
    const framingCounters = new Array<number>(L.D_COUNTER_COUNT).fill(0);
    const table = await runAsync(source, frameBuffers(size, framingIssues, framingCounters), () => {}, req.onProgress);
    const order = decodeOrder(table);

    // 2. partitions
    const decoders = host ? Math.max(1, local ? wanted + 1 : wanted) : threads;
    const bounds = req.cuts
      ? [0, ...[...new Set(req.cuts)].filter((c) => c > 0 && c < order.length).sort((a, b) => a - b), order.length]
      : req.partitions
        ? partitionBounds(table.size, order, req.partitions)
        : guidedBounds(table.size, order, decoders);
    const P = bounds.length - 1;
    if (req.report) {
      req.report.partitions = P;
      req.report.workers = wanted;
    }
    const queues: EventQueue[] = [];
    const jobDecoder: Decoder[] = [];
    const jobIds: number[] = [];
    const progress = new Float64Array(P);
    let nextJob = 0;
    let nextPartition = 0;
    const reportProgress = () => {
      let done = 0;
      for (let k = 0; k < P; k++) done += progress[k]!;
      req.onProgress?.('decode', Math.min(done, size), size);
    };
    const start = (d: Decoder, k: number, startState: PartitionStart, ship: readonly DecodedTableName[], q: EventQueue, free: boolean): number => {
      const id = nextJob++;
      d.run(id, jobOf(table, order, bounds[k]!, bounds[k + 1]!, k, startState, req, ship), {
        started: (trace) => q.push({ type: 'started', trace }),
        rows: (chunks, marks, bytes) => {
          if (q.dropping) q.dropping(bytes);
          else q.push({ type: 'rows', chunks, marks, bytes });
        },
        progress: (done) => {
          progress[k] = done;
          reportProgress();
        },
        end: (e) => {
          q.push(e);
          if (free) {
            idle.push(d);
            kick();
          }
        },
      });
      return id;
    };
    /**
     * gives free decoders the next partitions, in order; the first alone, then the others once it is taken
     * (they start from its trace-wide state and kinds: stitch.ts guess())
     */
    dispatch = () => {
      while (idle.length && nextPartition < P && (nextPartition === 0 || stitcher.taken > 0)) {
        const d = idle.shift()!;
        if (d instanceof WorkerDecoder && d.dead) continue;
        const k = nextPartition++;
        queues[k] = new EventQueue();
        jobDecoder[k] = d;
        jobIds[k] = start(d, k, stitcher.guess(), req.ship, queues[k]!, true);
      }
      // every worker failed to start and this thread does not decode: it does now
      if (nextPartition < P && idle.length === 0 && !local && workers.every((w) => w.dead)) {
        local = new LocalDecoder(module, source, req.budget);
        idle.push(local);
        dispatch();
      }
    };
    /** the next event of partition k, dispatching while waiting */
    const nextEvent = async (q: () => EventQueue | undefined): Promise<PartitionEvent> => {
      for (;;) {
        dispatch();
        const queue = q();
        if (queue) return queue.next();
        await new Promise<void>((resolve) => (wake = resolve));
      }
    };
    /** decodes partition k again in this thread from the exact state (its own engine) */
    const rerun = (k: number, ship: readonly DecodedTableName[], startState: PartitionStart): { q: EventQueue; d: Decoder; id: number } => {
      const d = (exact ??= new LocalDecoder(module, source, req.budget));
      const q = new EventQueue();
      return { q, d, id: start(d, k, startState, ship, q, false) };
    };

    // 3. the partitions' rows, in order, stitched
    const reads = { loads: 0, singles: 0, bytes: 0 };
    const addReads = (o: PartitionOutcome) => {
      reads.loads += o.reads.loads;
      reads.singles += o.reads.singles;
      reads.bytes += o.reads.bytes;
    };
    for (let k = 0; k < P; k++) {
      let first = await nextEvent(() => queues[k]);
      let queue = queues[k]!;
      let decoder = jobDecoder[k]!;
      let job = jobIds[k]!;
      if (first.type === 'started' && !stitcher.startMatches(first.trace)) {
        // the guessed trace-wide state is not what the partitions before leave: decode it again, exactly
        const d = decoder;
        const j = job;
        if (req.report) req.report.reruns.trace++;
        d.cancel(j);
        queue.discard((bytes) => d.credit(j, bytes));
        const again = rerun(k, req.ship, stitcher.exactStart());
        queue = again.q;
        decoder = again.d;
        job = again.id;
        first = await queue.next();
      }
      let e = first;
      for (;;) {
        if (e.type === 'error') throw e.error instanceof Cancelled ? new Error(`partition ${k} was cancelled`) : e.error;
        if (e.type === 'rows') {
          const chunks = stitcher.rowsOf(e.chunks, e.marks);
          await req.onChunks(chunks);
          decoder.credit(job, e.bytes);
        } else if (e.type === 'done') {
          let outcome = e.outcome;
          addReads(outcome);
          const why = stitcher.needsExactRun(outcome);
          if (why) {
            if (req.report) req.report.reruns[why]++;
            const again = rerun(k, [], stitcher.exactStart()).q;
            for (;;) {
              const r = await again.next();
              if (r.type === 'error') throw r.error;
              if (r.type === 'done') {
                outcome = r.outcome;
                addReads(outcome);
                break;
              }
            }
          }
          stitcher.endPartition(outcome);
          break;
        }
        e = await queue.next();
      }
    }
    // 4. every processor's held-back switch, newThreadId null
    const last = stitcher.finish();
    if (last.cswitch.length && req.ship.includes('cswitch')) await req.onChunks(last);
    req.onProgress?.('decode', size, size);
    return { size, rows: stitcher.rows, buffers: table.list(), reads, framingIssues, framingCounters, engine: stitcher.state() };
  } finally {
    for (const w of workers) w.port.terminate();
  }
}

